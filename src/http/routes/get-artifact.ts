import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { errors, isArtifactError } from '../../core/errors.js';
import { parseRange } from '../../core/range.js';
import type { ArtifactService } from '../../service/artifact-service.js';
import { accessOf, requirePerm, type Caller } from '../auth.js';
import type { AppEnv } from '../context.js';
import { header } from '../fast-header.js';
import { downloadHeaders, etagMatches, etagOf } from '../download-headers.js';
import { ArtifactIdParam, errorResponses } from '../openapi-schemas.js';

// Query and header parameters are documented here but parsed by hand: a zod validator per part
// costs more than the rest of a small GET.
const parameters = [
  { name: 'disposition', in: 'query' as const, required: false, schema: { type: 'string' as const, enum: ['inline', 'attachment'] }, description: 'attachment forces a download; active types (HTML, SVG, XML, JS) are always attachments.' },
  { name: 'Range', in: 'header' as const, required: false, schema: { type: 'string' as const }, description: 'One byte range: bytes=START-END, bytes=START- or bytes=-SUFFIX.' },
  { name: 'If-None-Match', in: 'header' as const, required: false, schema: { type: 'string' as const }, description: 'ETag (the sha256 in quotes); a match answers 304.' },
  { name: 'If-Range', in: 'header' as const, required: false, schema: { type: 'string' as const }, description: 'Serve the Range only while the ETag still matches.' },
];

function dispositionOf(value: string | undefined): 'inline' | 'attachment' | undefined {
  if (value === undefined || value === 'inline' || value === 'attachment') return value;
  throw errors.badRequest('disposition must be inline or attachment.');
}

const SMALL_BODY_BYTES = 64 * 1024;

const binary = { '*/*': { schema: z.string().openapi({ format: 'binary' }) } };

const getRoute = createRoute({
  method: 'get',
  path: '/v1/artifacts/{id}',
  tags: ['artifacts'],
  summary: 'Download the bytes',
  description: 'Streams the bytes. Range gives 206; ETag is the sha256; If-None-Match answers 304. Missing and out-of-scope ids answer the same 404.',
  request: { params: ArtifactIdParam },
  parameters,
  responses: {
    200: { description: 'The bytes', content: binary },
    206: { description: 'A range of the bytes', content: binary },
    304: { description: 'Not modified' },
    ...errorResponses(401, 403, 404, 416, 503),
  },
});

const headRoute = createRoute({
  method: 'head',
  path: '/v1/artifacts/{id}',
  tags: ['artifacts'],
  summary: 'Download headers only',
  request: { params: ArtifactIdParam },
  parameters,
  responses: { 200: { description: 'Headers of the download' }, 304: { description: 'Not modified' }, ...errorResponses(401, 404) },
});

export function registerGetArtifact(app: OpenAPIHono<AppEnv>, service: ArtifactService) {
  // Headers only: never opens the blob. Range is ignored (RFC 9110 14.2: range handling is defined for GET only).
  const head = async (caller: Caller, id: string, disposition: 'inline' | 'attachment' | undefined, ifNoneMatch: string | undefined) => {
    requirePerm(caller, 'read');
    const ref = await service.getRef(accessOf(caller), id);
    const h = downloadHeaders(ref, { disposition, cache: 'private' });
    const status = etagMatches(ifNoneMatch, etagOf(ref), true) ? 304 : 200;
    return new Response(null, { status, headers: status === 304 ? notModified(h) : { ...h, 'Content-Length': String(ref.sizeBytes) } });
  };

  app.openapi(headRoute, async (c) => {
    return (await head(c.get('caller'), c.req.valid('param').id, dispositionOf(c.req.query('disposition')), header(c, 'if-none-match'))) as never;
  });

  app.openapi(getRoute, async (c) => {
    const caller = c.get('caller');
    // Hono answers HEAD by running the GET handler and dropping the body, which would open the blob
    // and leave its stream unread (a file handle held until GC). Answer HEAD without opening it.
    if (c.req.method === 'HEAD') {
      return (await head(caller, c.req.valid('param').id, dispositionOf(c.req.query('disposition')), header(c, 'if-none-match'))) as never;
    }
    requirePerm(caller, 'read');
    const access = accessOf(caller);
    const id = c.req.valid('param').id;
    // Every check that can fail runs before the blob is opened, so no error leaves a file open.
    const disposition = dispositionOf(c.req.query('disposition'));
    const ifNoneMatch = header(c, 'if-none-match');
    if (ifNoneMatch) {
      const ref = await service.getRef(access, id);
      if (etagMatches(ifNoneMatch, etagOf(ref), true)) {
        return new Response(null, { status: 304, headers: notModified(downloadHeaders(ref, { cache: 'private' })) }) as never;
      }
    }
    const rangeHeader = header(c, 'range');
    const ifRange = header(c, 'if-range');
    let result;
    try {
      result = await service.getBody(access, id, (entity) => {
        if (rangeHeader === undefined) return undefined;
        // If-Range naming another entity: serve the whole body instead of the range (RFC 9110 13.1.5).
        if (ifRange !== undefined && !etagMatches(ifRange, `"${entity.sha256}"`, false)) return undefined;
        return parseRange(rangeHeader, entity.sizeBytes);
      }, SMALL_BODY_BYTES);
    } catch (err) {
      if (isArtifactError(err) && err.code === 'invalid_range') {
        return c.json(err.toJSON(), 416, { 'Content-Range': `bytes */${String(err.details?.sizeBytes ?? '*')}` }) as never;
      }
      throw err;
    }
    const { ref, range, sizeBytes } = result;
    // Small bodies go out in one write with the headers; larger ones stream.
    const body = result.body as BodyInit;
    const h = downloadHeaders(ref, { disposition, cache: 'private' });
    if (range) {
      return new Response(body, {
        status: 206,
        headers: { ...h, 'Content-Range': `bytes ${range.start}-${range.end}/${sizeBytes}`, 'Content-Length': String(range.end - range.start + 1) },
      }) as never;
    }
    return new Response(body, { status: 200, headers: { ...h, 'Content-Length': String(sizeBytes) } }) as never;
  });
}

/** A 304 keeps the validators and caching headers, not the entity ones. */
function notModified(h: Record<string, string>): Record<string, string> {
  const { ETag, 'Cache-Control': cache, Vary } = h;
  return { ETag: ETag!, 'Cache-Control': cache!, Vary: Vary!, 'X-Content-Type-Options': 'nosniff' };
}
