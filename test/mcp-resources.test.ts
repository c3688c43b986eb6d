/**
 * ResourceBridge against a real server (@modelcontextprotocol/server-everything over stdio) and
 * against small servers written here on the SDK's low-level Server, for what the reference server
 * does not do: several pages, a cursor loop, slow reads, errors, multi-content reads, cache hints.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type ReadResourceResult,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ArtifactStore } from '../src/client/artifact-store.js';
import { createInMemoryArtifactStore } from '../src/client/memory-store.js';
import { ResourceBridge, ResourceBridgeError, wrapMcpClient, type ResourceBridgeEvent } from '../src/mcp/index.js';
import * as payloads from './helpers/payloads.js';

const scope = { tenantId: 'acme', sessionId: 's-1' };

async function bytesOf(store: ArtifactStore, id: string): Promise<Buffer> {
  const got = await store.get(id);
  expect(got, `artifact ${id} is readable`).not.toBeNull();
  return Buffer.from(got!);
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(ResourceBridgeError);
    return (err as ResourceBridgeError).code;
  }
  throw new Error('expected a ResourceBridgeError');
}

const linkOf = (content: Record<string, unknown>[]) =>
  content.find((b) => b.type === 'resource_link') as { uri: string } | undefined;
const idOf = (uri: string) => uri.replace(/^artifact:\/\//, '');

describe('ResourceBridge on @modelcontextprotocol/server-everything (stdio)', () => {
  let client: Client;
  let raw: Client;
  const events: ResourceBridgeEvent[] = [];
  let bridge: ResourceBridge;
  const store = createInMemoryArtifactStore({ scope });
  let reads = 0;
  /** What the server last answered the bridge's client, per uri (dynamic resources change over time). */
  const received = new Map<string, ReadResourceResult>();

  beforeAll(async () => {
    const entry = join(
      dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/package.json')),
      'dist',
      'index.js',
    );
    const spawn = async () => {
      const c = new Client({ name: 'bridge-test', version: '1.0.0' });
      await c.connect(new StdioClientTransport({ command: process.execPath, args: [entry, 'stdio'], stderr: 'pipe' }));
      return c;
    };
    [client, raw] = await Promise.all([spawn(), spawn()]);
    // Count the reads that reach the server.
    const read = client.readResource.bind(client);
    client.readResource = async (...args: Parameters<Client['readResource']>) => {
      reads++;
      const result = await read(...args);
      received.set(args[0].uri, result);
      return result;
    };
    bridge = new ResourceBridge(client, { store, scope, onEvent: (e) => events.push(e) });
  }, 30_000);

  afterAll(async () => {
    await Promise.all([client?.close(), raw?.close()]);
  });

  it('walks every page of resources and templates', async () => {
    expect(bridge.capabilities).toEqual({ resources: true, subscribe: true, listChanged: true });
    const listed = await bridge.listResources();
    // The same list the server gives page by page.
    const direct: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await raw.listResources(cursor ? { cursor } : {});
      direct.push(...page.resources.map((r) => r.uri));
      cursor = page.nextCursor;
    } while (cursor);
    expect(listed.map((r) => r.uri)).toEqual(direct);
    expect(listed.length).toBeGreaterThan(0);
    const templates = await bridge.listResourceTemplates();
    expect(templates.map((t) => t.uriTemplate)).toEqual(
      expect.arrayContaining([
        'demo://resource/dynamic/text/{resourceId}',
        'demo://resource/dynamic/blob/{resourceId}',
      ]),
    );
  });

  it('keeps short text inline, stores long text and blobs byte-identical, and answers again from the cache', async () => {
    const listed = await bridge.listResources();
    let shortUri: string | undefined;
    let longUri: string | undefined;
    for (const r of listed) {
      const text = ((await raw.readResource({ uri: r.uri })).contents[0] as { text?: string }).text ?? '';
      if (text.length < 10_000) shortUri ??= r.uri;
      else longUri ??= r.uri;
    }
    expect(shortUri && longUri, 'the server has a short and a long text resource').toBeTruthy();

    const short = await bridge.readResource(shortUri!);
    expect(short.artifacts).toEqual([]);
    expect(short.content[0]).toEqual({
      type: 'resource',
      resource: (await raw.readResource({ uri: shortUri! })).contents[0],
    });

    const long = await bridge.readResource(longUri!);
    const rawLong = (await raw.readResource({ uri: longUri! })).contents[0] as { text: string; mimeType: string };
    expect(long.artifacts).toHaveLength(1);
    expect(long.artifacts[0]!.mimeType).toBe(rawLong.mimeType);
    expect((await bytesOf(store, long.artifacts[0]!.id)).toString('utf8')).toBe(rawLong.text);
    expect(linkOf(long.content)!.uri).toBe(`artifact://${long.artifacts[0]!.id}`);
    expect(JSON.stringify(long.content).length).toBeLessThan(rawLong.text.length);

    const blobUri = 'demo://resource/dynamic/blob/1';
    const blob = await bridge.readResource(blobUri);
    // server-everything's dynamic blobs carry the time they were made: compare with what the bridge got.
    const rawBlob = received.get(blobUri)!.contents[0] as { blob: string };
    expect(blob.artifacts).toHaveLength(1);
    expect((await bytesOf(store, blob.artifacts[0]!.id)).equals(Buffer.from(rawBlob.blob, 'base64'))).toBe(true);
    expect(JSON.stringify(blob.content)).not.toContain(rawBlob.blob);

    const before = reads;
    const again = await bridge.readResource(longUri!);
    expect(again.fromCache).toBe(true);
    expect(again.artifacts).toEqual(long.artifacts);
    expect(reads).toBe(before);
  });

  it('does not answer from the cache once the artifact is gone from the store', async () => {
    const uri = 'demo://resource/dynamic/blob/2';
    const first = await bridge.readResource(uri);
    await store.delete(first.artifacts[0]!.id);
    const before = reads;
    const second = await bridge.readResource(uri);
    expect(second.fromCache).toBe(false);
    expect(reads).toBe(before + 1);
    expect(await store.exists(second.artifacts[0]!.id)).toBe(true);
  });

  it('subscribes, and each update drops the cached read of exactly that uri', async () => {
    const watched = 'demo://resource/dynamic/blob/3';
    const other = 'demo://resource/dynamic/blob/4';
    await bridge.readResource(watched);
    await bridge.readResource(other);
    expect(bridge.cache.has(watched) && bridge.cache.has(other)).toBe(true);
    expect(await bridge.subscribe(watched)).toEqual({ subscribed: true });

    events.length = 0;
    const updated = new Promise<ResourceBridgeEvent>((resolve) => {
      const timer = setInterval(() => {
        const e = events.find((x) => x.type === 'resource.updated');
        if (e) {
          clearInterval(timer);
          resolve(e);
        }
      }, 50);
    });
    // server-everything sends updates for subscribed uris every 5 s once this is on.
    const toggled = await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
    expect(CallToolResultSchema.parse(toggled).isError).toBeFalsy();
    const event = await updated;
    expect(event).toEqual({ type: 'resource.updated', uri: watched, invalidated: true });
    expect(bridge.cache.has(watched)).toBe(false);
    expect(bridge.cache.has(other)).toBe(true);
    const reread = await bridge.readResource(watched);
    expect(reread.fromCache).toBe(false);

    expect(await bridge.unsubscribe(watched)).toEqual({ unsubscribed: true });
    expect(bridge.subscribed.has(watched)).toBe(false);
    await client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
  }, 20_000);

  it('gives a typed not_found for an unknown uri', async () => {
    expect(await codeOf(bridge.readResource('demo://resource/nope/1'))).toBe('not_found');
  });

  it('serves planner tools with schemas, whose outputs pass the guardrail', async () => {
    const tools = bridge.plannerTools('everything');
    expect(tools.map((t) => t.name)).toEqual([
      'everything.resources_list',
      'everything.resources_templates_list',
      'everything.resources_read',
    ]);
    for (const t of tools) {
      expect(t.description.length).toBeGreaterThan(40);
      expect(t.inputSchema).toMatchObject({ type: 'object' });
    }
    const listed = (await tools[0]!.call({})) as { resources: { uri: string }[] };
    expect(listed.resources.length).toBeGreaterThan(0);
    const read = (await tools[2]!.call({ uri: 'demo://resource/dynamic/blob/5' })) as {
      uri: string;
      content: Record<string, unknown>[];
    };
    expect(linkOf(read.content)!.uri).toMatch(/^artifact:\/\//);
    expect(await codeOf(tools[2]!.call({}))).toBe('not_found');
  });
});

