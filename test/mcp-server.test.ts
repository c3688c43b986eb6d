/**
 * createArtifactMcpServer, seen by real clients: the SDK Client (and our own ResourceBridge on top
 * of it) over the in-memory transport, on the embedded store (SQLite + files) with two sessions, and
 * on the HTTP store against a real service process, whose event stream drives subscriptions.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ResourceUpdatedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFsBlobStore } from '../src/blob/fs.js';
import type { ArtifactStore } from '../src/client/artifact-store.js';
import { createEmbeddedArtifactStore } from '../src/service/embedded-store.js';
import { createHttpArtifactStore } from '../src/client/http-store.js';
import { createUrlSigner } from '../src/core/url-signing.js';
import { createSqliteRepository } from '../src/db/sqlite.js';
import { createArtifactMcpServer, ResourceBridge } from '../src/mcp/index.js';
import { enableLinearRegExps } from '../src/node/regexps.js';
import { createArtifactService, type ArtifactService } from '../src/service/artifact-service.js';
import { tailOutbox } from '../src/service/outbox-feed.js';
import { TEST_POLICY } from './helpers/policy.js';
import { URL_KEYS } from './helpers/app.js';
import { CLI_ARGS, ROOT, startCliServer, type CliServer } from './helpers/cli-server.js';
import * as payloads from './helpers/payloads.js';

async function connect(store: ArtifactStore, options: Parameters<typeof createArtifactMcpServer>[1] = {}) {
  const mcp = createArtifactMcpServer(store, options);
  const [a, b] = InMemoryTransport.createLinkedPair();
  await mcp.server.connect(b);
  const client = new Client({ name: 'host', version: '1.0.0' });
  await client.connect(a);
  return {
    client,
    async close() {
      await client.close();
      await mcp.close();
    },
  };
}

const textOf = (r: unknown) => ((r as CallToolResult).content[0] as { text: string }).text;

describe('the artifact MCP server on the embedded store (SQLite + files)', () => {
  let dir: string;
  let service: ArtifactService;
  let repo: ReturnType<typeof createSqliteRepository>;
  const sessionA = () =>
    createEmbeddedArtifactStore({
      service,
      scope: { tenantId: 'acme', sessionId: 'a' },
      publicUrl: 'http://127.0.0.1:8787',
    });
  const sessionB = () => createEmbeddedArtifactStore({ service, scope: { tenantId: 'acme', sessionId: 'b' } });

  beforeAll(async () => {
    // As the Node runtime does (openNodeDrivers): hostile search patterns run in linear time.
    enableLinearRegExps();
    dir = await mkdtemp(join(tmpdir(), 'mcp-server-'));
    repo = createSqliteRepository({ path: join(dir, 'a.db') });
    const blobs = createFsBlobStore({ root: join(dir, 'blobs'), fsync: false });
    service = createArtifactService({
      repo,
      blobs,
      limits: { maxArtifactBytes: 1 << 24, defaultTtlSeconds: 3600, maxTtlSeconds: 7200, touchFlushMs: 0 },
      links: { signer: createUrlSigner(URL_KEYS), defaultTtlSeconds: 900, maxTtlSeconds: 3600 },
    });
  });

  afterAll(async () => {
    await service?.close();
    await repo?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('lists every page, reads text as text and binary as blob, byte-identical', async () => {
    const a = sessionA();
    const png = payloads.png(4000, 9);
    const refs = [
      await a.putBytes(png, { mimeType: 'image/png', filename: 'chart.png' }),
      await a.putText('{"rows":[1,2,3]}', { mimeType: 'application/json', filename: 'rows.json' }),
      ...(await Promise.all([1, 2, 3, 4].map((i) => a.putText(`note ${i}`, { filename: `note-${i}.txt` })))),
    ];
    const { client, close } = await connect(a, { pageSize: 2 });
    const bridge = new ResourceBridge(client, { store: a });
    const listed = await bridge.listResources();
    expect(new Set(listed.map((r) => r.uri))).toEqual(new Set(refs.map((r) => `artifact://${r.id}`)));
    expect(listed.find((r) => r.name === 'chart.png')).toMatchObject({ mimeType: 'image/png', size: png.length });

    const templates = await client.listResourceTemplates();
    expect(templates.resourceTemplates.map((t) => t.uriTemplate)).toEqual(['artifact://{id}']);

    const blob = await client.readResource({ uri: `artifact://${refs[0]!.id}` });
    expect(blob.contents[0]).toMatchObject({ uri: `artifact://${refs[0]!.id}`, mimeType: 'image/png' });
    expect(Buffer.from((blob.contents[0] as { blob: string }).blob, 'base64').equals(png)).toBe(true);
    const json = await client.readResource({ uri: `artifact://${refs[1]!.id}` });
    expect(json.contents[0]).toEqual({
      uri: `artifact://${refs[1]!.id}`,
      mimeType: 'application/json',
      text: '{"rows":[1,2,3]}',
    });
    await close();
  });

  it("keeps sessions apart: another session's artifact is not listed and reads as not found, like a missing one", async () => {
    const theirs = await sessionB().putText('session b only', { filename: 'b.txt' });
    const { client, close } = await connect(sessionA());
    const listed = await new ResourceBridge(client, { store: sessionA() }).listResources();
    expect(listed.map((r) => r.uri)).not.toContain(`artifact://${theirs.id}`);
    const outOfScope = await client
      .readResource({ uri: `artifact://${theirs.id}` })
      .catch((e: Error & { code: number }) => e);
    const missing = await client
      .readResource({ uri: `artifact://art_${'0'.repeat(24)}` })
      .catch((e: Error & { code: number }) => e);
    expect((outOfScope as { code: number }).code).toBe(-32002);
    expect((missing as { code: number }).code).toBe(-32002);
    // The same answer, apart from the uri it names.
    expect((outOfScope as Error).message.replace(theirs.id, 'X')).toBe(
      (missing as Error).message.replace(`art_${'0'.repeat(24)}`, 'X'),
    );
    const bridge = new ResourceBridge(client, { store: sessionA() });
    await expect(bridge.readResource(`artifact://${theirs.id}`)).rejects.toMatchObject({ code: 'not_found' });
    expect((await client.readResource({ uri: 'artifact://not-an-id' }).catch((e: { code: number }) => e)).code).toBe(
      -32002,
    );
    await close();
  });

  it('answers artifact_info and artifact_url, and refuses bad arguments with a clear message', async () => {
    const a = sessionA();
    const ref = await a.putText('hello', { filename: 'hello.txt' });
    const { client, close } = await connect(a);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual([
      'artifact_read',
      'artifact_search',
      'artifact_query',
      'artifact_list',
      'artifact_info',
      'artifact_url',
    ]);
    const info = await client.callTool({ name: 'artifact_info', arguments: { id: ref.id } });
    expect(JSON.parse(textOf(info))).toMatchObject({
      id: ref.id,
      uri: `artifact://${ref.id}`,
      filename: 'hello.txt',
      sizeBytes: 5,
    });
    const url = await client.callTool({ name: 'artifact_url', arguments: { id: ref.id, expiresIn: 600 } });
    expect(url.isError).toBeFalsy();
    expect(textOf(url)).toMatch(
      /^Download link for .* valid until .*: http:\/\/127\.0\.0\.1:8787\/v1\/download\/.*signature=/,
    );
    const bad = await client.callTool({ name: 'artifact_url', arguments: {} });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(
      /^artifact_url got bad arguments \(id: .*\)\. It takes \["id","mode","expiresIn"\], of which id required\.$/,
    );
    const other = await client.callTool({
      name: 'artifact_info',
      arguments: { id: (await sessionB().putText('x')).id },
    });
    expect(other.isError).toBe(true);
    await close();
  });

  it('artifact_read, artifact_search, artifact_query and artifact_list look inside, within the budget, in scope', async () => {
    const a = sessionA();
    const log = Array.from({ length: 5000 }, (_, i) => (i % 1000 === 999 ? `ERROR at step ${i + 1}` : `ok ${i + 1}`));
    const ref = await a.putText(`${log.join('\n')}\n`, { filename: 'build.log' });
    const json = await a.putText(
      JSON.stringify({
        items: [
          { id: 1, name: 'one' },
          { id: 2, name: 'two' },
        ],
      }),
      {
        mimeType: 'application/json',
      },
    );
    const foreign = await sessionB().putText('secret of b\n');
    const { client, close } = await connect(a, { budget: 2000 });
    const found = await client.callTool({ name: 'artifact_search', arguments: { id: ref.id, pattern: 'ERROR' } });
    expect(textOf(found)).toMatch(/^5 lines of build\.log .* match the text "ERROR":/);
    expect(textOf(found)).toContain('  1000: ERROR at step 1000');
    const read = await client.callTool({ name: 'artifact_read', arguments: { id: ref.id, offset: 1000 } });
    expect(textOf(read).length).toBeLessThanOrEqual(2000);
    expect(textOf(read)).toContain('  1000\tERROR at step 1000');
    expect(textOf(read)).toMatch(/Continue: artifact_read \{"id":"[^"]+","offset":\d+\}/);
    const query = await client.callTool({
      name: 'artifact_query',
      arguments: { id: json.id, path: '$.items[1].name' },
    });
    expect(textOf(query)).toContain(`$['items'][1]['name'] = "two"`);
    const list = JSON.parse(textOf(await client.callTool({ name: 'artifact_list', arguments: { limit: 10 } })));
    // Newest first, as the model sees refs; the other session's artifact is not there.
    expect(list.artifacts.slice(0, 2).map((r: { id: string }) => r.id)).toEqual([json.id, ref.id]);
    expect(Object.keys(list.artifacts[0])).toEqual(['id', 'mimeType', 'sizeBytes', 'sha256']);
    expect(list.artifacts.map((r: { id: string }) => r.id)).not.toContain(foreign.id);
    // A search and an order, done by the store over the whole scope.
    const searched = JSON.parse(
      textOf(await client.callTool({ name: 'artifact_list', arguments: { q: json.id.slice(-12), sort: 'oldest' } })),
    );
    expect(searched.artifacts.map((r: { id: string }) => r.id)).toEqual([json.id]);
    for (const [name, args] of [
      ['artifact_read', { id: foreign.id }],
      ['artifact_search', { id: foreign.id, pattern: 'secret' }],
      ['artifact_query', { id: foreign.id, path: '$' }],
    ] as const) {
      const r = await client.callTool({ name, arguments: args });
      expect(r.isError, name).toBe(true);
      expect(textOf(r)).toMatch(/^No artifact .* here\./);
    }
    const bad = await client.callTool({
      name: 'artifact_search',
      arguments: { id: ref.id, pattern: '(a)\\1', regex: true },
    });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/cannot run in linear time/);
    await close();
  });

  it('refuses to inline an artifact over maxReadBytes and points at artifact_url', async () => {
    const a = sessionA();
    const ref = await a.putBytes(payloads.png(5000, 4), { mimeType: 'image/png' });
    const { client, close } = await connect(a, { maxReadBytes: 1000 });
    const err = await client.readResource({ uri: `artifact://${ref.id}` }).catch((e: Error) => e);
    expect((err as Error).message).toMatch(/over the 1000 B this server returns inline\. Call the artifact_url tool/);
    await close();
  });

  it('does not offer subscriptions on a store without an event stream', async () => {
    const { client, close } = await connect(sessionA());
    expect(client.getServerCapabilities()?.resources).toMatchObject({ subscribe: false });
    const bridge = new ResourceBridge(client, { store: sessionA() });
    expect((await bridge.subscribe('artifact://x')).subscribed).toBe(false);
    await close();
  });
});

describe('the artifact MCP server on the HTTP store, against a real service', () => {
  let dir: string;
  let srv: CliServer;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mcp-server-http-'));
    srv = await startCliServer(dir, { ARTIFACT_STORE_EVENTS_HEARTBEAT_SECONDS: '1' });
  }, 60_000);

  afterAll(async () => {
    srv?.kill();
    await srv?.exited;
    await rm(dir, { recursive: true, force: true });
  });

  it("tells a subscriber when its artifact is deleted, through the service's event stream", async () => {
    const store = createHttpArtifactStore({ baseUrl: srv.url, token: srv.token, scope: { sessionId: 'mcp-1' } });
    const ref = await store.putText('watch me', { filename: 'watched.txt' });
    const keep = await store.putText('leave me', { filename: 'kept.txt' });
    const { client, close } = await connect(store);
    expect(client.getServerCapabilities()?.resources).toMatchObject({ subscribe: true, listChanged: true });
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updated.push(n.params.uri);
    });
    await client.subscribeResource({ uri: `artifact://${ref.id}` });
    await client.subscribeResource({ uri: `artifact://${keep.id}` });
    // Give the event stream a moment to connect before the change it must see.
    await new Promise((r) => setTimeout(r, 500));
    // Deleted by another client of the service, not through this MCP server.
    const other = createHttpArtifactStore({ baseUrl: srv.url, token: srv.token, scope: { sessionId: 'mcp-1' } });
    expect(await other.delete(ref.id)).toBe(true);
    await expect.poll(() => updated, { timeout: 10_000 }).toEqual([`artifact://${ref.id}`]);
    const gone = await client.readResource({ uri: `artifact://${ref.id}` }).catch((e: { code: number }) => e);
    expect((gone as { code: number }).code).toBe(-32002);

    const url = await client.callTool({ name: 'artifact_url', arguments: { id: keep.id } });
    const link = textOf(url).slice(textOf(url).lastIndexOf(' ') + 1);
    expect(await (await fetch(link)).text()).toBe('leave me');
    await close();
  }, 30_000);
});

describe('artifact-store mcp (stdio), as a host runs it', () => {
  let dir: string;
  let srv: CliServer;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mcp-stdio-'));
    srv = await startCliServer(dir);
  }, 60_000);

  afterAll(async () => {
    srv?.kill();
    await srv?.exited;
    await rm(dir, { recursive: true, force: true });
  });

  const env = (extra: Record<string, string>) => ({
    ...(Object.fromEntries(
      Object.entries(process.env).filter(([k, v]) => !k.startsWith('ARTIFACT_STORE_') && v !== undefined),
    ) as Record<string, string>),
    ...extra,
  });

  it('serves the session its token and flags name: list, read, artifact_url', async () => {
    const store = createHttpArtifactStore({ baseUrl: srv.url, token: srv.token, scope: { sessionId: 'stdio-1' } });
    const png = payloads.png(2000, 5);
    const ref = await store.putBytes(png, { mimeType: 'image/png', filename: 'plot.png' });
    await createHttpArtifactStore({ baseUrl: srv.url, token: srv.token, scope: { sessionId: 'stdio-2' } }).putText(
      'elsewhere',
    );

    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [...CLI_ARGS, 'mcp', '--session', 'stdio-1'],
      cwd: ROOT,
      env: env({ ARTIFACT_STORE_URL: srv.url, ARTIFACT_STORE_TOKEN: srv.token }),
      stderr: 'pipe',
    });
    const client = new Client({ name: 'host', version: '1.0.0' });
    await client.connect(transport);
    expect(client.getServerVersion()?.name).toBe('artifact-store');
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual([`artifact://${ref.id}`]);
    const read = await client.readResource({ uri: `artifact://${ref.id}` });
    expect(Buffer.from((read.contents[0] as { blob: string }).blob, 'base64').equals(png)).toBe(true);
    const url = await client.callTool({ name: 'artifact_url', arguments: { id: ref.id } });
    const link = textOf(url).slice(textOf(url).lastIndexOf(' ') + 1);
    expect(Buffer.from(await (await fetch(link)).arrayBuffer()).equals(png)).toBe(true);
    // The views, through the HTTP store: an image answers its pixel size; text is read and searched.
    const seen = await client.callTool({ name: 'artifact_read', arguments: { id: ref.id } });
    expect(textOf(seen)).toMatch(/is an image \(image\/png, \d+×\d+ px/);
    const notes = await store.putText('first\nthe answer is 42\nlast\n', { filename: 'notes.txt' });
    const hit = await client.callTool({ name: 'artifact_search', arguments: { id: notes.id, pattern: 'answer' } });
    expect(textOf(hit)).toContain('     2: the answer is 42');
    const other = (await createHttpArtifactStore({ baseUrl: srv.url, token: srv.token }).list({ sessionId: 'stdio-2' }))
      .items[0]!;
    const refused = await client.callTool({ name: 'artifact_read', arguments: { id: other.id } });
    expect(refused.isError).toBe(true);
    await client.close();
  }, 60_000);

  it('says what to set when there is no token, and exits 1', async () => {
    const { spawnSync } = await import('node:child_process');
    const r = spawnSync(process.execPath, [...CLI_ARGS, 'mcp'], {
      cwd: ROOT,
      env: env({}),
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^artifact-store: Set ARTIFACT_STORE_TOKEN/);
    expect(r.stdout).toBe('');
  }, 60_000);
});

describe('subscriptions fed by the outbox: eviction', () => {
  it('tells a subscriber when a quota evicts its artifact', async () => {
    const evictDir = await mkdtemp(join(tmpdir(), 'mcp-evict-'));
    const repo = createSqliteRepository({ path: join(evictDir, 'a.db') });
    const blobs = createFsBlobStore({ root: join(evictDir, 'blobs'), fsync: false });
    const service = createArtifactService({
      repo,
      blobs,
      limits: { maxArtifactBytes: 1 << 20, defaultTtlSeconds: 3600, maxTtlSeconds: 7200, touchFlushMs: 0 },
      policies: () => ({ ...TEST_POLICY, maxArtifactsPerSession: 2 }),
    });
    const scope = { tenantId: 'acme', sessionId: 'tight' };
    const store = createEmbeddedArtifactStore({ service, scope });
    const { client, close } = await connect(store, {
      events: (signal) => tailOutbox(repo, scope, { pollMs: 20, signal }),
    });
    try {
      const oldest = await store.putText('first');
      const updates: string[] = [];
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
        updates.push(n.params.uri);
      });
      await client.subscribeResource({ uri: `artifact://${oldest.id}` });
      await new Promise((r) => setTimeout(r, 100));
      await store.putText('second');
      await store.putText('third'); // the session holds 2: the least recently used, `first`, goes
      await expect.poll(() => updates, { timeout: 10_000 }).toEqual([`artifact://${oldest.id}`]);
      expect(await store.exists(oldest.id)).toBe(false);
    } finally {
      await close();
      await service.close();
      await repo.close();
      await rm(evictDir, { recursive: true, force: true });
    }
  }, 30_000);
});
