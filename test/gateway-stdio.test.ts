/**
 * The MCP gateway on stdio (`artifact-store gateway --config mcp.json --embedded`), as a host that
 * changes nothing would launch it, in front of real servers: server-everything, server-filesystem
 * and a scripted server with the Tableau incident's result. Driven by the MCP SDK's client and by
 * inspector-cli. Every stored artifact is fetched through its download link and compared with what
 * the upstream sent.
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ARGS, ROOT, startCliServer, type CliServer } from './helpers/cli-server.js';
import { connectOrExplain, peerEntry, plainClient, stdioPeer } from './helpers/mcp-peers.js';
import * as payloads from './helpers/payloads.js';
import { spawnProcess, stopProcess } from './helpers/processes.js';

const run = promisify(execFile);

/** What the gateway must never hand a host: a run of base64 this long. */
const LONG_BASE64 = /[A-Za-z0-9+/]{256,}/;
const HOST_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

let dir: string;
let configPath: string;
let pdf: Buffer;
let media: { pdf: Buffer; png: Buffer };
let client: Client;
let stderr = '';

/** The gateway's launch, as a host's config would give it. */
const gatewayArgs = (config: string, data: string) => [
  ...CLI_ARGS,
  'gateway',
  '--config',
  config,
  '--embedded',
  '--data-dir',
  data,
  '--port',
  '0',
];

const env = () => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ARTIFACT_STORE_'))),
  ARTIFACT_STORE_LOG_LEVEL: 'warn',
});

const scripted = (name: string, extraEnv: Record<string, string> = {}) => ({
  command: process.execPath,
  args: ['--import', 'tsx', join(ROOT, 'test/helpers/scripted-mcp-server.ts')],
  env: { SCRIPTED_NAME: name, SCRIPTED_PDF: join(dir, 'incident.pdf'), ...extraEnv },
  cwd: ROOT,
});

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gateway-stdio-'));
  // The incident: a 2 MB PDF. PDF comment lines pad a real document to size.
  const real = await payloads.pdf(4, 'Revenue by Region');
  const pad = Buffer.from(`%${'x'.repeat(78)}\n`.repeat(Math.ceil((2 * 1024 * 1024) / 80)));
  pdf = Buffer.concat([real.subarray(0, real.lastIndexOf('%%EOF')), pad, Buffer.from('%%EOF\n')]);
  await writeFile(join(dir, 'incident.pdf'), pdf);
  media = { pdf: await payloads.pdf(2, 'Quarterly'), png: payloads.png(20_000, 5) };
  await writeFile(join(dir, 'report.pdf'), media.pdf);
  await writeFile(join(dir, 'chart.png'), media.png);
  configPath = join(dir, 'mcp.json');
  await writeFile(
    configPath,
    JSON.stringify({
      mcpServers: {
        everything: { command: process.execPath, args: [peerEntry('server-everything'), 'stdio'] },
        fs: { command: process.execPath, args: [peerEntry('server-filesystem'), dir] },
        tableau: scripted('tableau-incident'),
        scripted: scripted('scripted'),
      },
    }),
  );
  client = new Client({ name: 'host', version: '1.0.0' });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: gatewayArgs(configPath, join(dir, 'data')),
    cwd: ROOT,
    env: env(),
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  await connectOrExplain(client, transport, () => stderr);
}, 90_000);

afterAll(async () => {
  await client?.close();
  await rm(dir, { recursive: true, force: true });
});

const call = (name: string, args: Record<string, unknown> = {}) =>
  client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

/** The signed links the gateway added for the person in the chat. */
function linksIn(result: CallToolResult): string[] {
  const texts = result.content.flatMap((b) => (b.type === 'text' ? [b.text] : []));
  return texts.flatMap((t) => [...t.matchAll(/(http:\/\/127\.0\.0\.1:\d+\/v1\/download\/\S+)/g)].map((m) => m[1]!));
}

