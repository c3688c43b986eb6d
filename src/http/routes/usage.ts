import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Policy } from '../../core/policy.js';
import type { ArtifactRepository } from '../../db/repository.js';
import { usageReport } from '../../service/usage.js';
import { requirePerm } from '../auth.js';
import type { AppEnv } from '../context.js';
import { errorResponses } from '../openapi-schemas.js';

const route = createRoute({
  method: 'get',
  path: '/v1/usage',
  tags: ['usage'],
  summary: 'Bytes and counts against the limits',
  description:
    "Live references only, as the quotas count them. A tenant token gets its tenant and its top sessions and traces (a session-bound token: its own session); an admin token gets every tenant (or `tenant`) and the latest retention runs.",
  request: {
    query: z.object({
      top: z.coerce.number().int().min(1).max(1000).default(20).openapi({ description: 'How many sessions and traces (biggest first).' }),
      tenant: z.string().optional().openapi({ description: 'Admins: one tenant only.' }),
    }),
  },
  responses: { 200: { description: 'Usage report', content: { 'application/json': { schema: z.record(z.string(), z.unknown()).openapi('UsageReport') } } }, ...errorResponses(400, 401, 403) },
});

export function registerUsage(app: OpenAPIHono<AppEnv>, repo: ArtifactRepository, policies: (tenantId: string) => Policy, now: () => number = Date.now) {
  app.openapi(route, async (c) => {
    const caller = c.get('caller');
    requirePerm(caller, 'read');
    const { top, tenant } = c.req.valid('query');
    const admin = caller.perms.has('admin') && caller.sessionId === undefined;
    const scope = admin
      ? { ...(tenant !== undefined ? { tenantId: tenant } : {}) }
      : { tenantId: caller.tenantId, ...(caller.sessionId !== undefined ? { sessionId: caller.sessionId } : {}), ...(caller.traceId !== undefined ? { traceId: caller.traceId } : {}) };
    return c.json((await usageReport(repo, policies, scope, top, now())) as unknown as Record<string, unknown>, 200);
  });
}
