/**
 * The scope view: what one caller scope (tenant, user, session, trace) has of the gateway's servers.
 * Its resource bridges, whose caches hold what this scope read and stored; the uris it watches
 * (read through the service's REST view, subscribed upstream while the view lives); and the host
 * sessions of this scope, told when a uri they subscribed to changes.
 */
import type { ArtifactStore } from '../../client/artifact-store.js';
import { ResourceBridge, type ResourceRead } from '../resources.js';
import { causeOf, type GatewayLog } from './log.js';
import type { Upstream } from './upstream.js';

/** Who is calling: where their artifacts go, and what they may use. */
export interface GatewayScope {
  /** Where this caller's artifacts go, already narrowed to its scope. */
  store: ArtifactStore;
  /** Identifies the caller's scope: resource caches and subscriptions are kept per key. */
  key: string;
  /** The caller's tenant, for the per-server allowlists. Unset: every server (the one-user stdio gateway). */
  tenantId?: string;
  /**
   * A resource this scope reads or subscribes to changed upstream (the service sends it to
   * /v1/events). A rejection is logged: the change is then not announced to this scope.
   */
  onResourceUpdated?: (server: string, uri: string) => void | Promise<void>;
}

/** A host session of the scope, as the view tells it of changes. */
export interface ResourceWatcher {
  /** A uri of a server changed: tells the host if it subscribed to it, and says whether it did. */
  resourceUpdated(server: string, uri: string): boolean;
}

/** What a scope view needs: the scope, the log, and where to note which server a uri came from. */
export interface ScopeViewDeps {
  scope: GatewayScope;
  log: GatewayLog;
  /** Notes which server a uri came from, so later reads of it go there first. */
  remember(uri: string, server: string): void;
}

/** One caller scope's bridges, caches and watched uris, shared by its host sessions and REST reads. */
export interface ScopeView {
  readonly scope: GatewayScope;
  /** This scope's bridge to a server's resources, made on first use. */
  bridge(upstream: Upstream): ResourceBridge;
  /** Reads a resource through this scope's bridge and cache, and watches it for changes. */
  read(upstream: Upstream, uri: string, fresh?: boolean): Promise<ResourceRead>;
  /** A host session of this scope starts or stops listening. */
  attach(watcher: ResourceWatcher): void;
  detach(watcher: ResourceWatcher): void;
  /** Whether a host session of this scope is open (such a view is never evicted). */
  inUse(): boolean;
  /** Drops the bridges and what this scope watched. */
  close(): void;
}

const keyOf = (server: string, uri: string) => `${server}\n${uri}`;

/** A scope's view, empty: bridges are made on first use. */
export function createScopeView(deps: ScopeViewDeps): ScopeView {
  const { scope, log } = deps;
  const watchers = new Set<ResourceWatcher>();
  const bridges = new Map<string, { bridge: ResourceBridge; dispose(): void }>();
  /** `${server}\n${uri}` this scope read through the REST view, subscribed upstream while the view lives. */
  const watched = new Set<string>();

  const announce = (server: string, uri: string) => {
    const failed = (err: unknown) =>
      log(`${server}: the change to ${uri} could not be announced to a scope that reads it: ${causeOf(err)}`, 'warn');
    void Promise.resolve(scope.onResourceUpdated?.(server, uri)).catch(failed);
  };

  const updated = (server: string, uri: string): void => {
    let watching = watched.has(keyOf(server, uri));
    for (const watcher of watchers) if (watcher.resourceUpdated(server, uri)) watching = true;
    if (watching) announce(server, uri);
  };

  const bridge = (upstream: Upstream): ResourceBridge => {
    const existing = bridges.get(upstream.name);
    if (existing) return existing.bridge;
    const { client, dispose } = upstream.bridgeClient();
    const config = upstream.entry.artifacts?.resources;
    const made = new ResourceBridge(client, {
      store: scope.store,
      serverName: upstream.name,
      ...(config ? { config } : {}),
      onEvent: (event) => {
        if (event.type === 'resource.updated') updated(upstream.name, event.uri);
      },
    });
    bridges.set(upstream.name, { bridge: made, dispose });
    return made;
  };

  /** Keeps this scope told about a uri it read (when the server offers subscriptions). */
  const watch = async (upstream: Upstream, uri: string): Promise<void> => {
    const key = keyOf(upstream.name, uri);
    if (watched.has(key) || upstream.capabilities?.resources?.subscribe !== true) return;
    watched.add(key);
    await upstream.subscribe(uri).catch((err) => {
      // The read itself succeeded; only its later changes go unannounced. The next read tries again.
      watched.delete(key);
      log(`${upstream.name}: subscribing to ${uri} failed, so its changes are not announced: ${causeOf(err)}`, 'warn');
    });
  };

  return {
    scope,
    bridge,
    async read(upstream, uri, fresh = false) {
      const result = await bridge(upstream).readResource(uri, { fresh });
      deps.remember(uri, upstream.name);
      await watch(upstream, uri);
      return result;
    },
    attach: (watcher) => void watchers.add(watcher),
    detach: (watcher) => void watchers.delete(watcher),
    inUse: () => watchers.size > 0,
    close() {
      for (const { dispose } of bridges.values()) dispose();
      bridges.clear();
      watched.clear();
    },
  };
}
