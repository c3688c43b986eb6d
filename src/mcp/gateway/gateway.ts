/**
 * The MCP gateway: an MCP server for hosts that cannot change their code, in front of the real
 * servers. The host sees every upstream tool as `{server}__{tool}`, prompts and resources passed
 * through, and the artifact tools (ARTIFACT_TOOLS: artifact_info, artifact_url and the ones that read
 * inside an artifact); every tool result goes through transformToolResult and then clampObservation,
 * so binary and oversized output reaches the host as a summary, an `artifact://` link and a signed
 * download link, and summaries name the tools that look inside. Images a tool's policy keeps for
 * the model stay inline beside their link. Upstreams are shared; resource caches,
 * subscriptions and their update events are kept per caller scope.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type CallToolResult,
  type Prompt,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplate,
  type ServerNotification,
  type ServerRequest,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { ArtifactStore } from '../../client/artifact-store.js';
import { formatBytes } from '../../core/bytes.js';
import type { ArtifactRef } from '../../core/schemas.js';
import { resolveTransformConfig, type TransformConfig, type TransformConfigInput } from '../config.js';
import { clampObservation, GuardrailConfigSchema } from '../guardrail.js';
import { ResourceBridge, ResourceBridgeError, type ResourceRead } from '../resources.js';
import { ARTIFACT_TOOLS, callArtifactTool, RESOURCE_NOT_FOUND, readArtifactResource } from '../server.js';
import { imagePolicyFor } from '../transform/images.js';
import { artifactUri, transformToolResult } from '../transform/index.js';
import { toolSpecsFor } from '../transform/per-tool-fields.js';
import { presetFor, tenantMayUse, type GatewayConfig } from './config.js';
import { nameTable, type NamedEntry } from './names.js';
import { relaxOutputSchema } from './output-schema.js';
import {
  type BackoffSettings,
  type ConnectUpstream,
  createUpstream,
  DEFAULT_BACKOFF,
  type Upstream,
} from './upstream.js';

export interface GatewayOptions {
  config: GatewayConfig;
  /** Opens each upstream's transport (the Node runtime spawns stdio servers; see artifact-store/node). */
  connect: ConnectUpstream;
  /** Reported to hosts at initialize. */
  name?: string;
  version?: string;
  /** One line per upstream start, failure and restart. Default: none. */
  log?: (line: string) => void;
  backoff?: Partial<BackoffSettings>;
  /** Caller scopes whose caches are kept while no host session uses them (default 1000). */
  maxIdleScopes?: number;
}

/** Who is calling: where their artifacts go, and what they may use. */
export interface GatewayScope {
  /** Where this caller's artifacts go, already narrowed to its scope. */
  store: ArtifactStore;
  /** Identifies the caller's scope: resource caches and subscriptions are kept per key. */
  key: string;
  /** The caller's tenant, for the per-server allowlists. Unset: every server (the one-user stdio gateway). */
  tenantId?: string;
  /** A resource this scope reads or subscribes to changed upstream (the service sends it to /v1/events). */
  onResourceUpdated?: (server: string, uri: string) => void;
}

/** One upstream as the service's REST view shows it. */
export interface GatewayServerInfo {
  name: string;
  state: Upstream['state'];
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

const DEFAULT_CALL_TIMEOUT_MS = 5 * 60_000;
const DEFAULT_LINK_TTL_SECONDS = 24 * 3600;
const MAX_LINKS = 5;
const MAX_KNOWN_URIS = 10_000;
/** Characters the artifact tools' answers may take: the budget the guardrail holds tool results to. */
const ARTIFACT_TOOL_BUDGET = GuardrailConfigSchema.parse({}).maxObservationChars;

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

const toolResultError = (text: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text }] });

/**
 * The gateway: start it once, then connect host sessions (`session(scope)`: stdio, or one per
 * Streamable HTTP session in the service).
 *
 * @example
 * const gateway = new McpGateway({ config: parseGatewayConfig(json, process.env), connect: connectUpstream });
 * await gateway.start();
 * const { server } = gateway.session({ store, key: 'local' });
 * await server.connect(new StdioServerTransport());
 */
export class McpGateway {
  readonly upstreams = new Map<string, Upstream>();
  private tools = new Map<string, NamedEntry>();
  private prompts = new Map<string, NamedEntry>();
  private readonly sessions = new Set<GatewaySession>();
  private readonly views = new Map<string, ScopeView>();
  /** uri → the server it came from (listings, tool results), newest last. */
  private readonly knownUris = new Map<string, string>();
  private started = false;
  private readonly log: (line: string) => void;

