import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { ArtifactError, errors } from '../../core/errors.js';
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

const PutTicketDoc = z
  .object({
    uploadId: z.string(),
    kind: z.literal('put'),
    url: z.string().openapi({ description: 'PUT the bytes here, with the headers below and no Authorization.' }),
    method: z.literal('PUT'),
    headers: z.record(z.string(), z.string()).openapi({
      description:
        'Every one must be sent with the PUT. On S3 they include x-amz-content-sha256, the declared sha256: the bucket refuses other bytes.',
    }),
    expiresAt: z.string(),
  })
  .openapi('PutUploadTicket');

const PartsTicketDoc = z
  .object({
    uploadId: z.string(),
    kind: z.literal('multipart'),
    sizeBytes: z.number().int(),
    partSize: z.number().int().openapi({
      description: 'Part n (from 1) is bytes [(n-1)·partSize, n·partSize) of the file; the last part holds the rest.',
    }),
    partCount: z.number().int(),
    expiresAt: z.string(),
  })
  .openapi('PartsUploadTicket');

const TicketDoc = z.discriminatedUnion('kind', [PutTicketDoc, PartsTicketDoc]).openapi('UploadTicket');

const HeldPartDoc = z.object({ partNumber: z.number().int(), sizeBytes: z.number().int(), etag: z.string() });

const PartsRequestDoc = z
  .object({
    parts: z
      .array(
        z.object({
          partNumber: z.number().int(),
          sha256: z
            .string()
            .openapi({ description: "Lowercase hex sha256 of that part's bytes: the bucket refuses others." }),
        }),
      )
      .min(1)
      .max(1000),
  })
  .openapi('PartsRequest');

const PartUrlsDoc = z
  .object({
    parts: z.array(
      z.object({
        partNumber: z.number().int(),
        sizeBytes: z.number().int(),
        url: z.string(),
        method: z.literal('PUT'),
        headers: z.record(z.string(), z.string()),
      }),
    ),
  })
  .openapi('PartUrls');

const StatusDoc = z
  .object({
    uploadId: z.string(),
    kind: z.enum(['put', 'multipart', 'tus']),
    sizeBytes: z.number().int(),
    sha256: z.string(),
    expiresAt: z.string(),
    partSize: z.number().int().optional(),
    partCount: z.number().int().optional(),
    parts: z.array(HeldPartDoc).optional().openapi({ description: 'The parts the bucket holds, ascending.' }),
    receivedBytes: z.number().int().optional(),
  })
  .openapi('UploadStatus');

const CompleteDoc = z
  .object({
    parts: z
      .array(z.object({ partNumber: z.number().int(), etag: z.string().optional() }))
      .max(10_000)
      .optional()
      .openapi({ description: 'The parts you uploaded, ascending, every one; without it the bucket says.' }),
  })
  .openapi('CompleteRequest');

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

const partsRoute = createRoute({
  method: 'post',
  path: '/v1/uploads/{id}/parts',
  tags: ['uploads'],
  summary: "URLs for parts of a direct upload in parts, each signed with the part's sha256",
  request: {
    params: UploadIdParam,
    body: { required: true, content: { 'application/json': { schema: PartsRequestDoc } } },
  },
  responses: {
    200: { description: 'Where to PUT each part', content: { 'application/json': { schema: PartUrlsDoc } } },
    ...errorResponses(400, 401, 403, 404, 503),
  },
});

const statusRoute = createRoute({
  method: 'get',
  path: '/v1/uploads/{id}',
  tags: ['uploads'],
  summary: 'An upload in flight: in parts, which parts the bucket holds (to resume)',
  request: { params: UploadIdParam },
  responses: {
    200: { description: 'The upload', content: { 'application/json': { schema: StatusDoc } } },
    ...errorResponses(401, 403, 404, 503),
  },
});

const abortRoute = createRoute({
  method: 'delete',
  path: '/v1/uploads/{id}',
  tags: ['uploads'],
  summary: 'End an upload in flight; what was uploaded is dropped',
  request: { params: UploadIdParam },
  responses: { 204: { description: 'Ended' }, ...errorResponses(401, 403, 404, 503) },
});

const completeRoute = createRoute({
  method: 'post',
  path: '/v1/uploads/{id}/complete',
  tags: ['uploads'],
  summary: 'Finish a direct upload',
  description:
    'The service re-reads the staged (or, in parts, assembled) bytes and checks their size and sha256 itself, then commits them like a put: 201 with the ArtifactRef (200 when the scope already held it). Other bytes than declared: 422 checksum_mismatch (or 400 for another size) and nothing is stored. Nothing uploaded yet, or parts missing: 400, and the upload stays open. The optional JSON body `{ parts: [{ partNumber, etag? }] }` (CompleteRequest) lists the parts uploaded (ascending, every one). With ?url=proxy|direct the ref carries a download link.',
  // The optional body (CompleteRequest) is read by the handler: an empty one, with or without a
  // JSON Content-Type, must pass, which the route's validator would refuse.
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

/** The parts a complete lists, if its body lists any (the body is optional, and may be empty). */
async function completeBody(raw: string): Promise<{ partNumber: number; etag?: string }[] | undefined> {
  if (raw.trim() === '') return undefined;
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw errors.badRequest('The body must be JSON: { "parts": [{ "partNumber", "etag" }] }, or empty.');
  }
  const parsed = CompleteDoc.safeParse(json);
  if (!parsed.success)
    throw errors.badRequest(
      `Invalid complete request: ${parsed.error.issues[0]?.path.join('.')} ${parsed.error.issues[0]?.message}.`,
    );
  return parsed.data.parts;
}

export function registerUploads(app: OpenAPIHono<AppEnv>, service: ArtifactService, publicUrl?: string) {
  app.openAPIRegistry.register('CompleteRequest', CompleteDoc);
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

  app.openapi(partsRoute, async (c) => {
    const caller = c.get('caller');
    requirePerm(caller, 'write');
    const parts = await service.uploadParts(accessOf(caller), c.req.valid('param').id, c.req.valid('json').parts);
    return c.json({ parts }, 200, { 'Cache-Control': 'no-store' });
  });

  app.openapi(statusRoute, async (c) => {
    const caller = c.get('caller');
    requirePerm(caller, 'write');
    const status = await service.getUpload(accessOf(caller), c.req.valid('param').id);
    return c.json(status, 200, { 'Cache-Control': 'no-store' });
  });

  app.openapi(abortRoute, async (c) => {
    const caller = c.get('caller');
    requirePerm(caller, 'write');
    const id = c.req.valid('param').id;
    if (!(await service.abortUpload(accessOf(caller), id)))
      throw new ArtifactError('not_found', `Upload ${JSON.stringify(id)} was not found in your scope.`);
    return c.body(null, 204);
  });

  app.openapi(completeRoute, async (c) => {
    const caller = c.get('caller');
    requirePerm(caller, 'write');
    linkModeOf(c);
    const access = accessOf(caller);
    const listed = await completeBody(await c.req.text());
    const { ref, created } = await service.completeUpload(access, c.req.valid('param').id, listed);
    c.header('Location', `/v1/artifacts/${encodeURIComponent(ref.id)}`);
    const [answer] = await withLinks(c, service, access, [ref], publicUrl);
    return c.json(answer!, created ? 201 : 200);
  });
}
