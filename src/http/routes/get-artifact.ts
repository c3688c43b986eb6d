import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { errors, isArtifactError } from '../../core/errors.js';
import { parseRange } from '../../core/range.js';
import type { ArtifactService } from '../../service/artifact-service.js';
import type { Context } from 'hono';
import type { UrlSigner } from '../../core/url-signing.js';
import type { Access, DownloadEntity, RangeResolver } from '../../service/artifact-service.js';
import type { ByteRange } from '../../core/schemas.js';
import { readAccessOf, requirePerm } from '../auth.js';
import { respondsWithRequestId, type AppEnv } from '../context.js';
import {
  downloadHeaders,
  etagMatches,
  etagOf,
  notModifiedHeaders,
  signedLinkCacheControl,
} from '../download-headers.js';
import { header } from '../fast-header.js';
import { downloadResponse } from '../streamed-bodies.js';
import { ArtifactIdParam, errorResponses, readScopeParameters } from '../openapi-schemas.js';

// Query and header parameters are documented here but parsed by hand: a zod validator per part
// costs more than the rest of a small GET.
const parameters = [
  {
    name: 'disposition',
    in: 'query' as const,
    required: false,
    schema: { type: 'string' as const, enum: ['inline', 'attachment'] },
    description: 'attachment forces a download; active types (HTML, SVG, XML, JS) are always attachments.',
  },
  {
    name: 'Range',
    in: 'header' as const,
    required: false,
    schema: { type: 'string' as const },
    description: 'One byte range: bytes=START-END, bytes=START- or bytes=-SUFFIX.',
  },
  {
    name: 'If-None-Match',
    in: 'header' as const,
    required: false,
    schema: { type: 'string' as const },
    description: 'ETag (the sha256 in quotes); a match answers 304.',
  },
  {
    name: 'If-Range',
    in: 'header' as const,
    required: false,
    schema: { type: 'string' as const },
    description: 'Serve the Range only while the ETag still matches.',
  },
];

export function dispositionOf(value: string | undefined): 'inline' | 'attachment' | undefined {
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
  description:
    'Streams the bytes. Range gives 206; ETag is the sha256; If-None-Match answers 304. Missing and out-of-scope ids answer the same 404.',
  request: { params: ArtifactIdParam },
  parameters: [...parameters, ...readScopeParameters],
  responses: {
    200: { description: 'The bytes', content: binary },
    206: { description: 'A range of the bytes', content: binary },
    304: { description: 'Not modified' },
    ...errorResponses(401, 403, 404, 416, 503),
  },
});

const signedParameters = [
  ...parameters.filter((p) => p.name !== 'disposition'),
  ...['tenant', 'expires', 'disposition', 'kid', 'signature'].map((name) => ({
    name,
    in: 'query' as const,
    required: true,
    schema: { type: 'string' as const },
    description: 'Part of the signed link, as POST /v1/artifacts/{id}/url returned it.',
  })),
];

const signedGetRoute = createRoute({
  method: 'get',
  path: '/v1/download/{id}',
  tags: ['artifacts'],
  summary: 'Download through a signed link (no Authorization)',
  description:
    'The link from POST /v1/artifacts/{id}/url (fetchMode proxy). Range, ETag and If-None-Match work as on GET /v1/artifacts/{id}. An expired or altered link, or one for another id, answers 403 and serves nothing.',
  security: [],
  request: { params: ArtifactIdParam },
  parameters: signedParameters,
  responses: {
    200: { description: 'The bytes', content: binary },
    206: { description: 'A range of the bytes', content: binary },
    304: { description: 'Not modified' },
    ...errorResponses(403, 404, 416, 503),
  },
});

const signedHeadRoute = createRoute({
  ...signedGetRoute,
  method: 'head',
  summary: 'Download headers through a signed link',
  responses: { 200: { description: 'Headers of the download' }, ...errorResponses(403, 404) },
});

const headRoute = createRoute({
  method: 'head',
  path: '/v1/artifacts/{id}',
  tags: ['artifacts'],
  summary: 'Download headers only',
  request: { params: ArtifactIdParam },
  parameters: [...parameters, ...readScopeParameters],
  responses: {
    200: { description: 'Headers of the download' },
    304: { description: 'Not modified' },
    ...errorResponses(401, 404),
  },
});

/**
 * GET and HEAD /v1/artifacts/{id}: the hot path of the service. Documented through the OpenAPI
 * registry but routed as a plain Hono handler: the id needs no validator (anything that is not an
 * artifact id is simply not found, through the same path as a missing one), and the per-request
 * validator chain cost a tenth of a small GET.
 */