  constructor(readonly options: GatewayOptions) {
    this.log = options.log ?? (() => {});
    const backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
    const hooks = {
      changed: (u: Upstream, what: 'state' | 'tools' | 'prompts' | 'resources') => this.changed(u, what),
      // Until the gateway's own log has levels, what an upstream drops on purpose stays out of it.
      log: (line: string, level: string) => {
        if (level !== 'debug') this.log(line);
      },
    };
    const clientInfo = { name: 'artifact-store-gateway', version: options.version ?? '0.1.0' };
    for (const [name, entry] of options.config.servers)
      this.upstreams.set(name, createUpstream({ name, entry, connect: options.connect, hooks, backoff, clientInfo }));
  }

  /**
   * Connects every upstream. One that will not start is left failed and retried with backoff; a name
   * collision between two servers' tools or prompts rejects (after closing everything).
   */
  async start(): Promise<void> {
    await Promise.all([...this.upstreams.values()].map((u) => u.start()));
    try {
      this.tools = nameTable(this.entries('tools'), 'tool');
      this.prompts = nameTable(this.entries('prompts'), 'prompt');
    } catch (err) {
      await this.close();
      throw err;
    }
    this.started = true;
  }

  async close(): Promise<void> {
    await Promise.all([...this.sessions].map((s) => s.close()));
    for (const view of this.views.values()) await view.close();
    this.views.clear();
    await Promise.all([...this.upstreams.values()].map((u) => u.close()));
  }

  /** The servers a tenant may use (all of them without a tenant), in config order. */
  serversFor(tenantId: string | undefined): Upstream[] {
    return [...this.upstreams.values()].filter((u) => tenantMayUse(u.entry, tenantId));
  }

  /** One server a tenant may use, or undefined (a server it may not use reads as missing). */
  serverFor(name: string, tenantId: string | undefined): Upstream | undefined {
    const u = this.upstreams.get(name);
    return u && tenantMayUse(u.entry, tenantId) ? u : undefined;
  }

  describe(upstream: Upstream): GatewayServerInfo {
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
  }

  /** An MCP server for one host connection; connect it to any transport. */
  session(scope: GatewayScope): GatewaySession {
    const session = new GatewaySession(this, scope, this.view(scope));
    this.sessions.add(session);
    return session;
  }

  /** One page of a server's resources, as the server pages them. */
  async listResources(
    upstream: Upstream,
    cursor?: string,
  ): Promise<{ resources: Resource[]; nextCursor?: string | undefined }> {
    const client = upstream.connected();
    if (!upstream.capabilities?.resources)
      throw new ResourceBridgeError('resources_unsupported', `Server "${upstream.name}" offers no resources.`);
    const page = await client.listResources(cursor ? { cursor } : {}, { timeout: 30_000 });
    for (const r of page.resources) this.remember(r.uri, upstream.name);
    return { resources: page.resources, nextCursor: page.nextCursor };
  }

  /** Reads a server's resource for a scope, through that scope's bridge and cache; updates are watched. */
  async readResource(scope: GatewayScope, upstream: Upstream, uri: string, fresh = false): Promise<ResourceRead> {
    const view = this.view(scope);
    const read = await view.bridge(upstream).readResource(uri, { fresh });
    this.remember(uri, upstream.name);
    await view.watch(upstream, uri);
    return read;
  }

  /** The caller scope's view, made on first use. */
  view(scope: GatewayScope): ScopeView {
    let view = this.views.get(scope.key);
    if (view) {
      this.views.delete(scope.key);
      this.views.set(scope.key, view);
      return view;
    }
    view = new ScopeView(scope);
    this.views.set(scope.key, view);
    const idleLimit = this.options.maxIdleScopes ?? 1000;
    for (const [key, v] of this.views) {
      if (this.views.size <= idleLimit) break;
      if (v.sessions.size > 0 || v === view) continue;
      this.views.delete(key);
      void v.close();
    }
    return view;
  }

  /** @internal */
  forget(session: GatewaySession): void {
    this.sessions.delete(session);
  }

