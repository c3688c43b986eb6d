import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { createFsBlobStore } from '../src/blob/fs.js';
import type { ArtifactStore } from '../src/client/artifact-store.js';
import { createEmbeddedArtifactStore } from '../src/service/embedded-store.js';
import { createInMemoryArtifactStore } from '../src/client/memory-store.js';
import { createNoOpArtifactStore, NOOP_WARNING } from '../src/client/noop-store.js';
import { formatBytes } from '../src/core/bytes.js';
import { ArtifactError } from '../src/core/errors.js';
import type { ArtifactRef } from '../src/core/schemas.js';
import { createSqliteRepository } from '../src/db/sqlite.js';
import { transformToolResult, type TransformEvent } from '../src/mcp/index.js';
import { createArtifactService } from '../src/service/artifact-service.js';
import * as payloads from './helpers/payloads.js';

const scope = { tenantId: 'acme', sessionId: 's-1' };
const memoryStore = () => createInMemoryArtifactStore({ scope });
const b64 = (b: Buffer) => b.toString('base64');
const textResult = (doc: unknown) => ({ content: [{ type: 'text', text: JSON.stringify(doc) }] });

async function bytesOf(store: ArtifactStore, ref: ArtifactRef): Promise<Buffer> {
  const got = await store.get(ref.id);
  expect(got, `artifact ${ref.id} is readable`).not.toBeNull();
  return Buffer.from(got!);
}

/** The JSON a text block of the result holds. */
const docOf = (result: unknown, block = 0): any => JSON.parse((result as any).content[block].text);

/** Every string in a value, for "no base64 left" checks. */
function longestString(v: unknown): number {
  if (typeof v === 'string') return v.length;
  if (Array.isArray(v)) return Math.max(0, ...v.map(longestString));
  if (v && typeof v === 'object') return Math.max(0, ...Object.values(v).map(longestString));
  return 0;
}

describe('the incident: a base64 PDF inside JSON text (Tableau download_workbook)', () => {
  it('stores the PDF byte-identical and leaves a ref + summary under 1 KB', async () => {
    const store = memoryStore();
    const pdf = await payloads.pdf(8);
    const raw = textResult({ content: b64(pdf), name: 'Sales Dashboard', format: 'pdf' });
    const { result, artifacts, stats } = await transformToolResult('download_workbook', raw, {
      store,
      serverName: 'tableau',
    });

    expect(CallToolResultSchema.safeParse(result).success).toBe(true);
    expect(artifacts).toHaveLength(1);
    const ref = artifacts[0]!;
    expect(ref).toMatchObject({
      mimeType: 'application/pdf',
      sizeBytes: pdf.length,
      filename: 'Sales Dashboard.pdf',
      namespace: 'tableau.download_workbook',
    });
    expect(ref.id).toMatch(/^tableau\.download_workbook_[0-9a-f]{24}$/);
    expect((await bytesOf(store, ref)).equals(pdf)).toBe(true);

    const doc = docOf(result);
    expect(doc.name).toBe('Sales Dashboard');
    expect(doc.format).toBe('pdf');
    expect(doc.content.artifact.id).toBe(ref.id);
    expect(doc.content.summary).toBe(
      `Downloaded workbook 'Sales Dashboard' as PDF (${formatBytes(pdf.length)}). Artifact ${ref.id}`,
    );
    expect(JSON.stringify(result).length).toBeLessThan(1024);
    expect(stats.charsBefore).toBeGreaterThan(pdf.length * 1.3);
    expect(stats.charsAfter).toBe(JSON.stringify(result).length);
    expect(stats.byLayer.fields).toBe(1);
  });

  it('the same at the size of the incident: over a MiB of text, the PDF never goes through JSON.parse', async () => {
    const store = memoryStore();
    // A PDF as file-type knows one (the %PDF- signature), 3 MiB.
    const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(3 * 1024 * 1024), Buffer.from('\n%%EOF\n')]);
    const rows = Array.from({ length: 20 }, (_, i) => ({ region: `r${i}`, sales: i * 10 }));
    const raw = textResult({ rows, content: b64(pdf), name: 'Sales Dashboard', format: 'pdf' });
    const parse = vi.spyOn(JSON, 'parse');
    let out: Awaited<ReturnType<typeof transformToolResult>>;
    let parsed: number[];
    try {
      out = await transformToolResult('download_workbook', raw, { store, serverName: 'tableau' });
      parsed = parse.mock.calls.map((c) => String(c[0]).length);
    } finally {
      parse.mockRestore();
    }
    // The block's text was parsed, without the 4 MiB literal.
    expect(parsed).toHaveLength(1);
    expect(parsed[0]).toBeLessThan(100 * 1024);
    expect(out.artifacts).toHaveLength(1);
    const ref = out.artifacts[0]!;
    expect(ref).toMatchObject({ mimeType: 'application/pdf', sizeBytes: pdf.length, filename: 'Sales Dashboard.pdf' });
    expect((await bytesOf(store, ref)).equals(pdf)).toBe(true);
    const doc = docOf(out.result);
    expect(doc.content.artifact.id).toBe(ref.id);
    expect(doc.rows).toEqual(rows);
    expect(doc.name).toBe('Sales Dashboard');
  });

  it('finds the same payload by magic bytes with no preset (the heuristic)', async () => {
    const store = memoryStore();
    const pdf = await payloads.pdf(2);
    const { result, artifacts } = await transformToolResult(
      'export_report',
      textResult({ report: { file: b64(pdf), title: 'Q3' } }),
      { store, config: { presets: 'none' } },
    );
    expect(artifacts).toHaveLength(1);
    expect(artifacts[0]!.mimeType).toBe('application/pdf');
    expect(artifacts[0]!.namespace).toBe('export_report');
    const doc = docOf(result);
    expect(doc.report.title).toBe('Q3');
    expect(doc.report.file.artifact.id).toBe(artifacts[0]!.id);
    expect(doc.report.file.summary).toContain('PDF');
    expect(doc.report.file.summary).toContain('report.file');
  });
});

