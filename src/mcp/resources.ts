import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  ErrorCode as McpErrorCode,
  McpError,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplate,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { ArtifactStore } from '../client/artifact-store.js';
import type { ArtifactRef, ArtifactScope } from '../core/schemas.js';
import { count, parseConfig } from './config.js';
import { clampObservation, type GuardrailConfigInput } from './guardrail.js';
import { transformToolResult } from './transform/index.js';

/**
 * The client side of MCP resources: list and read any server's resources, with blob contents
 * stored as artifacts, a cache that MCP's update notifications keep honest, subscriptions, and
 * planner tools a model can call.
 */

export const ResourceBridgeConfigSchema = z.strictObject({
  /** Text contents shorter than this stay inline; longer ones become text artifacts. */
  inlineTextIfUnderChars: count.default(10_000),
  /** Pages followed per listing before it stops with `page_limit`. */
  maxPages: count.min(1).default(100),
  /** Time allowed for one resources/read (large blobs take a while). */
  readTimeoutMs: count.min(1).default(60_000),
  /** Time allowed for one page of a listing, and for subscribe / unsubscribe. */
  requestTimeoutMs: count.min(1).default(30_000),
  /** How long a read is answered from the cache when the server gives no hint. 0 = no cache. */
  cacheTtlMs: count.default(5 * 60_000),
  /** Cached reads kept; the least recently used go first. */
  cacheMaxEntries: count.min(1).default(500),
});
export type ResourceBridgeConfigInput = z.input<typeof ResourceBridgeConfigSchema>;
export type ResourceBridgeConfig = z.output<typeof ResourceBridgeConfigSchema>;

export type ResourceErrorCode =
  | 'resources_unsupported'
  | 'subscribe_unsupported'
  | 'not_found'
  | 'timeout'
  | 'server_error'
  | 'cursor_loop'
  | 'page_limit';

/** A typed, actionable failure of a resource operation. */
export class ResourceBridgeError extends Error {
  override readonly name = 'ResourceBridgeError';
  constructor(
    readonly code: ResourceErrorCode,
    message: string,
    readonly uri?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export type ResourceBridgeEvent =
  | { type: 'resource.updated'; uri: string; invalidated: boolean }
  | { type: 'resource.list_changed'; cleared: number };

export interface ResourceBridgeOptions {
  /** Where blob contents and long texts go. */
  store: ArtifactStore;
  config?: ResourceBridgeConfigInput;
  scope?: Partial<ArtifactScope>;
  /** Prefix of artifact namespaces and planner tool names; default: the server's name from initialize. */
  serverName?: string;
  /** resource.updated (after the cache entry is dropped) and resource.list_changed (after the cache is cleared). */
  onEvent?: (event: ResourceBridgeEvent) => void;
  /** The guardrail applied to planner tool outputs. */
  guardrail?: GuardrailConfigInput;
}

/** One read, as the model should see it: MCP content blocks with refs in place of bytes. */
export interface ResourceRead {
  uri: string;
  /** Text contents inline; blobs and long texts as a summary + a `resource_link` to `artifact://{id}`. */
  content: Record<string, unknown>[];
  /** Every artifact the read stored (or found stored). */
  artifacts: ArtifactRef[];
  /** Answered from the cache, after checking that its artifacts still exist. */
  fromCache: boolean;
}

interface CacheEntry {
  read: Omit<ResourceRead, 'fromCache'>;
  expiresAt: number;
}

/**
 * URI → the stored form of its last read. Entries expire (TTL), the least recently used go first,
 * and an entry is only served after its artifacts are checked to still exist in the store.
 */
export class ResourceCache {
  private readonly entries = new Map<string, CacheEntry>();

  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get(uri: string): Omit<ResourceRead, 'fromCache'> | undefined {
    const entry = this.entries.get(uri);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(uri);
      return undefined;
    }
    // Map order is insertion order: re-inserting makes this the most recently used.
    this.entries.delete(uri);
    this.entries.set(uri, entry);
    return entry.read;
  }

  set(uri: string, read: Omit<ResourceRead, 'fromCache'>, ttlMs: number): void {
    if (ttlMs <= 0) return;
    this.entries.delete(uri);
    this.entries.set(uri, { read, expiresAt: this.now() + ttlMs });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  invalidate(uri: string): boolean {
    return this.entries.delete(uri);
  }

  clear(): number {
    const n = this.entries.size;
    this.entries.clear();
    return n;
  }

  has(uri: string): boolean {
    return this.entries.has(uri);
  }
}

/** A tool a planner can offer the model: JSON schema in, guarded observation out. */
export interface PlannerTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  call(args: Record<string, unknown>): Promise<unknown>;
}

/**
 * Resources of one MCP server, for a host. Listing follows every page; reads store blobs as
 * artifacts and are cached until the server says the resource changed. The bridge registers the
 * client's handlers for `notifications/resources/updated` and `notifications/resources/list_changed`
 * (a Client has one handler per notification): use `onEvent` to hear about them.
 *
 * @example
 * const bridge = new ResourceBridge(client, { store, scope: { sessionId: 's-42' } });
 * const resources = await bridge.listResources();
 * const { content, artifacts } = await bridge.readResource(resources[0].uri);
 * await bridge.subscribe(resources[0].uri); // the next update drops the cached read
 */
export class ResourceBridge {
  readonly config: ResourceBridgeConfig;
  readonly cache: ResourceCache;
  private readonly subscriptions = new Set<string>();

