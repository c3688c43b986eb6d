/**
 * /v1/tus: resumable uploads through the service on the tus 1.0 protocol (core, creation,
 * termination, checksum and expiration), so tus-js-client and Uppy upload here unchanged, with the
 * normal bearer token, the put's scope headers, options, limits and quotas. The routes only read
 * the protocol's headers; the service (service/tus-uploads.ts) keeps the upload. HEAD and PATCH are
 * plain Hono routes, documented in the OpenAPI document by hand.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import { errors, isArtifactError } from '../../core/errors.js';
import type { PutOptions } from '../../core/schemas.js';
import { narrowScope } from '../../core/scope.js';
import { TUS_CHECKSUM_ALGORITHMS, type ChunkChecksum, type TusChecksumAlgorithm } from '../../service/tus-staging.js';
import type { TusAppendResult, TusUploads, TusUploadState } from '../../service/tus-uploads.js';
import { readAccessOf, requirePerm } from '../auth.js';
import type { AppEnv } from '../context.js';
import { ErrorDoc } from '../openapi-schemas.js';

export const TUS_VERSION = '1.0.0';
export const TUS_EXTENSIONS = 'creation,termination,checksum,expiration';
/** The header that names the stored artifact once the last byte is in. */
export const ARTIFACT_ID_HEADER = 'X-Artifact-Id';
/** The request headers of the protocol, for CORS. */
export const TUS_REQUEST_HEADERS = [
  'Tus-Resumable',
  'Upload-Length',
  'Upload-Offset',
  'Upload-Metadata',
  'Upload-Checksum',
  'Upload-Defer-Length',
  'X-HTTP-Method-Override',
];
/** The answer headers of the protocol a browser's script must read, for CORS. */
export const TUS_RESPONSE_HEADERS = [
  'Tus-Resumable',
  'Tus-Version',
  'Tus-Extension',
  'Tus-Max-Size',
  'Tus-Checksum-Algorithm',
  'Upload-Offset',
  'Upload-Length',
  'Upload-Expires',
  ARTIFACT_ID_HEADER,
];

const OFFSET_CONTENT_TYPE = 'application/offset+octet-stream';
const DIGITS = /^\d{1,16}$/;

/**
 * What every /v1/tus request goes through, before authentication: OPTIONS answers what the service
 * speaks; any other request must say Tus-Resumable: 1.0.0 (else 412); every answer carries it; and the
 * statuses tus clients act on replace the service's where they differ (tusStatusOf).
 */
export function tusProtocol(maxArtifactBytes: number): MiddlewareHandler<AppEnv> {
  return async function tusProtocolHeaders(c, next) {
    if (c.req.method === 'OPTIONS') {
      return c.body(null, 204, {
        'Tus-Resumable': TUS_VERSION,
        'Tus-Version': TUS_VERSION,
        'Tus-Extension': TUS_EXTENSIONS,
        'Tus-Max-Size': String(maxArtifactBytes),
        'Tus-Checksum-Algorithm': TUS_CHECKSUM_ALGORITHMS.join(','),
      });
    }
    if (c.req.header('tus-resumable') !== TUS_VERSION) {
      return c.json(
        {
          code: 'bad_request',
          message: `Send Tus-Resumable: ${TUS_VERSION} with every tus request: this service speaks tus ${TUS_VERSION}.`,
          details: { reason: 'tus_version' },
        },
        412,
        { 'Tus-Resumable': TUS_VERSION, 'Tus-Version': TUS_VERSION },
      );
    }
    await next();
    const status = tusStatusOf(c.error);
    if (status !== undefined && status !== c.res.status)
      c.res = new Response(c.res.body, { status, headers: c.res.headers });
    c.res.headers.set('Tus-Resumable', TUS_VERSION);
  };
}

/**
 * The status a tus client must see for an error, where it differs from the service's table: 409 only
 * for an offset conflict (tus clients resume after a 409, so a quota or collision refusal, which no
 * retry cures, answers 413 and 422), 460 for a PATCH whose bytes do not match Upload-Checksum.
 */
