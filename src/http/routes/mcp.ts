import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { createEmbeddedArtifactStore } from '../../service/embedded-store.js';
import type { ServiceOperations } from '../../service/operations.js';
import { createArtifactMcpServer } from '../../mcp/server.js';
import type { ArtifactService } from '../../service/artifact-service.js';
import { errors } from '../../core/errors.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { ArtifactStore } from '../../core/artifact-store.js';
import type { Perm } from '../../core/perms.js';
import type { ArtifactScope } from '../../core/schemas.js';
import { accessOf, requirePerm, type Authenticator, type Caller } from '../auth.js';
import type { RateLimiter } from '../rate-limit.js';
import type { AppEnv } from '../context.js';
import { header } from '../fast-header.js';

export interface McpMountSettings {
  /** How often the outbox is read for changes to tell subscribers about (default 250 ms). */
  pollMs?: number;
  /** Open MCP sessions kept; opening one more closes the least recently used (default 1000). */
  maxSessions?: number;
  /** A session with no request for this long is closed (default 30 min). */
  idleMs?: number;
  version?: string;
  /**
   * Host names /mcp answers to (DNS-rebinding protection); others get 403. Unset: no Host check,
   * and a browser's Origin must match the Host it sent. node.ts sets this to the loopback names
   * (and the public URL's host) when the service listens on loopback.
   */
  allowedHosts?: string[];
  /** Browser origins allowed besides those on an allowed host (the CORS origins; `*` = any). */
  allowedOrigins?: string[];
}

export { LOOPBACK_HOSTS } from './mcp-on-demand.js';

/** The host name of a Host header or URL authority, without the port, lowercased. */
function hostnameOf(authority: string): string {
  const a = authority.trim().toLowerCase();
  if (a.startsWith('[')) return a.slice(0, a.indexOf(']') + 1);
  const colon = a.lastIndexOf(':');
  return colon >= 0 ? a.slice(0, colon) : a;
}

/** Why a request is refused by the DNS-rebinding checks, or undefined when it may proceed. */
function rebindingRefusal(
  host: string | undefined,
  origin: string | undefined,
  settings: McpMountSettings,
): string | undefined {
  const allowed = settings.allowedHosts?.map((h) => h.toLowerCase());
  const hostName = host ? hostnameOf(host) : undefined;
  if (allowed && (!hostName || !allowed.includes(hostName)))
    return `Host ${host ?? '(none)'} is not one this MCP endpoint answers to (${allowed.join(', ')}). Set ARTIFACT_STORE_PUBLIC_URL to the address clients use.`;
  if (origin === undefined) return undefined;
  const origins = settings.allowedOrigins ?? [];
  if (origins.includes('*') || origins.includes(origin)) return undefined;
  let originHost: string;
  try {
    originHost = hostnameOf(new URL(origin).host);
  } catch {
    return `Origin ${origin} is not a valid origin.`;
  }
  if (allowed ? allowed.includes(originHost) : originHost === hostName) return undefined;
  return `Origin ${origin} may not use this MCP endpoint. Add it to ARTIFACT_STORE_CORS_ORIGINS if it should.`;
}

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  owner: string;
  lastSeen: number;
  close(): Promise<void>;
}

/** Who may use a session: the same tenant and the same narrowing, whoever's token it is. */
const ownerOf = (c: Caller) => JSON.stringify([c.tenantId, c.userId ?? null, c.sessionId ?? null, c.traceId ?? null]);

const rpcError = (code: number, message: string) => ({ jsonrpc: '2.0' as const, error: { code, message }, id: null });

/**
 * The artifact MCP server over Streamable HTTP at /mcp, behind the same bearer auth as /v1. Each
 * MCP session belongs to the caller that opened it and sees exactly what that caller sees over HTTP;
 * updates come from the outbox, so changes made by other processes reach subscribers too.
 */
export function registerMcp(app: OpenAPIHono<AppEnv>, deps: McpDeps, settings: McpMountSettings = {}) {
  const endpoint = createMcpEndpoint(deps, settings);
  app.all('/mcp', endpoint.handle);
  return { closeAll: endpoint.closeAll };
}

/** What /mcp runs on: the same service, event outbox and authenticator as /v1. */
export interface McpDeps {
  service: ArtifactService;
  ops: Pick<ServiceOperations, 'tailEvents'>;
  auth: Authenticator;
  publicUrl?: string;
  rateLimiter?: RateLimiter;
}