  constructor(
    readonly client: Client,
    private readonly options: ResourceBridgeOptions,
  ) {
    this.config = parseConfig(ResourceBridgeConfigSchema, options.config ?? {}, 'resource bridge');
    this.cache = new ResourceCache(this.config.cacheMaxEntries);
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      const invalidated = this.cache.invalidate(n.params.uri);
      this.options.onEvent?.({ type: 'resource.updated', uri: n.params.uri, invalidated });
    });
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
      const cleared = this.cache.clear();
      this.options.onEvent?.({ type: 'resource.list_changed', cleared });
    });
  }

  /** The server's name as reported at initialize (or the configured one). */
  get serverName(): string | undefined {
    return this.options.serverName ?? this.client.getServerVersion()?.name;
  }

  /** Does the server offer resources at all, and subscriptions? */
  get capabilities(): { resources: boolean; subscribe: boolean; listChanged: boolean } {
    const r = this.client.getServerCapabilities()?.resources;
    return { resources: r !== undefined, subscribe: r?.subscribe === true, listChanged: r?.listChanged === true };
  }

  /** Every resource, across all pages. */
  listResources(): Promise<Resource[]> {
    return this.walk('resources/list', async (cursor) => {
      const page = await this.client.listResources(cursor ? { cursor } : {}, { timeout: this.config.requestTimeoutMs });
      return { items: page.resources, nextCursor: page.nextCursor };
    });
  }

  /** Every resource template, across all pages. */
  listResourceTemplates(): Promise<ResourceTemplate[]> {
    return this.walk('resources/templates/list', async (cursor) => {
      const page = await this.client.listResourceTemplates(cursor ? { cursor } : {}, {
        timeout: this.config.requestTimeoutMs,
      });
      return { items: page.resourceTemplates, nextCursor: page.nextCursor };
    });
  }

  /**
   * Reads a resource: blobs become artifacts, text under `inlineTextIfUnderChars` stays inline,
   * longer text becomes a text artifact. Every content of a multi-content read is handled. Answered
   * from the cache while the entry is fresh, no update arrived for it, and its artifacts still exist.
   */
  async readResource(uri: string, { fresh = false }: { fresh?: boolean } = {}): Promise<ResourceRead> {
    this.requireResources(uri);
    if (!fresh) {
      const cached = this.cache.get(uri);
      if (cached && (await this.allExist(cached.artifacts))) return { ...cached, fromCache: true };
      if (cached) this.cache.invalidate(uri);
    }
    const raw = await this.fetch(uri);
    const { result, artifacts } = await transformToolResult<{ content: Record<string, unknown>[] }>(
      'resources_read',
      { content: raw.contents.map((resource) => ({ type: 'resource', resource })) },
      {
        store: this.options.store,
        ...(this.serverName ? { serverName: this.serverName } : {}),
        ...(this.options.scope ? { scope: this.options.scope } : {}),
        // Bytes from resources/read are stored whatever they are; text follows the inline limit.
        config: {
          presets: 'none',
          inlineTextIfUnderChars: this.config.inlineTextIfUnderChars,
          maxInlineChars: Math.max(64, this.config.inlineTextIfUnderChars),
        },
      },
    );
    const read = { uri, content: result.content, artifacts };
    // The cache is this bridge's own, so a server's cacheScope (public or private) both allow it.
    this.cache.set(uri, read, cacheTtlOf(raw) ?? this.config.cacheTtlMs);
    return { ...read, fromCache: false };
  }

  /**
   * The raw resources/read, with this bridge's timeout and typed errors. The transformer's auto-read
   * policy uses it (`wrapMcpClient(client, { resources: bridge })`).
   */
  async fetch(uri: string): Promise<ReadResourceResult> {
    this.requireResources(uri);
    try {
      return await this.client.readResource({ uri }, { timeout: this.config.readTimeoutMs });
    } catch (err) {
      throw this.typed(err, uri, 'resources/read');
    }
  }

  /**
   * Subscribes to updates of one resource. A server without `resources.subscribe` gets a clear,
   * non-fatal answer; the cache then relies on its TTL alone.
   */
  async subscribe(uri: string): Promise<{ subscribed: boolean; reason?: string }> {
    this.requireResources(uri);
    if (!this.capabilities.subscribe) {
      return {
        subscribed: false,
        reason: `${this.serverName ?? 'The server'} does not offer resource subscriptions; cached reads of ${uri} expire after ${this.config.cacheTtlMs} ms instead.`,
      };
    }
    try {
      await this.client.subscribeResource({ uri }, { timeout: this.config.requestTimeoutMs });
    } catch (err) {
      throw this.typed(err, uri, 'resources/subscribe');
    }
    this.subscriptions.add(uri);
    return { subscribed: true };
  }

  async unsubscribe(uri: string): Promise<{ unsubscribed: boolean; reason?: string }> {
    if (!this.subscriptions.has(uri)) return { unsubscribed: false, reason: `Not subscribed to ${uri}.` };
    try {
      await this.client.unsubscribeResource({ uri }, { timeout: this.config.requestTimeoutMs });
    } catch (err) {
      throw this.typed(err, uri, 'resources/unsubscribe');
    }
    this.subscriptions.delete(uri);
    return { unsubscribed: true };
  }

  get subscribed(): ReadonlySet<string> {
    return this.subscriptions;
  }

  /**
   * `{namespace}.resources_list`, `{namespace}.resources_read` and `{namespace}.resources_templates_list`
   * for a planner. Outputs pass through the guardrail, with the bridge's store.
   */
  plannerTools(namespace = this.serverName ?? 'mcp'): PlannerTool[] {
    const ns = namespace.toLowerCase().replace(/[^a-z0-9._-]/g, '-');
    const guard = (observation: unknown, tool: string) =>
      clampObservation(observation, {
        store: this.options.store,
        tool,
        ...(this.options.guardrail ? { config: this.options.guardrail } : {}),
        ...(this.options.scope ? { scope: this.options.scope } : {}),
      }).then((r) => r.observation);
    const who = this.serverName ?? 'the MCP server';
    return [
      {
        name: `${ns}.resources_list`,
        description: `List the resources ${who} offers (files, documents, data). Returns each resource's uri, name, mimeType and size. Read one with ${ns}.resources_read.`,
        inputSchema: { type: 'object', properties: {}, additionalProperties: false },
        call: async () => guard({ resources: await this.listResources() }, `${ns}.resources_list`),
      },
      {
        name: `${ns}.resources_templates_list`,
        description: `List the URI templates of ${who}'s resources (for example "file:///{path}"). Fill one in and read it with ${ns}.resources_read.`,
        inputSchema: { type: 'object', properties: {}, additionalProperties: false },
        call: async () =>
          guard({ resourceTemplates: await this.listResourceTemplates() }, `${ns}.resources_templates_list`),
      },
      {
        name: `${ns}.resources_read`,
        description: `Read one resource of ${who} by its uri. Short text comes back inline; binary files and long text are stored as artifacts and come back as a summary and an artifact:// link.`,
        inputSchema: {
          type: 'object',
          properties: { uri: { type: 'string', description: 'The resource uri, exactly as listed' } },
          required: ['uri'],
          additionalProperties: false,
        },
        call: async (args) => {
          const uri = args.uri;
          if (typeof uri !== 'string' || uri.length === 0)
            throw new ResourceBridgeError(
              'not_found',
              `${ns}.resources_read needs a "uri" string; list them with ${ns}.resources_list.`,
            );
          const { content } = await this.readResource(uri);
          return guard({ uri, content }, `${ns}.resources_read`);
        },
      },
    ];
  }

  private requireResources(uri?: string): void {
    if (!this.capabilities.resources) {
      throw new ResourceBridgeError(
        'resources_unsupported',
        `${this.serverName ?? 'The MCP server'} does not offer resources (no "resources" capability at initialize).`,
        uri,
      );
    }
  }

  private async allExist(refs: ArtifactRef[]): Promise<boolean> {
    for (const ref of refs) if (!(await this.options.store.exists(ref.id))) return false;
    return true;
  }

  private async walk<T>(
    method: string,
    page: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string | undefined }>,
  ): Promise<T[]> {
    this.requireResources();
    const items: T[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let n = 0; ; n++) {
      if (n >= this.config.maxPages) {
        throw new ResourceBridgeError(
          'page_limit',
          `${method} still had more pages after ${this.config.maxPages} (${items.length} items so far); raise maxPages if the server really has that many.`,
        );
      }
      let result: { items: T[]; nextCursor?: string | undefined };
      try {
        result = await page(cursor);
      } catch (err) {
        throw this.typed(err, undefined, method);
      }
      items.push(...result.items);
      if (!result.nextCursor) return items;
      if (seen.has(result.nextCursor)) {
        throw new ResourceBridgeError(
          'cursor_loop',
          `${method}: the server returned cursor "${result.nextCursor.slice(0, 80)}" twice, so its pagination would never end (${items.length} items read).`,
        );
      }
      seen.add(result.nextCursor);
      cursor = result.nextCursor;
    }
  }

  private typed(err: unknown, uri: string | undefined, method: string): ResourceBridgeError {
    if (err instanceof ResourceBridgeError) return err;
    const message = (err as Error)?.message ?? String(err);
    const on = uri ? `${method} ${uri}` : method;
    if (err instanceof McpError) {
      if (err.code === McpErrorCode.RequestTimeout)
        return new ResourceBridgeError(
          'timeout',
          `${on} timed out: ${message}. Raise readTimeoutMs / requestTimeoutMs for large resources.`,
          uri,
          { cause: err },
        );
      if (err.code === McpErrorCode.MethodNotFound)
        return new ResourceBridgeError(
          'resources_unsupported',
          `${on}: the server does not implement it (${message}).`,
          uri,
          { cause: err },
        );
      // -32002 is MCP's "resource not found"; some servers answer InvalidParams for an unknown uri.
      if (
        err.code === -32002 ||
        (uri && err.code === McpErrorCode.InvalidParams && /not found|unknown/i.test(message))
      ) {
        return new ResourceBridgeError(
          'not_found',
          `Resource ${uri} was not found on ${this.serverName ?? 'the server'}; list them with listResources().`,
          uri,
          { cause: err },
        );
      }
    }
    return new ResourceBridgeError('server_error', `${on} failed: ${message}`, uri, { cause: err });
  }
}

/** A server's cache hint for a read, where it sends one (`ttlMs` on the result or in `_meta`); 0 = do not cache. */
function cacheTtlOf(result: ReadResourceResult): number | undefined {
  const hint = (result as { ttlMs?: unknown }).ttlMs ?? result._meta?.ttlMs;
  return typeof hint === 'number' && Number.isFinite(hint) && hint >= 0 ? hint : undefined;
}