function tusStatusOf(err: Error | undefined): number | undefined {
  if (!isArtifactError(err)) return undefined;
  if (err.details?.reason === 'offset_mismatch') return 409;
  if (err.code === 'checksum_mismatch' && err.details?.reason === 'upload_checksum') return 460;
  if (err.code === 'quota_exceeded') return 413;
  if (err.code === 'hash_collision') return 422;
  return undefined;
}

export function registerTus(app: OpenAPIHono<AppEnv>, tus: TusUploads, publicUrl?: string): void {
  app.post('/v1/tus', async (c) => {
    const caller = c.get('caller');
    requirePerm(caller, 'write');
    if (c.req.header('upload-defer-length') !== undefined)
      throw errors.badRequest('Upload-Defer-Length is not supported: send Upload-Length, the exact size of the file.');
    const sizeBytes = wholeNumber(c.req.header('upload-length'), 'Upload-Length');
    const { options, sha256 } = optionsOf(c.req.header('upload-metadata'));
    const scope = narrowScope(
      { tenantId: caller.tenantId, userId: caller.userId, sessionId: caller.sessionId, traceId: caller.traceId },
      {
        sessionId: c.req.header('x-artifact-session'),
        traceId: c.req.header('x-artifact-trace'),
        userId: c.req.header('x-artifact-user'),
      },
    );
    const created = await tus.create(scope, { sizeBytes, ...(sha256 ? { sha256 } : {}) }, options);
    const base = (publicUrl ?? new URL(c.req.url).origin).replace(/\/+$/, '');
    return c.body(null, 201, {
      Location: `${base}/v1/tus/${created.id}`,
      ...stateHeaders(created),
    });
  });

  // Hono routes a HEAD to its GET route (and sends no body); tus defines no GET, which answers the same.
  app.get('/v1/tus/:id', async (c) => {
    const caller = c.get('caller');
    requirePerm(caller, 'write');
    const state = await tus.status(readAccessOf(c, caller), c.req.param('id'));
    return c.body(null, 200, { ...stateHeaders(state), 'Upload-Length': String(state.sizeBytes) });
  });

  const patch = async (c: Context<AppEnv>) => {
    const caller = c.get('caller');
    requirePerm(caller, 'write');
    const type = c.req.header('content-type')?.split(';')[0]?.trim().toLowerCase();
    if (type !== OFFSET_CONTENT_TYPE) {
      return c.json(
        {
          code: 'bad_request',
          message: `A PATCH of a tus upload carries its bytes as Content-Type: ${OFFSET_CONTENT_TYPE}.`,
          details: { reason: 'content_type' },
        },
        415,
      );
    }
    const offset = wholeNumber(c.req.header('upload-offset'), 'Upload-Offset');
    const checksum = checksumOf(c.req.header('upload-checksum'));
    const length = c.req.header('content-length');
    const result = await tus.append(readAccessOf(c, caller), c.req.param('id')!, {
      offset,
      body: c.req.raw.body ?? new ReadableStream({ start: (controller) => controller.close() }),
      ...(length !== undefined && DIGITS.test(length) ? { length: Number(length) } : {}),
      ...(checksum ? { checksum } : {}),
    });
    return c.body(null, 204, stateHeaders(result));
  };
  app.patch('/v1/tus/:id', patch);
  // Clients behind proxies that drop PATCH send POST with X-HTTP-Method-Override (tus-js-client's
  // overridePatchMethod).
  app.post('/v1/tus/:id', async (c) => {
    if (c.req.header('x-http-method-override')?.toUpperCase() !== 'PATCH')
      throw errors.badRequest(
        'POST to a tus upload needs X-HTTP-Method-Override: PATCH; create uploads with POST /v1/tus.',
      );
    return patch(c);
  });

  app.delete('/v1/tus/:id', async (c) => {
    const caller = c.get('caller');
    requirePerm(caller, 'write');
    await tus.terminate(readAccessOf(c, caller), c.req.param('id'));
    return c.body(null, 204);
  });

  documentTus(app);
}