export function registerGetArtifact(
  app: OpenAPIHono<AppEnv>,
  service: ArtifactService,
  signer?: UrlSigner,
  now: () => number = Date.now,
  admitLink?: (tenantId: string) => Promise<void> | void,
) {
  app.openAPIRegistry.registerPath(getRoute);
  app.openAPIRegistry.registerPath(headRoute);

  const getArtifact = async function getArtifact(c: Context<AppEnv, '/v1/artifacts/:id'>) {
    const caller = c.get('caller');
    requirePerm(caller, 'read');
    return serveArtifact(
      c,
      service,
      readAccessOf(c, caller),
      c.req.param('id'),
      dispositionOf(c.req.query('disposition')),
    );
  };
  app.get('/v1/artifacts/:id', getArtifact);

  app.openAPIRegistry.registerPath(signedGetRoute);
  app.openAPIRegistry.registerPath(signedHeadRoute);

  // Signed links: no Authorization; the query grants this id in this tenant until it expires.
  app.get('/v1/download/:id', async function getSignedDownload(c) {
    if (!signer) throw errors.forbidden('This service does not accept download links (no signing key is configured).');
    const id = c.req.param('id');
    const link = await signer.verify(id, new URL(c.req.url).searchParams, now());
    // Only once the link is proven: a forged one must not spend its tenant's requests.
    await admitLink?.(link.tenantId);
    const cacheControl = signedLinkCacheControl(link.expiresAt - now() / 1000);
    return serveArtifact(c, service, { tenantId: link.tenantId, filter: {} }, id, link.disposition, cacheControl);
  });
  return getArtifact;
}

/** GET and HEAD of one artifact for a caller allowed to see it: 200, 206, 304, 416 or 404. */
function serveArtifact(
  c: Context<AppEnv>,
  service: ArtifactService,
  access: Access,
  id: string,
  disposition: 'inline' | 'attachment' | undefined,
  cacheControl?: string,
) {
  return serveDownload(c, new ArtifactSource(service, access, id), disposition, cacheControl);
}

/** An artifact by id as a DownloadSource (a class: a small GET makes no closures for it). */
class ArtifactSource implements DownloadSource {
  constructor(
    private readonly service: ArtifactService,
    private readonly access: Access,
    private readonly id: string,
  ) {}
  entity() {
    return this.service.getEntity(this.access, this.id);
  }
  body(resolveRange: RangeResolver | undefined, smallBytes: number) {
    return this.service.getBody(this.access, this.id, resolveRange, smallBytes);
  }
}

/** Where a download's entity and bytes come from: an artifact by id, a named version. */
export interface DownloadSource {
  entity(): Promise<DownloadEntity>;
  body(
    /** undefined: the whole body. */
    resolveRange: RangeResolver | undefined,
    smallBytes: number,
  ): Promise<{ entity: DownloadEntity; range?: ByteRange; body: ReadableStream<Uint8Array> | Uint8Array }>;
}

/** GET and HEAD of one download: 200, 206, 304 or 416 (the source throws its own 404). */
export async function serveDownload(
  c: Context<AppEnv>,
  source: DownloadSource,
  disposition: 'inline' | 'attachment' | undefined,
  cacheControl?: string,
  /** Headers about the entity beside the download's own (a named version's ref). */
  extraHeaders?: (entity: DownloadEntity) => Record<string, string>,
) {
  // Every check that can fail runs before the blob is opened, so no error leaves a file open.
  const ifNoneMatch = header(c, 'if-none-match');

  // Hono answers HEAD by running this handler and dropping the body, which would open the blob and
  // leave its stream unread (a file handle held until GC). HEAD never opens it; Range is ignored
  // (RFC 9110 14.2: range handling is defined for GET only).
  if (c.req.method === 'HEAD' || ifNoneMatch) {
    const entity = await source.entity();
    if (etagMatches(ifNoneMatch, etagOf(entity), true)) {
      return c.body(null, 304, notModifiedHeaders(entity, cacheControl));
    }
    if (c.req.method === 'HEAD') {
      return c.body(null, 200, {
        ...downloadHeaders(entity, disposition, undefined, cacheControl),
        ...extraHeaders?.(entity),
        'Content-Length': String(entity.sizeBytes),
      });
    }
  }

  const rangeHeader = header(c, 'range');
  const ifRange = header(c, 'if-range');
  let result;
  try {
    const resolveRange: RangeResolver | undefined =
      rangeHeader === undefined
        ? undefined
        : (entity) => {
            // If-Range naming another entity: serve the whole body instead of the range (RFC 9110 13.1.5).
            if (ifRange !== undefined && !etagMatches(ifRange, `"${entity.sha256}"`, false)) return undefined;
            return parseRange(rangeHeader, entity.sizeBytes);
          };
    result = await source.body(resolveRange, SMALL_BODY_BYTES);
  } catch (err) {
    if (isArtifactError(err) && err.code === 'invalid_range') {
      return c.json(err.toJSON(), 416, { 'Content-Range': `bytes */${String(err.details?.sizeBytes ?? '*')}` });
    }
    throw err;
  }
  const { entity, range, body } = result;
  // Built in one object with X-Request-Id: see respondsWithRequestId.
  const headers = downloadHeaders(entity, disposition, respondsWithRequestId(c), cacheControl);
  if (extraHeaders) Object.assign(headers, extraHeaders(entity));
  if (range) {
    headers['Content-Range'] = `bytes ${range.start}-${range.end}/${entity.sizeBytes}`;
    headers['Content-Length'] = String(range.end - range.start + 1);
    // Small bodies are one buffer, written in one go with the headers; larger ones stream.
    return downloadResponse(body, 206, headers);
  }
  headers['Content-Length'] = String(entity.sizeBytes);
  return downloadResponse(body, 200, headers);
}
