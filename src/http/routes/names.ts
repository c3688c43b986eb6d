/**
 * Named versions over HTTP: /v1/names/{app}. A name lives in the caller's tenant, the app (the
 * versions' namespace), a user, and a session or user-wide. Which one: `scope=user` (user-wide) or
 * `scope=session`; without it, the session the token is bound to or names (X-Artifact-Session /
 * ?session=), else user-wide. The user is the token's, or the one a tenant-wide token names
 * (X-Artifact-User / ?user=). Another scope's name answers exactly as a missing one.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { encodeBase64 } from '../../core/base64.js';
import { ArtifactError, errors } from '../../core/errors.js';
import { narrowFilter } from '../../core/scope.js';
import { ArtifactRefDoc, errorResponses } from '../openapi-schemas.js';
import type { ArtifactRef, NameKey, NameScope } from '../../core/schemas.js';
import type { ArtifactService } from '../../service/artifact-service.js';
import { namedScope, requirePerm } from '../auth.js';
import type { AppEnv } from '../context.js';
import { dispositionOf, serveDownload } from './get-artifact.js';
import { putOptionsOf } from './put-artifact.js';
import { DownloadUrlDoc, publicBaseUrl, UrlRequestDoc } from './artifact-url.js';

const AppParam = z.object({
  app: z.string().openapi({ param: { name: 'app', in: 'path' }, description: 'The app: the versions\u2019 namespace' }),
});
const scopeQuery = {
  scope: z.enum(['user', 'session']).optional().openapi({
    description: 'user: user-wide (no session); session: the session. Default: the session if there is one.',
  }),
  session: z
    .string()
    .optional()
    .openapi({ description: 'A tenant-wide token names the session (or X-Artifact-Session).' }),
  user: z.string().optional().openapi({ description: 'A tenant-wide token names the user (or X-Artifact-User).' }),
};
const nameQuery = { name: z.string().min(1).openapi({ description: 'The name (1-512 characters)' }), ...scopeQuery };
const versionQuery = {
  ...nameQuery,
  version: z.string().optional().openapi({ description: 'The version number; default the latest live one.' }),
};

const NameInfoDoc = z
  .object({
    name: z.string(),
    scope: z.enum(['session', 'user']),
    latestVersion: z.number().int(),
    versions: z.number().int(),
    updatedAt: z.string(),
  })
  .openapi('NameInfo');

const binary = { '*/*': { schema: z.string().openapi({ format: 'binary' }) } };