/** Upload-Offset, Upload-Expires, no caching; the artifact's id once it is stored. */
function stateHeaders(state: TusUploadState | TusAppendResult): Record<string, string> {
  return {
    'Upload-Offset': String(state.offset),
    'Upload-Expires': new Date(state.expiresAt).toUTCString(),
    'Cache-Control': 'no-store',
    ...(state.artifactId ? { [ARTIFACT_ID_HEADER]: state.artifactId } : {}),
  };
}

function wholeNumber(value: string | undefined, name: string): number {
  if (value === undefined || !DIGITS.test(value.trim()))
    throw errors.badRequest(`${name} must be a whole number of bytes (got ${JSON.stringify(value ?? null)}).`);
  return Number(value.trim());
}

/**
 * Upload-Metadata (`key base64value, key base64value, key`) as a put's options: `filename` or `name`,
 * `filetype` or `type` (the mime type), `namespace`, `ttl` (seconds or `never`), `meta` (a JSON
 * object) and `sha256` (what the whole upload must hash to). Other keys (Uppy's `relativePath`, say)
 * are ignored.
 */
export function optionsOf(header: string | undefined): { options: PutOptions; sha256?: string } {
  const values = new Map<string, string>();
  for (const pair of (header ?? '').split(',')) {
    const [key, value, extra] = pair.trim().split(/\s+/);
    if (!key) continue;
    if (extra !== undefined) throw errors.badRequest(`Upload-Metadata: "${pair.trim()}" is not "key base64value".`);
    values.set(key, value === undefined ? '' : decodeMetadata(key, value));
  }
  const text = (...keys: string[]) => {
    for (const k of keys) {
      const v = values.get(k);
      if (v !== undefined && v !== '') return v;
    }
    return undefined;
  };
  const options: PutOptions = {};
  const filename = text('filename', 'name');
  const mimeType = text('filetype', 'type');
  const namespace = text('namespace');
  const ttl = text('ttl');
  const meta = text('meta');
  if (filename !== undefined) options.filename = filename;
  if (mimeType !== undefined) options.mimeType = mimeType;
  if (namespace !== undefined) options.namespace = namespace;
  if (ttl !== undefined) {
    if (ttl !== 'never' && !/^\d+$/.test(ttl))
      throw errors.badRequest(`Upload-Metadata ttl must be seconds or "never" (got ${JSON.stringify(ttl)}).`);
    options.ttl = ttl === 'never' ? 'never' : Number(ttl);
  }
  if (meta !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(meta);
    } catch {
      parsed = undefined;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw errors.badRequest('Upload-Metadata meta must be a JSON object.');
    options.meta = parsed as Record<string, unknown>;
  }
  const sha256 = text('sha256')?.toLowerCase();
  return sha256 === undefined ? { options } : { options, sha256 };
}

function decodeMetadata(key: string, value: string): string {
  try {
    const binary = atob(value);
    return new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(binary, (ch) => ch.charCodeAt(0)));
  } catch {
    throw errors.badRequest(`Upload-Metadata ${key}: the value is not base64 of UTF-8 text.`);
  }
}

/** Upload-Checksum: `<algorithm> <base64 digest>`, an algorithm of Tus-Checksum-Algorithm. */
function checksumOf(header: string | undefined): ChunkChecksum | undefined {
  if (header === undefined) return undefined;
  const [name, digest] = header.trim().split(/\s+/);
  const algorithm = name?.toLowerCase() as TusChecksumAlgorithm;
  if (!TUS_CHECKSUM_ALGORITHMS.includes(algorithm) || !digest)
    throw errors.badRequest(
      `Upload-Checksum must be "<algorithm> <base64 digest>" with one of ${TUS_CHECKSUM_ALGORITHMS.join(', ')}.`,
      { details: { reason: 'checksum_algorithm' } },
    );
  try {
    return { algorithm, digest: Uint8Array.from(atob(digest), (ch) => ch.charCodeAt(0)) };
  } catch {
    throw errors.badRequest('Upload-Checksum: the digest is not base64.');
  }
}

