/**
 * The host session: the MCP server one host talks to (stdio, or one Streamable HTTP session in the
 * service). It lists the tools, prompts and resources its scope may use, runs tools/call through the
 * upstream and shapes the result, reads resources through its scope's view, and holds the host's
 * subscriptions.
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
  type ReadResourceResult,
  type Resource,
  type ResourceTemplate,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { GuardrailConfigSchema } from '../guardrail.js';
import { ResourceBridgeError } from '../resources.js';
import { ARTIFACT_TOOLS, callArtifactTool, RESOURCE_NOT_FOUND, readArtifactResource } from '../server.js';
import { causeOf, type GatewayLog } from './log.js';
import { observeToolResult, resourceContents } from './observe.js';
import type { UpstreamRegistry } from './registry.js';
import type { GatewayScope, ResourceWatcher, ScopeView } from './scope-view.js';
import type { Upstream } from './upstream.js';

/** What a host session reads of the registry: names, servers, and where uris came from. */
export type SessionRegistry = Pick<
  UpstreamRegistry,
  | 'serversFor'
  | 'toolsFor'
  | 'promptsFor'
  | 'leftOut'
  | 'lookup'
  | 'ownersOf'
  | 'remember'
  | 'transformConfigFor'
  | 'listResources'
>;

/** What a host session needs: its scope and the scope's view, the registry, and the log. */
export interface HostSessionDeps {
  scope: GatewayScope;
  /** The scope's view: its bridges and caches, shared by every session of the scope. */
  view: ScopeView;
  registry: SessionRegistry;
  /** Reported to the host at initialize. */
  serverInfo: { name: string; version: string };
  log: GatewayLog;
  /** The session closed: the gateway stops telling it of changes. */
  closed(session: HostSession): void;
}

/** The MCP server one host talks to, and what the gateway tells it. */
export interface HostSession extends ResourceWatcher {
  /** Connect it to any transport. */
  readonly server: Server;
  readonly scope: GatewayScope;
  /** Ends the host's subscriptions and closes the server. */
  close(): Promise<void>;
  /** Tells the host a list changed. */
  notify(what: 'tools' | 'prompts' | 'resources'): void;
}

const DEFAULT_CALL_TIMEOUT_MS = 5 * 60_000;
/** Characters the artifact tools' answers may take: the budget the guardrail holds tool results to. */
const ARTIFACT_TOOL_BUDGET = GuardrailConfigSchema.parse({}).maxObservationChars;

const INSTRUCTIONS =
  'Tools are named {server}__{tool}. Files and large outputs they return are stored as artifacts: you get a summary and an artifact:// link; artifact_info describes one and artifact_url gives a download link for a person. ' +
  'To look inside a stored artifact, use artifact_read (lines, PDF pages, ZIP entries), artifact_search (a pattern), artifact_query (a JSONPath over JSON) and artifact_list (what is stored).';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

const toolResultError = (text: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text }] });

