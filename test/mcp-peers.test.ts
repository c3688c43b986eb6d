/**
 * wrapMcpClient against real MCP servers: the reference servers server-everything and
 * server-filesystem spawned over stdio, and a Tableau-shaped server (the incident) in process over
 * the SDK's in-memory transport. Each raw result is recorded on its way into the transformer, so
 * the stored bytes are compared with exactly what the server sent.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { PDFDocument } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ArtifactStore } from '../src/client/artifact-store.js';
import { createInMemoryArtifactStore } from '../src/client/memory-store.js';
import { formatBytes } from '../src/core/bytes.js';
import type { ArtifactRef } from '../src/core/schemas.js';
import { wrapMcpClient, type TransformStats } from '../src/mcp/index.js';
import {
  connectOrExplain,
  countingStore,
  embeddedStore,
  fromBase64,
  jsonChars,
  plainClient,
  recordRawResults,
  sha256,
  stdioPeer,
  type RawCall,
} from './helpers/mcp-peers.js';
import * as payloads from './helpers/payloads.js';

const scope = { tenantId: 'acme', sessionId: 'peers' };

type Block = Record<string, any>;
type ToolResult = { content: Block[]; structuredContent?: Record<string, any>; isError?: boolean };
interface Transformed {
  tool: string;
  artifacts: ArtifactRef[];
  stats: TransformStats;
}

/** A wrapped client and everything needed to check its calls. */
interface Peer {
  raw: Client;
  wrapped: Client;
  /** Raw results, in call order. */
  calls: RawCall[];
  /** onTransform reports, in call order. */
  transforms: Transformed[];
}

function wrap(
  raw: Client,
  store: ArtifactStore,
  options: { serverName?: string; config?: Record<string, unknown> } = {},
): Peer {
  const calls = recordRawResults(raw);
  const transforms: Transformed[] = [];
  const wrapped = wrapMcpClient(raw, { store, ...options, onTransform: (info) => transforms.push(info) });
  return { raw, wrapped, calls, transforms };
}

/** Another wrapper over the same (already recorded) client, reporting into the same lists. */
function rewrap(
  peer: Peer,
  store: ArtifactStore,
  options: { serverName?: string; config?: Record<string, unknown> },
): Peer {
  return {
    ...peer,
    wrapped: wrapMcpClient(peer.raw, { store, ...options, onTransform: (info) => peer.transforms.push(info) }),
  };
}

/** Calls a tool through the wrapped client; returns the observation with the raw result and the report of that call. */
async function call(peer: Peer, name: string, args: Record<string, unknown> = {}) {
  const before = peer.calls.length;
  const reported = peer.transforms.length;
  const observation = (await peer.wrapped.callTool({ name, arguments: args })) as ToolResult;
  expect(peer.calls, 'the wrapped client called the server exactly once').toHaveLength(before + 1);
  expect(peer.transforms, 'onTransform ran once').toHaveLength(reported + 1);
  const raw = peer.calls[before]!;
  const report = peer.transforms[reported]!;
  expect(report.tool).toBe(name);
  // The caller's raw object is left as it came.
  expect(raw.result).toEqual(raw.snapshot);
  expect(CallToolResultSchema.safeParse(observation).success, 'the observation is still a CallToolResult').toBe(true);
  return { observation, raw: raw.result as ToolResult, report };
}

async function bytesOf(store: ArtifactStore, id: string): Promise<Buffer> {
  const got = await store.get(id);
  expect(got, `artifact ${id} is readable`).not.toBeNull();
  return Buffer.from(got!);
}

const artifactLinks = (content: Block[]) =>
  content.filter((b) => b.type === 'resource_link' && String(b.uri).startsWith('artifact://'));
const linkFor = (content: Block[], ref: ArtifactRef) =>
  content.find((b) => b.type === 'resource_link' && b.uri === `artifact://${ref.id}`);
