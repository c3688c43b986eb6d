import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { errors } from '../../core/errors.js';
import type { RetentionReport } from '../../service/retention.js';
import { requirePerm } from '../auth.js';
import type { AppEnv } from '../context.js';
import { ArtifactIdParam, errorResponses } from '../openapi-schemas.js';
import type { ArtifactService } from '../../service/artifact-service.js';

const Report = z.record(z.string(), z.unknown()).openapi('RetentionReport', {
  description: 'Counts per category: expired, evicted, over-limit scopes kept (strategy none), unreferenced artifacts, reaped uploads.',
});

const route = createRoute({
  method: 'post',
  path: '/v1/admin/retention',
  tags: ['admin'],
  summary: 'Run retention now',
  description:
    'Expires references past their TTL, brings sessions and traces over their limits back within them, drops unreferenced artifacts and reaps unfinished direct uploads. The same run as `artifact-store retention run` and the in-process scheduler; a call while a run is in progress in this process waits for that run. Admin only.',
  responses: { 200: { description: 'The report of the run', content: { 'application/json': { schema: Report } } }, ...errorResponses(401, 403, 503) },
});

export function registerAdminRetention(app: OpenAPIHono<AppEnv>, run: ((trigger: string) => Promise<RetentionReport>) | undefined) {
  app.openapi(route, async (c) => {
    requirePerm(c.get('caller'), 'admin');
    if (!run) throw errors.backendUnavailable('This service runs no retention (no repository behind it).', { retryAfter: 60 });
    return c.json((await run('http')) as unknown as Record<string, unknown>, 200);
  });
}

const purgeRoute = createRoute({
  method: 'delete',
  path: '/v1/admin/artifacts/{id}',
  tags: ['admin'],
  summary: 'Purge an artifact from the tenant',
  description:
    "Removes every reference of the caller's tenant to the artifact (each with artifact.deleted), and its bytes unless another tenant holds them or a put is committing them: proxy links stop at once, direct links die with the object. Admin only.",
  request: { params: ArtifactIdParam },
  responses: {
    200: {
      description: 'What went (cdnInvalidated: present with a CDN distribution configured; false = cached copies live until their TTL)',
      content: { 'application/json': { schema: z.object({ id: z.string(), refs: z.number().int(), bytesDeleted: z.boolean(), cdnInvalidated: z.boolean().optional() }) } },
    },
    ...errorResponses(401, 403, 404, 503),
  },
});

export function registerAdminPurge(app: OpenAPIHono<AppEnv>, service: ArtifactService) {
  app.openapi(purgeRoute, async (c) => {
    const caller = c.get('caller');
    requirePerm(caller, 'admin');
    const { id } = c.req.valid('param');
    const result = await service.purge(caller.tenantId, id);
    return c.json({ id, ...result }, 200);
  });
}