describe('the custom transform', () => {
  it('has the last word when it returns a value: no other layer runs', async () => {
    const store = memoryStore();
    const pdf = await payloads.pdf(1);
    const custom = vi.fn(async (_tool: string, _raw: unknown, ctx: { store: ArtifactStore }) => {
      const ref = await ctx.store.putBytes(pdf, { mimeType: 'application/pdf', filename: 'mine.pdf' });
      return { mine: ref.id, untouched: b64(pdf) };
    });
    const { result, artifacts, stats } = await transformToolResult(
      'download_workbook',
      textResult({ content: b64(pdf) }),
      { store, transform: custom },
    );
    expect(custom).toHaveBeenCalledOnce();
    expect(artifacts).toHaveLength(1);
    expect(artifacts[0]!.filename).toBe('mine.pdf');
    expect(artifacts[0]!.namespace).toBe('download_workbook');
    expect((result as any).untouched).toBe(b64(pdf));
    expect(stats.byLayer.custom).toBe(1);
  });

  it('lets the layers run when it returns undefined (sync or async)', async () => {
    for (const transform of [() => undefined, async () => undefined]) {
      const { artifacts } = await transformToolResult('t', textResult({ image: b64(payloads.png()) }), {
        store: memoryStore(),
        transform,
      });
      expect(artifacts.map((a) => a.mimeType)).toEqual(['image/png']);
    }
  });
});

describe('per-tool fields', () => {
  it('follows [*] paths and fills templates from sibling fields', async () => {
    const store = memoryStore();
    const files = [payloads.png(600, 1), payloads.png(600, 2)];
    const raw = { files: files.map((f, i) => ({ name: `chart-${i}`, data: f.toString('base64'), small: 'x' })) };
    const { result, artifacts } = await transformToolResult('render', raw, {
      store,
      config: {
        tools: {
          render: {
            fields: [
              {
                path: 'files[*].data',
                mimeType: 'image/png',
                filename: '{name}.png',
                summary: 'Chart {name}: {mime_type}, {size_human}, {artifact_id}',
              },
            ],
          },
        },
      },
    });
    expect(artifacts.map((a) => a.filename)).toEqual(['chart-0.png', 'chart-1.png']);
    const out = result as any;
    expect(out.files[1].name).toBe('chart-1');
    expect(out.files[1].small).toBe('x');
    expect(out.files[1].data.summary).toBe(`Chart chart-1: image/png, ${files[1]!.length} B, ${artifacts[1]!.id}`);
    for (let i = 0; i < 2; i++) expect((await bytesOf(store, artifacts[i]!)).equals(files[i]!)).toBe(true);
  });

  it('stores a configured field even below the heuristic minimum, and falls back to the default summary when a placeholder is missing', async () => {
    const { result, artifacts } = await transformToolResult(
      't',
      { blob: b64(payloads.GIF_1X1) },
      { store: memoryStore(), config: { tools: { t: { fields: [{ path: 'blob', summary: 'Got {missing}' }] } } } },
    );
    expect(artifacts).toHaveLength(1);
    expect((result as any).blob.summary).toMatch(
      /^GIF image \(43 B\) from t \(blob\), stored as artifact t_[0-9a-f]{24}\.$/,
    );
  });

  it('applies `when` only to matching siblings and leaves non-base64 fields alone', async () => {
    const store = memoryStore();
    const spec = {
      tools: { get: { fields: [{ path: 'content', when: { encoding: 'base64' } }] } },
      presets: 'none' as const,
    };
    const plain = await transformToolResult(
      'get',
      { content: 'hello world', encoding: 'utf-8' },
      { store, config: spec },
    );
    expect(plain.result).toEqual({ content: 'hello world', encoding: 'utf-8' });
    const notBase64 = await transformToolResult(
      'get',
      { content: 'just some text!', encoding: 'base64' },
      { store, config: spec },
    );
    expect((notBase64.result as any).content).toBe('just some text!');
    expect(plain.artifacts).toEqual([]);
  });

  it('refuses a config with a bad path or limit, naming it', async () => {
    await expect(
      transformToolResult('t', {}, { config: { tools: { t: { fields: [{ path: 'a..b' }] } } } }),
    ).rejects.toThrow(/tools\.t: Invalid field path "a\.\.b"/);
    await expect(transformToolResult('t', {}, { config: { maxInlineChars: -1 } })).rejects.toThrow(/maxInlineChars/);
  });

  it('refuses an unknown key by name, suggesting the closest known one, at any depth', async () => {
    // Before, a misspelt key was accepted and silently ignored.
    await expect(transformToolResult('t', {}, { config: { maxInlineChar: 5 } as never })).rejects.toThrow(
      'Invalid transform config at (root): unknown key "maxInlineChar". Did you mean "maxInlineChars"?',
    );
    await expect(
      transformToolResult(
        't',
        {},
        { config: { tools: { t: { fields: [{ path: 'a', mimetype: 'application/pdf' }] } } } as never },
      ),
    ).rejects.toThrow(/at tools\.t\.fields\.0: unknown key "mimetype"\. Did you mean "mimeType"\?/);
    await expect(
      transformToolResult('t', {}, { config: { tools: { t: { blocks: { sumary: 'x' } } } } as never }),
    ).rejects.toThrow(/unknown key "sumary"\. Did you mean "summary"\?/);
    await expect(transformToolResult('t', {}, { config: { zzzqqq: 1 } as never })).rejects.toThrow(
      /unknown key "zzzqqq"\.$/,
    );
  });
});

