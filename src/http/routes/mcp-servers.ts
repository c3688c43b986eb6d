/**
 * GET /v1/mcp/servers on its own: the gateway mount answers it with its servers; a service without a
 * gateway answers an empty list (and loads no MCP code), so clients such as /ui need not guess.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { requirePerm } from '../auth.js';
import type { AppEnv } from '../context.js';
import { errorResponses } from '../openapi-schemas.js';

const ServerDoc = z
  .object({
    name: z.string().openapi({ description: 'The key in the gateway config; tools are {name}__{tool}.' }),
    state: z.enum(['starting', 'ready', 'failed', 'closed']),
    error: z.string().optional().openapi({ description: 'Why it is unavailable, while it is.' }),
    nextRetryAt: z.string().optional().openapi({ description: 'When the gateway next tries to start it.' }),
    serverInfo: z.object({ name: z.string(), version: z.string() }).optional(),
    tools: z.number().int(),
    prompts: z.number().int(),
    resources: z.boolean().openapi({ description: 'It offers resources (list and read them below).' }),
    subscribe: z.boolean().openapi({ description: 'It sends resource.updated for resources read here.' }),
  })
  .openapi('McpServer');

export const listServersRoute = createRoute({
  method: 'get',
  path: '/v1/mcp/servers',
  tags: ['mcp'],
  summary: 'The MCP servers behind the gateway that this tenant may use',
  description: 'An empty list when the service has no gateway (ARTIFACT_STORE_GATEWAY_CONFIG unset).',
  responses: {
    200: {
      description: 'Servers, in config order',
      content: { 'application/json': { schema: z.object({ servers: z.array(ServerDoc) }) } },
    },
    ...errorResponses(401, 403),
  },
});

/** The route on a service without a gateway: nobody has servers. */
export function registerNoGateway(app: OpenAPIHono<AppEnv>): void {
  app.openapi(listServersRoute, (c) => {
    requirePerm(c.get('caller'), 'read');
    return c.json({ servers: [] }, 200);
  });
}