/** A low-level SDK Server with the given handlers, connected in-process; returns the client side. */
async function serverWith(
  setup: (server: Server) => void,
  capabilities: Record<string, unknown> = { resources: { subscribe: true, listChanged: true } },
) {
  const server = new Server({ name: 'fixture', version: '1.0.0' }, { capabilities });
  setup(server);
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(b);
  const client = new Client({ name: 'bridge-test', version: '1.0.0' });
  await client.connect(a);
  return { server, client };
}

describe('ResourceBridge on servers that page, loop, stall and fail', () => {
  it('follows nextCursor through many pages', async () => {
    const all = Array.from({ length: 23 }, (_, i) => ({ uri: `file:///doc-${i}.txt`, name: `doc-${i}.txt` }));
    const { client } = await serverWith((s) => {
      s.setRequestHandler(ListResourcesRequestSchema, (req) => {
        const at = Number(req.params?.cursor ?? 0);
        return { resources: all.slice(at, at + 5), ...(at + 5 < all.length ? { nextCursor: String(at + 5) } : {}) };
      });
      s.setRequestHandler(ListResourceTemplatesRequestSchema, (req) =>
        req.params?.cursor
          ? { resourceTemplates: [{ uriTemplate: 'file:///{b}', name: 'b' }] }
          : { resourceTemplates: [{ uriTemplate: 'file:///{a}', name: 'a' }], nextCursor: 'p2' },
      );
    });
    const bridge = new ResourceBridge(client, { store: createInMemoryArtifactStore({ scope }) });
    expect((await bridge.listResources()).map((r) => r.uri)).toEqual(all.map((r) => r.uri));
    expect((await bridge.listResourceTemplates()).map((t) => t.uriTemplate)).toEqual(['file:///{a}', 'file:///{b}']);
    const capped = new ResourceBridge(client, {
      store: createInMemoryArtifactStore({ scope }),
      config: { maxPages: 2 },
    });
    expect(await codeOf(capped.listResources())).toBe('page_limit');
    expect(
      () =>
        new ResourceBridge(client, { store: createInMemoryArtifactStore({ scope }), config: { maxPage: 2 } as never }),
    ).toThrow('Invalid resource bridge config at (root): unknown key "maxPage". Did you mean "maxPages"?');
  });

  it('stops with cursor_loop when the server hands out a cursor twice', async () => {
    const { client } = await serverWith((s) =>
      s.setRequestHandler(ListResourcesRequestSchema, (req) => ({
        resources: [{ uri: `x:///${req.params?.cursor ?? 0}`, name: 'x' }],
        nextCursor: req.params?.cursor === 'b' ? 'a' : req.params?.cursor === 'a' ? 'b' : 'a',
      })),
    );
    const bridge = new ResourceBridge(client, { store: createInMemoryArtifactStore({ scope }) });
    const err = await bridge.listResources().catch((e: unknown) => e as ResourceBridgeError);
    expect(err).toBeInstanceOf(ResourceBridgeError);
    expect((err as ResourceBridgeError).code).toBe('cursor_loop');
    expect((err as Error).message).toMatch(/returned cursor "a" twice/);
  });

  it('stores every content of a multi-content read, and honours ttlMs hints', async () => {
    const png = payloads.png(3000, 7);
    let reads = 0;
    const { client } = await serverWith((s) =>
      s.setRequestHandler(ReadResourceRequestSchema, (req): ReadResourceResult => {
        reads++;
        const uri = req.params.uri;
        const contents = [
          { uri: `${uri}#chart`, mimeType: 'image/png', blob: png.toString('base64') },
          { uri: `${uri}#notes`, mimeType: 'text/plain', text: 'Quarterly notes.' },
        ];
        if (uri.includes('nocache')) return { contents, _meta: { ttlMs: 0, cacheScope: 'private' } };
        if (uri.includes('short')) return { contents, _meta: { ttlMs: 1 } };
        return { contents };
      }),
    );
    const store = createInMemoryArtifactStore({ scope });
    const bridge = new ResourceBridge(client, { store });
    const read = await bridge.readResource('report://q3');
    expect(read.artifacts).toHaveLength(1);
    expect((await bytesOf(store, read.artifacts[0]!.id)).equals(png)).toBe(true);
    expect(read.content).toContainEqual({
      type: 'resource',
      resource: { uri: 'report://q3#notes', mimeType: 'text/plain', text: 'Quarterly notes.' },
    });

    await bridge.readResource('report://q3');
    expect(reads).toBe(1);
    await bridge.readResource('report://nocache');
    await bridge.readResource('report://nocache');
    expect(reads).toBe(3);
    await bridge.readResource('report://short');
    await new Promise((r) => setTimeout(r, 5));
    await bridge.readResource('report://short');
    expect(reads).toBe(5);
  });

  it('times out a read that stalls, with a typed error, and nothing hangs', async () => {
    const { client } = await serverWith((s) =>
      s.setRequestHandler(ReadResourceRequestSchema, () => new Promise<ReadResourceResult>(() => {})),
    );
    const bridge = new ResourceBridge(client, {
      store: createInMemoryArtifactStore({ scope }),
      config: { readTimeoutMs: 150 },
    });
    expect(await codeOf(bridge.readResource('slow://big'))).toBe('timeout');
  });

  it('maps server errors and missing methods to typed errors', async () => {
    const { client } = await serverWith((s) => {
      s.setRequestHandler(ReadResourceRequestSchema, (req) => {
        if (req.params.uri === 'x://missing') throw new McpError(-32002, 'Resource not found');
        throw new McpError(ErrorCode.InternalError, 'database is down');
      });
    });
    const bridge = new ResourceBridge(client, { store: createInMemoryArtifactStore({ scope }) });
    expect(await codeOf(bridge.readResource('x://missing'))).toBe('not_found');
    const err = (await bridge.readResource('x://other').catch((e: unknown) => e)) as ResourceBridgeError;
    expect(err.code).toBe('server_error');
    expect(err.message).toContain('database is down');
    // The server declared resources but never answered resources/list.
    expect(await codeOf(bridge.listResources())).toBe('resources_unsupported');
  });

  it('says clearly when a server has no resources, or no subscriptions, without failing the host', async () => {
    const { client: bare } = await serverWith(() => {}, { tools: {} });
    const none = new ResourceBridge(bare, { store: createInMemoryArtifactStore({ scope }) });
    expect(await codeOf(none.listResources())).toBe('resources_unsupported');
    expect(await codeOf(none.readResource('a://b'))).toBe('resources_unsupported');

    const { client } = await serverWith(
      (s) =>
        s.setRequestHandler(ReadResourceRequestSchema, (req) => ({ contents: [{ uri: req.params.uri, text: 'hi' }] })),
      { resources: {} },
    );
    const bridge = new ResourceBridge(client, { store: createInMemoryArtifactStore({ scope }) });
    const answer = await bridge.subscribe('a://b');
    expect(answer.subscribed).toBe(false);
    expect(answer.reason).toMatch(/does not offer resource subscriptions/);
  });

  it('clears the cache on list_changed and drops one entry on updated', async () => {
    const events: ResourceBridgeEvent[] = [];
    const subscribed: string[] = [];
    const { server, client } = await serverWith((s) => {
      s.setRequestHandler(ReadResourceRequestSchema, (req) => ({
        contents: [{ uri: req.params.uri, mimeType: 'image/png', blob: payloads.png(500, 3).toString('base64') }],
      }));
      s.setRequestHandler(SubscribeRequestSchema, (req) => {
        subscribed.push(req.params.uri);
        return {};
      });
      s.setRequestHandler(UnsubscribeRequestSchema, () => ({}));
    });
    const bridge = new ResourceBridge(client, {
      store: createInMemoryArtifactStore({ scope }),
      onEvent: (e) => events.push(e),
    });
    await bridge.readResource('img://a');
    await bridge.readResource('img://b');
    await bridge.subscribe('img://a');
    expect(subscribed).toEqual(['img://a']);

    await server.sendResourceUpdated({ uri: 'img://a' });
    await expect.poll(() => events.length).toBe(1);
    expect(events[0]).toEqual({ type: 'resource.updated', uri: 'img://a', invalidated: true });
    expect(bridge.cache.has('img://a')).toBe(false);
    expect(bridge.cache.has('img://b')).toBe(true);

    await server.sendResourceListChanged();
    await expect.poll(() => events.length).toBe(2);
    expect(events[1]).toEqual({ type: 'resource.list_changed', cleared: 1 });
    expect(bridge.cache.size).toBe(0);
  });

  it('is what wrapMcpClient uses to auto-read small resource_links', async () => {
    const pdf = await payloads.pdf(2);
    const { client } = await serverWith(
      (s) => {
        s.setRequestHandler(ReadResourceRequestSchema, (req) => ({
          contents: [{ uri: req.params.uri, mimeType: 'application/pdf', blob: pdf.toString('base64') }],
        }));
        s.setRequestHandler(CallToolRequestSchema, () => ({
          content: [
            {
              type: 'resource_link',
              uri: 'report://q3.pdf',
              name: 'q3.pdf',
              mimeType: 'application/pdf',
              size: pdf.length,
            },
          ],
        }));
      },
      { resources: {}, tools: {} },
    );
    const store = createInMemoryArtifactStore({ scope });
    const bridge = new ResourceBridge(client, { store, config: { readTimeoutMs: 5_000 } });
    const wrapped = wrapMcpClient(client, { store, resources: bridge, config: { autoReadIfSizeUnderBytes: 1 << 20 } });
    const result = (await wrapped.callTool({ name: 'export', arguments: {} })) as {
      content: Record<string, unknown>[];
    };
    const link = linkOf(result.content)!;
    expect(link.uri).toMatch(/^artifact:\/\//);
    expect((await bytesOf(store, idOf(link.uri))).equals(pdf)).toBe(true);
  });
});