describe('resource links', () => {
  const link = {
    type: 'resource_link',
    uri: 'file:///reports/q3.pdf',
    name: 'q3.pdf',
    mimeType: 'application/pdf',
    size: 52_000,
  };

  it('keeps the link lazy, with a hint, by default', async () => {
    const readResource = vi.fn();
    const { result, artifacts } = await transformToolResult(
      'list',
      { content: [link] },
      { store: memoryStore(), readResource },
    );
    expect(readResource).not.toHaveBeenCalled();
    expect(artifacts).toEqual([]);
    const content = (result as any).content;
    expect(content[0]).toEqual(link);
    expect(content[1].text).toContain("Resource 'q3.pdf' (PDF, 51 KiB) is available at file:///reports/q3.pdf");
    expect(content[1].text).toContain('resources/read');
  });

  it('reads and stores it when the size policy allows and a reader is given', async () => {
    const store = memoryStore();
    const pdf = await payloads.pdf(1);
    const readResource = vi.fn(async (uri: string) => ({
      contents: [{ uri, mimeType: 'application/pdf', blob: b64(pdf) }],
    }));
    const { result, artifacts } = await transformToolResult(
      'list',
      { content: [link] },
      { store, readResource, config: { autoReadIfSizeUnderBytes: 100_000 } },
    );
    expect(readResource).toHaveBeenCalledWith('file:///reports/q3.pdf');
    expect(artifacts).toHaveLength(1);
    expect((await bytesOf(store, artifacts[0]!)).equals(pdf)).toBe(true);
    expect((result as any).content.at(-1)).toMatchObject({
      type: 'resource_link',
      uri: `artifact://${artifacts[0]!.id}`,
    });
    // Over the policy: not read.
    const big = await transformToolResult(
      'list',
      { content: [{ ...link, size: 200_000 }] },
      { store, readResource, config: { autoReadIfSizeUnderBytes: 100_000 } },
    );
    expect(readResource).toHaveBeenCalledTimes(1);
    expect(big.artifacts).toEqual([]);
  });

  it('keeps the link and says why when the read fails', async () => {
    const readResource = vi.fn(async () => {
      throw new Error('Resource not found');
    });
    const { result, stats } = await transformToolResult(
      'list',
      { content: [link] },
      { store: memoryStore(), readResource, config: { autoReadIfSizeUnderBytes: 100_000 } },
    );
    expect((result as any).content[0]).toEqual(link);
    expect((result as any).content[1].text).toContain('Reading it failed (Resource not found)');
    expect(stats.warnings.join()).toContain('auto-read');
  });
});

