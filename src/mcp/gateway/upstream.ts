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
import { causeOf, type GatewayLog } from './log.js';

/** A connected transport, and what the runtime can tell about a failure (a spawned server's last stderr). */
export interface UpstreamConnection {
  transport: Transport;
  diagnostics?: () => string;
}

/** Opens the transport to one upstream: the runtime's part (spawn on stdio, Streamable HTTP, SSE). */
export type ConnectUpstream = (name: string, entry: UpstreamEntry) => UpstreamConnection | Promise<UpstreamConnection>;

/** starting, ready, failed (retried with backoff) or closed (for good). */
export type UpstreamState = 'starting' | 'ready' | 'failed' | 'closed';

/** What changed about an upstream: its state, or one of its lists. */
export type UpstreamChange = 'state' | 'tools' | 'prompts' | 'resources';

/** How long a failed server waits before the next start. */
export interface BackoffSettings {
  /** First wait after a failure (default 1 s); it doubles up to maxMs. */
  initialMs: number;
  /** Longest wait between tries (default 30 s). */
  maxMs: number;
  /** A connection that lasted this long resets the wait to initialMs (default 30 s). */
  stableMs: number;
}

/** 1 s, doubling up to 30 s; 30 s up resets it. */
export const DEFAULT_BACKOFF: BackoffSettings = { initialMs: 1000, maxMs: 30_000, stableMs: 30_000 };

/** What an upstream tells the gateway. */
export interface UpstreamHooks {
  /** Its state, tools, prompts or resource list changed. */
  changed(upstream: Upstream, what: UpstreamChange): void;
  log: GatewayLog;
}

/** What createUpstream needs: the server's config entry, how to reach it, and whom to tell. */
export interface UpstreamDeps {
  /** Its config key: the prefix of its tools' host names. */
  name: string;
  entry: UpstreamEntry;
  connect: ConnectUpstream;
  hooks: UpstreamHooks;
  backoff?: BackoffSettings;
  /** The gateway as this server's client, at initialize. */
  clientInfo?: Implementation;
}

/** One upstream server, as the rest of the gateway reads and uses it. */
export interface Upstream {
  readonly name: string;
  readonly entry: UpstreamEntry;
  readonly state: UpstreamState;
  /** Why it is not ready, in words a person can act on. */
  readonly error: string | undefined;
  /** When the next start is tried (epoch ms), while failed. */
  readonly nextRetryAt: number | undefined;
  /** As last listed; kept while it is down, so a call to one says why it cannot run now. */
  readonly tools: Tool[];
  readonly prompts: Prompt[];
  readonly serverInfo: Implementation | undefined;
  readonly capabilities: ServerCapabilities | undefined;
  /** Starts (once; later calls wait for the same try). Never rejects: a failure is the failed state. */
  start(): Promise<void>;
  /** The connected client; throws UpstreamUnavailableError when there is none. */
  connected(): Client;
  /** Why this server cannot be used now, for tool results and listings. */
  describeUnavailable(): string;
  /** Subscribes upstream on the first watcher of a uri; later watchers share it. */
  subscribe(uri: string): Promise<void>;
  /** Drops one watcher; the last one unsubscribes upstream. */
  unsubscribe(uri: string): Promise<void>;
  /** A client for one scope's ResourceBridge: its notification handlers join this upstream's. */
  bridgeClient(): { client: Client; dispose(): void };
  /** Closes the connection for good: no restart follows. */
  close(): Promise<void>;
}

type UpdatedHandler = (uri: string) => void;
type ListChangedHandler = () => void;

const LIST_TIMEOUT_MS = 30_000;
const CONNECT_TIMEOUT_MS = 60_000;
const MAX_PAGES = 100;

