import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { ServiceOperations } from '../../service/operations.js';
import { adminTenantOf, isTenantAdmin, requirePerm } from '../auth.js';
import type { RateLimiter } from '../rate-limit.js';
import type { AppEnv } from '../context.js';
import { errorResponses } from '../openapi-schemas.js';

const route = createRoute({
  method: 'get',
  path: '/v1/usage',
  tags: ['usage'],
  summary: 'Bytes and counts against the limits',
  description:
    "Live references only, as the quotas count them. A tenant token gets its tenant and its top sessions and traces (a session-bound token: its own session); a tenant's admin also gets its tenant's part of the latest retention runs and its rate-limit refusals. An operator key gets every tenant (or `tenant`), whole retention runs and every tenant's refusals.",
  request: {
    query: z.object({
      top: z.coerce
        .number()
        .int()
        .min(1)
        .max(1000)
        .default(20)
        .openapi({ description: 'How many sessions and traces (biggest first).' }),
      tenant: z
        .string()
        .min(1)
        .optional()
        .openapi({ description: 'Operators: one tenant only. A tenant token may name only its own.' }),
    }),
  },
  responses: {
    200: {
      description: 'Usage report',
      content: { 'application/json': { schema: z.record(z.string(), z.unknown()).openapi('UsageReport') } },
    },
    ...errorResponses(400, 401, 403),
  },
});

export function registerUsage(app: OpenAPIHono<AppEnv>, ops: Pick<ServiceOperations, 'usage'>, limiter?: RateLimiter) {
  app.openapi(route, async (c) => {
    const caller = c.get('caller');
    requirePerm(caller, 'read');
    const { top, tenant: named } = c.req.valid('query');
    // Naming another tenant is refused for every tenant token; only an operator ranges over tenants.
    const tenantId = adminTenantOf(caller, named);
    if (caller.role === 'operator') {
      const report = await ops.usage(tenantId !== undefined ? { tenantId } : {}, top, {
        retention: tenantId !== undefined ? 'tenant' : 'service',
        ...(limiter ? { rateLimited: limiter.refusals(tenantId) } : {}),
      });
      return c.json(report as unknown as Record<string, unknown>, 200);
    }
    const scope = {
      tenantId: caller.tenantId,
      ...(caller.sessionId !== undefined ? { sessionId: caller.sessionId } : {}),
      ...(caller.traceId !== undefined ? { traceId: caller.traceId } : {}),
    };
    const extras = isTenantAdmin(caller)
      ? { retention: 'tenant' as const, ...(limiter ? { rateLimited: limiter.refusals(caller.tenantId) } : {}) }
      : {};
    return c.json((await ops.usage(scope, top, extras)) as unknown as Record<string, unknown>, 200);
  });
}