describe('typed blocks', () => {
  it('stores image, audio and embedded blobs; each becomes a summary and a link', async () => {
    const store = memoryStore();
    const png = payloads.png(300);
    const wav = payloads.wav();
    const xlsx = payloads.xlsx();
    const raw = {
      content: [
        { type: 'text', text: 'Here you go' },
        { type: 'image', data: b64(png), mimeType: 'image/png' },
        { type: 'audio', data: b64(wav), mimeType: 'audio/wav' },
        {
          type: 'resource',
          resource: {
            uri: 'repo://acme/app/contents/data/q3.xlsx',
            mimeType: 'application/octet-stream',
            blob: b64(xlsx),
          },
        },
      ],
    };
    const { result, artifacts } = await transformToolResult('mixed', raw, { store });
    expect(CallToolResultSchema.safeParse(result).success).toBe(true);
    expect(artifacts.map((a) => a.mimeType)).toEqual([
      'image/png',
      'audio/wav',
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    ]);
    expect(artifacts[2]!.filename).toBe('q3.xlsx');
    expect(artifacts[2]!.source).toMatchObject({ tool: 'mixed', declaredMimeType: 'application/octet-stream' });
    const content = (result as any).content;
    expect(content.map((b: any) => b.type)).toEqual([
      'text',
      'text',
      'resource_link',
      'text',
      'resource_link',
      'text',
      'resource_link',
    ]);
    expect(content[1].text).toBe(`PNG image (${png.length} B) from mixed, stored as artifact ${artifacts[0]!.id}.`);
    expect(content[5].text).toBe(
      `Excel workbook 'q3.xlsx' (${formatBytes(xlsx.length)}) from mixed, stored as artifact ${artifacts[2]!.id}.`,
    );
    expect(content[2]).toEqual({
      type: 'resource_link',
      uri: `artifact://${artifacts[0]!.id}`,
      name: 'mixed.png',
      mimeType: 'image/png',
      size: png.length,
    });
    for (const [i, bytes] of [png, wav, xlsx].entries())
      expect((await bytesOf(store, artifacts[i]!)).equals(bytes)).toBe(true);
  });

  it('keeps a small text resource inline and stores a large one as text', async () => {
    const store = memoryStore();
    const small = { type: 'resource', resource: { uri: 'mem://a', mimeType: 'text/markdown', text: '# Title' } };
    const long = 'line of the log\n'.repeat(2000);
    const large = { type: 'resource', resource: { uri: 'mem://log.txt', mimeType: 'text/plain', text: long } };
    const { result, artifacts } = await transformToolResult('read', { content: [small, large] }, { store });
    const content = (result as any).content;
    expect(content[0]).toEqual(small);
    expect(artifacts).toHaveLength(1);
    expect(artifacts[0]).toMatchObject({ mimeType: 'text/plain', sizeBytes: long.length, filename: 'log.txt' });
    expect(content[1].text).toContain('Preview:\nline of the log');
    expect(content[2].uri).toBe(`artifact://${artifacts[0]!.id}`);
    expect((await bytesOf(store, artifacts[0]!)).toString()).toBe(long);
  });

  it('trusts magic bytes over a wrong declared type, and keeps the declared one in the source', async () => {
    const { artifacts } = await transformToolResult(
      'shot',
      { content: [{ type: 'image', data: b64(payloads.jpeg()), mimeType: 'image/png' }] },
      { store: memoryStore() },
    );
    expect(artifacts[0]!.mimeType).toBe('image/jpeg');
    expect(artifacts[0]!.source).toMatchObject({ declaredMimeType: 'image/png' });
  });
});