  /** @internal The tools a tenant sees now, with their host names. */
  toolsFor(tenantId: string | undefined): Tool[] {
    const out: Tool[] = [];
    const configs = new Map<Upstream, TransformConfig>();
    for (const [hostName, entry] of this.tools) {
      const u = this.serverFor(entry.server, tenantId);
      if (u?.state !== 'ready') continue;
      const tool = u.tools.find((t) => t.name === entry.name);
      if (!tool) continue;
      const { outputSchema, ...rest } = tool;
      out.push({
        ...rest,
        name: hostName,
        ...(outputSchema && !this.mayShowImages(u, entry.name, configs)
          ? { outputSchema: relaxOutputSchema(outputSchema) as Tool['outputSchema'] }
          : {}),
      });
    }
    return out;
  }

  /** @internal */
  promptsFor(tenantId: string | undefined): Prompt[] {
    const out: Prompt[] = [];
    for (const [hostName, entry] of this.prompts) {
      const u = this.serverFor(entry.server, tenantId);
      const prompt = u?.state === 'ready' ? u.prompts.find((p) => p.name === entry.name) : undefined;
      if (prompt) out.push({ ...prompt, name: hostName });
    }
    return out;
  }

  /** @internal */
  lookup(kind: 'tool' | 'prompt', hostName: string, tenantId: string | undefined) {
    const entry = (kind === 'tool' ? this.tools : this.prompts).get(hostName);
    const upstream = entry && this.serverFor(entry.server, tenantId);
    return entry && upstream ? { entry, upstream } : undefined;
  }

  /** @internal The servers that may own a uri, most likely first. */
  ownersOf(uri: string, tenantId: string | undefined): Upstream[] {
    const ready = this.serversFor(tenantId).filter((u) => u.state === 'ready' && u.capabilities?.resources);
    const known = this.knownUris.get(uri);
    const first = ready.find((u) => u.name === known);
    return first ? [first, ...ready.filter((u) => u !== first)] : ready;
  }

  /** @internal */
  remember(uri: string, server: string): void {
    this.knownUris.delete(uri);
    this.knownUris.set(uri, server);
    if (this.knownUris.size > MAX_KNOWN_URIS) this.knownUris.delete(this.knownUris.keys().next().value!);
  }

  /**
   * @internal The transformer's config for a server: its own, with the preset picked by name unless
   * it says, and summaries that name the view tools (the gateway serves them) unless it says not to.
   */
  transformConfigFor(u: Upstream): TransformConfigInput {
    const artifacts = u.entry.artifacts ?? {};
    const own = { viewTools: true, ...(artifacts.transform as TransformConfigInput | undefined) };
    if (own.presets !== undefined) return own;
    const preset = artifacts.preset ?? presetFor(u.name, u.serverInfo?.name) ?? 'none';
    return { ...own, presets: preset === 'none' || preset === 'all' ? preset : [preset] };
  }

  /**
   * @internal Whether a tool's images may stay inline for the model. Such a tool is listed without its
   * outputSchema: a result that shows an image carries no structuredContent (hosts show one of the
   * two), and a host's SDK would reject it against the schema.
   */
  mayShowImages(u: Upstream, tool: string, configs = new Map<Upstream, TransformConfig>()): boolean {
    let config = configs.get(u);
    if (!config) {
      config = resolveTransformConfig(this.transformConfigFor(u));
      configs.set(u, config);
    }
    return imagePolicyFor(config, toolSpecsFor(tool, u.name, config)).inline;
  }

  private entries(kind: 'tools' | 'prompts'): NamedEntry[] {
    return [...this.upstreams.values()].flatMap((u) => u[kind].map((t) => ({ server: u.name, name: t.name })));
  }

  /** After start, a new name that collides is left out (and logged), the others keep theirs. */
  private rebuild(kind: 'tools' | 'prompts'): void {
    const current = kind === 'tools' ? this.tools : this.prompts;
    const next = new Map<string, NamedEntry>();
    // Names already given keep their owner; then the rest, in config order.
    const entries = this.entries(kind);
    const byKey = new Set(entries.map((e) => `${e.server}\u0000${e.name}`));
    for (const [name, e] of current) if (byKey.has(`${e.server}\u0000${e.name}`)) next.set(name, e);
    for (const e of entries) {
      try {
        for (const [name, entry] of nameTable([e], kind === 'tools' ? 'tool' : 'prompt')) {
          const other = next.get(name);
          if (other && (other.server !== entry.server || other.name !== entry.name)) {
            this.log(
              `${entry.server}: ${kind === 'tools' ? 'tool' : 'prompt'} ${JSON.stringify(entry.name)} would be called ${name}, like ${JSON.stringify(other.name)} of "${other.server}"; left out`,
            );
            continue;
          }
          next.set(name, entry);
        }
      } catch {
        // nameTable of one entry cannot collide.
      }
    }
    if (kind === 'tools') this.tools = next;
    else this.prompts = next;
  }

