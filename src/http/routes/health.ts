import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { BlobStore } from '../../blob/blob-store.js';
import { errors } from '../../core/errors.js';
import type { ArtifactRepository } from '../../db/repository.js';
import type { AppEnv } from '../context.js';
import { errorResponses } from '../openapi-schemas.js';

const status = z.object({ status: z.string() });
const PROBE_HASH = '0'.repeat(64);

const healthz = createRoute({
  method: 'get',
  path: '/healthz',
  tags: ['ops'],
  summary: 'Liveness: the process answers',
  responses: { 200: { description: 'Alive', content: { 'application/json': { schema: status } } } },
});

const readyz = createRoute({
  method: 'get',
  path: '/readyz',
  tags: ['ops'],
  summary: 'Readiness: the database and blob store answer',
  responses: { 200: { description: 'Ready', content: { 'application/json': { schema: status } } }, ...errorResponses(503) },
});

export function registerHealth(app: OpenAPIHono<AppEnv>, deps: { repo: ArtifactRepository; blobs: BlobStore; isDraining: () => boolean }) {
  app.openapi(healthz, (c) => c.json({ status: 'ok' }, 200));
  app.openapi(readyz, async (c) => {
    if (deps.isDraining()) throw errors.backendUnavailable('Shutting down; send new requests to another instance.', { retryAfter: 5 });
    try {
      await deps.repo.ping();
      await deps.blobs.exists(PROBE_HASH);
    } catch (err) {
      throw errors.backendUnavailable('The database or blob store does not answer.', { cause: err, retryAfter: 5 });
    }
    return c.json({ status: 'ready' }, 200);
  });
}
