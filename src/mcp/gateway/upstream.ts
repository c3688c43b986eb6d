/**
 * One upstream MCP server behind the gateway: its connection, restarted with backoff when it will not
 * start or dies; its tools and prompts as last listed; and one subscription per resource however many
 * hosts watch it. The transport comes from the runtime (spawned on Node, fetched anywhere), so this
 * module stays runtime-neutral.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
  type Implementation,
  type Prompt,
  type ServerCapabilities,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { UpstreamEntry } from './config.js';

/** A connected transport, and what the runtime can tell about a failure (a spawned server's last stderr). */
export interface UpstreamConnection {
  transport: Transport;
  diagnostics?: () => string;
}

/** Opens the transport to one upstream: the runtime's part (spawn on stdio, Streamable HTTP, SSE). */
export type ConnectUpstream = (name: string, entry: UpstreamEntry) => UpstreamConnection | Promise<UpstreamConnection>;

export type UpstreamState = 'starting' | 'ready' | 'failed' | 'closed';

export interface BackoffSettings {
  /** First wait after a failure (default 1 s); it doubles up to maxMs. */
  initialMs: number;
  /** Longest wait between tries (default 30 s). */
  maxMs: number;
  /** A connection that lasted this long resets the wait to initialMs (default 30 s). */
  stableMs: number;
}

export const DEFAULT_BACKOFF: BackoffSettings = { initialMs: 1000, maxMs: 30_000, stableMs: 30_000 };

/** What an upstream tells the gateway. */
export interface UpstreamHooks {
  /** Its state, tools, prompts or resource list changed. */
  changed(upstream: Upstream, what: 'state' | 'tools' | 'prompts' | 'resources'): void;
  log(line: string): void;
}

type UpdatedHandler = (uri: string) => void;
type ListChangedHandler = () => void;

const LIST_TIMEOUT_MS = 30_000;
const CONNECT_TIMEOUT_MS = 60_000;
const MAX_PAGES = 100;

export class Upstream {
  state: UpstreamState = 'starting';
  /** Why it is not ready, in words a person can act on. */
  error: string | undefined;
  /** When the next start is tried (epoch ms), while failed. */
  nextRetryAt: number | undefined;
  tools: Tool[] = [];
  prompts: Prompt[] = [];
  serverInfo: Implementation | undefined;
  capabilities: ServerCapabilities | undefined;
  private client: Client | undefined;
  private connection: UpstreamConnection | undefined;
  private attempts = 0;
  private connectedAt = 0;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private starting: Promise<void> | undefined;
  private readonly subscriptions = new Map<string, number>();
  private readonly updatedHandlers = new Set<UpdatedHandler>();
  private readonly listChangedHandlers = new Set<ListChangedHandler>();

  constructor(
    readonly name: string,
    readonly entry: UpstreamEntry,
    private readonly connect: ConnectUpstream,
    private readonly hooks: UpstreamHooks,
    private readonly backoff: BackoffSettings = DEFAULT_BACKOFF,
    private readonly clientInfo: Implementation = { name: 'artifact-store-gateway', version: '0.1.0' },
  ) {}