  private changed(u: Upstream, what: 'state' | 'tools' | 'prompts' | 'resources'): void {
    if (!this.started) return;
    if (what === 'state' || what === 'tools') this.rebuild('tools');
    if (what === 'state' || what === 'prompts') this.rebuild('prompts');
    for (const session of this.sessions) {
      if (!tenantMayUse(u.entry, session.scope.tenantId)) continue;
      if (what === 'state' || what === 'tools') session.notify('tools');
      if (what === 'state' || what === 'prompts') session.notify('prompts');
      if (what === 'state' || what === 'resources') session.notify('resources');
    }
  }
}

/** One caller scope: its resource bridges (and their caches), and which uris it watches. */
export class ScopeView {
  readonly sessions = new Set<GatewaySession>();
  private readonly bridges = new Map<string, { bridge: ResourceBridge; dispose(): void }>();
  /** `${server}\n${uri}` this scope read through the REST view, subscribed upstream while the view lives. */
  private readonly watched = new Set<string>();

  constructor(readonly scope: GatewayScope) {}

  bridge(upstream: Upstream): ResourceBridge {
    const existing = this.bridges.get(upstream.name);
    if (existing) return existing.bridge;
    const { client, dispose } = upstream.bridgeClient();
    const config = upstream.entry.artifacts?.resources;
    const bridge = new ResourceBridge(client, {
      store: this.scope.store,
      serverName: upstream.name,
      ...(config ? { config } : {}),
      onEvent: (event) => {
        if (event.type === 'resource.updated') this.updated(upstream.name, event.uri);
      },
    });
    this.bridges.set(upstream.name, { bridge, dispose });
    return bridge;
  }

  /** Keeps this scope told about a uri it read (when the server offers subscriptions). */
  async watch(upstream: Upstream, uri: string): Promise<void> {
    const key = `${upstream.name}\n${uri}`;
    if (this.watched.has(key) || upstream.capabilities?.resources?.subscribe !== true) return;
    this.watched.add(key);
    await upstream.subscribe(uri).catch(() => this.watched.delete(key));
  }

  async close(): Promise<void> {
    for (const { dispose } of this.bridges.values()) dispose();
    this.bridges.clear();
    this.watched.clear();
  }

  private updated(server: string, uri: string): void {
    const key = `${server}\n${uri}`;
    let watching = this.watched.has(key);
    for (const session of this.sessions) if (session.resourceUpdated(key, uri)) watching = true;
    if (watching) this.scope.onResourceUpdated?.(server, uri);
  }
}

/** The MCP server one host talks to. */
export class GatewaySession {
  readonly server: Server;
  /** `${server}\n${uri}` this host subscribed to. */
  private readonly subscriptions = new Map<string, Upstream>();
  private closed = false;

  constructor(
    private readonly gateway: McpGateway,
    readonly scope: GatewayScope,
    private readonly view: ScopeView,
  ) {
    view.sessions.add(this);
    this.server = new Server(
      { name: gateway.options.name ?? 'artifact-store-gateway', version: gateway.options.version ?? '0.1.0' },
      {
        capabilities: {
          tools: { listChanged: true },
          prompts: { listChanged: true },
          resources: { subscribe: true, listChanged: true },
        },
        instructions:
          'Tools are named {server}__{tool}. Files and large outputs they return are stored as artifacts: you get a summary and an artifact:// link; artifact_info describes one and artifact_url gives a download link for a person. ' +
          'To look inside a stored artifact, use artifact_read (lines, PDF pages, ZIP entries), artifact_search (a pattern), artifact_query (a JSONPath over JSON) and artifact_list (what is stored).',
      },
    );
    this.register();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.gateway.forget(this);
    this.view.sessions.delete(this);
    for (const [key, upstream] of this.subscriptions) await upstream.unsubscribe(key.split('\n')[1]!);
    this.subscriptions.clear();
    await this.server.close().catch(() => {});
  }

