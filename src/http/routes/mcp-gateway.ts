/**
 * The MCP gateway in the service: the gateway itself on Streamable HTTP at /mcp/gateway, and a REST
 * view of its servers' resources (/v1/mcp/servers…) for the UI's Resources tab. Both behind the
 * bearer auth; a tenant sees only the servers the gateway config lists it for, and a server it may
 * not use reads exactly like one that does not exist.
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { ArtifactError, errors } from '../../core/errors.js';
import { narrowFilter } from '../../core/scope.js';
import type { ArtifactScope } from '../../core/schemas.js';
import type { GatewayScope, McpGateway } from '../../mcp/gateway/gateway.js';
import { UpstreamUnavailableError, type Upstream } from '../../mcp/gateway/upstream.js';
import { ResourceBridgeError } from '../../mcp/resources.js';
import { createEmbeddedArtifactStore } from '../../service/embedded-store.js';
import type { ServiceOperations } from '../../service/operations.js';
import { namedScope, requirePerm, type Caller } from '../auth.js';
import type { AppEnv } from '../context.js';
import { ArtifactRefDoc, errorResponses } from '../openapi-schemas.js';
import { createMcpEndpoint, scopeOf, type McpDeps, type McpMountSettings } from './mcp.js';
import { listServersRoute } from './mcp-servers.js';

export const GATEWAY_PATH = '/mcp/gateway';

const ResourceDoc = z
  .object({
    uri: z.string(),
    name: z.string(),
    title: z.string().optional(),
    description: z.string().optional(),
    mimeType: z.string().optional(),
    size: z.number().optional(),
  })
  .passthrough()
  .openapi('McpResource');

const ReadDoc = z
  .object({
    uri: z.string(),
    content: z
      .array(z.record(z.string(), z.unknown()))
      .openapi({ description: 'MCP content blocks: inline text, or a summary and a resource_link per stored blob.' }),
    artifacts: z.array(ArtifactRefDoc),
    fromCache: z.boolean(),
  })
  .openapi('McpResourceRead');

const NameParam = z.object({
  name: z.string().openapi({ param: { name: 'name', in: 'path' }, description: 'The server name' }),
});

const listResources = createRoute({
  method: 'get',
  path: '/v1/mcp/servers/{name}/resources',
  tags: ['mcp'],
  summary: "One page of a server's resources",
  description: 'Pages as the server pages them: pass nextCursor back as cursor for the next one.',
  request: {
    params: NameParam,
    query: z.object({ cursor: z.string().max(4096).optional() }),
  },
  responses: {
    200: {
      description: 'A page',
      content: {
        'application/json': {
          schema: z.object({ resources: z.array(ResourceDoc), nextCursor: z.string().optional() }),
        },
      },
    },
    ...errorResponses(400, 401, 403, 404, 503),
  },
});

const readResource = createRoute({
  method: 'get',
  path: '/v1/mcp/servers/{name}/resources/read',
  tags: ['mcp'],
  summary: 'Read one resource: bytes are stored as artifacts in your scope',
  description:
    "Reads the resource through the gateway's per-scope cache. Blobs and long texts are stored (needs the write permission) and come back as refs; short text inline. Where the server offers subscriptions, a later change arrives on /v1/events as resource.updated.",
  request: {
    params: NameParam,
    query: z.object({ uri: z.string().min(1).max(4096), fresh: z.enum(['true', 'false']).optional() }),
  },
  responses: {
    200: { description: 'The read', content: { 'application/json': { schema: ReadDoc } } },
    ...errorResponses(400, 401, 403, 404, 503),
  },
});

export interface GatewayMountDeps extends McpDeps {
  gateway: McpGateway;
  ops: Pick<ServiceOperations, 'tailEvents' | 'publishResourceUpdated'>;
}

/** Mounts /mcp/gateway and the /v1/mcp REST view. */
export function registerGateway(app: OpenAPIHono<AppEnv>, deps: GatewayMountDeps, settings: McpMountSettings = {}) {
  const { gateway } = deps;

  /** A caller's gateway scope: its store, its cache key, and where its resource.updated events go. */
  const scopeFor = (caller: Caller, scope: ArtifactScope, baseUrl: string): GatewayScope => ({
    key: JSON.stringify([scope.tenantId, scope.userId ?? null, scope.sessionId ?? null, scope.traceId ?? null]),
    tenantId: caller.tenantId,
    store: createEmbeddedArtifactStore({ service: deps.service, scope, publicUrl: deps.publicUrl ?? baseUrl }),
    // A failure to publish is logged by the gateway, which calls this.
    onResourceUpdated: (server, uri) =>
      deps.ops.publishResourceUpdated({
        tenantId: scope.tenantId,
        scope: {
          ...(scope.userId ? { userId: scope.userId } : {}),
          ...(scope.sessionId ? { sessionId: scope.sessionId } : {}),
          ...(scope.traceId ? { traceId: scope.traceId } : {}),
        },
        server,
        uri,
      }),
  });

  const endpoint = createMcpEndpoint(deps, settings, {
    perms: ['read', 'write'],
    open: (caller, store) => {
      const base = scopeFor(caller, scopeOf(caller), deps.publicUrl ?? 'http://localhost');
      const session = gateway.session({ ...base, store });
      return { server: session.server, close: () => session.close() };
    },
  });
  app.all(GATEWAY_PATH, endpoint.handle);

  const serverOf = (c: Context<AppEnv>, name: string): Upstream => {
    const upstream = gateway.serverFor(name, c.get('caller').tenantId);
    if (!upstream)
      throw new ArtifactError(
        'not_found',
        `No MCP server ${JSON.stringify(name)} for you behind this gateway. GET /v1/mcp/servers lists yours.`,
      );
    return upstream;
  };

  app.openapi(listServersRoute, (c) => {
    const caller = c.get('caller');
    requirePerm(caller, 'read');
    return c.json({ servers: gateway.serversFor(caller.tenantId).map((u) => gateway.describe(u)) }, 200);
  });

  app.openapi(listResources, async (c) => {
    requirePerm(c.get('caller'), 'read');
    const upstream = serverOf(c, c.req.valid('param').name);
    const { cursor } = c.req.valid('query');
    try {
      const page = await gateway.listResources(upstream, cursor);
      return c.json({ resources: page.resources, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) }, 200);
    } catch (err) {
      throw asArtifactError(err, upstream);
    }
  });

  app.openapi(readResource, async (c) => {
    const caller = c.get('caller');
    requirePerm(caller, 'read');
    requirePerm(caller, 'write');
    const upstream = serverOf(c, c.req.valid('param').name);
    const { uri, fresh } = c.req.valid('query');
    const bound = { userId: caller.userId, sessionId: caller.sessionId, traceId: caller.traceId };
    const narrowed = narrowFilter(bound, namedScope(c));
    const scope: ArtifactScope = {
      tenantId: caller.tenantId,
      ...(narrowed.userId ? { userId: narrowed.userId } : {}),
      ...(narrowed.sessionId ? { sessionId: narrowed.sessionId } : {}),
      ...(narrowed.traceId ? { traceId: narrowed.traceId } : {}),
    };
    try {
      const read = await gateway.readResource(
        scopeFor(caller, scope, new URL(c.req.url).origin),
        upstream,
        uri,
        fresh === 'true',
      );
      return c.json(read, 200);
    } catch (err) {
      throw asArtifactError(err, upstream);
    }
  });

  return { closeAll: endpoint.closeAll };
}

/** Gateway and upstream failures as the service's errors. */
function asArtifactError(err: unknown, upstream: Upstream): unknown {
  if (err instanceof UpstreamUnavailableError) return errors.backendUnavailable(err.message, { retryAfter: 5 });
  if (err instanceof ResourceBridgeError) {
    if (err.code === 'not_found')
      return new ArtifactError(
        'not_found',
        `${err.message} List them with GET /v1/mcp/servers/${upstream.name}/resources.`,
      );
    if (err.code === 'resources_unsupported')
      return errors.badRequest(`Server "${upstream.name}" offers no resources.`);
    if (err.code === 'timeout') return errors.backendUnavailable(err.message, { retryAfter: 5 });
    return errors.backendUnavailable(`Server "${upstream.name}": ${err.message}`, { retryAfter: 5 });
  }
  return err;
}
