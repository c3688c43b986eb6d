/**
 * The upstream registry: the gateway's servers, their tools and prompts under host names, which
 * tenant may use which, and which server a resource uri came from. Shared by every host session and
 * scope; it holds no caller's state.
 */
import type { Implementation, Prompt, Resource, Tool } from '@modelcontextprotocol/sdk/types.js';
import { resolveTransformConfig, type TransformConfig, type TransformConfigInput } from '../config.js';
import { ResourceBridgeError } from '../resources.js';
import { imagePolicyFor, toolSpecsFor } from '../transform/index.js';
import { presetFor, tenantMayUse, type GatewayConfig } from './config.js';
import type { GatewayLog } from './log.js';
import { hostName, nameTable, type NamedEntry } from './names.js';
import { relaxOutputSchema } from './output-schema.js';
import {
  type BackoffSettings,
  type ConnectUpstream,
  createUpstream,
  DEFAULT_BACKOFF,
  type Upstream,
  type UpstreamChange,
  type UpstreamState,
} from './upstream.js';

/** One upstream as the service's REST view shows it. */
export interface GatewayServerInfo {
  name: string;
  state: UpstreamState;
  /** Why it is unavailable, while it is. */
  error?: string;
  /** When the next start is tried, while failed. */
  nextRetryAt?: string;
  serverInfo?: { name: string; version: string };
  tools: number;
  prompts: number;
  resources: boolean;
  subscribe: boolean;
}

/** A tool or prompt of a server that has no host name: another entry already holds the one it would get. */
export interface LeftOutEntry {
  server: string;
  /** The server's own name for it. */
  name: string;
  /** Why, in words: the host name and who holds it. */
  reason: string;
}

/** What a host name names: a tool or a prompt. */
export type EntryKind = 'tool' | 'prompt';

/** What the registry needs: the config, how to reach each server, and whom to tell of changes. */
export interface UpstreamRegistryDeps {
  config: GatewayConfig;
  connect: ConnectUpstream;
  log: GatewayLog;
  backoff?: Partial<BackoffSettings>;
  /** The gateway as its servers' client, at initialize. */
  clientInfo: Implementation;
  /** After start(): a server's state or lists changed (the name tables are already rebuilt). */
  changed(upstream: Upstream, what: UpstreamChange): void;
}

/** The servers and their host names, as the gateway and its host sessions read them. */
export interface UpstreamRegistry {
  /** Every configured server by its config key, in config order. */
  readonly upstreams: ReadonlyMap<string, Upstream>;
  /**
   * Connects every upstream (one that will not start is left failed and retried with backoff) and
   * names their tools and prompts. Rejects on a name collision between two entries; the caller closes.
   */
  start(): Promise<void>;
  close(): Promise<void>;
  /** The servers a tenant may use (all of them without a tenant), in config order. */
  serversFor(tenantId: string | undefined): Upstream[];
  /** One server a tenant may use, or undefined (a server it may not use reads as missing). */
  serverFor(name: string, tenantId: string | undefined): Upstream | undefined;
  describe(upstream: Upstream): GatewayServerInfo;
  /** The tools a tenant sees now, with their host names and relaxed output schemas. */
  toolsFor(tenantId: string | undefined): Tool[];
  /** The prompts a tenant sees now, with their host names. */
  promptsFor(tenantId: string | undefined): Prompt[];
  /** Entries of the tenant's servers that are left out for want of a host name of their own. */
  leftOut(kind: EntryKind, tenantId: string | undefined): LeftOutEntry[];
  /** The server entry behind a host name, if the tenant may use its server. */
  lookup(
    kind: EntryKind,
    hostName: string,
    tenantId: string | undefined,
  ): { entry: NamedEntry; upstream: Upstream } | undefined;
  /** The ready servers with resources that may own a uri, the one it came from first. */
  ownersOf(uri: string, tenantId: string | undefined): Upstream[];
  /** Notes which server a uri came from (listings, tool results, reads). */
  remember(uri: string, server: string): void;
  /**
   * The transformer's config for a server: its own, with the preset picked by name unless it says,
   * and summaries that name the view tools (the gateway serves them) unless it says not to.
   */
  transformConfigFor(upstream: Upstream): TransformConfigInput;
  /** One page of a server's resources, as the server pages it. */
  listResources(
    upstream: Upstream,
    cursor?: string,
  ): Promise<{ resources: Resource[]; nextCursor?: string | undefined }>;
}

