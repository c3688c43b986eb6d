import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { errors } from '../../core/errors.js';
import type { ServiceOperations } from '../../service/operations.js';
import type { AppEnv } from '../context.js';
import { errorResponses } from '../openapi-schemas.js';

const status = z.object({ status: z.string() });

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
  responses: {
    200: { description: 'Ready', content: { 'application/json': { schema: status } } },
    ...errorResponses(503),
  },
});

export function registerHealth(
  app: OpenAPIHono<AppEnv>,
  deps: { ops: Pick<ServiceOperations, 'ping'>; isDraining: () => boolean },
) {
  app.openapi(healthz, (c) => c.json({ status: 'ok' }, 200));
  app.openapi(readyz, async (c) => {
    if (deps.isDraining())
      throw errors.backendUnavailable('Shutting down; send new requests to another instance.', { retryAfter: 5 });
    try {
      await deps.ops.ping();
    } catch (err) {
      throw errors.backendUnavailable('The database or blob store does not answer.', { cause: err, retryAfter: 5 });
    }
    return c.json({ status: 'ready' }, 200);
  });
}