const docs = [
  createRoute({
    method: 'post',
    path: '/v1/names/{app}',
    tags: ['names'],
    summary: 'Save a new version of a name',
    description:
      'Raw body, with the same Content-Type and X-Artifact-* headers as a put (filename, meta, source, ttl, sha256). The version number comes from the name\u2019s counter in the same transaction: 0, 1, 2…, never reused while the name exists. Named versions do not expire unless the save or the tenant\u2019s policy says so, are never evicted, and count against quotas (a full scope refuses).',
    request: { params: AppParam, query: z.object(nameQuery) },
    responses: {
      201: {
        description: 'The version saved (its ref carries name and version)',
        content: { 'application/json': { schema: ArtifactRefDoc } },
      },
      ...errorResponses(400, 401, 403, 409, 413, 422, 503),
    },
  }),
  createRoute({
    method: 'get',
    path: '/v1/names/{app}',
    tags: ['names'],
    summary: 'List names with a live version',
    request: {
      params: AppParam,
      query: z.object({ ...scopeQuery, cursor: z.string().optional(), limit: z.string().optional() }),
    },
    responses: {
      200: {
        description: 'Names, by name',
        content: {
          'application/json': { schema: z.object({ items: z.array(NameInfoDoc), nextCursor: z.string().optional() }) },
        },
      },
      ...errorResponses(400, 401, 403),
    },
  }),
  createRoute({
    method: 'get',
    path: '/v1/names/{app}/versions',
    tags: ['names'],
    summary: "A name's live versions, oldest first",
    request: { params: AppParam, query: z.object(nameQuery) },
    responses: {
      200: {
        description: 'Versions',
        content: { 'application/json': { schema: z.object({ items: z.array(ArtifactRefDoc) }) } },
      },
      ...errorResponses(400, 401, 403, 404),
    },
  }),
  createRoute({
    method: 'get',
    path: '/v1/names/{app}/content',
    tags: ['names'],
    summary: 'Download a version (the latest by default)',
    description:
      'As GET /v1/artifacts/{id}: Range, ETag (the sha256), If-None-Match, If-Range, the same download headers.',
    request: {
      params: AppParam,
      query: z.object({ ...versionQuery, disposition: z.enum(['inline', 'attachment']).optional() }),
    },
    responses: {
      200: { description: 'The bytes', content: binary },
      206: { description: 'A range of the bytes', content: binary },
      304: { description: 'Not modified' },
      ...errorResponses(400, 401, 403, 404, 416, 503),
    },
  }),
  createRoute({
    method: 'get',
    path: '/v1/names/{app}/meta',
    tags: ['names'],
    summary: "A version's ArtifactRef (the latest by default)",
    request: { params: AppParam, query: z.object(versionQuery) },
    responses: {
      200: { description: 'The version', content: { 'application/json': { schema: ArtifactRefDoc } } },
      ...errorResponses(400, 401, 403, 404),
    },
  }),
  createRoute({
    method: 'post',
    path: '/v1/names/{app}/url',
    tags: ['names'],
    summary: 'A download link for a version, for browsers (no token needed)',
    request: {
      params: AppParam,
      query: z.object(versionQuery),
      body: { required: false, content: { 'application/json': { schema: UrlRequestDoc } } },
    },
    responses: {
      200: { description: 'The link', content: { 'application/json': { schema: DownloadUrlDoc } } },
      ...errorResponses(400, 401, 403, 404, 503),
    },
  }),
  createRoute({
    method: 'delete',
    path: '/v1/names/{app}',
    tags: ['names'],
    summary: 'Delete a name and every version, or one version',
    description:
      'Without version: the name and every version go, and a later save starts again at version 0. With ?version=V: that version alone goes (404 when there is none); the name keeps its other versions and its count, so V is never given again.',
    request: {
      params: AppParam,
      query: z.object({
        ...nameQuery,
        version: z.string().optional().openapi({ description: 'One version to delete: a whole number from 0' }),
      }),
    },
    responses: { 204: { description: 'Deleted' }, ...errorResponses(400, 401, 403, 404) },
  }),
];

/** Where a ref says more than this, the client reads it from /meta instead. */
const REF_HEADER_MAX = 8 * 1024;

/**
 * The version's ArtifactRef with its bytes, as base64url JSON in X-Artifact-Ref: a reader gets which
 * version it read, its type and metadata in the same answer (left out when it would be over 8 KiB).
 */
function refHeader(ref: ArtifactRef): Record<string, string> {
  const value = encodeBase64(new TextEncoder().encode(JSON.stringify(ref)))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
  return value.length <= REF_HEADER_MAX ? { 'X-Artifact-Ref': value } : {};
}

/** The scope a request means: see the module comment. */
function nameScopeOf(c: Context<AppEnv>, app: string): NameScope {
  const caller = c.get('caller');
  const narrowed = narrowFilter(
    { userId: caller.userId, sessionId: caller.sessionId, traceId: caller.traceId },
    namedScope(c),
  );
  const scope = c.req.query('scope');
  if (scope !== undefined && scope !== 'user' && scope !== 'session')
    throw errors.badRequest('scope must be user (user-wide) or session.');
  if (scope === 'session' && narrowed.sessionId === undefined)
    throw errors.badRequest('scope=session needs a session: a session-bound token, or X-Artifact-Session / ?session=.');
  const userWide = scope === 'user' || narrowed.sessionId === undefined;
  return {
    tenantId: caller.tenantId,
    app,
    userId: narrowed.userId ?? '',
    sessionId: userWide ? '' : narrowed.sessionId!,
  };
}

function nameKeyOf(c: Context<AppEnv>): NameKey {
  const name = c.req.query('name');
  if (name === undefined || name === '') throw errors.badRequest('Give the name: ?name=<name> (URL-encoded).');
  return { ...nameScopeOf(c, c.req.param('app')!), name };
}

function versionOf(c: Context<AppEnv>): number | undefined {
  const raw = c.req.query('version');
  if (raw === undefined || raw === '' || raw === 'latest') return undefined;
  if (!/^\d{1,15}$/.test(raw)) throw errors.badRequest('version must be a whole number from 0 (or latest).');
  return Number(raw);
}