async function download(url: string): Promise<Buffer> {
  const res = await fetch(url);
  expect(res.status, url).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

function expectNoBase64(result: unknown): void {
  expect(JSON.stringify(result)).not.toMatch(LONG_BASE64);
}

describe('the gateway on stdio', () => {
  it('lists every upstream tool as {server}__{tool}, plus artifact_info and artifact_url', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (const name of names) expect(name).toMatch(HOST_NAME);
    expect(names).toEqual(
      expect.arrayContaining([
        'everything__get-tiny-image',
        'fs__read_media_file',
        'tableau__get_view_as_pdf',
        'scripted__echo',
        'artifact_info',
        'artifact_url',
      ]),
    );
    // Descriptions and input schemas are the upstream's own.
    const direct = stdioPeer('server-filesystem', [dir]);
    const peer = plainClient();
    await connectOrExplain(peer, direct.transport, direct.stderr);
    try {
      const original = (await peer.listTools()).tools.find((t) => t.name === 'read_media_file')!;
      const seen = tools.find((t) => t.name === 'fs__read_media_file')!;
      expect(seen.description).toBe(original.description);
      expect(seen.inputSchema).toEqual(original.inputSchema);
    } finally {
      await peer.close();
    }
  });

  it('the Tableau incident: a 2 MB PDF as base64 in JSON becomes an observation under 1,100 characters whose link downloads the exact PDF', async () => {
    const result = await call('tableau__get_view_as_pdf', { view: 'Revenue by Region' });
    const observation = JSON.stringify(result);
    expect(observation.length).toBeLessThan(1100);
    // The summary says how to read inside it: the gateway serves the view tools.
    expect(observation).toContain('; artifact_read (by page) or artifact_search to look inside.');
    expectNoBase64(result);
    expect(observation).toContain("Exported view 'Revenue by Region' as PDF");
    const [link] = linksIn(result);
    expect(link).toBeDefined();
    const bytes = await download(link!);
    expect(bytes.equals(pdf)).toBe(true);
  });

  it('server-everything: the tiny image is stored byte-identical, the host gets a summary, an artifact:// link and a download link', async () => {
    const direct = stdioPeer('server-everything', ['stdio']);
    const peer = plainClient();
    await connectOrExplain(peer, direct.transport, direct.stderr);
    let raw: CallToolResult;
    try {
      raw = (await peer.callTool({ name: 'get-tiny-image', arguments: {} })) as CallToolResult;
    } finally {
      await peer.close();
    }
    const image = raw.content.find((b) => b.type === 'image')!;
    const result = await call('everything__get-tiny-image');
    expectNoBase64(result);
    const link = result.content.find((b) => b.type === 'resource_link');
    expect(link).toMatchObject({ uri: expect.stringMatching(/^artifact:\/\//), mimeType: 'image/png' });
    const bytes = await download(linksIn(result)[0]!);
    expect(bytes.equals(Buffer.from(image.data, 'base64'))).toBe(true);
    // The gateway's own tools know the artifact.
    const id = (link as { uri: string }).uri.slice('artifact://'.length);
    const info = await call('artifact_info', { id });
    expect(info.isError).toBeFalsy();
    expect(info.structuredContent).toMatchObject({ artifact: { id, mimeType: 'image/png' } });
  });

  it('server-everything: an embedded blob resource is stored byte-identical; a short text resource stays inline', async () => {
    const blob = await call('everything__get-resource-reference', { resourceType: 'Blob', resourceId: 3 });
    expectNoBase64(blob);
    const stored = await download(linksIn(blob)[0]!);
    const read = await client.readResource({ uri: 'demo://resource/dynamic/blob/3' });
    // Read through the gateway, the blob is stored too; its link serves the same bytes.
    expectNoBase64(read);
    const readLink = read.contents.flatMap((c) => ('text' in c ? [c.text] : [])).join('\n');
    const again = await download(/(http:\/\/\S+)/.exec(readLink)![1]!);
    // The server writes the time of day (to the second) into each blob it makes: the bytes of two
    // reads match up to that time.
    const untimed = (b: Buffer) => b.toString('utf8').replace(/ created at .+$/, ' created at <time>');
    expect(untimed(again)).toBe(untimed(stored));
    // What the server itself holds for that resource.
    const direct = stdioPeer('server-everything', ['stdio']);
    const peer = plainClient();
    await connectOrExplain(peer, direct.transport, direct.stderr);
    try {
      const raw = await peer.readResource({ uri: 'demo://resource/dynamic/blob/3' });
      const blob64 = (raw.contents[0] as { blob: string }).blob;
      expect(stored.toString('utf8')).toMatch(/^Resource 3: This is a base64 blob created at \S.*$/);
      expect(untimed(stored)).toBe(untimed(Buffer.from(blob64, 'base64')));
    } finally {
      await peer.close();
    }
    const text = await call('everything__get-resource-reference', { resourceType: 'Text', resourceId: 2 });
    const embedded = text.content.find((b) => b.type === 'resource');
    expect(embedded).toMatchObject({ resource: { uri: 'demo://resource/dynamic/text/2' } });
    expect(linksIn(text)).toEqual([]);
  });

  it('server-everything: resource links stay lazy and read through the gateway', async () => {
    const result = await call('everything__get-resource-links', { count: 2 });
    const links = result.content.filter((b) => b.type === 'resource_link') as { uri: string }[];
    expect(links.map((l) => l.uri)).toEqual(['demo://resource/dynamic/blob/1', 'demo://resource/dynamic/text/2']);
    const read = await client.readResource({ uri: links[1]!.uri });
    expect(read.contents[0]).toMatchObject({ uri: links[1]!.uri, text: expect.stringContaining('Resource 2') });
  });

  it('resources/list follows every page across servers, as each server lists them', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await client.listResources(cursor ? { cursor } : {});
      seen.push(...page.resources.map((r) => r.uri));
      cursor = page.nextCursor;
      pages++;
    } while (cursor && pages < 50);
    expect(cursor).toBeUndefined();
    const direct = stdioPeer('server-everything', ['stdio']);
    const peer = plainClient();
    await connectOrExplain(peer, direct.transport, direct.stderr);
    const expected: string[] = [];
    try {
      let c: string | undefined;
      do {
        const page = await peer.listResources(c ? { cursor: c } : {});
        expected.push(...page.resources.map((r) => r.uri));
        c = page.nextCursor;
      } while (c);
    } finally {
      await peer.close();
    }
    expect(seen).toEqual(expect.arrayContaining([...expected, 'scripted://counter', 'scripted://logo.png']));
    expect(pages).toBeGreaterThanOrEqual(2);
    await expect(client.listResources({ cursor: 'not-a-cursor' })).rejects.toThrow(/Invalid cursor/);
  });

  it('server-filesystem read_media_file: a real PDF and PNG are stored byte-identical', async () => {
    for (const [file, bytes, mime] of [
      ['report.pdf', media.pdf, 'application/pdf'],
      ['chart.png', media.png, 'image/png'],
    ] as const) {
      const result = await call('fs__read_media_file', { path: join(dir, file) });
      expect(result.isError, JSON.stringify(result).slice(0, 300)).toBeFalsy();
      expectNoBase64(result);
      expect(result.content.find((b) => b.type === 'resource_link')).toMatchObject({ mimeType: mime });
      expect((await download(linksIn(result)[0]!)).equals(bytes)).toBe(true);
    }
  });

  it('an output schema is relaxed where the transformer puts a ref, so the host SDK accepts the structured result', async () => {
    const { tools } = await client.listTools();
    const chart = tools.find((t) => t.name === 'scripted__chart')!;
    expect(JSON.stringify(chart.outputSchema)).toContain('anyOf');
    // The SDK client checks structuredContent against the listed schema; it would throw otherwise.
    const result = await call('scripted__chart');
    expectNoBase64(result);
    expect(result.structuredContent).toMatchObject({
      title: 'Sales',
      image: { artifact: { mimeType: 'image/png' }, summary: expect.any(String) },
      points: [1, 2, 3],
    });
  });

  it('an oversized text result is stored whole; the host gets the ref, a summary and a preview', async () => {
    // Over the MCP SDK's 10 MiB default for one stdio message: the gateway reads its servers' larger ones.
    const result = await call('scripted__big_text', { chars: 11_000_000 });
    const observation = JSON.stringify(result);
    expect(observation.length).toBeLessThan(60_000);
    const link = result.content.find((b) => b.type === 'resource_link') as { uri: string } | undefined;
    expect(link?.uri).toMatch(/^artifact:\/\//);
    const links = linksIn(result);
    const stored = (await download(links[links.length - 1]!)).toString('utf8');
    expect(stored.length).toBe(11_000_000);
  });

  it('prompts pass through as {server}__{prompt}', async () => {
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(
      expect.arrayContaining(['everything__args-prompt', 'everything__simple-prompt']),
    );
    const got = await client.getPrompt({ name: 'everything__args-prompt', arguments: { city: 'Lisbon' } });
    expect(got.messages[0]).toMatchObject({
      role: 'user',
      content: { type: 'text', text: "What's weather in Lisbon?" },
    });
    await expect(client.getPrompt({ name: 'everything__no-such-prompt' })).rejects.toThrow(/Unknown prompt/);
  });

  it('progress is passed on, and so is cancellation', async () => {
    const progress: number[] = [];
    const abort = new AbortController();
    const pending = client.callTool({ name: 'scripted__slow', arguments: { steps: 400 } }, undefined, {
      signal: abort.signal,
      onprogress: (p) => {
        progress.push(p.progress);
        if (progress.length === 3) abort.abort('enough');
      },
    });
    await expect(pending).rejects.toThrow();
    expect(progress.slice(0, 3)).toEqual([1, 2, 3]);
    // The upstream stopped: the gateway still answers, and no more progress arrives for that call.
    const echo = await call('scripted__echo', { text: 'still here' });
    expect(echo.content).toEqual([{ type: 'text', text: 'still here' }]);
  });

  it('resource subscriptions: an upstream update reaches the host, and the next read is fresh', async () => {
    const before = await client.readResource({ uri: 'scripted://counter' });
    const updated = new Promise<string>((ok) =>
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => ok(n.params.uri)),
    );
    await client.subscribeResource({ uri: 'scripted://counter' });
    await call('scripted__bump');
    expect(await updated).toBe('scripted://counter');
    const after = await client.readResource({ uri: 'scripted://counter' });
    expect(after.contents[0]).not.toEqual(before.contents[0]);
    await client.unsubscribeResource({ uri: 'scripted://counter' });
  });

  it('an upstream killed mid-call: that call is an isError, the other servers keep working, and the gateway restarts it', async () => {
    const changed = new Promise<void>((ok) =>
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => ok()),
    );
    const died = await call('scripted__die');
    expect(died.isError).toBe(true);
    expect((died.content[0] as { text: string }).text).toMatch(/Server "scripted" stopped during this call/);
    // Meanwhile: its tools are absent, calling one says why, and the others answer.
    const listed = await client.listTools();
    expect(listed.tools.map((t) => t.name)).not.toContain('scripted__echo');
    expect(JSON.stringify(listed._meta)).toContain('scripted');
    const other = await call('tableau__echo', { text: 'ok' });
    expect(other.content).toEqual([{ type: 'text', text: 'ok' }]);
    await changed;
    // Back after the backoff.
    let echo: CallToolResult | undefined;
    for (let i = 0; i < 100; i++) {
      echo = await call('scripted__echo', { text: 'back' });
      if (!echo.isError) break;
      await new Promise((ok) => setTimeout(ok, 100));
    }
    expect(echo?.content).toEqual([{ type: 'text', text: 'back' }]);
  });

  it('inspector-cli, a client we did not write, lists the tools and calls one through the gateway', async () => {
    const inspect = async (args: string[]) => {
      const { stdout } = await run(
        join(ROOT, 'node_modules/.bin/mcp-inspector-cli'),
        // inspector-cli takes --config for itself: the gateway gets its config from the environment.
        [
          '--cli',
          '-e',
          `ARTIFACT_STORE_GATEWAY_CONFIG=${configPath}`,
          process.execPath,
          ...gatewayArgs(configPath, join(dir, 'data-inspector')).filter((a) => a !== '--config' && a !== configPath),
          ...args,
        ],
        // inspector-cli 1.0.3 reads ../package.json from its working directory (see mcp-inspector.test.ts).
        { cwd: join(ROOT, 'test'), timeout: 90_000, env: { ...env(), NO_COLOR: '1' } },
      );
      return JSON.parse(stdout);
    };
    const listed = await inspect(['--method', 'tools/list']);
    expect(listed.tools.map((t: { name: string }) => t.name)).toContain('everything__get-tiny-image');
    const called = await inspect(['--method', 'tools/call', '--tool-name', 'everything__get-tiny-image']);
    expect(JSON.stringify(called)).not.toMatch(LONG_BASE64);
    expect(JSON.stringify(called)).toContain('artifact://everything.get-tiny-image_');
  }, 120_000);
});

