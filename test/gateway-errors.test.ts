/**
 * What the gateway does with an error it works around instead of failing: a line in its log naming
 * what it left out, of which server, and why; and, where its answer has room, a word to the host.
 * In process: upstream MCP servers on in-memory transports behind createMcpGateway, read by the SDK's
 * own Client.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  ToolListChangedNotificationSchema,
  UnsubscribeRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createInMemoryArtifactStore } from '../src/client/memory-store.js';
import { parseGatewayConfig } from '../src/mcp/gateway/config.js';
import { createMcpGateway, type GatewayLogLevel } from '../src/mcp/gateway/gateway.js';

let closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.reverse()) await close();
  closers = [];
});

/** The gateway's log lines, and a wait for the first that matches. */
function logSink() {
  const lines: { line: string; level: GatewayLogLevel }[] = [];
  const waiters: { match: RegExp; found: (line: string) => void }[] = [];
  return {
    lines,
    log: (line: string, level: GatewayLogLevel) => {
      lines.push({ line, level });
      for (const w of [...waiters])
        if (w.match.test(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.found(line);
        }
    },
    next: (match: RegExp) =>
      new Promise<string>((found) => {
        const seen = lines.find((l) => match.test(l.line));
        if (seen) found(seen.line);
        else waiters.push({ match, found });
      }),
  };
}

/** An upstream whose tool list can change after start (it then says so), answering each call by name. */
function toolServer(name: string, tools: string[]) {
  const server = new Server({ name, version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
  const list = (): Tool[] =>
    tools.map((t) => ({ name: t, description: `${t} of ${name}`, inputSchema: { type: 'object' } }));
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: list() }));
  server.setRequestHandler(
    CallToolRequestSchema,
    (req): CallToolResult => ({ content: [{ type: 'text', text: `${name} ran ${req.params.name}` }] }),
  );
  return {
    server,
    add: async (tool: string) => {
      tools.push(tool);
      await server.sendToolListChanged();
    },
  };
}

/** A gateway in front of the given servers (by config key), and a host connected to it. */
async function gatewayOf(upstreams: Record<string, Server>, log: (line: string, level: GatewayLogLevel) => void) {
  const config = parseGatewayConfig({
    mcpServers: Object.fromEntries(Object.keys(upstreams).map((k) => [k, { command: 'unused' }])),
  });
  const gateway = createMcpGateway({
    config,
    log,
    connect: async (name) => {
      const [ours, theirs] = InMemoryTransport.createLinkedPair();
      await upstreams[name]!.connect(theirs);
      closers.push(() => upstreams[name]!.close());
      return { transport: ours };
    },
  });
  await gateway.start();
  closers.push(() => gateway.close());
  const store = createInMemoryArtifactStore({ scope: { tenantId: 'acme' } });
  const { server } = gateway.session({ store, key: 'local' });
  const [hostSide, gatewaySide] = InMemoryTransport.createLinkedPair();
  await server.connect(gatewaySide);
  const host = new Client({ name: 'host', version: '1.0.0' });
  await host.connect(hostSide);
  closers.push(() => host.close());
  return { gateway, host, store };
}