export function registerNames(app: OpenAPIHono<AppEnv>, service: ArtifactService, publicUrl?: string) {
  for (const doc of docs) app.openAPIRegistry.registerPath(doc);

  app.post('/v1/names/:app', async (c) => {
    requirePerm(c.get('caller'), 'write');
    const options = putOptionsOf(c);
    if (options.namespace !== undefined)
      throw errors.badRequest(
        'A name\u2019s versions take the app as their namespace: leave X-Artifact-Namespace out.',
      );
    const key = nameKeyOf(c);
    const body = c.req.raw.body ?? new ReadableStream<Uint8Array>({ start: (controller) => controller.close() });
    const { ref } = await service.saveVersion(key, body, options);
    const where = new URLSearchParams({ name: key.name, version: String(ref.version), user: key.userId });
    if (key.sessionId) where.set('session', key.sessionId);
    else where.set('scope', 'user');
    c.header('Location', `/v1/names/${encodeURIComponent(key.app)}/content?${where}`);
    return c.json(ref, 201);
  });

  app.get('/v1/names/:app', async (c) => {
    requirePerm(c.get('caller'), 'read');
    const scope = nameScopeOf(c, c.req.param('app'));
    const limitRaw = c.req.query('limit');
    if (limitRaw !== undefined && !/^\d{1,4}$/.test(limitRaw))
      throw errors.badRequest('limit must be a whole number from 1 to 1000.');
    const cursor = c.req.query('cursor');
    return c.json(
      await service.listNames(scope, {
        ...(cursor ? { cursor } : {}),
        ...(limitRaw !== undefined ? { limit: Number(limitRaw) } : {}),
      }),
      200,
    );
  });

  app.get('/v1/names/:app/versions', async (c) => {
    requirePerm(c.get('caller'), 'read');
    return c.json({ items: await service.listVersions(nameKeyOf(c)) }, 200);
  });

  app.get('/v1/names/:app/meta', async (c) => {
    requirePerm(c.get('caller'), 'read');
    return c.json(await service.versionRef(nameKeyOf(c), versionOf(c)), 200);
  });

  app.get('/v1/names/:app/content', (c) => {
    requirePerm(c.get('caller'), 'read');
    const key = nameKeyOf(c);
    const version = versionOf(c);
    return serveDownload(
      c,
      {
        entity: () => service.versionEntity(key, version),
        body: (resolveRange, smallBytes) => service.versionBody(key, version, resolveRange, smallBytes),
      },
      dispositionOf(c.req.query('disposition')),
      // The latest version changes with each save: only a numbered version is immutable.
      version === undefined ? 'private, no-cache' : undefined,
      (entity) => refHeader(service.refOfVersion(entity)),
    );
  });

  app.post('/v1/names/:app/url', async (c) => {
    requirePerm(c.get('caller'), 'read');
    const key = nameKeyOf(c);
    const version = versionOf(c);
    const raw = await c.req.text();
    let asked: z.infer<typeof UrlRequestDoc> = {};
    if (raw.trim() !== '') {
      let json: unknown;
      try {
        json = JSON.parse(raw);
      } catch {
        throw errors.badRequest('The body must be JSON: { "mode", "expiresIn", "disposition" }, all optional.');
      }
      const parsed = UrlRequestDoc.safeParse(json);
      if (!parsed.success) throw errors.badRequest(`Invalid link request: ${parsed.error.issues[0]?.message}.`);
      asked = parsed.data;
    }
    const link = await service.versionUrl(key, version, { ...asked, baseUrl: publicBaseUrl(publicUrl, c.req.url) });
    return c.json(link, 200);
  });

  app.delete('/v1/names/:app', async (c) => {
    requirePerm(c.get('caller'), 'write');
    const key = nameKeyOf(c);
    const version = versionOf(c);
    if (c.req.query('version') === 'latest')
      throw errors.badRequest('Delete one version by its number (?version=3), or the whole name without version.');
    if (!(await service.deleteName(key, version)))
      throw new ArtifactError(
        'not_found',
        version === undefined
          ? `No name ${JSON.stringify(key.name)} in app ${JSON.stringify(key.app)} in your scope. List names with GET /v1/names/{app}.`
          : `No version ${version} of ${JSON.stringify(key.name)} in app ${JSON.stringify(key.app)} in your scope. List its versions with GET /v1/names/{app}/versions.`,
      );
    return c.body(null, 204);
  });
}