/** A host session over its scope's view; it is attached to the view until close(). */
export function createHostSession(deps: HostSessionDeps): HostSession {
  const { scope, view, registry, log } = deps;
  const tenant = scope.tenantId;
  /** `${server}\n${uri}` this host subscribed to. */
  const subscriptions = new Map<string, Upstream>();
  let closed = false;
  const server = new Server(deps.serverInfo, {
    capabilities: {
      tools: { listChanged: true },
      prompts: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
    },
    instructions: INSTRUCTIONS,
  });
  const observeDeps = { store: scope.store, log };

  /** A notification to a host that may have left: nothing is owed to it, so a failure is only logged. */
  const send = (what: string, sent: Promise<void> | void) =>
    void Promise.resolve(sent).catch((err) =>
      log(`${what} not sent to the host, which may have left: ${causeOf(err)}`, 'debug'),
    );

  const callTool = async (name: string, args: Record<string, unknown> | undefined, extra: Extra) => {
    const own = await callArtifactTool(scope.store, name, args, { budget: ARTIFACT_TOOL_BUDGET });
    if (own) return own;
    const found = registry.lookup('tool', name, tenant);
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
                  send(
                    `progress of ${name}`,
                    extra.sendNotification({ method: 'notifications/progress', params: { ...p, progressToken } }),
                  ),
              }
            : {}),
        })) as CallToolResult;
    } catch (err) {
      if (extra.signal.aborted) throw err;
      // The server's own protocol errors (unknown arguments, for one) reach the host as they were.
      if (err instanceof McpError && err.code !== ErrorCode.ConnectionClosed && err.code !== ErrorCode.RequestTimeout)
        throw err;
      // The rest become a result the model reads; the operator gets the line too.
      const said = callFailure(err, entry.name, upstream.name);
      // A server that stopped is logged as such already.
      const stopped = err instanceof McpError && err.code === ErrorCode.ConnectionClosed;
      log(`${upstream.name}: tools/call ${entry.name} answered isError: ${causeOf(err)}`, stopped ? 'debug' : 'info');
      return toolResultError(said);
    }
    for (const block of raw.content ?? [])
      if (block.type === 'resource_link') registry.remember(block.uri, upstream.name);
    return observeToolResult(observeDeps, {
      upstream,
      tool: entry.name,
      hostName: name,
      raw,
      transform: registry.transformConfigFor(upstream),
      readResource: (uri) => view.bridge(upstream).fetch(uri),
    });
  };

  const listResources = async (cursor: string | undefined) => {
    const servers = registry.ownersOf('', tenant);
    let position: { s: string; c?: string } = { s: servers[0]?.name ?? '' };
    if (cursor) {
      try {
        position = JSON.parse(atob(cursor.replace(/-/g, '+').replace(/_/g, '/')));
        if (typeof position?.s !== 'string') throw new Error('no server');
      } catch {
        // Rethrown as the host's mistake: the cursor is not one this gateway made.
        throw new McpError(ErrorCode.InvalidParams, 'Invalid cursor: start again without one.');
      }
    }
    const at = servers.findIndex((u) => u.name === position.s);
    if (at < 0) return { resources: [] as Resource[] };
    const upstream = servers[at]!;
    let page: { resources: Resource[]; nextCursor?: string | undefined };
    try {
      page = await registry.listResources(upstream, position.c);
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
  };

  const readResource = async (uri: string): Promise<ReadResourceResult> => {
    if (uri.startsWith('artifact://')) return readArtifactResource(scope.store, uri);
    let last: unknown;
    for (const upstream of registry.ownersOf(uri, tenant)) {
      try {
        return await resourceContents(observeDeps, upstream, await view.read(upstream, uri));
      } catch (err) {
        last = err;
        if (!(err instanceof ResourceBridgeError && err.code === 'not_found'))
          throw asMcpError(err, `resources/read ${uri}`);
        // Not this server's: the next one that may own it is asked, and the last answer is kept.
        log(`${upstream.name}: resources/read ${uri} found nothing there; asking the next server`, 'debug');
      }
    }
    if (last) throw asMcpError(last, `resources/read ${uri}`);
    throw new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}. No server behind this gateway has it.`);
  };

  const listTemplates = async () => {
    const templates: ResourceTemplate[] = [
      {
        uriTemplate: 'artifact://{id}',
        name: 'artifact',
        title: 'Stored artifact',
        description: 'A file a tool stored in artifact-store, by its id.',
      },
    ];
    for (const u of registry.ownersOf('', tenant)) {
      try {
        templates.push(...(await view.bridge(u).listResourceTemplates()));
      } catch (err) {
        // A server without templates, or one that fails to list them, adds none; the others still do.
        const offersNone = err instanceof ResourceBridgeError && err.code === 'resources_unsupported';
        log(
          `${u.name}: its resource templates are left out of resources/templates/list: ${causeOf(err)}`,
          offersNone ? 'debug' : 'warn',
        );
      }
    }
    return { resourceTemplates: templates };
  };

  server.setRequestHandler(ListToolsRequestSchema, () => {
    const unavailable = registry
      .serversFor(tenant)
      .filter((u) => u.state !== 'ready')
      .map((u) => ({ server: u.name, reason: u.describeUnavailable() }));
    const leftOut = registry.leftOut('tool', tenant).map((e) => ({ server: e.server, tool: e.name, reason: e.reason }));
    const meta = {
      ...(unavailable.length > 0 ? { 'artifact-store/unavailable': unavailable } : {}),
      ...(leftOut.length > 0 ? { 'artifact-store/left-out': leftOut } : {}),
    };
    return {
      tools: [...registry.toolsFor(tenant), ...ARTIFACT_TOOLS],
      ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}),
    };
  });

  server.setRequestHandler(CallToolRequestSchema, (req, extra) =>
    callTool(req.params.name, req.params.arguments, extra),
  );

  server.setRequestHandler(ListPromptsRequestSchema, () => {
    const leftOut = registry
      .leftOut('prompt', tenant)
      .map((e) => ({ server: e.server, prompt: e.name, reason: e.reason }));
    return {
      prompts: registry.promptsFor(tenant),
      ...(leftOut.length > 0 ? { _meta: { 'artifact-store/left-out': leftOut } } : {}),
    };
  });

  server.setRequestHandler(GetPromptRequestSchema, async (req, extra) => {
    const found = registry.lookup('prompt', req.params.name, tenant);
    if (!found) throw new McpError(ErrorCode.InvalidParams, `Unknown prompt ${req.params.name}.`);
    return found.upstream
      .connected()
      .getPrompt(
        { name: found.entry.name, ...(req.params.arguments ? { arguments: req.params.arguments } : {}) },
        { signal: extra.signal },
      );
  });

  server.setRequestHandler(ListResourcesRequestSchema, (req) => listResources(req.params?.cursor));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, listTemplates);
  server.setRequestHandler(ReadResourceRequestSchema, (req) => readResource(req.params.uri));

  server.setRequestHandler(SubscribeRequestSchema, async (req) => {
    const { uri } = req.params;
    if (uri.startsWith('artifact://'))
      throw new McpError(
        ErrorCode.InvalidParams,
        'Stored artifacts do not change; their removals are announced by artifact-store mcp, not the gateway.',
      );
    const owners = registry.ownersOf(uri, tenant).filter((u) => u.capabilities?.resources?.subscribe === true);
    const upstream = owners[0];
    if (!upstream)
      throw new McpError(RESOURCE_NOT_FOUND, `No server behind this gateway offers subscriptions to ${uri}.`);
    const key = `${upstream.name}\n${uri}`;
    if (subscriptions.has(key)) return {};
    // The bridge listens for the server's updates, which reach this host through the view.
    view.bridge(upstream);
    await upstream.subscribe(uri);
    subscriptions.set(key, upstream);
    return {};
  });

  server.setRequestHandler(UnsubscribeRequestSchema, async (req) => {
    for (const [key, upstream] of subscriptions) {
      if (key.split('\n')[1] !== req.params.uri) continue;
      subscriptions.delete(key);
      await upstream.unsubscribe(req.params.uri);
    }
    return {};
  });

  const session: HostSession = {
    server,
    scope,
    async close() {
      if (closed) return;
      closed = true;
      deps.closed(session);
      view.detach(session);
      for (const [key, upstream] of subscriptions) await upstream.unsubscribe(key.split('\n')[1]!);
      subscriptions.clear();
      // The host may have closed its end first; there is nothing left to tell it.
      await server.close().catch((err) => log(`closing a host session's server failed: ${causeOf(err)}`, 'debug'));
    },
    notify(what) {
      if (closed) return;
      const sent =
        what === 'tools'
          ? server.sendToolListChanged()
          : what === 'prompts'
            ? server.sendPromptListChanged()
            : server.sendResourceListChanged();
      send(`notifications/${what}/list_changed`, sent);
    },
    resourceUpdated(upstreamName, uri) {
      if (closed || !subscriptions.has(`${upstreamName}\n${uri}`)) return false;
      send(`notifications/resources/updated for ${uri}`, server.sendResourceUpdated({ uri }));
      return true;
    },
  };
  view.attach(session);
  return session;
}

/** What the model reads of a tools/call that has no result: the server stopped, timed out or failed. */
function callFailure(err: unknown, tool: string, server: string): string {
  if (err instanceof McpError && err.code === ErrorCode.ConnectionClosed)
    return `Server "${server}" stopped during this call, so ${tool} has no result. The gateway starts it again; try again in a few seconds.`;
  if (err instanceof McpError && err.code === ErrorCode.RequestTimeout)
    return `${tool} on server "${server}" timed out: ${err.message}.`;
  return `${tool} on server "${server}" failed: ${(err as Error)?.message ?? err}`;
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