describe('a tool left out', () => {
  it('a new tool whose host name another server holds: the log names the tool, its server and the cause; tools/list says so', async () => {
    const sink = logSink();
    // "a" + "_y" and "a_" + "y" are both a___y.
    const a = toolServer('first', ['x']);
    const aUnderscore = toolServer('second', ['y']);
    const { host } = await gatewayOf({ a: a.server, a_: aUnderscore.server }, sink.log);
    // The next tools/list_changed the host gets.
    let told = () => {};
    const nextListChanged = () => new Promise<void>((resolve) => (told = resolve));
    host.setNotificationHandler(ToolListChangedNotificationSchema, () => told());
    let listChanged = nextListChanged();

    await a.add('_y');
    const line = await sink.next(/left out/);
    expect(line).toBe('a: tool "_y" left out of tools/list: its host name a___y is already tool "y" of server "a_"');
    expect(sink.lines.find((l) => l.line === line)?.level).toBe('warn');
    await listChanged;

    const { tools, _meta } = await host.listTools();
    expect(tools.filter((t) => !t.name.startsWith('artifact_'))).toEqual([
      expect.objectContaining({ name: 'a__x', description: 'x of first' }),
      expect.objectContaining({ name: 'a___y', description: 'y of second' }),
    ]);
    expect(_meta?.['artifact-store/left-out']).toEqual([
      { server: 'a', tool: '_y', reason: 'its host name a___y is already tool "y" of server "a_"' },
    ]);
    // The name stays with the server that had it.
    const result = (await host.callTool({ name: 'a___y', arguments: {} })) as CallToolResult;
    expect(result.content[0]).toEqual({ type: 'text', text: 'second ran y' });

    // Another change of the same server lists its new tool; the one left out is not logged again.
    listChanged = nextListChanged();
    await a.add('z');
    await listChanged;
    expect((await host.listTools()).tools.map((t) => t.name)).toContain('a__z');
    expect(sink.lines.filter((l) => /left out/.test(l.line))).toHaveLength(1);
  });
});

describe('resource templates a server cannot list', () => {
  it('are left out with a warning naming the server and the cause; a server without templates is a debug line', async () => {
    const sink = logSink();
    const withTemplates = new Server({ name: 'ok', version: '1.0.0' }, { capabilities: { resources: {} } });
    withTemplates.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [] }));
    withTemplates.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
      resourceTemplates: [{ uriTemplate: 'ok://{path}', name: 'file' }],
    }));
    const broken = new Server({ name: 'broken', version: '1.0.0' }, { capabilities: { resources: {} } });
    broken.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [] }));
    broken.setRequestHandler(ListResourceTemplatesRequestSchema, () => {
      throw new McpError(ErrorCode.InternalError, 'the template index is corrupt');
    });
    const none = new Server({ name: 'none', version: '1.0.0' }, { capabilities: { resources: {} } });
    none.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [] }));
    const { host } = await gatewayOf({ ok: withTemplates, broken, none }, sink.log);

    const { resourceTemplates } = await host.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['artifact://{id}', 'ok://{path}']);
    const about = (server: string) => sink.lines.filter((l) => l.line.startsWith(`${server}: its resource templates`));
    expect(about('broken')).toEqual([
      { line: expect.stringContaining('the template index is corrupt'), level: 'warn' },
    ]);
    expect(about('none')).toEqual([{ line: expect.stringMatching(/does not implement it/), level: 'debug' }]);
    expect(about('ok')).toEqual([]);
  });
});

describe('a change that cannot be announced', () => {
  it('a scope whose resource.updated cannot be published: the log names the server, the uri and the cause', async () => {
    const sink = logSink();
    const files = new Server({ name: 'files', version: '1.0.0' }, { capabilities: { resources: { subscribe: true } } });
    files.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [{ uri: 'file:///a.txt', name: 'a' }] }));
    files.setRequestHandler(ReadResourceRequestSchema, (req) => ({
      contents: [{ uri: req.params.uri, mimeType: 'text/plain', text: 'hello' }],
    }));
    files.setRequestHandler(SubscribeRequestSchema, () => ({}));
    files.setRequestHandler(UnsubscribeRequestSchema, () => ({}));
    const { gateway, store } = await gatewayOf({ files }, sink.log);

    const scope = {
      store,
      key: 'reader',
      onResourceUpdated: () => Promise.reject(new Error('the event outbox is full')),
    };
    const read = await gateway.readResource(scope, gateway.serverFor('files', undefined)!, 'file:///a.txt');
    expect(read.content).toEqual([
      { type: 'resource', resource: { uri: 'file:///a.txt', mimeType: 'text/plain', text: 'hello' } },
    ]);
    await files.sendResourceUpdated({ uri: 'file:///a.txt' });
    const line = await sink.next(/could not be announced/);
    expect(line).toBe(
      'files: the change to file:///a.txt could not be announced to a scope that reads it: the event outbox is full',
    );
    expect(sink.lines.find((l) => l.line === line)?.level).toBe('warn');
  });
});