describe('the gateway refuses a bad start', () => {
  const start = async (config: unknown) => {
    const path = join(dir, `bad-${Math.random().toString(36).slice(2)}.json`);
    await writeFile(path, typeof config === 'string' ? config : JSON.stringify(config));
    const result = await run(process.execPath, gatewayArgs(path, join(dir, 'data-bad')), {
      cwd: ROOT,
      env: env(),
      timeout: 60_000,
    }).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code: number; stderr: string }) => ({ code: err.code, stderr: err.stderr }),
    );
    return result;
  };

  it.each([
    [
      'a misspelt key, with the closest one',
      { mcpServers: { a: { comand: 'x' } } },
      /mcpServers\.a: unknown key "comand"\. Did you mean "command"\?/,
    ],
    [
      'both command and url',
      { mcpServers: { a: { command: 'x', url: 'http://h/mcp' } } },
      /give either "command".*not both/,
    ],
    ['a bad server name', { mcpServers: { 'a b': { command: 'x' } } }, /mcpServers\.a b: server names are/],
    [
      'an unset variable',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the gateway config's own ${VAR} syntax
      { mcpServers: { a: { command: 'x', env: { K: '${NO_SUCH_VAR_X}' } } } },
      /mcpServers\.a\.env\.K: \$\{NO_SUCH_VAR_X\} is not set/,
    ],
    [
      'a bad transform key',
      { mcpServers: { a: { command: 'x', artifacts: { transform: { maxInlineChar: 5 } } } } },
      /artifacts\.transform config.*unknown key "maxInlineChar"/,
    ],
    ['not JSON', '{"mcpServers": ', /is not valid JSON/],
  ])('%s', async (_what, config, message) => {
    const { code, stderr: said } = await start(config);
    expect(code).toBe(2);
    expect(said).toMatch(message);
  });

  it('serve refuses a bad ARTIFACT_STORE_GATEWAY_CONFIG the same way, before it listens', async () => {
    const path = join(dir, 'bad-serve.json');
    await writeFile(path, JSON.stringify({ mcpServers: { a: { command: 'x', artifacts: { tenants: 'everyone' } } } }));
    const result = await run(process.execPath, [...CLI_ARGS, 'serve', '--port', '0'], {
      cwd: ROOT,
      env: { ...env(), ARTIFACT_STORE_GATEWAY_CONFIG: path, ARTIFACT_STORE_DATA_DIR: join(dir, 'data-serve') },
      timeout: 60_000,
    }).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code: number; stderr: string }) => ({ code: err.code, stderr: err.stderr }),
    );
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/Invalid gateway \(.*bad-serve\.json\) server "a" config at artifacts\.tenants/);
  }, 60_000);

  it('two servers whose tools would share a host name', async () => {
    const { code, stderr: said } = await start({
      mcpServers: {
        a: scripted('a', { SCRIPTED_PREFIX: '_' }),
        a_: scripted('a_'),
      },
    });
    expect(code).toBe(2);
    expect(said).toMatch(
      /"_get_view_as_pdf" of server "a" and "get_view_as_pdf" of server "a_" would both be called a___get_view_as_pdf/,
    );
  }, 60_000);
});