/** One upstream server, not started yet: call start(). */
export function createUpstream(deps: UpstreamDeps): Upstream {
  const { name, entry, connect, hooks } = deps;
  const backoff = deps.backoff ?? DEFAULT_BACKOFF;
  const clientInfo = deps.clientInfo ?? { name: 'artifact-store-gateway', version: '0.1.0' };
  const log = hooks.log;

  let state: UpstreamState = 'starting';
  let error: string | undefined;
  let nextRetryAt: number | undefined;
  let tools: Tool[] = [];
  let prompts: Prompt[] = [];
  let serverInfo: Implementation | undefined;
  let capabilities: ServerCapabilities | undefined;
  let client: Client | undefined;
  let connection: UpstreamConnection | undefined;
  let attempts = 0;
  let connectedAt = 0;
  let retryTimer: ReturnType<typeof setTimeout> | undefined;
  let starting: Promise<void> | undefined;
  /** uri → how many watchers share its one upstream subscription. */
  const subscriptions = new Map<string, number>();
  const updatedHandlers = new Set<UpdatedHandler>();
  const listChangedHandlers = new Set<ListChangedHandler>();

  // Read through a function: the state changes across awaits, which narrowing does not see.
  const isClosed = () => state === 'closed';

  /** Closes a client this upstream no longer uses; a failure there changes nothing, so it is only logged. */
  const closeQuietly = async (c: Client, why: string) => {
    await c.close().catch((err) => log(`${name}: closing the connection ${why} failed: ${causeOf(err)}`, 'debug'));
  };

  const release = (uri: string): boolean => {
    const n = subscriptions.get(uri) ?? 0;
    if (n <= 1) subscriptions.delete(uri);
    else subscriptions.set(uri, n - 1);
    return n === 1;
  };

  const describeUnavailable = (): string => {
    if (state === 'closed') return `Server "${name}" is shut down.`;
    if (state === 'starting') return `Server "${name}" is still starting; try again in a moment.`;
    const retry =
      nextRetryAt !== undefined
        ? ` The gateway starts it again in ${Math.max(1, Math.ceil((nextRetryAt - Date.now()) / 1000))} s.`
        : '';
    return `Server "${name}" is not available: ${error ?? 'it stopped'}.${retry}`;
  };

  const connected = (): Client => {
    if (state === 'ready' && client) return client;
    throw new UpstreamUnavailableError(self);
  };

  const subscribe = async (uri: string): Promise<void> => {
    const n = subscriptions.get(uri) ?? 0;
    subscriptions.set(uri, n + 1);
    if (n === 0) {
      try {
        await connected().subscribeResource({ uri }, { timeout: LIST_TIMEOUT_MS });
      } catch (err) {
        release(uri);
        throw err;
      }
    }
  };

  const unsubscribe = async (uri: string): Promise<void> => {
    if (!release(uri) || state !== 'ready') return;
    // Nobody watches the uri any more: should the server keep sending its updates, they reach no one.
    await client
      ?.unsubscribeResource({ uri }, { timeout: LIST_TIMEOUT_MS })
      .catch((err) =>
        log(`${name}: unsubscribing from ${uri} failed, which changes nothing here: ${causeOf(err)}`, 'debug'),
      );
  };

  const walk = async <T>(
    page: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string | undefined }>,
  ) => {
    const items: T[] = [];
    let cursor: string | undefined;
    for (let n = 0; n < MAX_PAGES; n++) {
      const result = await page(cursor);
      items.push(...result.items);
      if (!result.nextCursor || result.nextCursor === cursor) break;
      cursor = result.nextCursor;
    }
    return items;
  };
  const listTools = (c: Client) =>
    walk(async (cursor) => {
      const page = await c.listTools(cursor ? { cursor } : {}, { timeout: LIST_TIMEOUT_MS });
      return { items: page.tools, nextCursor: page.nextCursor };
    });
  const listPrompts = (c: Client) =>
    walk(async (cursor) => {
      const page = await c.listPrompts(cursor ? { cursor } : {}, { timeout: LIST_TIMEOUT_MS });
      return { items: page.prompts, nextCursor: page.nextCursor };
    });

  const refresh = async (what: 'tools' | 'prompts'): Promise<void> => {
    const c = client;
    if (!c) return;
    try {
      if (what === 'tools') tools = await listTools(c);
      else prompts = await listPrompts(c);
      hooks.changed(self, what);
    } catch (err) {
      log(`${name}: listing ${what} after a change failed, so the last list stays: ${reasonOf(err)}`, 'info');
    }
  };

  const fail = (reason: string): void => {
    const stable = connectedAt > 0 && Date.now() - connectedAt >= backoff.stableMs;
    if (stable) attempts = 0;
    connectedAt = 0;
    const wait = Math.min(backoff.maxMs, backoff.initialMs * 2 ** attempts);
    attempts++;
    state = 'failed';
    error = reason;
    // The last tools and prompts stay known, so a call to one says why it cannot run now.
    nextRetryAt = Date.now() + wait;
    log(`${name}: ${reason}; trying again in ${wait} ms`, 'info');
    hooks.changed(self, 'state');
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      void start();
    }, wait);
    (retryTimer as { unref?: () => void }).unref?.();
  };

  const attempt = async (): Promise<void> => {
    if (isClosed()) return;
    state = 'starting';
    hooks.changed(self, 'state');
    const c = new Client(clientInfo, { capabilities: {} });
    c.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      for (const h of updatedHandlers) h(n.params.uri);
    });
    c.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
      for (const h of listChangedHandlers) h();
      hooks.changed(self, 'resources');
    });
    c.setNotificationHandler(ToolListChangedNotificationSchema, () => void refresh('tools'));
    c.setNotificationHandler(PromptListChangedNotificationSchema, () => void refresh('prompts'));
    let opened: UpstreamConnection | undefined;
    try {
      opened = await connect(name, entry);
      await c.connect(opened.transport, { timeout: CONNECT_TIMEOUT_MS });
      client = c;
      connection = opened;
      serverInfo = c.getServerVersion();
      capabilities = c.getServerCapabilities();
      tools = capabilities?.tools ? await listTools(c) : [];
      prompts = capabilities?.prompts ? await listPrompts(c) : [];
    } catch (err) {
      client = undefined;
      await closeQuietly(c, 'that did not start');
      if (isClosed()) return;
      fail(`it did not start (${reasonOf(err, opened)})`);
      return;
    }
    if (isClosed()) {
      await closeQuietly(c, 'opened while the gateway closed');
      return;
    }
    // Its end, whatever the cause, is a failure unless the gateway is closing.
    c.onclose = () => {
      if (client !== c || isClosed()) return;
      client = undefined;
      fail(`it stopped (${connection?.diagnostics?.() || 'the connection closed'})`);
    };
    connectedAt = Date.now();
    state = 'ready';
    error = undefined;
    nextRetryAt = undefined;
    log(
      `${name}: connected to ${serverInfo?.name ?? 'server'} ${serverInfo?.version ?? ''} (${tools.length} tools)`,
      'info',
    );
    // Subscriptions held before a restart are renewed; what was read may have changed meanwhile.
    for (const uri of subscriptions.keys())
      await c
        .subscribeResource({ uri }, { timeout: LIST_TIMEOUT_MS })
        .catch((err) =>
          log(
            `${name}: renewing the subscription to ${uri} after the restart failed, so its changes are not announced: ${causeOf(err)}`,
            'warn',
          ),
        );
    for (const h of listChangedHandlers) h();
    hooks.changed(self, 'state');
  };

  const start = (): Promise<void> => {
    starting ??= attempt().finally(() => {
      starting = undefined;
    });
    return starting;
  };

  const bridgeClient = (): { client: Client; dispose(): void } => {
    const handlers: { updated: UpdatedHandler[]; listChanged: ListChangedHandler[] } = { updated: [], listChanged: [] };
    const proxy = new Proxy({} as Client, {
      get: (_target, prop) => {
        if (prop === 'setNotificationHandler')
          return (schema: unknown, handler: (n: { params: { uri: string } }) => void) => {
            if (schema === ResourceUpdatedNotificationSchema) {
              const h: UpdatedHandler = (uri) => handler({ params: { uri } });
              handlers.updated.push(h);
              updatedHandlers.add(h);
            } else if (schema === ResourceListChangedNotificationSchema) {
              const h: ListChangedHandler = () => (handler as unknown as () => void)();
              handlers.listChanged.push(h);
              listChangedHandlers.add(h);
            }
          };
        if (prop === 'subscribeResource') return ({ uri }: { uri: string }) => subscribe(uri).then(() => ({}));
        if (prop === 'unsubscribeResource') return ({ uri }: { uri: string }) => unsubscribe(uri).then(() => ({}));
        if (prop === 'getServerCapabilities') return () => capabilities;
        if (prop === 'getServerVersion') return () => serverInfo;
        const c = connected();
        const value = Reflect.get(c, prop, c);
        return typeof value === 'function' ? value.bind(c) : value;
      },
    });
    return {
      client: proxy,
      dispose: () => {
        for (const h of handlers.updated) updatedHandlers.delete(h);
        for (const h of handlers.listChanged) listChangedHandlers.delete(h);
      },
    };
  };

  const close = async (): Promise<void> => {
    state = 'closed';
    if (retryTimer) clearTimeout(retryTimer);
    retryTimer = undefined;
    const c = client;
    client = undefined;
    if (c) await closeQuietly(c, 'at shutdown');
  };

  const self: Upstream = {
    name,
    entry,
    get state() {
      return state;
    },
    get error() {
      return error;
    },
    get nextRetryAt() {
      return nextRetryAt;
    },
    get tools() {
      return tools;
    },
    get prompts() {
      return prompts;
    },
    get serverInfo() {
      return serverInfo;
    },
    get capabilities() {
      return capabilities;
    },
    start,
    connected,
    describeUnavailable,
    subscribe,
    unsubscribe,
    bridgeClient,
    close,
  };
  return self;
}

/** A call to a server that is not ready. */
export class UpstreamUnavailableError extends Error {
  override readonly name = 'UpstreamUnavailableError';
  constructor(readonly upstream: Upstream) {
    super(upstream.describeUnavailable());
  }
}

function reasonOf(err: unknown, connection?: UpstreamConnection): string {
  const message = causeOf(err);
  const said = connection?.diagnostics?.();
  return said ? `${message}; it said: ${said}` : message;
}
