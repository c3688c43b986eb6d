/**
 * The MCP gateway: an MCP server for hosts that cannot change their code, in front of the real
 * servers. The host sees every upstream tool as `{server}__{tool}`, prompts and resources passed
 * through, and the artifact tools (ARTIFACT_TOOLS: artifact_info, artifact_url and the ones that read
 * inside an artifact); every tool result goes through transformToolResult and then clampObservation,
 * so binary and oversized output reaches the host as a summary, an `artifact://` link and a signed
 * download link, and summaries name the tools that look inside.
 *
 * This module wires the parts: the upstream registry (registry.ts: the servers, their names, which
 * tenant may use which), one scope view per caller scope (scope-view.ts: resource caches and watched
 * uris, the least recently used evicted past maxIdleScopes), and one host session per host connection
 * (host-session.ts), told when a server it may use changes.
 */
import type { Resource } from '@modelcontextprotocol/sdk/types.js';
import type { ResourceRead } from '../resources.js';
import { type GatewayConfig, tenantMayUse } from './config.js';
import { createHostSession, type HostSession } from './host-session.js';
import type { GatewayLog } from './log.js';
import { createUpstreamRegistry, type UpstreamRegistry } from './registry.js';
import { createScopeView, type GatewayScope, type ScopeView } from './scope-view.js';
import type { BackoffSettings, ConnectUpstream, Upstream, UpstreamChange } from './upstream.js';

export type { GatewayLog, GatewayLogLevel } from './log.js';
export type { GatewayServerInfo } from './registry.js';
export type { GatewayScope } from './scope-view.js';
export type { HostSession } from './host-session.js';

/** What createMcpGateway needs: the config, how to reach the servers, and where its log goes. */
export interface GatewayOptions {
  config: GatewayConfig;
  /** Opens each upstream's transport (the Node runtime spawns stdio servers; see artifact-store/node). */
  connect: ConnectUpstream;
  /** Reported to hosts at initialize. */
  name?: string;
  version?: string;
  /**
   * One line per upstream start, failure and restart, and per error the gateway works around (what it
   * left out, and why), each with its level. Default: none.
   */
  log?: GatewayLog;
  backoff?: Partial<BackoffSettings>;
  /** Caller scopes whose caches are kept while no host session uses them (default 1000). */
  maxIdleScopes?: number;
}

/** The gateway as the CLI, the service's routes and the tests use it: its registry's views, and host sessions. */
export interface McpGateway
  extends Pick<UpstreamRegistry, 'upstreams' | 'serversFor' | 'serverFor' | 'describe' | 'toolsFor'> {
  /**
   * Connects every upstream. One that will not start is left failed and retried with backoff; a name
   * collision between two servers' tools or prompts rejects (after closing everything).
   */
  start(): Promise<void>;
  /** Closes every host session, scope view and upstream. */
  close(): Promise<void>;
  /** An MCP server for one host connection; connect it to any transport. */
  session(scope: GatewayScope): HostSession;
  /** One page of a server's resources, as the server pages them. */
  listResources(
    upstream: Upstream,
    cursor?: string,
  ): Promise<{ resources: Resource[]; nextCursor?: string | undefined }>;
  /** Reads a server's resource for a scope, through that scope's bridge and cache; updates are watched. */
  readResource(scope: GatewayScope, upstream: Upstream, uri: string, fresh?: boolean): Promise<ResourceRead>;
}

const DEFAULT_NAME = 'artifact-store-gateway';
const DEFAULT_VERSION = '0.1.0';

/**
 * The gateway: start it once, then connect host sessions (`session(scope)`: stdio, or one per
 * Streamable HTTP session in the service).
 *
 * @example
 * const gateway = createMcpGateway({ config: parseGatewayConfig(json, process.env), connect: connectUpstream });
 * await gateway.start();
 * const { server } = gateway.session({ store, key: 'local' });
 * await server.connect(new StdioServerTransport());
 */
export function createMcpGateway(options: GatewayOptions): McpGateway {
  const log: GatewayLog = options.log ?? (() => {});
  const idleLimit = options.maxIdleScopes ?? 1000;
  const sessions = new Set<HostSession>();
  /** Scope views by scope key, least recently used first. */
  const views = new Map<string, ScopeView>();

  /** Tells the host sessions that may use a server that its state or a list changed. */
  const changed = (u: Upstream, what: UpstreamChange): void => {
    for (const session of sessions) {
      if (!tenantMayUse(u.entry, session.scope.tenantId)) continue;
      if (what === 'state' || what === 'tools') session.notify('tools');
      if (what === 'state' || what === 'prompts') session.notify('prompts');
      if (what === 'state' || what === 'resources') session.notify('resources');
    }
  };

  const registry = createUpstreamRegistry({
    config: options.config,
    connect: options.connect,
    log,
    ...(options.backoff ? { backoff: options.backoff } : {}),
    clientInfo: { name: DEFAULT_NAME, version: options.version ?? DEFAULT_VERSION },
    changed,
  });

  /** The caller scope's view, made on first use; past the idle limit, the least recent unused one goes. */
  const viewOf = (scope: GatewayScope): ScopeView => {
    let view = views.get(scope.key);
    if (view) {
      views.delete(scope.key);
      views.set(scope.key, view);
      return view;
    }
    view = createScopeView({ scope, log, remember: registry.remember });
    views.set(scope.key, view);
    for (const [key, v] of views) {
      if (views.size <= idleLimit) break;
      if (v.inUse() || v === view) continue;
      views.delete(key);
      v.close();
    }
    return view;
  };

  const close = async (): Promise<void> => {
    await Promise.all([...sessions].map((s) => s.close()));
    for (const view of views.values()) view.close();
    views.clear();
    await registry.close();
  };

  return {
    upstreams: registry.upstreams,

    async start() {
      try {
        await registry.start();
      } catch (err) {
        await close();
        throw err;
      }
    },

    close,
    serversFor: registry.serversFor,
    serverFor: registry.serverFor,
    describe: registry.describe,
    toolsFor: registry.toolsFor,

    session(scope) {
      const session = createHostSession({
        scope,
        view: viewOf(scope),
        registry,
        serverInfo: { name: options.name ?? DEFAULT_NAME, version: options.version ?? DEFAULT_VERSION },
        log,
        closed: (s) => sessions.delete(s),
      });
      sessions.add(session);
      return session;
    },

    listResources: registry.listResources,

    readResource(scope, upstream, uri, fresh = false) {
      return viewOf(scope).read(upstream, uri, fresh);
    },
  };
}
