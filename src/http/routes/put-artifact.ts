import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { errors } from '../../core/errors.js';
import { decodeExtValue, headerUtf8 } from '../../core/filename.js';
import type { PutOptions } from '../../core/schemas.js';
import { narrowScope } from '../../core/scope.js';
import type { ArtifactService } from '../../service/artifact-service.js';
import { accessOf, requirePerm } from '../auth.js';
import type { AppEnv } from '../context.js';
import { ArtifactRefDoc, errorResponses } from '../openapi-schemas.js';
import { artifactParam } from '../artifact-params.js';
import { linkModeOf, withLinks } from './artifact-url.js';

const header = (description: string) => z.string().optional().openapi({ description });

const route = createRoute({
  method: 'post',
  path: '/v1/artifacts',
  tags: ['artifacts'],
  summary: 'Store an artifact (raw body, streamed)',
  description:
    'The body is the raw bytes (not multipart), streamed and hashed on the way in. The same bytes, namespace and tenant always give the same id, so a put is idempotent and safe to retry. 201 when the reference is new for this scope, 200 when the scope already held it (its expiry is refreshed). Every X-Artifact-* header may instead be sent as a query parameter of the same name without the prefix (filename, namespace, meta, ttl, sha256, source, session, trace, user). An empty body stores a zero-byte artifact. With ?url=proxy|direct the answer carries a download link (url, fetchMode, urlExpiresAt).',
  request: {
    headers: z.object({
      'content-type': header('The mime type of the bytes (default application/octet-stream).'),
      'x-artifact-filename': header(
        "Display name; directories are stripped, control characters refused. Non-ASCII as RFC 8187 UTF-8''<percent-encoded>.",
      ),
      'x-artifact-namespace': header('[A-Za-z0-9._-]{1,128}, default "art". Becomes the id prefix.'),
      'x-artifact-meta': header("JSON object, at most 8 KiB, kept with this scope's reference."),
      'x-artifact-source': header('JSON object describing where the bytes came from (tool, server).'),
      'x-artifact-ttl': header(
        'Seconds until this reference expires, or "never" where the operator allows it (ARTIFACT_STORE_ALLOW_NO_EXPIRY).',
      ),
      'x-artifact-sha256': header(
        'Expected lowercase hex sha256; a mismatch is refused with 422 and nothing is stored.',
      ),
      'x-artifact-session': header('Tenant-wide tokens only: the session to store under.'),
      'x-artifact-trace': header('The trace to store under (unless the token is bound to one).'),
      'x-artifact-user': header('Tenant-wide tokens only: the user to store under.'),
    }),
    body: { content: { '*/*': { schema: z.string().openapi({ format: 'binary' }) } }, required: true },
  },
  responses: {
    200: {
      description: 'This scope already held the artifact; expiry refreshed.',
      content: { 'application/json': { schema: ArtifactRefDoc } },
    },
    201: { description: 'Stored.', content: { 'application/json': { schema: ArtifactRefDoc } } },
    ...errorResponses(400, 401, 403, 409, 413, 422, 503),
  },
});

function parseJsonObject(name: string, raw: string | undefined): Record<string, unknown> | undefined {
  if (raw === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(decodeExtValue(headerUtf8(raw)));
  } catch {
    throw errors.badRequest(
      `X-Artifact-${name} is not valid JSON. Send a JSON object (non-ASCII as UTF-8''<percent-encoded>).`,
    );
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw errors.badRequest(`X-Artifact-${name} must be a JSON object.`);
  return value as Record<string, unknown>;
}

/** POST /v1/artifacts (body limits were checked by the request steps: middleware/body-limits.ts). */
export function registerPutArtifact(app: OpenAPIHono<AppEnv>, service: ArtifactService, publicUrl?: string) {
  app.openapi(route, async (c) => {
    const caller = c.get('caller');
    requirePerm(caller, 'write');
    const options = putOptionsOf(c);
    const scope = narrowScope(
      { tenantId: caller.tenantId, userId: caller.userId, sessionId: caller.sessionId, traceId: caller.traceId },
      { sessionId: artifactParam(c, 'session'), traceId: artifactParam(c, 'trace'), userId: artifactParam(c, 'user') },
    );
    linkModeOf(c); // refused before any byte is stored
    // No body at all is a zero-byte artifact: an empty tool output is a valid output.
    const body = c.req.raw.body ?? new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
    const { ref, created } = await service.putStream(scope, body, options);
    c.header('Location', `/v1/artifacts/${encodeURIComponent(ref.id)}`);
    const [answer] = await withLinks(c, service, accessOf(caller), [ref], publicUrl);
    return c.json(answer!, created ? 201 : 200);
  });
}

/** A put's options from its request: Content-Type and the X-Artifact-* headers or query parameters. */
export function putOptionsOf(c: Context): PutOptions {
  const ttlRaw = artifactParam(c, 'ttl');
  if (ttlRaw !== undefined && ttlRaw !== 'never' && !/^[1-9]\d{0,9}$/.test(ttlRaw))
    throw errors.badRequest('X-Artifact-Ttl must be a positive whole number of seconds, or "never".');
  const sha = artifactParam(c, 'sha256');
  if (sha !== undefined && !/^[0-9a-fA-F]{64}$/.test(sha))
    throw errors.badRequest('X-Artifact-Sha256 must be 64 hex characters.');
  const filename = artifactParam(c, 'filename');
  const mime = c.req.header('content-type');
  const options: PutOptions = {
    ...(mime ? { mimeType: mime } : {}),
    ...(filename !== undefined ? { filename: decodeExtValue(headerUtf8(filename)) } : {}),
    ...(artifactParam(c, 'namespace') !== undefined ? { namespace: artifactParam(c, 'namespace') } : {}),
    ...(ttlRaw !== undefined ? { ttl: ttlRaw === 'never' ? ('never' as const) : Number(ttlRaw) } : {}),
    ...(sha !== undefined ? { sha256: sha.toLowerCase() } : {}),
  };
  const meta = parseJsonObject('Meta', artifactParam(c, 'meta'));
  if (meta) options.meta = meta;
  const source = parseJsonObject('Source', artifactParam(c, 'source'));
  if (source) options.source = source;
  return options;
}
