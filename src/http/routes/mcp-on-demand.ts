import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../context.js';
import type { createMcpEndpoint, McpDeps, McpMountSettings, registerMcp } from './mcp.js';

/** Host names /mcp answers to by default when the service listens on loopback. */
export const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'];

/**
 * /mcp as registerMcp mounts it, with the MCP SDK loaded on the first request to /mcp: a process
 * that never serves MCP never loads it (about 25 MiB of a Node process's memory).
 */
export const registerMcpOnDemand: typeof registerMcp = (
  app: OpenAPIHono<AppEnv>,
  deps: McpDeps,
  settings: McpMountSettings = {},
) => {
  let endpoint: Promise<ReturnType<typeof createMcpEndpoint>> | undefined;
  const load = () => (endpoint ??= import('./mcp.js').then((m) => m.createMcpEndpoint(deps, settings)));
  app.all('/mcp', async (c) => (await load()).handle(c));
  return {
    async closeAll() {
      if (endpoint) await (await endpoint).closeAll();
    },
  };
};