  /** Starts (once; later calls wait for the same try). Never rejects: a failure is the failed state. */
  start(): Promise<void> {
    this.starting ??= this.attempt().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  /** The connected client, or an Error saying why there is none. */
  connected(): Client {
    if (this.state === 'ready' && this.client) return this.client;
    throw new UpstreamUnavailableError(this);
  }

  /** Why this server cannot be used now, for tool results and listings. */
  describeUnavailable(): string {
    if (this.state === 'closed') return `Server "${this.name}" is shut down.`;
    if (this.state === 'starting') return `Server "${this.name}" is still starting; try again in a moment.`;
    const retry =
      this.nextRetryAt !== undefined
        ? ` The gateway starts it again in ${Math.max(1, Math.ceil((this.nextRetryAt - Date.now()) / 1000))} s.`
        : '';
    return `Server "${this.name}" is not available: ${this.error ?? 'it stopped'}.${retry}`;
  }

  /** Subscribes upstream on the first watcher of a uri; later watchers share it. */
  async subscribe(uri: string): Promise<void> {
    const n = this.subscriptions.get(uri) ?? 0;
    this.subscriptions.set(uri, n + 1);
    if (n === 0) {
      try {
        await this.connected().subscribeResource({ uri }, { timeout: LIST_TIMEOUT_MS });
      } catch (err) {
        this.release(uri);
        throw err;
      }
    }
  }

  /** Drops one watcher; the last one unsubscribes upstream. */
  async unsubscribe(uri: string): Promise<void> {
    if (!this.release(uri) || this.state !== 'ready') return;
    await this.client?.unsubscribeResource({ uri }, { timeout: LIST_TIMEOUT_MS }).catch(() => {});
  }

  /** A client for one scope's ResourceBridge: its notification handlers join this upstream's. */
  bridgeClient(): { client: Client; dispose(): void } {
    const handlers: { updated: UpdatedHandler[]; listChanged: ListChangedHandler[] } = { updated: [], listChanged: [] };
    const client = new Proxy({} as Client, {
      get: (_target, prop) => {
        if (prop === 'setNotificationHandler')
          return (schema: unknown, handler: (n: { params: { uri: string } }) => void) => {
            if (schema === ResourceUpdatedNotificationSchema) {
              const h: UpdatedHandler = (uri) => handler({ params: { uri } });
              handlers.updated.push(h);
              this.updatedHandlers.add(h);
            } else if (schema === ResourceListChangedNotificationSchema) {
              const h: ListChangedHandler = () => (handler as unknown as () => void)();
              handlers.listChanged.push(h);
              this.listChangedHandlers.add(h);
            }
          };
        if (prop === 'subscribeResource') return ({ uri }: { uri: string }) => this.subscribe(uri).then(() => ({}));
        if (prop === 'unsubscribeResource') return ({ uri }: { uri: string }) => this.unsubscribe(uri).then(() => ({}));
        if (prop === 'getServerCapabilities') return () => this.capabilities;
        if (prop === 'getServerVersion') return () => this.serverInfo;
        const client = this.connected();
        const value = Reflect.get(client, prop, client);
        return typeof value === 'function' ? value.bind(client) : value;
      },
    });
    return {
      client,
      dispose: () => {
        for (const h of handlers.updated) this.updatedHandlers.delete(h);
        for (const h of handlers.listChanged) this.listChangedHandlers.delete(h);
      },
    };
  }

  async close(): Promise<void> {
    this.state = 'closed';
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const client = this.client;
    this.client = undefined;
    await client?.close().catch(() => {});
  }

  /** Read through a method: the state changes across awaits, which narrowing does not see. */
  private isClosed(): boolean {
    return this.state === 'closed';
  }

  private release(uri: string): boolean {
    const n = this.subscriptions.get(uri) ?? 0;
    if (n <= 1) this.subscriptions.delete(uri);
    else this.subscriptions.set(uri, n - 1);
    return n === 1;
  }

  private async attempt(): Promise<void> {
    if (this.isClosed()) return;
    this.state = 'starting';
    this.hooks.changed(this, 'state');
    const client = new Client(this.clientInfo, { capabilities: {} });
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      for (const h of this.updatedHandlers) h(n.params.uri);
    });
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
      for (const h of this.listChangedHandlers) h();
      this.hooks.changed(this, 'resources');
    });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void this.refresh('tools'));
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => void this.refresh('prompts'));
    let connection: UpstreamConnection | undefined;
    try {
      connection = await this.connect(this.name, this.entry);
      await client.connect(connection.transport, { timeout: CONNECT_TIMEOUT_MS });
      this.client = client;
      this.connection = connection;
      this.serverInfo = client.getServerVersion();
      this.capabilities = client.getServerCapabilities();
      this.tools = this.capabilities?.tools ? await this.walk((cursor) => this.listTools(client, cursor)) : [];
      this.prompts = this.capabilities?.prompts ? await this.walk((cursor) => this.listPrompts(client, cursor)) : [];
    } catch (err) {
      this.client = undefined;
      await client.close().catch(() => {});
      if (this.isClosed()) return;
      this.fail(`it did not start (${reasonOf(err, connection)})`);
      return;
    }
    if (this.isClosed()) {
      await client.close().catch(() => {});
      return;
    }
    // Its end, whatever the cause, is a failure unless the gateway is closing.
    client.onclose = () => {
      if (this.client !== client || this.isClosed()) return;
      this.client = undefined;
      this.fail(`it stopped (${this.connection?.diagnostics?.() || 'the connection closed'})`);
    };
    this.connectedAt = Date.now();
    this.state = 'ready';
    this.error = undefined;
    this.nextRetryAt = undefined;
    this.hooks.log(
      `${this.name}: connected to ${this.serverInfo?.name ?? 'server'} ${this.serverInfo?.version ?? ''} (${this.tools.length} tools)`,
    );
    // Subscriptions held before a restart are renewed; what was read may have changed meanwhile.
    for (const uri of this.subscriptions.keys())
      await client.subscribeResource({ uri }, { timeout: LIST_TIMEOUT_MS }).catch(() => {});
    for (const h of this.listChangedHandlers) h();
    this.hooks.changed(this, 'state');
  }

  private fail(reason: string): void {
    const stable = this.connectedAt > 0 && Date.now() - this.connectedAt >= this.backoff.stableMs;
    if (stable) this.attempts = 0;
    this.connectedAt = 0;
    const wait = Math.min(this.backoff.maxMs, this.backoff.initialMs * 2 ** this.attempts);
    this.attempts++;
    this.state = 'failed';
    this.error = reason;
    // The last tools and prompts stay known, so a call to one says why it cannot run now.
    this.nextRetryAt = Date.now() + wait;
    this.hooks.log(`${this.name}: ${reason}; trying again in ${wait} ms`);
    this.hooks.changed(this, 'state');
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.start();
    }, wait);
    (this.retryTimer as { unref?: () => void }).unref?.();
  }

  private async refresh(what: 'tools' | 'prompts'): Promise<void> {
    const client = this.client;
    if (!client) return;
    try {
      if (what === 'tools') this.tools = await this.walk((cursor) => this.listTools(client, cursor));
      else this.prompts = await this.walk((cursor) => this.listPrompts(client, cursor));
      this.hooks.changed(this, what);
    } catch (err) {
      this.hooks.log(`${this.name}: listing ${what} after a change failed: ${reasonOf(err)}`);
    }
  }

  private async listTools(client: Client, cursor: string | undefined) {
    const page = await client.listTools(cursor ? { cursor } : {}, { timeout: LIST_TIMEOUT_MS });
    return { items: page.tools, nextCursor: page.nextCursor };
  }

  private async listPrompts(client: Client, cursor: string | undefined) {
    const page = await client.listPrompts(cursor ? { cursor } : {}, { timeout: LIST_TIMEOUT_MS });
    return { items: page.prompts, nextCursor: page.nextCursor };
  }

  private async walk<T>(
    page: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string | undefined }>,
  ) {
    const items: T[] = [];
    let cursor: string | undefined;
    for (let n = 0; n < MAX_PAGES; n++) {
      const result = await page(cursor);
      items.push(...result.items);
      if (!result.nextCursor || result.nextCursor === cursor) break;
      cursor = result.nextCursor;
    }
    return items;
  }
}

/** A call to a server that is not ready. */
export class UpstreamUnavailableError extends Error {
  override readonly name = 'UpstreamUnavailableError';
  constructor(readonly upstream: Upstream) {
    super(upstream.describeUnavailable());
  }
}

function reasonOf(err: unknown, connection?: UpstreamConnection): string {
  const message = err instanceof Error ? err.message : String(err);
  const said = connection?.diagnostics?.();
  return said ? `${message}; it said: ${said}` : message;
}