describe('the heuristic', () => {
  const formats: [string, () => Promise<Buffer> | Buffer, string][] = [
    ['PDF', () => payloads.pdf(1), 'application/pdf'],
    ['PNG', () => payloads.png(400), 'image/png'],
    ['JPEG', () => payloads.jpeg(), 'image/jpeg'],
    ['GIF', () => Buffer.concat([payloads.GIF_1X1, Buffer.alloc(300)]), 'image/gif'],
    ['WebP', () => Buffer.concat([payloads.WEBP_1X1, Buffer.alloc(300)]), 'image/webp'],
    ['ZIP', () => payloads.zip({ 'a.txt': 'a'.repeat(300) }), 'application/zip'],
    ['XLSX', () => payloads.xlsx(), 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'],
    ['MP3 (ID3)', () => payloads.mp3(), 'audio/mpeg'],
    ['MP3 (frames only)', () => payloads.mp3(8, false), 'audio/mpeg'],
    ['WAV', () => payloads.wav(), 'audio/wav'],
    ['OGG', () => payloads.ogg(), 'audio/ogg'],
    ['MP4', () => payloads.mp4(), 'video/mp4'],
  ];
  for (const [name, make, mime] of formats) {
    it(`finds ${name} in JSON, structuredContent and a bare text block`, async () => {
      const store = memoryStore();
      const bytes = await make();
      const raw = {
        content: [
          { type: 'text', text: JSON.stringify({ deep: { list: [{ payload: b64(bytes) }] } }) },
          { type: 'text', text: payloads.wrapped60(bytes) },
        ],
        structuredContent: { file: payloads.base64url(bytes) },
      };
      const { result, artifacts } = await transformToolResult('tool', raw, { store });
      expect(artifacts.map((a) => a.mimeType)).toEqual([mime]);
      expect((await bytesOf(store, artifacts[0]!)).equals(bytes)).toBe(true);
      expect(docOf(result).deep.list[0].payload.artifact.id).toBe(artifacts[0]!.id);
      expect((result as any).structuredContent.file.artifact.id).toBe(artifacts[0]!.id);
      expect((result as any).content[2].uri).toBe(`artifact://${artifacts[0]!.id}`);
    });
  }

  it('takes data: URLs, base64url and unpadded base64', async () => {
    const store = memoryStore();
    const a = payloads.png(500, 1);
    const b = payloads.png(500, 2);
    const c = payloads.png(500, 3);
    const raw = { a: payloads.dataUrl(a, 'image/png'), b: payloads.base64url(b), c: b64(c).replace(/=+$/, '') };
    const { artifacts } = await transformToolResult('t', raw, { store });
    expect(artifacts).toHaveLength(3);
    for (const [i, bytes] of [a, b, c].entries())
      expect((await bytesOf(store, artifacts[i]!)).equals(bytes)).toBe(true);
  });

  it('stores a base64 data: URL of text under its declared type (an explicit encoding, not a guess)', async () => {
    const csv = Buffer.from('region,units\n'.repeat(60));
    const { artifacts } = await transformToolResult(
      't',
      { export: payloads.dataUrl(csv, 'text/csv') },
      { store: memoryStore() },
    );
    expect(artifacts[0]).toMatchObject({ mimeType: 'text/csv', sizeBytes: csv.length });
  });

  it('leaves look-alikes alone: hex digests, JWTs, long words, base64 of plain text', async () => {
    const hex = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'.repeat(8);
    const jwt = `eyJhbGciOiJIUzI1NiJ9.${Buffer.from(JSON.stringify({ sub: 'x'.repeat(400) })).toString('base64url')}.c2lnbmF0dXJl`;
    const word = 'Pneumonoultramicroscopicsilicovolcanoconiosis'.repeat(10);
    const text = Buffer.from('The quick brown fox jumps over the lazy dog. '.repeat(20)).toString('base64');
    const raw = { hex, jwt, word, text, sha: hex.slice(0, 64) };
    const { result, artifacts } = await transformToolResult('t', raw, { store: memoryStore() });
    expect(artifacts).toEqual([]);
    expect(result).toEqual(raw);
  });

  it('stores raw bytes a native tool returns', async () => {
    const store = memoryStore();
    const png = payloads.png(100);
    const { result, artifacts } = await transformToolResult(
      'native',
      { shot: new Uint8Array(png), name: 'home.png' },
      { store },
    );
    expect(artifacts[0]).toMatchObject({ mimeType: 'image/png', filename: 'home.png' });
    expect((result as any).shot.artifact.id).toBe(artifacts[0]!.id);
  });
});

describe('the size net', () => {
  it('stores long text blocks with a preview and a link', async () => {
    const store = memoryStore();
    const log = Array.from({ length: 3000 }, (_, i) => `${i}: GET /api/items 200`).join('\n');
    const { result, artifacts } = await transformToolResult(
      'logs',
      { content: [{ type: 'text', text: log }] },
      { store },
    );
    expect(artifacts[0]).toMatchObject({ mimeType: 'text/plain; charset=utf-8', sizeBytes: log.length });
    const content = (result as any).content;
    expect(content[0].text).toMatch(
      /^Large text \([\d,]+ chars, [\d.]+ KiB\) from logs, stored as artifact logs_[0-9a-f]{24}\.\n\nPreview:\n0: GET/,
    );
    expect(content[0].text.length).toBeLessThan(1000);
    expect(content[1].uri).toBe(`artifact://${artifacts[0]!.id}`);
    expect((await bytesOf(store, artifacts[0]!)).toString()).toBe(log);
  });

  it('stores only the oversized subtree and keeps the small fields beside it', async () => {
    const store = memoryStore();
    const rows = Array.from({ length: 2000 }, (_, i) => ({ id: i, region: `r${i % 7}`, units: i * 3 }));
    const raw = { status: 'ok', query: 'select *', rowCount: rows.length, rows };
    const { result, artifacts } = await transformToolResult('sql', raw, { store });
    const out = result as any;
    expect(out).toMatchObject({ status: 'ok', query: 'select *', rowCount: 2000 });
    expect(out.rows.summary).toContain('JSON array of 2,000 items');
    expect(out.rows.preview.slice(0, 3)).toEqual(rows.slice(0, 3));
    expect(artifacts[0]!.mimeType).toBe('application/json');
    expect(JSON.parse((await bytesOf(store, artifacts[0]!)).toString())).toEqual(rows);
    expect(JSON.stringify(out).length).toBeLessThan(3000);
  });

  it('stores a whole object made of many medium fields', async () => {
    const raw = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`field${i}`, 'y'.repeat(500)]));
    const { result, artifacts } = await transformToolResult('wide', raw, { store: memoryStore() });
    expect(artifacts).toHaveLength(1);
    expect((result as any).summary).toContain('JSON object with 40 keys');
    expect(longestString(result)).toBeLessThanOrEqual(500);
  });
});