describe('remote servers: Streamable HTTP and SSE, with headers from the environment', () => {
  let remote: Client;
  let service: CliServer;
  const servers: ChildProcess[] = [];
  let remoteStderr = '';

  /** server-everything on HTTP, on a free port; resolves once it listens. */
  async function everythingOver(mode: 'streamableHttp' | 'sse'): Promise<number> {
    const port = await freePort();
    const proc = spawnProcess<ChildProcess>(process.execPath, [peerEntry('server-everything'), mode], {
      env: { ...process.env, PORT: String(port) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    servers.push(proc);
    let said = '';
    await new Promise<void>((ok, fail) => {
      proc.stderr!.on('data', (d: Buffer) => {
        said += d.toString('utf8');
        if (/listening on port|running on port/i.test(said)) ok();
      });
      proc.once('exit', () => fail(new Error(`server-everything ${mode} exited: ${said}`)));
    });
    return port;
  }

  beforeAll(async () => {
    const [httpPort, ssePort] = await Promise.all([everythingOver('streamableHttp'), everythingOver('sse')]);
    // The service's own MCP server, behind its bearer auth: the header comes from ${SERVICE_TOKEN}.
    service = await startCliServer(join(dir, 'remote-service'));
    const config = join(dir, 'remote.json');
    await writeFile(
      config,
      JSON.stringify({
        mcpServers: {
          web: { url: `http://127.0.0.1:${httpPort}/mcp` },
          legacy: { type: 'sse', url: `http://127.0.0.1:${ssePort}/sse` },
          // biome-ignore lint/suspicious/noTemplateCurlyInString: the gateway config's own ${VAR} syntax
          store: { type: 'http', url: `${service.url}/mcp`, headers: { Authorization: 'Bearer ${SERVICE_TOKEN}' } },
        },
      }),
    );
    remote = new Client({ name: 'host', version: '1.0.0' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: gatewayArgs(config, join(dir, 'data-remote')),
      cwd: ROOT,
      env: { ...env(), SERVICE_TOKEN: service.token },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (d: Buffer) => (remoteStderr += d.toString('utf8')));
    await connectOrExplain(remote, transport, () => remoteStderr);
  }, 90_000);

  afterAll(async () => {
    await remote?.close();
    await service?.stop();
    for (const proc of servers) await stopProcess(proc);
  });

  it('calls tools of servers reached over Streamable HTTP and SSE, and stores their images', async () => {
    for (const name of ['web__get-tiny-image', 'legacy__get-tiny-image']) {
      const result = (await remote.callTool({ name, arguments: {} })) as CallToolResult;
      expect(result.isError, `${name}: ${JSON.stringify(result).slice(0, 300)}\n${remoteStderr}`).toBeFalsy();
      expectNoBase64(result);
      expect(result.content.find((b) => b.type === 'resource_link')).toMatchObject({ mimeType: 'image/png' });
    }
  });

  it("sends the configured headers: the service's /mcp answers its tools only with the token", async () => {
    const { tools } = await remote.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['store__artifact_info', 'store__artifact_url']));
    const info = (await remote.callTool({
      name: 'store__artifact_info',
      arguments: { id: 'art_000000000000000000000000' },
    })) as CallToolResult;
    expect(info.isError).toBe(true);
    expect(JSON.stringify(info.content)).toMatch(/No artifact art_0{24} here/);
  });
});

function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const probe = createNetServer();
    probe.once('error', fail);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => ok(port));
    });
  });
}

describe('--embedded on a busy port', () => {
  it('serves its downloads on a free port instead, and says so', async () => {
    const busy = createNetServer();
    await new Promise<void>((ok) => busy.listen(0, '127.0.0.1', ok));
    const port = (busy.address() as AddressInfo).port;
    const host = new Client({ name: 'host', version: '1.0.0' });
    let said = '';
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [...gatewayArgs(configPath, join(dir, 'data-busy')).slice(0, -1), String(port)],
      cwd: ROOT,
      env: env(),
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (d: Buffer) => (said += d.toString('utf8')));
    try {
      await connectOrExplain(host, transport, () => said);
      const result = (await host.callTool({ name: 'everything__get-tiny-image', arguments: {} })) as CallToolResult;
      const [link] = linksIn(result);
      expect(link).toBeDefined();
      expect(new URL(link!).port).not.toBe(String(port));
      expect((await fetch(link!)).status).toBe(200);
      expect(said).toContain(`port ${port} is busy; serving downloads on a free port instead`);
    } finally {
      await host.close();
      await new Promise<void>((ok) => busy.close(() => ok()));
    }
  }, 60_000);
});