const uniqueIds = (refs: ArtifactRef[]) => new Set(refs.map((r) => r.id)).size;
const countStored = async (store: ArtifactStore) => (await store.list()).items.length;

// ---------------------------------------------------------------------------------------------------

describe('server-everything over stdio', () => {
  const store = createInMemoryArtifactStore({ scope });
  let peer: Peer;
  let stderr: () => string = () => '';

  beforeAll(async () => {
    const spawned = stdioPeer('server-everything', ['stdio']);
    stderr = spawned.stderr;
    // No serverName: the namespace comes from the name the server reports at initialize.
    peer = wrap(plainClient(), store);
    await connectOrExplain(peer.wrapped, spawned.transport, stderr);
  }, 30_000);

  afterAll(async () => {
    await peer?.wrapped.close();
  });

  it('came up over stdio and reported its name', () => {
    expect(peer.raw.getServerVersion()?.name, stderr()).toBe('mcp-servers/everything');
  });

  it('get-tiny-image: the image block becomes a summary + artifact:// link to the exact PNG bytes', async () => {
    const { observation, raw, report } = await call(peer, 'get-tiny-image');

    const rawImage = raw.content.find((b) => b.type === 'image')!;
    expect(rawImage).toMatchObject({ mimeType: 'image/png' });
    const png = fromBase64(rawImage.data);
    expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');

    expect(report.artifacts).toHaveLength(1);
    const ref = report.artifacts[0]!;
    expect(ref).toMatchObject({
      mimeType: 'image/png',
      sizeBytes: png.length,
      sha256: sha256(png),
      namespace: 'mcp-servers-everything.get-tiny-image',
    });
    expect(ref.id).toMatch(/^mcp-servers-everything\.get-tiny-image_[0-9a-f]{24}$/);
    expect(ref.source).toMatchObject({ tool: 'get-tiny-image', server: 'mcp-servers/everything' });
    expect((await bytesOf(store, ref.id)).equals(png)).toBe(true);

    // The observation: the server's own text blocks kept in order, the image replaced in place.
    const content = observation.content;
    expect(content.some((b) => b.type === 'image')).toBe(false);
    expect(content[0]).toEqual(raw.content[0]);
    expect(content[content.length - 1]).toEqual(raw.content[raw.content.length - 1]);
    expect(artifactLinks(content)).toEqual([
      {
        type: 'resource_link',
        uri: `artifact://${ref.id}`,
        name: ref.filename,
        mimeType: 'image/png',
        size: png.length,
      },
    ]);
    const summary = content.find((b) => b.type === 'text' && b.text.includes(ref.id));
    expect(summary?.text).toContain('PNG');
    expect(summary?.text).toContain(formatBytes(png.length));
    expect(JSON.stringify(observation)).not.toContain(rawImage.data.slice(0, 64));

    expect(jsonChars(observation)).toBeLessThan(jsonChars(raw) / 5);
    expect(report.stats).toMatchObject({
      charsBefore: jsonChars(raw),
      charsAfter: jsonChars(observation),
      artifacts: 1,
      bytesStored: png.length,
      notStored: 0,
    });
    expect(report.stats.byLayer.blocks).toBe(1);
  });

  it('get-tiny-image again: the same bytes get the same id and are not stored twice', async () => {
    const first = (await call(peer, 'get-tiny-image')).report.artifacts[0]!;
    const stored = await countStored(store);
    const second = (await call(peer, 'get-tiny-image')).report.artifacts[0]!;
    expect(second.id).toBe(first.id);
    expect(await countStored(store)).toBe(stored);
  });

  it('get-annotated-message with an image: the annotations carry over to the summary and the link', async () => {
    const { observation, raw, report } = await call(peer, 'get-annotated-message', {
      messageType: 'success',
      includeImage: true,
    });
    const rawImage = raw.content.find((b) => b.type === 'image')!;
    expect(rawImage.annotations).toEqual({ audience: ['user'], priority: 0.5 });
    const ref = report.artifacts[0]!;
    expect((await bytesOf(store, ref.id)).equals(fromBase64(rawImage.data))).toBe(true);
    expect(observation.content[0]).toEqual(raw.content[0]);
    expect(linkFor(observation.content, ref)?.annotations).toEqual(rawImage.annotations);
    expect(observation.content.find((b) => b.type === 'text' && b.text.includes(ref.id))?.annotations).toEqual(
      rawImage.annotations,
    );
  });

  it('error results and plain structured results pass through untouched', async () => {
    const stored = await countStored(store);
    for (const [name, args] of [
      ['no-such-tool', {}],
      ['get-sum', { a: 'one' }],
      ['get-structured-content', { location: 'Chicago' }],
    ] as const) {
      const { observation, raw, report } = await call(peer, name, args);
      expect(observation, name).toEqual(raw);
      expect(report.artifacts).toEqual([]);
    }
    expect((await call(peer, 'no-such-tool')).observation.isError).toBe(true);
    expect(await countStored(store)).toBe(stored);
  });

  it('get-resource-links: demo:// links stay lazy links (uri, name, mimeType kept), nothing is read or stored', async () => {
    const stored = await countStored(store);
    const { observation, raw, report } = await call(peer, 'get-resource-links', { count: 4 });

    const rawLinks = raw.content.filter((b) => b.type === 'resource_link');
    expect(rawLinks.map((l) => l.uri)).toEqual([
      'demo://resource/dynamic/blob/1',
      'demo://resource/dynamic/text/2',
      'demo://resource/dynamic/blob/3',
      'demo://resource/dynamic/text/4',
    ]);
    const links = observation.content.filter((b) => b.type === 'resource_link');
    expect(links).toEqual(rawLinks);
    for (const link of links) {
      expect(link).toMatchObject({
        uri: expect.stringMatching(/^demo:\/\//),
        name: expect.any(String),
        mimeType: 'text/plain',
      });
      // A hint next to each link tells the model how to get it.
      const hint = observation.content.find(
        (b) => b.type === 'text' && b.text.includes(link.uri) && b.text !== raw.content[0]!.text,
      );
      expect(hint?.text, `hint for ${link.uri}`).toContain('resources/read');
    }
    expect(observation.content[0]).toEqual(raw.content[0]);
    expect(artifactLinks(observation.content)).toEqual([]);
    expect(report.artifacts).toEqual([]);
    expect(report.stats).toMatchObject({ artifacts: 0, bytesStored: 0, notStored: 0 });
    expect(await countStored(store)).toBe(stored);
  });

  it('get-resource-links with auto-read on: links that declare no size are still not read', async () => {
    const stored = await countStored(store);
    const eager = wrapMcpClient(peer.raw, { store, config: { autoReadIfSizeUnderBytes: 1 << 20 } });
    const observation = (await eager.callTool({ name: 'get-resource-links', arguments: { count: 2 } })) as ToolResult;
    expect(observation.content.filter((b) => b.type === 'resource_link').map((l) => l.uri)).toEqual([
      'demo://resource/dynamic/blob/1',
      'demo://resource/dynamic/text/2',
    ]);
    expect(observation.content.some((b) => b.type === 'resource')).toBe(false);
    expect(await countStored(store)).toBe(stored);
  });

  it('get-resource-reference Blob: the embedded blob is stored byte-identical under its declared text/plain', async () => {
    const { observation, raw, report } = await call(peer, 'get-resource-reference', {
      resourceType: 'Blob',
      resourceId: 2,
    });

    const rawResource = raw.content.find((b) => b.type === 'resource')!.resource;
    expect(rawResource).toMatchObject({ uri: 'demo://resource/dynamic/blob/2', mimeType: 'text/plain' });
    const bytes = fromBase64(rawResource.blob);
    expect(bytes.toString('utf8')).toMatch(/^Resource 2: This is a base64 blob created at /);

    expect(report.artifacts).toHaveLength(1);
    const ref = report.artifacts[0]!;
    expect(ref).toMatchObject({
      mimeType: 'text/plain',
      sizeBytes: bytes.length,
      sha256: sha256(bytes),
      filename: '2.txt',
    });
    expect((await bytesOf(store, ref.id)).equals(bytes)).toBe(true);

    expect(observation.content.some((b) => b.type === 'resource')).toBe(false);
    expect(linkFor(observation.content, ref)).toMatchObject({ mimeType: 'text/plain', size: bytes.length });
    // The server's own texts around the resource are kept.
    expect(observation.content[0]).toEqual(raw.content[0]);
    expect(observation.content[observation.content.length - 1]).toEqual(raw.content[raw.content.length - 1]);
    expect(JSON.stringify(observation)).not.toContain(rawResource.blob);
  });

  it('get-resource-reference Text: a short embedded text resource stays inline, nothing stored', async () => {
    const stored = await countStored(store);
    const { observation, raw, report } = await call(peer, 'get-resource-reference', {
      resourceType: 'Text',
      resourceId: 1,
    });
    const rawResource = raw.content.find((b) => b.type === 'resource')!.resource;
    expect(rawResource.text).toMatch(/^Resource 1: This is a plaintext resource created at /);
    expect(observation).toEqual(raw);
    expect(report.artifacts).toEqual([]);
    expect(await countStored(store)).toBe(stored);
  });

  it('gzip-file-as-resource (outputType resource, data: URI): the gzip blob is stored byte-identical', async () => {
    const input = Buffer.from('hello gzip\n'.repeat(40));
    const { observation, raw, report } = await call(peer, 'gzip-file-as-resource', {
      name: 'hello.txt.gz',
      data: `data:text/plain;base64,${input.toString('base64')}`,
      outputType: 'resource',
    });

    const rawResource = raw.content.find((b) => b.type === 'resource')!.resource;
    expect(rawResource).toMatchObject({ uri: 'demo://resource/session/hello.txt.gz', mimeType: 'application/gzip' });
    const gz = fromBase64(rawResource.blob);
    expect(gz.subarray(0, 2).toString('hex')).toBe('1f8b');

    expect(report.artifacts).toHaveLength(1);
    const ref = report.artifacts[0]!;
    expect(ref).toMatchObject({
      mimeType: 'application/gzip',
      sizeBytes: gz.length,
      sha256: sha256(gz),
      filename: 'hello.txt.gz',
    });
    const stored = await bytesOf(store, ref.id);
    expect(stored.equals(gz)).toBe(true);
    expect(gunzipSync(stored).equals(input)).toBe(true);

    expect(observation.content.some((b) => b.type === 'resource')).toBe(false);
    expect(linkFor(observation.content, ref)).toMatchObject({
      name: 'hello.txt.gz',
      mimeType: 'application/gzip',
      size: gz.length,
    });
    expect(observation.content.find((b) => b.type === 'text' && b.text.includes(ref.id))?.text).toContain(
      'hello.txt.gz',
    );
  });
});

// ---------------------------------------------------------------------------------------------------

describe('server-filesystem over stdio, into the embedded store (SQLite + files)', () => {
  let dir: string;
  let peer: Peer;
  let stderr: () => string = () => '';
  let store: ArtifactStore;
  let puts: () => number = () => 0;
  let byMethod: ReturnType<typeof countingStore>['byMethod'];
  let closeStore: () => Promise<void> = async () => {};
  const files: Record<string, Buffer> = {};

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'mcp-peers-fs-'));
    files['report.pdf'] = await payloads.pdf(12, 'Quarterly Report');
    files['chart.png'] = payloads.png(48 * 1024, 3);
    files['beep.wav'] = payloads.wav(6000);
    for (const [name, bytes] of Object.entries(files)) await writeFile(join(dir, name), bytes);

    const embedded = await embeddedStore(scope);
    ({ store, puts, byMethod } = countingStore(embedded.store));
    closeStore = embedded.close;

    const spawned = stdioPeer('server-filesystem', [dir]);
    stderr = spawned.stderr;
    peer = wrap(plainClient(), store, { serverName: 'filesystem' });
    await connectOrExplain(peer.wrapped, spawned.transport, stderr);
    // As a host does: with the output schemas cached, the SDK checks each raw structuredContent.
    const { tools } = await peer.wrapped.listTools();
    expect(tools.find((t) => t.name === 'read_media_file')?.outputSchema).toBeDefined();
  }, 30_000);

  afterAll(async () => {
    await peer?.wrapped.close();
    await closeStore();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** read_media_file through the wrapped client, with the checks every file shares. */
  async function readMedia(name: string) {
    const file = files[name]!;
    const putsBefore = puts();
    const result = await call(peer, 'read_media_file', { path: join(dir, name) });
    const { observation, raw, report } = result;
    expect(raw.isError, stderr()).toBeFalsy();

    // The server sends the payload twice: in content and again in structuredContent.
    expect(raw.structuredContent?.content).toEqual(raw.content);

    // Stored once (one write to the store, not one per copy), byte-identical.
    expect(puts() - putsBefore).toBe(1);
    expect(report.artifacts).toHaveLength(1);
    expect(uniqueIds(report.artifacts)).toBe(report.artifacts.length);
    const ref = report.artifacts[0]!;
    expect(ref).toMatchObject({
      sizeBytes: file.length,
      sha256: sha256(file),
      namespace: 'filesystem.read_media_file',
    });
    expect(ref.id).toMatch(/^filesystem\.read_media_file_[0-9a-f]{24}$/);
    expect((await bytesOf(store, ref.id)).equals(file)).toBe(true);
    expect(report.stats).toMatchObject({ artifacts: 1, bytesStored: file.length, notStored: 0 });

    // Both copies now point at the one artifact; no base64 is left anywhere.
    expect(artifactLinks(observation.content)).toHaveLength(1);
    expect(linkFor(observation.content, ref)).toMatchObject({ mimeType: ref.mimeType, size: file.length });
    const structured = JSON.stringify(observation.structuredContent);
    expect(structured).toContain(ref.id);
    expect(structured.match(/"artifact":\{"id":"([^"]+)"/g)?.length).toBe(1);
    expect(JSON.stringify(observation)).not.toContain(file.toString('base64').slice(0, 64));

    expect(jsonChars(observation)).toBeLessThan(jsonChars(raw) / 4);
    expect(report.stats.charsBefore).toBe(jsonChars(raw));
    expect(report.stats.charsAfter).toBe(jsonChars(observation));
    return { ...result, ref };
  }

  it('came up with the test directory as its only allowed directory', async () => {
    expect(peer.raw.getServerVersion()?.name, stderr()).toBe('secure-filesystem-server');
    const listed = (await peer.raw.callTool({ name: 'list_allowed_directories', arguments: {} })) as ToolResult;
    expect(listed.content[0]!.text).toContain(dir);
  });

  it('read_media_file on a multi-page PDF: sent as octet-stream, stored as application/pdf', async () => {
    const { observation, raw, ref } = await readMedia('report.pdf');
    expect(raw.content[0]).toMatchObject({
      type: 'resource',
      resource: { mimeType: 'application/octet-stream', uri: expect.stringMatching(/^file:\/\/.*report\.pdf$/) },
    });

    expect(ref).toMatchObject({ mimeType: 'application/pdf', filename: 'report.pdf' });
    expect(ref.source).toMatchObject({
      tool: 'read_media_file',
      server: 'filesystem',
      declaredMimeType: 'application/octet-stream',
    });
    expect(linkFor(observation.content, ref)).toMatchObject({ name: 'report.pdf', mimeType: 'application/pdf' });
    expect(observation.content.some((b) => b.type === 'resource')).toBe(false);
    expect(observation.content.find((b) => b.type === 'text')?.text).toContain('PDF');

    // The service kept what the ref says, and the bytes are still the 12-page document.
    expect(await store.getRef(ref.id)).toMatchObject({
      mimeType: 'application/pdf',
      filename: 'report.pdf',
      scope: { tenantId: 'acme', sessionId: 'peers' },
    });
    const doc = await PDFDocument.load(await bytesOf(store, ref.id));
    expect(doc.getPageCount()).toBe(12);
  });

  it('read_media_file on a PNG: the image block and its structuredContent copy become one artifact', async () => {
    const { observation, ref } = await readMedia('chart.png');
    expect(ref.mimeType).toBe('image/png');
    expect(observation.content.some((b) => b.type === 'image')).toBe(false);
    expect(observation.content.find((b) => b.type === 'text')?.text).toContain(ref.id);
  });

  it('read_media_file on a WAV: the audio block is handled like an image', async () => {
    const { observation, raw, ref } = await readMedia('beep.wav');
    expect(raw.content[0]).toMatchObject({ type: 'audio', mimeType: 'audio/wav' });
    expect(ref.mimeType).toBe('audio/wav');
    expect(observation.content.some((b) => b.type === 'audio')).toBe(false);
    const summary = observation.content.find((b) => b.type === 'text')?.text;
    expect(summary).toContain(ref.id);
    expect(summary).toMatch(/audio/i);
  });

  it('reading the same files again, even concurrently, adds nothing to the store', async () => {
    const names = Object.keys(files);
    const idsOf = (reports: Transformed[]) => reports.map((r) => r.artifacts[0]!.id);
    const first: string[] = [];
    for (const name of names)
      first.push(...idsOf([(await call(peer, 'read_media_file', { path: join(dir, name) })).report]));
    const count = await countStored(store);
    expect(new Set(first).size).toBe(names.length);

    const concurrent = await Promise.all(
      [...names, ...names].map((name) =>
        peer.wrapped.callTool({ name: 'read_media_file', arguments: { path: join(dir, name) } }),
      ),
    );
    const linked = concurrent.map((r) => artifactLinks((r as ToolResult).content).map((l) => l.uri));
    expect(linked).toEqual([...first, ...first].map((id) => [`artifact://${id}`]));
    expect(await countStored(store)).toBe(count);
    for (const id of first) expect(await store.exists(id)).toBe(true);
  });

  it('a 3 MB file over stdio is streamed into the store when it is over streamDecodeAboveBytes', async () => {
    // The SDK's stdio reader holds at most 10 MB per message, and this server sends the base64 twice.
    const big = payloads.png(3 * 1024 * 1024 + 7, 9);
    await writeFile(join(dir, 'big.png'), big);
    const streaming = rewrap(peer, store, {
      serverName: 'filesystem',
      config: { streamDecodeAboveBytes: 1024 * 1024 },
    });
    const streamedBefore = byMethod.putStream;
    const putsBefore = puts();
    const { observation, raw, report } = await call(streaming, 'read_media_file', { path: join(dir, 'big.png') });
    expect(byMethod.putStream - streamedBefore).toBe(1);
    expect(puts() - putsBefore).toBe(1);

    expect(report.artifacts).toHaveLength(1);
    const ref = report.artifacts[0]!;
    expect(ref).toMatchObject({ mimeType: 'image/png', sizeBytes: big.length, sha256: sha256(big) });
    expect((await bytesOf(store, ref.id)).equals(big)).toBe(true);
    expect(report.stats).toMatchObject({ artifacts: 1, bytesStored: big.length });
    expect(jsonChars(raw)).toBeGreaterThan(8_000_000);
    expect(jsonChars(observation)).toBeLessThan(2048);
  });
});

// ---------------------------------------------------------------------------------------------------

describe('the incident: a Tableau-shaped server returning the workbook PDF as base64 inside JSON text', () => {
  const PAGES = 480;
  const WORKBOOK_URI = 'tableau://workbooks/wb-42.pdf';
  let resourceReads = 0;
  let pdf: Buffer;
  let server: McpServer;
  let peer: Peer;
  let store: ArtifactStore;
  let closeStore: () => Promise<void> = async () => {};

  beforeAll(async () => {
    pdf = await payloads.pdf(PAGES, 'Sales Dashboard');
    server = new McpServer({ name: 'tableau-mcp', version: '1.0.0' });
    server.registerResource('workbook-pdf', WORKBOOK_URI, { mimeType: 'application/pdf' }, async (uri) => {
      resourceReads++;
      return { contents: [{ uri: uri.href, mimeType: 'application/pdf', blob: pdf.toString('base64') }] };
    });
    server.registerTool('get_workbook_link', { description: 'Link to the exported workbook' }, async () => ({
      content: [
        {
          type: 'resource_link',
          uri: WORKBOOK_URI,
          name: 'Sales Dashboard.pdf',
          mimeType: 'application/pdf',
          size: pdf.length,
        },
      ],
    }));
    server.registerTool(
      'download_workbook',
      { description: 'Download a workbook as PDF', inputSchema: { workbookId: z.string() } },
      async () => ({
        content: [
          {
            type: 'text',
            text: JSON.stringify({ content: pdf.toString('base64'), name: 'Sales Dashboard', format: 'pdf' }),
          },
        ],
      }),
    );
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);

    const embedded = await embeddedStore(scope);
    store = embedded.store;
    closeStore = embedded.close;
    peer = wrap(plainClient(), store, { serverName: 'tableau' });
    await peer.wrapped.connect(clientSide);
  }, 30_000);

  afterAll(async () => {
    await peer?.wrapped.close();
    await server?.close();
    await closeStore();
  });

  it('the PDF is a real multi-page document of hundreds of KB', async () => {
    expect(pdf.length).toBeGreaterThanOrEqual(200 * 1024);
    expect((await PDFDocument.load(pdf)).getPageCount()).toBe(PAGES);
  });

  it('stores the PDF byte-identical and hands the model a ref + summary under 1 KB', async () => {
    const { observation, raw, report } = await call(peer, 'download_workbook', { workbookId: 'wb-42' });

    const rawChars = jsonChars(raw);
    expect(raw.content).toHaveLength(1);
    expect(rawChars).toBeGreaterThan(200 * 1024);
    expect(JSON.parse(raw.content[0]!.text).content).toBe(pdf.toString('base64'));

    expect(report.artifacts).toHaveLength(1);
    const ref = report.artifacts[0]!;
    expect(ref.id).toMatch(/^tableau\.download_workbook_[0-9a-f]{24}$/);
    expect(ref).toMatchObject({
      mimeType: 'application/pdf',
      sizeBytes: pdf.length,
      sha256: sha256(pdf),
      filename: 'Sales Dashboard.pdf',
      namespace: 'tableau.download_workbook',
    });
    expect(ref.source).toMatchObject({ tool: 'download_workbook', server: 'tableau' });
    const stored = await bytesOf(store, ref.id);
    expect(stored.equals(pdf)).toBe(true);
    expect((await PDFDocument.load(stored)).getPageCount()).toBe(PAGES);

    // One text block still, its JSON keeping the other fields, the payload replaced by the ref.
    expect(observation.content).toHaveLength(1);
    expect(observation.content[0]!.type).toBe('text');
    const doc = JSON.parse(observation.content[0]!.text);
    expect(doc.name).toBe('Sales Dashboard');
    expect(doc.format).toBe('pdf');
    expect(doc.content.artifact).toMatchObject({
      id: ref.id,
      mimeType: 'application/pdf',
      sizeBytes: pdf.length,
      sha256: ref.sha256,
    });
    expect(doc.content.summary).toBe(
      `Downloaded workbook 'Sales Dashboard' as PDF (${formatBytes(pdf.length)}). Artifact ${ref.id}`,
    );

    const observationChars = jsonChars(observation);
    expect(observationChars).toBeLessThan(1024);
    expect(report.stats).toMatchObject({
      charsAfter: observationChars,
      artifacts: 1,
      bytesStored: pdf.length,
      notStored: 0,
    });
    // Strings over 64 Ki chars are counted by length, without their JSON escapes.
    expect(report.stats.charsBefore).toBeGreaterThan(rawChars * 0.99);
    expect(report.stats.charsBefore).toBeLessThanOrEqual(rawChars);
    expect(report.stats.byLayer.fields).toBe(1);
    expect(await store.getRef(ref.id)).toMatchObject({
      mimeType: 'application/pdf',
      filename: 'Sales Dashboard.pdf',
      scope: { tenantId: 'acme', sessionId: 'peers' },
    });
  });

  it('downloading the workbook again yields the same ref and stores nothing new', async () => {
    const first = (await call(peer, 'download_workbook', { workbookId: 'wb-42' })).report.artifacts[0]!;
    const count = await countStored(store);
    const again = (await call(peer, 'download_workbook', { workbookId: 'wb-42' })).report.artifacts[0]!;
    expect(again.id).toBe(first.id);
    expect(await countStored(store)).toBe(count);
  });

  it('a resource_link under the auto-read size is read through the client readResource and stored', async () => {
    const lazyChars = jsonChars((await call(peer, 'get_workbook_link')).observation);
    const readsBefore = resourceReads;
    const eager = rewrap(peer, store, { serverName: 'tableau', config: { autoReadIfSizeUnderBytes: 1024 * 1024 } });
    const { observation, report } = await call(eager, 'get_workbook_link');
    expect(resourceReads).toBe(readsBefore + 1);

    expect(report.artifacts).toHaveLength(1);
    const ref = report.artifacts[0]!;
    expect(ref).toMatchObject({
      mimeType: 'application/pdf',
      sizeBytes: pdf.length,
      filename: 'Sales Dashboard.pdf',
      namespace: 'tableau.get_workbook_link',
    });
    expect(report.stats.byLayer.links).toBe(1);
    expect((await bytesOf(store, ref.id)).equals(pdf)).toBe(true);
    expect(observation.content.some((b) => b.uri === WORKBOOK_URI)).toBe(false);
    expect(linkFor(observation.content, ref)).toMatchObject({
      name: 'Sales Dashboard.pdf',
      mimeType: 'application/pdf',
      size: pdf.length,
    });
    expect(jsonChars(observation)).toBeLessThan(1024);
    expect(lazyChars).toBeLessThan(1024);

    // Over the limit it stays a lazy link and nothing is read.
    const strict = rewrap(peer, store, { serverName: 'tableau', config: { autoReadIfSizeUnderBytes: 1024 } });
    const lazy = await call(strict, 'get_workbook_link');
    expect(resourceReads).toBe(readsBefore + 1);
    expect(lazy.observation.content[0]).toEqual(lazy.raw.content[0]);
    expect(lazy.report.artifacts).toEqual([]);
  });

  it('the rest of the client is untouched: listTools and the unwrapped callTool see the raw server', async () => {
    const { tools } = await peer.wrapped.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['download_workbook', 'get_workbook_link']);
    const raw = (await peer.raw.callTool({
      name: 'download_workbook',
      arguments: { workbookId: 'wb-42' },
    })) as ToolResult;
    expect(JSON.parse(raw.content[0]!.text).content).toBe(pdf.toString('base64'));
  });
});