/** The MCP server one session of an endpoint talks to, for a caller and a store in the caller's scope. */
export type McpSessionOpener = (caller: Caller, store: ArtifactStore) => { server: Server; close(): Promise<void> };

/** A caller's whole scope, as its puts get it. */
export const scopeOf = (caller: Caller): ArtifactScope => ({
  tenantId: caller.tenantId,
  ...(caller.userId ? { userId: caller.userId } : {}),
  ...(caller.sessionId ? { sessionId: caller.sessionId } : {}),
  ...(caller.traceId ? { traceId: caller.traceId } : {}),
});

/**
 * The /mcp handler and its sessions, for registerMcp or a mount that loads this module on demand.
 * `open` makes each session's server: by default the artifact MCP server; the gateway mount passes its own.
 */
export function createMcpEndpoint(
  deps: McpDeps,
  settings: McpMountSettings = {},
  options: { open?: McpSessionOpener; perms?: Perm[] } = {},
) {
  const pollMs = settings.pollMs ?? 250;
  const maxSessions = settings.maxSessions ?? 1000;
  const idleMs = settings.idleMs ?? 30 * 60_000;
  const sessions = new Map<string, Session>();
  const open: McpSessionOpener =
    options.open ??
    ((caller, store) =>
      createArtifactMcpServer(store, {
        ...(settings.version ? { version: settings.version } : {}),
        events: (signal) =>
          deps.ops.tailEvents({ tenantId: caller.tenantId, ...accessOf(caller).filter }, { pollMs, signal }),
      }));
  const perms = options.perms ?? ['read'];

  /** Closes idle sessions, then the least recently used until a new one fits under the cap. */
  const reap = async (now: number) => {
    for (const [id, s] of sessions) {
      if (now - s.lastSeen <= idleMs) continue;
      sessions.delete(id);
      await s.close();
    }
    // Map order is least recently used first: each request re-inserts its session.
    for (const [id, s] of sessions) {
      if (sessions.size < maxSessions) break;
      sessions.delete(id);
      await s.close();
    }
  };

  const handle = async (c: Context<AppEnv>) => {
    const refusal = rebindingRefusal(header(c, 'host'), header(c, 'origin'), settings);
    if (refusal) return c.json({ code: 'forbidden', message: refusal }, 403);
    const authorization = header(c, 'authorization');
    const caller = await deps.auth.authenticate(authorization);
    if (caller.role === 'operator')
      throw errors.forbidden(
        'An operator key holds no artifacts, so it has no MCP server: connect with a tenant token.',
      );
    for (const perm of perms) requirePerm(caller, perm);
    // MCP messages are small JSON: they count as requests, not as bytes in flight.
    await deps.rateLimiter?.check(caller.tenantId, authorization, 0);
    const owner = ownerOf(caller);
    const now = Date.now();
    const sessionId = header(c, 'mcp-session-id');

    if (sessionId !== undefined) {
      const session = sessions.get(sessionId);
      // Someone else's session reads exactly like one that does not exist.
      if (!session || session.owner !== owner)
        return c.json(
          rpcError(-32001, 'Session not found: initialize a new one without the Mcp-Session-Id header.'),
          404,
        );
      session.lastSeen = now;
      sessions.delete(sessionId);
      sessions.set(sessionId, session);
      return session.transport.handleRequest(c.req.raw);
    }
    if (c.req.method !== 'POST')
      return c.json(rpcError(-32000, `Open a session first: POST an initialize request to ${c.req.path}.`), 400);

    await reap(now);
    const store = createEmbeddedArtifactStore({
      service: deps.service,
      scope: scopeOf(caller),
      publicUrl: deps.publicUrl ?? new URL(c.req.url).origin,
    });
    const mcp = open(caller, store);
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, {
          transport,
          owner,
          lastSeen: Date.now(),
          close: async () => {
            await mcp.close();
            await transport.close();
          },
        });
      },
      onsessionclosed: async (id) => {
        sessions.delete(id);
        await mcp.close();
      },
    });
    await mcp.server.connect(transport);
    const response = await transport.handleRequest(c.req.raw);
    // Not an initialize after all: nothing was opened, so nothing may linger.
    if (transport.sessionId === undefined) await mcp.close();
    return response;
  };

  return {
    handle,
    /** Closes every open MCP session (for shutdown). */
    async closeAll() {
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.all(open.map((s) => s.close()));
    },
  };
}
