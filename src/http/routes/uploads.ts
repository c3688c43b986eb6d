import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { narrowScope } from '../../core/scope.js';
import type { ArtifactService } from '../../service/artifact-service.js';
import { accessOf, requirePerm } from '../auth.js';
import type { AppEnv } from '../context.js';
import { ArtifactRefDoc, errorResponses } from '../openapi-schemas.js';
import { linkModeOf, withLinks } from './artifact-url.js';

const BeginDoc = z
  .object({
    sizeBytes: z.number().int().positive().openapi({ description: 'Exact size of the bytes you will PUT.' }),
    sha256: z.string().openapi({ description: 'Lowercase hex sha256 of those bytes; complete refuses anything else.' }),
    mimeType: z.string().optional(),
    filename: z.string().optional(),
    namespace: z.string().optional(),
    meta: z.record(z.string(), z.unknown()).optional(),
    source: z.record(z.string(), z.unknown()).optional(),
    ttl: z.union([z.number().int().positive(), z.literal('never')]).optional(),
  })
  .openapi('UploadRequest');

const TicketDoc = z
  .object({
    uploadId: z.string(),
    url: z.string().openapi({ description: 'PUT the bytes here, with the headers below and no Authorization.' }),
    method: z.literal('PUT'),
    headers: z.record(z.string(), z.string()).openapi({
      description:
        'Every one must be sent with the PUT. On S3 they include x-amz-content-sha256, the declared sha256: the bucket refuses other bytes.',
    }),
    expiresAt: z.string(),
  })
  .openapi('UploadTicket');

const UploadIdParam = z.object({
  id: z
    .string()
    .max(64)
    .openapi({ param: { name: 'id', in: 'path' }, example: 'up_0123456789abcdef0123456789abcdef' }),
});

const beginRoute = createRoute({
  method: 'post',
  path: '/v1/uploads',
  tags: ['uploads'],
  summary: 'Start a direct upload (large files go straight to the blob store)',
  description:
    'Returns a presigned PUT for a staging key. Upload the bytes there, then POST /v1/uploads/{id}/complete. The scope comes from the token; a tenant-wide token may name it with X-Artifact-Session / X-Artifact-Trace / X-Artifact-User. Only drivers that accept direct uploads (s3) offer this; others answer 400 with details.reason direct_uploads_unavailable.',
  request: { body: { required: true, content: { 'application/json': { schema: BeginDoc } } } },
  responses: {
    201: { description: 'Where to upload', content: { 'application/json': { schema: TicketDoc } } },
    ...errorResponses(400, 401, 403, 413, 503),
  },
});

const completeRoute = createRoute({
  method: 'post',
  path: '/v1/uploads/{id}/complete',
  tags: ['uploads'],
  summary: 'Finish a direct upload',
  description:
    'The service re-reads the staged bytes and checks their size and sha256 itself, then commits them like a put: 201 with the ArtifactRef (200 when the scope already held it). Other bytes than declared: 422 checksum_mismatch (or 400 for another size) and nothing is stored. Nothing uploaded yet: 400, and the upload stays open. With ?url=proxy|direct the ref carries a download link.',
  request: { params: UploadIdParam },
  responses: {
    200: {
      description: 'The scope already held these bytes',
      content: { 'application/json': { schema: ArtifactRefDoc } },
    },
    201: { description: 'Stored', content: { 'application/json': { schema: ArtifactRefDoc } } },
    ...errorResponses(400, 401, 403, 404, 422, 503),
  },
});

export function registerUploads(app: OpenAPIHono<AppEnv>, service: ArtifactService, publicUrl?: string) {
  app.openapi(beginRoute, async (c) => {
    const caller = c.get('caller');
    requirePerm(caller, 'write');
    const { sizeBytes, sha256, ...options } = c.req.valid('json');
    const scope = narrowScope(
      { tenantId: caller.tenantId, userId: caller.userId, sessionId: caller.sessionId, traceId: caller.traceId },
      {
        sessionId: c.req.header('x-artifact-session'),
        traceId: c.req.header('x-artifact-trace'),
        userId: c.req.header('x-artifact-user'),
      },
    );
    const ticket = await service.beginUpload(scope, { sizeBytes, sha256 }, options);
    return c.json(ticket, 201, { 'Cache-Control': 'no-store' });
  });

  app.openapi(completeRoute, async (c) => {
    const caller = c.get('caller');
    requirePerm(caller, 'write');
    linkModeOf(c);
    const access = accessOf(caller);
    const { ref, created } = await service.completeUpload(access, c.req.valid('param').id);
    c.header('Location', `/v1/artifacts/${encodeURIComponent(ref.id)}`);
    const [answer] = await withLinks(c, service, access, [ref], publicUrl);
    return c.json(answer!, created ? 201 : 200);
  });
}
