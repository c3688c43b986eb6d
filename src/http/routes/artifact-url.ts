import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { errors } from '../../core/errors.js';
import type { ArtifactRef } from '../../core/schemas.js';
import type { Access, ArtifactService } from '../../service/artifact-service.js';
import { readAccessOf, requirePerm } from '../auth.js';
import type { AppEnv } from '../context.js';
import { ArtifactIdParam, errorResponses, readScopeParameters } from '../openapi-schemas.js';

export const UrlRequestDoc = z
  .object({
    mode: z.enum(['direct', 'proxy']).optional().openapi({
      description:
        'direct: from S3 / the CDN (presigned); proxy: through this service (HMAC-signed). Default proxy. direct falls back to proxy on drivers that cannot presign (fs), and fetchMode says so.',
    }),
    expiresIn: z.number().int().positive().optional().openapi({
      description:
        'Seconds the link stays valid (default 900, at most the configured maximum). Never past the reference expiry.',
    }),
    disposition: z.enum(['inline', 'attachment']).optional().openapi({
      description: 'attachment makes browsers save the file; active types (HTML, SVG, XML, JS) are always attachments.',
    }),
  })
  .openapi('DownloadUrlRequest');

export const DownloadUrlDoc = z
  .object({
    url: z.string(),
    fetchMode: z.enum(['direct', 'proxy']),
    urlExpiresAt: z.string(),
    mimeType: z.string(),
    sizeBytes: z.number().int(),
  })
  .openapi('DownloadUrl');

const route = createRoute({
  method: 'post',
  path: '/v1/artifacts/{id}/url',
  tags: ['artifacts'],
  summary: 'A download link for browsers (no token needed)',
  parameters: readScopeParameters,
  description:
    'Returns a signed URL a browser can GET (and Range) without an Authorization header, until urlExpiresAt.',
  request: {
    params: ArtifactIdParam,
    body: { required: false, content: { 'application/json': { schema: UrlRequestDoc } } },
  },
  responses: {
    200: { description: 'The link', content: { 'application/json': { schema: DownloadUrlDoc } } },
    ...errorResponses(400, 401, 403, 404, 503),
  },
});

/** The `?url=` of a request; bad_request for anything but proxy or direct. */
export function linkModeOf(c: Context<AppEnv>): 'proxy' | 'direct' | undefined {
  const mode = c.req.query('url');
  if (mode === undefined || mode === 'proxy' || mode === 'direct') return mode;
  throw errors.badRequest('url must be proxy or direct.');
}

/**
 * `?url=proxy|direct` on a route that answers ArtifactRefs: each ref then carries url, fetchMode and
 * urlExpiresAt (default lifetime), as POST /v1/artifacts/{id}/url would give them.
 */
export async function withLinks<R extends ArtifactRef>(
  c: Context<AppEnv>,
  service: ArtifactService,
  access: Access,
  refs: R[],
  publicUrl: string | undefined,
): Promise<R[]> {
  const mode = linkModeOf(c);
  if (mode === undefined) return refs;
  const baseUrl = publicBaseUrl(publicUrl, c.req.url);
  return Promise.all(
    refs.map(async (ref) => {
      const link = await service.downloadUrl(access, ref.id, { mode, baseUrl });
      return { ...ref, url: link.url, fetchMode: link.fetchMode, urlExpiresAt: link.urlExpiresAt };
    }),
  );
}

/** The public origin links point at: the configured one, else the origin this request came to. */
export const publicBaseUrl = (configured: string | undefined, requestUrl: string) =>
  configured ?? new URL(requestUrl).origin;

export function registerArtifactUrl(app: OpenAPIHono<AppEnv>, service: ArtifactService, publicUrl?: string) {
  app.openapi(route, async (c) => {
    const caller = c.get('caller');
    requirePerm(caller, 'read');
    // An empty body is allowed: every field has a default.
    const body = c.req.header('content-length') === '0' || !c.req.header('content-type') ? {} : c.req.valid('json');
    const link = await service.downloadUrl(readAccessOf(c, caller), c.req.valid('param').id, {
      ...body,
      baseUrl: publicBaseUrl(publicUrl, c.req.url),
    });
    return c.json(link, 200, { 'Cache-Control': 'no-store' });
  });
}