const MAX_KNOWN_URIS = 10_000;

/** Every server of the config, not started yet: call start(). */
export function createUpstreamRegistry(deps: UpstreamRegistryDeps): UpstreamRegistry {
  const { log } = deps;
  const backoff = { ...DEFAULT_BACKOFF, ...deps.backoff };
  const upstreams = new Map<string, Upstream>();
  const tables: Record<EntryKind, Map<string, NamedEntry>> = { tool: new Map(), prompt: new Map() };
  const leftOutOf: Record<EntryKind, LeftOutEntry[]> = { tool: [], prompt: [] };
  /** uri → the server it came from (listings, tool results), newest last. */
  const knownUris = new Map<string, string>();
  let started = false;

  const entries = (kind: EntryKind): NamedEntry[] =>
    [...upstreams.values()].flatMap((u) =>
      (kind === 'tool' ? u.tools : u.prompts).map((t) => ({ server: u.name, name: t.name })),
    );

  /**
   * After start, names already given keep their owner; then the rest get theirs in config order. An
   * entry whose host name is taken is left out and logged, once while it stays left out; leftOut() lists it.
   */
  const rebuild = (kind: EntryKind): void => {
    const current = tables[kind];
    const next = new Map<string, NamedEntry>();
    const all = entries(kind);
    const keyOf = (e: NamedEntry) => `${e.server}\u0000${e.name}`;
    const present = new Set(all.map(keyOf));
    for (const [name, e] of current) if (present.has(keyOf(e))) next.set(name, e);
    const wasLeftOut = new Set(leftOutOf[kind].map(keyOf));
    const leftOut: LeftOutEntry[] = [];
    for (const entry of all) {
      const name = hostName(entry.server, entry.name);
      const other = next.get(name);
      if (other && keyOf(other) !== keyOf(entry)) {
        const reason = `its host name ${name} is already ${kind} ${JSON.stringify(other.name)} of server "${other.server}"`;
        leftOut.push({ ...entry, reason });
        if (!wasLeftOut.has(keyOf(entry)))
          log(`${entry.server}: ${kind} ${JSON.stringify(entry.name)} left out of ${kind}s/list: ${reason}`, 'warn');
        continue;
      }
      next.set(name, entry);
    }
    tables[kind] = next;
    leftOutOf[kind] = leftOut;
  };

  const changed = (u: Upstream, what: UpstreamChange): void => {
    if (!started) return;
    if (what === 'state' || what === 'tools') rebuild('tool');
    if (what === 'state' || what === 'prompts') rebuild('prompt');
    deps.changed(u, what);
  };

  const clientInfo = deps.clientInfo;
  for (const [name, entry] of deps.config.servers)
    upstreams.set(
      name,
      createUpstream({ name, entry, connect: deps.connect, hooks: { changed, log }, backoff, clientInfo }),
    );

  const serversFor = (tenantId: string | undefined) =>
    [...upstreams.values()].filter((u) => tenantMayUse(u.entry, tenantId));

  const serverFor = (name: string, tenantId: string | undefined) => {
    const u = upstreams.get(name);
    return u && tenantMayUse(u.entry, tenantId) ? u : undefined;
  };

  const transformConfigFor = (u: Upstream): TransformConfigInput => {
    const artifacts = u.entry.artifacts ?? {};
    const own = { viewTools: true, ...(artifacts.transform as TransformConfigInput | undefined) };
    if (own.presets !== undefined) return own;
    const preset = artifacts.preset ?? presetFor(u.name, u.serverInfo?.name) ?? 'none';
    return { ...own, presets: preset === 'none' || preset === 'all' ? preset : [preset] };
  };

  /**
   * Whether a tool's images may stay inline for the model. Such a tool is listed without its
   * outputSchema: a result that shows an image carries no structuredContent (hosts show one of the
   * two), and a host's SDK would reject it against the schema.
   */
  const mayShowImages = (u: Upstream, tool: string, configs: Map<Upstream, TransformConfig>): boolean => {
    let config = configs.get(u);
    if (!config) {
      config = resolveTransformConfig(transformConfigFor(u));
      configs.set(u, config);
    }
    return imagePolicyFor(config, toolSpecsFor(tool, u.name, config)).inline;
  };

  const remember = (uri: string, server: string): void => {
    knownUris.delete(uri);
    knownUris.set(uri, server);
    if (knownUris.size > MAX_KNOWN_URIS) knownUris.delete(knownUris.keys().next().value!);
  };

  return {
    upstreams,

    async start() {
      await Promise.all([...upstreams.values()].map((u) => u.start()));
      tables.tool = nameTable(entries('tool'), 'tool');
      tables.prompt = nameTable(entries('prompt'), 'prompt');
      started = true;
    },

    async close() {
      await Promise.all([...upstreams.values()].map((u) => u.close()));
    },

    serversFor,
    serverFor,

    describe(upstream) {
      const caps = upstream.capabilities;
      return {
        name: upstream.name,
        state: upstream.state,
        ...(upstream.state !== 'ready' && upstream.error ? { error: upstream.describeUnavailable() } : {}),
        ...(upstream.nextRetryAt !== undefined ? { nextRetryAt: new Date(upstream.nextRetryAt).toISOString() } : {}),
        ...(upstream.serverInfo
          ? { serverInfo: { name: upstream.serverInfo.name, version: upstream.serverInfo.version } }
          : {}),
        tools: upstream.tools.length,
        prompts: upstream.prompts.length,
        resources: upstream.state === 'ready' && caps?.resources !== undefined,
        subscribe: upstream.state === 'ready' && caps?.resources?.subscribe === true,
      };
    },

    toolsFor(tenantId) {
      const out: Tool[] = [];
      const configs = new Map<Upstream, TransformConfig>();
      for (const [name, entry] of tables.tool) {
        const u = serverFor(entry.server, tenantId);
        if (u?.state !== 'ready') continue;
        const tool = u.tools.find((t) => t.name === entry.name);
        if (!tool) continue;
        const { outputSchema, ...rest } = tool;
        out.push({
          ...rest,
          name,
          ...(outputSchema && !mayShowImages(u, entry.name, configs)
            ? { outputSchema: relaxOutputSchema(outputSchema) as Tool['outputSchema'] }
            : {}),
        });
      }
      return out;
    },

    promptsFor(tenantId) {
      const out: Prompt[] = [];
      for (const [name, entry] of tables.prompt) {
        const u = serverFor(entry.server, tenantId);
        const prompt = u?.state === 'ready' ? u.prompts.find((p) => p.name === entry.name) : undefined;
        if (prompt) out.push({ ...prompt, name });
      }
      return out;
    },

    leftOut(kind, tenantId) {
      return leftOutOf[kind].filter((e) => serverFor(e.server, tenantId)?.state === 'ready');
    },

    lookup(kind, name, tenantId) {
      const entry = tables[kind].get(name);
      const upstream = entry && serverFor(entry.server, tenantId);
      return entry && upstream ? { entry, upstream } : undefined;
    },

    ownersOf(uri, tenantId) {
      const ready = serversFor(tenantId).filter((u) => u.state === 'ready' && u.capabilities?.resources);
      const known = knownUris.get(uri);
      const first = ready.find((u) => u.name === known);
      return first ? [first, ...ready.filter((u) => u !== first)] : ready;
    },

    remember,
    transformConfigFor,

    async listResources(upstream, cursor) {
      const client = upstream.connected();
      if (!upstream.capabilities?.resources)
        throw new ResourceBridgeError('resources_unsupported', `Server "${upstream.name}" offers no resources.`);
      const page = await client.listResources(cursor ? { cursor } : {}, { timeout: 30_000 });
      for (const r of page.resources) remember(r.uri, upstream.name);
      return { resources: page.resources, nextCursor: page.nextCursor };
    },
  };
}