/** The routes in the OpenAPI document (they are plain Hono routes: HEAD and PATCH have no helper). */
function documentTus(app: OpenAPIHono<AppEnv>): void {
  const tus = {
    name: 'Tus-Resumable',
    in: 'header' as const,
    required: true,
    schema: { type: 'string' as const, enum: [TUS_VERSION] },
  };
  const id = { name: 'id', in: 'path' as const, required: true, schema: { type: 'string' as const } };
  const error = (description: string) => ({ description, content: { 'application/json': { schema: ErrorDoc } } });
  const common = {
    401: error('Missing or invalid token (unauthorized)'),
    403: error('The token lacks write, or names another scope (forbidden)'),
    404: error("No such upload in your scope: missing, expired, terminated, or another tenant's (not_found)"),
    412: error('Tus-Resumable missing or not 1.0.0 (bad_request, details.reason tus_version)'),
    429: error('Over a rate limit (rate_limited)'),
  };
  const tags = ['tus'];
  app.openAPIRegistry.registerPath({
    method: 'options',
    path: '/v1/tus',
    tags,
    summary: 'What tus this service speaks',
    description:
      "Tus-Version, Tus-Extension, Tus-Max-Size (the service's largest artifact) and Tus-Checksum-Algorithm. No token needed.",
    security: [],
    responses: { 204: { description: 'The tus headers' } },
  });
  app.openAPIRegistry.registerPath({
    method: 'post',
    path: '/v1/tus',
    tags,
    summary: 'Create a resumable (tus) upload',
    description:
      "Upload-Length (required; no Upload-Defer-Length), Upload-Metadata keys filename|name, filetype|type, namespace, ttl, meta (JSON), sha256. The scope is the token's, narrowed by X-Artifact-Session / -Trace / -User. 201 with Location (the upload's URL) and Upload-Expires; an empty upload is stored at once (X-Artifact-Id).",
    parameters: [tus],
    responses: {
      201: { description: 'Created: Location is where to PATCH the bytes' },
      400: error('Bad Upload-Length or Upload-Metadata (bad_request)'),
      413: error(
        'Larger than the largest artifact, or than a whole scope may hold (payload_too_large, quota_exceeded)',
      ),
      ...common,
    },
  });
  for (const [method, summary, description, responses] of [
    [
      'head',
      'Where a tus upload stands',
      'Upload-Offset (bytes acknowledged), Upload-Length, Upload-Expires; once stored, Upload-Offset = Upload-Length and X-Artifact-Id.',
      { 200: { description: 'Upload-Offset and Upload-Length' } },
    ],
    [
      'patch',
      'Send bytes of a tus upload',
      'Content-Type application/offset+octet-stream; Upload-Offset must be the acknowledged offset; optional Upload-Checksum "<sha1|sha256|md5> <base64>" over this request\'s bytes. 204 with the new Upload-Offset once the bytes are durable; the last byte commits the artifact like a put and the answer carries X-Artifact-Id.',
      {
        204: { description: 'Acknowledged: the new Upload-Offset (X-Artifact-Id once stored)' },
        409: error(
          'Upload-Offset is not the acknowledged offset (bad_request, details.reason offset_mismatch, details.offset)',
        ),
        413: error(
          'More bytes than the upload has left, or a quota refused the commit (payload_too_large, quota_exceeded)',
        ),
        415: error('Content-Type is not application/offset+octet-stream (bad_request)'),
        422: error(
          'The bytes do not hash to the declared sha256 (checksum_mismatch): nothing stored, the upload ended',
        ),
        460: error('The bytes do not match Upload-Checksum (checksum_mismatch): not kept, offset unchanged'),
      },
    ],
    ['delete', 'End a tus upload (termination)', 'Drops the upload and its bytes.', { 204: { description: 'Ended' } }],
  ] as const) {
    app.openAPIRegistry.registerPath({
      method,
      path: '/v1/tus/{id}',
      tags,
      summary,
      description,
      parameters: [id, tus],
      responses: { ...responses, ...common },
    } as Parameters<typeof app.openAPIRegistry.registerPath>[0]);
  }
}