  /** @internal Tells the host a list changed. */
  notify(what: 'tools' | 'prompts' | 'resources'): void {
    if (this.closed) return;
    const send =
      what === 'tools'
        ? this.server.sendToolListChanged()
        : what === 'prompts'
          ? this.server.sendPromptListChanged()
          : this.server.sendResourceListChanged();
    void Promise.resolve(send).catch(() => {});
  }

  /** @internal A watched uri changed: tells the host when it subscribed. */
  resourceUpdated(key: string, uri: string): boolean {
    if (this.closed || !this.subscriptions.has(key)) return false;
    void this.server.sendResourceUpdated({ uri }).catch(() => {});
    return true;
  }

  private register(): void {
    const { server, gateway, scope } = this;
    const tenant = scope.tenantId;

    server.setRequestHandler(ListToolsRequestSchema, () => {
      const unavailable = gateway
        .serversFor(tenant)
        .filter((u) => u.state !== 'ready')
        .map((u) => ({ server: u.name, reason: u.describeUnavailable() }));
      return {
        tools: [...gateway.toolsFor(tenant), ...ARTIFACT_TOOLS],
        ...(unavailable.length > 0 ? { _meta: { 'artifact-store/unavailable': unavailable } } : {}),
      };
    });

    server.setRequestHandler(CallToolRequestSchema, (req, extra) =>
      this.callTool(req.params.name, req.params.arguments, extra),
    );

    server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: gateway.promptsFor(tenant) }));

    server.setRequestHandler(GetPromptRequestSchema, async (req, extra) => {
      const found = gateway.lookup('prompt', req.params.name, tenant);
      if (!found) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt ${req.params.name}.`);
      return found.upstream
        .connected()
        .getPrompt(
          { name: found.entry.name, ...(req.params.arguments ? { arguments: req.params.arguments } : {}) },
          { signal: extra.signal },
        );
    });

    server.setRequestHandler(ListResourcesRequestSchema, (req) => this.listResources(req.params?.cursor));

    server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => {
      const templates: ResourceTemplate[] = [
        {
          uriTemplate: 'artifact://{id}',
          name: 'artifact',
          title: 'Stored artifact',
          description: 'A file a tool stored in artifact-store, by its id.',
        },
      ];
      for (const u of gateway.ownersOf('', tenant)) {
        try {
          templates.push(...(await this.view.bridge(u).listResourceTemplates()));
        } catch {
          // A server without templates, or one that fails to list them, adds none.
        }
      }
      return { resourceTemplates: templates };
    });

    server.setRequestHandler(ReadResourceRequestSchema, (req) => this.readResource(req.params.uri));

    server.setRequestHandler(SubscribeRequestSchema, async (req) => {
      const { uri } = req.params;
      if (uri.startsWith('artifact://'))
        throw new McpError(
          ErrorCode.InvalidParams,
          'Stored artifacts do not change; their removals are announced by artifact-store mcp, not the gateway.',
        );
      const owners = gateway.ownersOf(uri, tenant).filter((u) => u.capabilities?.resources?.subscribe === true);
      const upstream = owners[0];
      if (!upstream)
        throw new McpError(RESOURCE_NOT_FOUND, `No server behind this gateway offers subscriptions to ${uri}.`);
      const key = `${upstream.name}\n${uri}`;
      if (this.subscriptions.has(key)) return {};
      this.view.bridge(upstream);
      await upstream.subscribe(uri);
      this.subscriptions.set(key, upstream);
      return {};
    });

    server.setRequestHandler(UnsubscribeRequestSchema, async (req) => {
      for (const [key, upstream] of this.subscriptions) {
        if (key.split('\n')[1] !== req.params.uri) continue;
        this.subscriptions.delete(key);
        await upstream.unsubscribe(req.params.uri);
      }
      return {};
    });
  }

  private async callTool(name: string, args: Record<string, unknown> | undefined, extra: Extra) {
    const { gateway, scope } = this;
    const own = await callArtifactTool(scope.store, name, args, { budget: ARTIFACT_TOOL_BUDGET });
    if (own) return own;
    const found = gateway.lookup('tool', name, scope.tenantId);
    if (!found) throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${name}. List the tools with tools/list.`);
    const { entry, upstream } = found;
    if (upstream.state !== 'ready') return toolResultError(upstream.describeUnavailable());
    const settings = upstream.entry.artifacts ?? {};
    const progressToken = extra._meta?.progressToken;
    let raw: CallToolResult;
    try {
      raw = (await upstream
        .connected()
        .callTool({ name: entry.name, ...(args ? { arguments: args } : {}) }, undefined, {
          signal: extra.signal,
          timeout: settings.callTimeoutMs ?? DEFAULT_CALL_TIMEOUT_MS,
          resetTimeoutOnProgress: true,
          ...(progressToken !== undefined
            ? {
                onprogress: (p) =>
                  void extra
                    .sendNotification({ method: 'notifications/progress', params: { ...p, progressToken } })
                    .catch(() => {}),
              }
            : {}),
        })) as CallToolResult;
    } catch (err) {
      if (extra.signal.aborted) throw err;
      if (err instanceof McpError && err.code === ErrorCode.ConnectionClosed)
        return toolResultError(
          `Server "${upstream.name}" stopped during this call, so ${entry.name} has no result. The gateway starts it again; try again in a few seconds.`,
        );
      if (err instanceof McpError && err.code === ErrorCode.RequestTimeout)
        return toolResultError(`${entry.name} on server "${upstream.name}" timed out: ${err.message}.`);
      // The server's own protocol errors (unknown arguments, for one) reach the host as they were.
      if (err instanceof McpError) throw err;
      return toolResultError(`${entry.name} on server "${upstream.name}" failed: ${(err as Error)?.message ?? err}`);
    }
    return this.observe(upstream, entry.name, name, raw);
  }

  /** transformToolResult, then clampObservation, then download links: what the host sees of a result. */
  private async observe(upstream: Upstream, tool: string, hostName: string, raw: CallToolResult) {
    const { store } = this.scope;
    for (const block of raw.content ?? [])
      if (block.type === 'resource_link') this.gateway.remember(block.uri, upstream.name);
    const settings = upstream.entry.artifacts ?? {};
    const transformed = await transformToolResult<CallToolResult>(tool, raw, {
      store,
      serverName: upstream.name,
      config: this.gateway.transformConfigFor(upstream),
      readResource: (uri) => this.view.bridge(upstream).fetch(uri),
    });
    let result = transformed.result;
    const artifacts = [...transformed.artifacts];
    // Images the transformer kept for the model are within the image limits, not the text budget.
    const images = (result.content ?? []).filter((b) => b.type === 'image');
    const clamp = await clampObservation<Record<string, unknown>>(
      images.length > 0 ? { ...result, content: result.content.filter((b) => b.type !== 'image') } : result,
      {
        store,
        tool: hostName,
        // Over budget is always stored whole: the host gets the ref, a summary and a preview.
        config: { viewTools: true, ...settings.guardrail, autoArtifactThreshold: 0 },
      },
    );
    if (clamp.clamped) {
      result = {
        content: [
          ...images,
          { type: 'text', text: JSON.stringify(clamp.observation) },
          ...(clamp.artifact ? [linkBlock(clamp.artifact)] : []),
        ],
        ...(result.structuredContent !== undefined ? { structuredContent: clamp.observation } : {}),
        ...(raw.isError ? { isError: true } : {}),
      };
      if (clamp.artifact) artifacts.push(clamp.artifact);
    }
    if (settings.downloadLinks !== false) {
      const links = await this.downloadLinks(artifacts, settings.linkTtlSeconds ?? DEFAULT_LINK_TTL_SECONDS);
      if (links) result = { ...result, content: [...(result.content ?? []), links] };
    }
    return result;
  }

  /** One text block for the person in the chat: a signed link per stored artifact. */
  private async downloadLinks(
    artifacts: ArtifactRef[],
    ttl: number,
  ): Promise<CallToolResult['content'][number] | undefined> {
    const { store } = this.scope;
    if (artifacts.length === 0 || !store.url || !store.capabilities.signedUrls) return undefined;
    const lines: string[] = [];
    const unique = [...new Map(artifacts.map((a) => [a.id, a])).values()];
    for (const ref of unique.slice(0, MAX_LINKS)) {
      try {
        const link = await store.url(ref.id, { expiresIn: ttl });
        lines.push(
          `Download ${ref.filename ?? ref.id} (${formatBytes(ref.sizeBytes)}), valid until ${link.urlExpiresAt}: ${link.url}`,
        );
      } catch {
        // A ref the store cannot sign (not stored, say) gets no link; its summary says why.
      }
    }
    if (unique.length > MAX_LINKS) lines.push(`${unique.length - MAX_LINKS} more: ask artifact_url for their links.`);
    if (lines.length === 0) return undefined;
    return { type: 'text', text: lines.join('\n'), annotations: { audience: ['user'], priority: 0.2 } };
  }

  private async listResources(cursor: string | undefined) {
    const servers = this.gateway.ownersOf('', this.scope.tenantId);
    let position: { s: string; c?: string } = { s: servers[0]?.name ?? '' };
    if (cursor) {
      try {
        position = JSON.parse(atob(cursor.replace(/-/g, '+').replace(/_/g, '/')));
        if (typeof position?.s !== 'string') throw new Error('no server');
      } catch {
        throw new McpError(ErrorCode.InvalidParams, 'Invalid cursor: start again without one.');
      }
    }
    const at = servers.findIndex((u) => u.name === position.s);
    if (at < 0) return { resources: [] as Resource[] };
    const upstream = servers[at]!;
    let page: { resources: Resource[]; nextCursor?: string | undefined };
    try {
      page = await this.gateway.listResources(upstream, position.c);
    } catch (err) {
      throw asMcpError(err, `resources/list of server "${upstream.name}"`);
    }
    const next = page.nextCursor
      ? { s: upstream.name, c: page.nextCursor }
      : servers[at + 1]
        ? { s: servers[at + 1]!.name }
        : undefined;
    return {
      resources: page.resources,
      ...(next ? { nextCursor: btoa(JSON.stringify(next)).replace(/\+/g, '-').replace(/\//g, '_') } : {}),
    };
  }

  private async readResource(uri: string): Promise<ReadResourceResult> {
    const { scope, gateway } = this;
    if (uri.startsWith('artifact://')) return readArtifactResource(scope.store, uri);
    const owners = gateway.ownersOf(uri, scope.tenantId);
    let last: unknown;
    for (const upstream of owners) {
      try {
        const read = await gateway.readResource(scope, upstream, uri);
        return await this.contentsOf(upstream, read);
      } catch (err) {
        last = err;
        if (err instanceof ResourceBridgeError && err.code === 'not_found') continue;
        throw asMcpError(err, `resources/read ${uri}`);
      }
    }
    if (last) throw asMcpError(last, `resources/read ${uri}`);
    throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}. No server behind this gateway has it.`);
  }

  /** A bridge read as resources/read contents: inline text as it was, stored bytes as summary and link. */
  private async contentsOf(upstream: Upstream, read: ResourceRead): Promise<ReadResourceResult> {
    const contents: ReadResourceResult['contents'] = [];
    for (const block of read.content) {
      if (block.type === 'resource' && block.resource && typeof block.resource === 'object')
        contents.push(block.resource as ReadResourceResult['contents'][number]);
      else if (block.type === 'text' && typeof block.text === 'string')
        contents.push({ uri: read.uri, mimeType: 'text/plain', text: block.text });
      else if (block.type === 'resource_link' && typeof block.uri === 'string')
        contents.push({ uri: read.uri, mimeType: 'text/plain', text: `Stored as ${block.uri}` });
    }
    const settings = upstream.entry.artifacts ?? {};
    if (settings.downloadLinks !== false) {
      const links = await this.downloadLinks(read.artifacts, settings.linkTtlSeconds ?? DEFAULT_LINK_TTL_SECONDS);
      if (links?.type === 'text') contents.push({ uri: read.uri, mimeType: 'text/plain', text: links.text });
    }
    return { contents, _meta: { 'artifact-store/artifacts': read.artifacts.map((a) => artifactUri(a.id)) } };
  }
}

function linkBlock(ref: ArtifactRef): CallToolResult['content'][number] {
  return {
    type: 'resource_link',
    uri: artifactUri(ref.id),
    name: ref.filename ?? ref.id,
    mimeType: ref.mimeType,
    size: ref.sizeBytes,
  };
}

/** A resource failure as the MCP error a host understands. */
function asMcpError(err: unknown, what: string): McpError {
  if (err instanceof McpError) return err;
  if (err instanceof ResourceBridgeError) {
    const code =
      err.code === 'not_found'
        ? RESOURCE_NOT_FOUND
        : err.code === 'timeout'
          ? ErrorCode.RequestTimeout
          : err.code === 'resources_unsupported' || err.code === 'subscribe_unsupported'
            ? ErrorCode.MethodNotFound
            : ErrorCode.InternalError;
    return new McpError(code, err.message);
  }
  return new McpError(ErrorCode.InternalError, `${what} failed: ${(err as Error)?.message ?? err}`);
}