describe('results', () => {
  it('keep isError, _meta and every small field, and stay JSON-safe', async () => {
    const raw = {
      isError: true,
      _meta: { trace: 't-1' },
      content: [{ type: 'text', text: JSON.stringify({ error: 'quota', image: b64(payloads.png(500)) }) }],
    };
    const { result } = await transformToolResult('t', raw, { store: memoryStore() });
    expect((result as any).isError).toBe(true);
    expect((result as any)._meta).toEqual({ trace: 't-1' });
    expect(docOf(result).error).toBe('quota');
    expect(JSON.parse(JSON.stringify(result))).toEqual(result);
  });

  it('store bytes found in content and structuredContent once, and reference them twice', async () => {
    const store = memoryStore();
    const putBytes = vi.spyOn(store, 'putBytes');
    const structured = { chart: b64(payloads.png(800)), title: 'Revenue' };
    const raw = { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
    const { result, artifacts } = await transformToolResult('chart', raw, { store });
    expect(artifacts).toHaveLength(1);
    expect(putBytes).toHaveBeenCalledTimes(1);
    expect(docOf(result).chart.artifact.id).toBe(artifacts[0]!.id);
    expect((result as any).structuredContent.chart.artifact.id).toBe(artifacts[0]!.id);
  });

  it('list one artifact, as the store describes it, when the same bytes reach two layers as different strings', async () => {
    const store = memoryStore();
    const svg = `<svg xmlns="http://www.w3.org/2000/svg">${'<rect x="1" y="2" width="3" height="4"/>'.repeat(400)}</svg>`;
    const raw = {
      content: [
        { type: 'text', text: svg },
        { type: 'image', data: Buffer.from(svg).toString('base64'), mimeType: 'image/svg+xml' },
      ],
    };
    const { artifacts } = await transformToolResult('get-view-image', raw, { store, serverName: 'tableau' });
    expect(artifacts).toHaveLength(1);
    const held = await store.getRef(artifacts[0]!.id);
    expect(artifacts[0]).toMatchObject({ mimeType: held!.mimeType, filename: held!.filename });
  });

  it('do not change the caller’s object', async () => {
    const raw = { content: [{ type: 'image', data: b64(payloads.png(300)), mimeType: 'image/png' }] };
    const copy = structuredClone(raw);
    await transformToolResult('t', raw, { store: memoryStore() });
    expect(raw).toEqual(copy);
  });

  it('emit artifact.stored once per artifact', async () => {
    const events: TransformEvent[] = [];
    const png = b64(payloads.png(700));
    await transformToolResult(
      't',
      { a: png, b: png, c: b64(payloads.wav()) },
      { store: memoryStore(), onEvent: (e) => events.push(e) },
    );
    expect(events.map((e) => [e.type, e.ref.mimeType, e.layer])).toEqual([
      ['artifact.stored', 'image/png', 'heuristic'],
      ['artifact.stored', 'audio/wav', 'heuristic'],
    ]);
  });
});

describe('bytes are never truncated silently', () => {
  it('says in the observation when a payload is over maxArtifactBytes, and stores nothing', async () => {
    const store = memoryStore();
    const putBytes = vi.spyOn(store, 'putBytes');
    const pdf = await payloads.pdf(4);
    const { result, artifacts, stats } = await transformToolResult(
      'download_workbook',
      textResult({ content: b64(pdf), name: 'Big' }),
      { store, config: { maxArtifactBytes: 1000 } },
    );
    expect(artifacts).toEqual([]);
    expect(putBytes).not.toHaveBeenCalled();
    const field = docOf(result).content;
    expect(field).toMatchObject({
      error: 'too_large',
      sizeBytes: pdf.length,
      limitBytes: 1000,
      mimeType: 'application/pdf',
    });
    expect(field.summary).toContain('was not stored: it is over the 1000 B artifact limit');
    expect(stats.notStored).toBe(1);
  });

  it('reports a store refusal (quota) in the observation', async () => {
    const store = memoryStore();
    vi.spyOn(store, 'putBytes').mockRejectedValue(
      new ArtifactError('quota_exceeded', 'Session s-1 is at its 500 MiB limit; delete artifacts or raise the limit.', {
        details: {},
      }),
    );
    const { result } = await transformToolResult(
      't',
      { content: [{ type: 'image', data: b64(payloads.png(300)), mimeType: 'image/png' }] },
      { store },
    );
    expect((result as any).content[0].text).toContain('was not stored: Session s-1 is at its 500 MiB limit');
  });

  it('fails the call when the store is down, rather than dropping the payload', async () => {
    const store = memoryStore();
    vi.spyOn(store, 'putBytes').mockRejectedValue(
      new ArtifactError('backend_unavailable', 'S3 is down', { retryAfter: 1 }),
    );
    await expect(
      transformToolResult(
        't',
        { content: [{ type: 'image', data: b64(payloads.png(300)), mimeType: 'image/png' }] },
        { store },
      ),
    ).rejects.toMatchObject({ code: 'backend_unavailable' });
  });

  it('marks corrupt base64 clearly instead of passing garbage on', async () => {
    const store = memoryStore();
    const good = b64(payloads.png(600));
    const cases = {
      content: [
        { type: 'image', data: `${good.slice(0, 100)}!!${good.slice(102)}`, mimeType: 'image/png' },
        { type: 'image', data: good.slice(0, 601), mimeType: 'image/png' },
      ],
      structuredContent: { url: `data:image/png;base64,${good.slice(0, 50)}$$$${good.slice(53)}` },
    };
    const { result, artifacts } = await transformToolResult('t', cases, { store });
    expect(artifacts).toEqual([]);
    const content = (result as any).content;
    expect(content[0].text).toContain('could not be decoded: it holds characters outside the base64 alphabet');
    expect(content[1].text).toMatch(
      /could not be decoded: its length \(\d+ characters\) is impossible for base64; the payload looks truncated/,
    );
    expect((result as any).structuredContent.url).toMatchObject({ error: 'corrupt_base64' });
  });

  it('stores a truncated PNG exactly as the tool sent it', async () => {
    const store = memoryStore();
    const cut = payloads.png(2000).subarray(0, 999); // 999 bytes: base64 with padding, header intact
    const { artifacts } = await transformToolResult(
      't',
      { content: [{ type: 'image', data: b64(cut), mimeType: 'image/png' }] },
      { store },
    );
    expect((await bytesOf(store, artifacts[0]!)).equals(cut)).toBe(true);
  });

  it('streams large payloads into the store, whole and byte-identical', async () => {
    const store = memoryStore();
    const putStream = vi.spyOn(store, 'putStream');
    const pdf = Buffer.concat([await payloads.pdf(3), Buffer.alloc(3 * 1024 * 1024 + 17, 7)]);
    const { artifacts } = await transformToolResult(
      't',
      { file: b64(pdf) },
      { store, config: { streamDecodeAboveBytes: 1024 * 1024 } },
    );
    expect(putStream).toHaveBeenCalledOnce();
    expect((await bytesOf(store, artifacts[0]!)).equals(pdf)).toBe(true);
  });

  it('stores nothing when a streamed payload turns out corrupt half-way', async () => {
    const store = memoryStore();
    const good = b64(Buffer.concat([await payloads.pdf(1), Buffer.alloc(3 * 1024 * 1024, 1)]));
    const bad = `${good.slice(0, 2_000_000)}*${good.slice(2_000_001)}`;
    const { result, artifacts } = await transformToolResult(
      't',
      { file: bad },
      { store, config: { streamDecodeAboveBytes: 1024 * 1024 } },
    );
    expect(artifacts).toEqual([]);
    expect((result as any).file.error).toBe('corrupt_base64');
    expect((await store.list()).items).toEqual([]);
  });
});

describe('odd input never throws', () => {
  it('handles depth 1000', async () => {
    let deep: any = { payload: b64(payloads.png(400)) };
    for (let i = 0; i < 1000; i++) deep = { next: deep };
    const { result, stats } = await transformToolResult('deep', deep, { store: memoryStore() });
    expect(JSON.parse(JSON.stringify(result))).toEqual(result);
    expect(stats.warnings.some((w) => w.includes('deeper than 1000'))).toBe(true);
    // Within the limit, payloads deep down are still found.
    let ok: any = { payload: b64(payloads.png(400)) };
    for (let i = 0; i < 500; i++) ok = { next: ok };
    expect((await transformToolResult('deep', ok, { store: memoryStore() })).artifacts).toHaveLength(1);
  });

  it('handles a JSON text block nested deeper than the limit', async () => {
    const text = '['.repeat(3000) + ']'.repeat(3000);
    const { result } = await transformToolResult(
      'deep',
      { content: [{ type: 'text', text }] },
      { store: memoryStore() },
    );
    expect(() => JSON.stringify(result)).not.toThrow();
  });

  it('handles cycles, BigInt, Dates, Maps and functions from native tools', async () => {
    const node: any = {
      name: 'root',
      when: new Date(0),
      big: 12345678901234567890n,
      fn: () => 1,
      map: new Map([['k', 1]]),
      set: new Set([1, 2]),
    };
    node.self = node;
    node.children = [node];
    const { result, stats } = await transformToolResult('native', node, { store: memoryStore() });
    expect(result).toEqual({
      name: 'root',
      when: '1970-01-01T00:00:00.000Z',
      big: '12345678901234567890',
      map: { k: 1 },
      set: [1, 2],
      self: '[Circular reference]',
      children: ['[Circular reference]'],
    });
    expect(stats.warnings[0]).toContain('circular');
  });
});

describe('with a NoOp store', () => {
  it('warns once, marks refs as not stored and links nothing', async () => {
    const warn = vi.fn();
    const store = createNoOpArtifactStore({ warn });
    const raw = { content: [{ type: 'image', data: b64(payloads.png(300)), mimeType: 'image/png' }] };
    const first = await transformToolResult('t', raw, { store });
    await transformToolResult('t', raw, { store });
    expect(warn).toHaveBeenCalledExactlyOnceWith(NOOP_WARNING);
    expect(first.artifacts[0]!.source).toMatchObject({ truncated: true });
    const content = (first.result as any).content;
    expect(content).toHaveLength(1);
    expect(content[0].text).toContain('Not stored: no artifact store is configured');
    expect(first.stats.bytesStored).toBe(0);
  });
});

describe('the ref the model sees', () => {
  it('is the compact, LLM-safe subset, and the same on every call for the same bytes', async () => {
    const store = memoryStore();
    const pdf = await payloads.pdf(2);
    const raw = textResult({ content: b64(pdf), name: 'Sales' });
    const first = await transformToolResult('download_workbook', raw, { store, serverName: 'tableau' });
    await new Promise((r) => setTimeout(r, 5));
    const second = await transformToolResult('download_workbook', raw, { store, serverName: 'tableau' });
    const seen = docOf(first.result).content.artifact;
    expect(Object.keys(seen).sort()).toEqual(['filename', 'id', 'mimeType', 'sha256', 'sizeBytes', 'source']);
    expect(seen).toMatchObject({
      id: first.artifacts[0]!.id,
      sha256: first.artifacts[0]!.sha256,
      sizeBytes: pdf.length,
    });
    // The full ref, with scope and timestamps, is in `artifacts`; the observation does not change between calls.
    expect(first.artifacts[0]!.createdAt).toBeDefined();
    expect(JSON.stringify(second.result)).toBe(JSON.stringify(first.result));
  });

  it('says stored: false when a NoOp store kept nothing', async () => {
    const store = createNoOpArtifactStore({ warn: () => {} });
    const { result } = await transformToolResult(
      'download_workbook',
      textResult({ content: b64(await payloads.pdf(1)), name: 'Sales' }),
      { store, serverName: 'tableau' },
    );
    const field = docOf(result).content;
    expect(field.artifact.stored).toBe(false);
    expect(field.summary).toContain('Not stored');
  });
});

describe('works with every ArtifactStore', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('stores through the embedded store (SQLite + files) the same way', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mcp-embedded-'));
    dirs.push(dir);
    const repo = createSqliteRepository({ path: join(dir, 'a.db') });
    const blobs = createFsBlobStore({ root: join(dir, 'blobs'), fsync: false });
    const service = createArtifactService({
      repo,
      blobs,
      limits: { maxArtifactBytes: 1 << 24, defaultTtlSeconds: 3600, maxTtlSeconds: 7200, touchFlushMs: 0 },
    });
    const store = createEmbeddedArtifactStore({ service, scope });
    const pdf = await payloads.pdf(2);
    const { artifacts } = await transformToolResult(
      'download_workbook',
      textResult({ content: b64(pdf), name: 'Sales' }),
      { store, serverName: 'tableau', config: { ttlSeconds: 600 } },
    );
    expect((await bytesOf(store, artifacts[0]!)).equals(pdf)).toBe(true);
    const ref = await store.getRef(artifacts[0]!.id);
    expect(ref).toMatchObject({
      filename: 'Sales.pdf',
      scope: { tenantId: 'acme', sessionId: 's-1' },
      source: { tool: 'download_workbook', server: 'tableau' },
    });
    expect(Date.parse(ref!.expiresAt!) - Date.parse(ref!.createdAt)).toBe(600_000);
    await service.close();
    await repo.close();
  });
});
