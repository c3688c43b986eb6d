/**
 * One fixture per real output shape of the servers the presets cover; src/mcp/presets.ts names the
 * source of each. Payloads are real files (test/helpers/payloads.ts), so every artifact is checked
 * byte for byte.
 */
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it, vi } from 'vitest';
import type { ArtifactStore } from '../src/client/artifact-store.js';
import { createInMemoryArtifactStore } from '../src/client/memory-store.js';
import type { ArtifactRef } from '../src/core/schemas.js';
import { formatBytes } from '../src/core/bytes.js';
import { ToolSpecSchema } from '../src/mcp/config.js';
import { transformToolResult, type TransformResult } from '../src/mcp/index.js';
import { parseFieldPath } from '../src/mcp/paths.js';
import { PRESETS } from '../src/mcp/presets.js';
import * as images from './helpers/images.js';
import * as payloads from './helpers/payloads.js';

const scope = { tenantId: 'acme', sessionId: 's-1' };
const memoryStore = () => createInMemoryArtifactStore({ scope });
const b64 = (b: Buffer) => b.toString('base64');
const textResult = (doc: unknown) => ({ content: [{ type: 'text', text: JSON.stringify(doc) }] });
const ID = /^[a-z0-9._-]+_[0-9a-f]{24}$/;

async function bytesOf(store: ArtifactStore, ref: ArtifactRef): Promise<Buffer> {
  const got = await store.get(ref.id);
  expect(got, `artifact ${ref.id} is readable`).not.toBeNull();
  return Buffer.from(got!);
}

/** The JSON a text block of the result holds. */
const docOf = (result: unknown, block = 0): any => JSON.parse((result as any).content[block].text);
const contentOf = (run: TransformResult): any[] => (run.result as any).content;

const summaryOf = (text: string, _label: string): string => text;

/** Valid for MCP, and much smaller than what the server sent. */
function expectModelSafe(run: TransformResult, maxChars = 1500): void {
  const parsed = CallToolResultSchema.safeParse(run.result);
  expect(parsed.success, parsed.success ? '' : parsed.error.message).toBe(true);
  const chars = JSON.stringify(run.result).length;
  expect(chars).toBeLessThan(maxChars);
  expect(run.stats.charsAfter).toBe(chars);
  expect(run.stats.charsAfter).toBeLessThan(run.stats.charsBefore / 4);
}

/** The summary text and the artifact link that replace one payload block. */
function expectStoredBlock(blocks: any[], at: number, ref: ArtifactRef, summary: string | RegExp): void {
  expect(blocks[at]).toEqual({
    type: 'text',
    text: typeof summary === 'string' ? summary : expect.stringMatching(summary),
  });
  expect(blocks[at + 1]).toEqual({
    type: 'resource_link',
    uri: `artifact://${ref.id}`,
    name: ref.filename,
    mimeType: ref.mimeType,
    size: ref.sizeBytes,
  });
}

describe('tableau', () => {
  it('download_workbook (the incident, RFC Appendix B): the base64 PDF in `content` becomes a named PDF artifact', async () => {
    const store = memoryStore();
    const pdf = await payloads.pdf(8, 'Sales Dashboard');
    const raw = textResult({ content: b64(pdf), name: 'Sales Dashboard', format: 'pdf' });
    const run = await transformToolResult('download_workbook', raw, { store, serverName: 'tableau' });

    expectModelSafe(run, 1024);
    const [ref] = run.artifacts;
    expect(run.artifacts).toHaveLength(1);
    expect(ref).toMatchObject({
      mimeType: 'application/pdf',
      sizeBytes: pdf.length,
      filename: 'Sales Dashboard.pdf',
      namespace: 'tableau.download_workbook',
    });
    expect(ref!.id).toMatch(/^tableau\.download_workbook_[0-9a-f]{24}$/);
    expect((await bytesOf(store, ref!)).equals(pdf)).toBe(true);
    const doc = docOf(run.result);
    expect(doc).toMatchObject({ name: 'Sales Dashboard', format: 'pdf' });
    expect(doc.content.artifact).toMatchObject({
      id: ref!.id,
      mimeType: 'application/pdf',
      filename: 'Sales Dashboard.pdf',
    });
    expect(doc.content.summary).toBe(
      `Downloaded workbook 'Sales Dashboard' as PDF (${formatBytes(pdf.length)}). Artifact ${ref!.id}`,
    );
    expect(run.stats.byLayer.fields).toBe(1);
  });

  it('get_view_as_pdf (RFC Appendix B): `pdf_data` becomes "<view_name>.pdf", generated_at stays', async () => {
    const store = memoryStore();
    const pdf = await payloads.pdf(3, 'Revenue by Region');
    const raw = textResult({
      pdf_data: b64(pdf),
      view_name: 'Revenue by Region',
      generated_at: '2025-12-22T10:30:00Z',
    });
    const run = await transformToolResult('get_view_as_pdf', raw, { store, serverName: 'tableau' });

    expectModelSafe(run, 1024);
    const ref = run.artifacts[0]!;
    expect(ref).toMatchObject({
      mimeType: 'application/pdf',
      filename: 'Revenue by Region.pdf',
      namespace: 'tableau.get_view_as_pdf',
    });
    expect((await bytesOf(store, ref)).equals(pdf)).toBe(true);
    const doc = docOf(run.result);
    expect(doc.view_name).toBe('Revenue by Region');
    expect(doc.generated_at).toBe('2025-12-22T10:30:00Z');
    expect(doc.pdf_data.summary).toBe(
      `Exported view 'Revenue by Region' as PDF (${formatBytes(pdf.length)}). Artifact ${ref.id}`,
    );
    expect(run.stats.byLayer.fields).toBe(1);
  });

  for (const [tool, what, file] of [
    ['get-view-image', 'view', 'view'],
    ['get-custom-view-image', 'custom view', 'custom-view'],
    ['get_view_image', 'view', 'view'],
  ] as const) {
    it(`${tool}: the PNG image block (tableau-mcp convertViewImageToToolResult) becomes a summary and a link`, async () => {
      const store = memoryStore();
      const png = payloads.png(40_000);
      const raw = { isError: false, content: [{ type: 'image', data: b64(png), mimeType: 'image/png' }] };
      const run = await transformToolResult(tool, raw, { store, serverName: 'tableau' });

      expectModelSafe(run);
      const ref = run.artifacts[0]!;
      expect(ref).toMatchObject({
        mimeType: 'image/png',
        filename: `${file}.png`,
        namespace: `tableau.${tool}`,
        source: { tool, server: 'tableau' },
      });
      expect(ref.id).toMatch(ID);
      expect((await bytesOf(store, ref)).equals(png)).toBe(true);
      expect((run.result as any).isError).toBe(false);
      const blocks = contentOf(run);
      expect(blocks).toHaveLength(2);
      expectStoredBlock(
        blocks,
        0,
        ref,
        `Rendered the Tableau ${what} (PNG image, ${formatBytes(png.length)}). Artifact ${ref.id}`,
      );
      expect(run.stats.byLayer.blocks).toBe(1);
    });
  }

  it('get-view-image with format SVG: the markup text stays, the image/svg+xml block is stored as view.svg', async () => {
    const store = memoryStore();
    const bars = Array.from(
      { length: 120 },
      (_, i) =>
        `<rect x="${i * 8}" y="${400 - ((i * 37) % 300)}" width="6" height="${(i * 37) % 300}" fill="#4e79a7"/>`,
    ).join('');
    const svg = Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="960" height="400">${bars}</svg>`);
    const raw = {
      isError: false,
      content: [
        { type: 'text', text: svg.toString('utf8') },
        { type: 'image', data: b64(svg), mimeType: 'image/svg+xml' },
      ],
    };
    const run = await transformToolResult('get-view-image', raw, { store, serverName: 'tableau' });

    expect(CallToolResultSchema.safeParse(run.result).success).toBe(true);
    const ref = run.artifacts[0]!;
    expect(run.artifacts).toHaveLength(1);
    expect(ref).toMatchObject({ mimeType: 'image/svg+xml', filename: 'view.svg', sizeBytes: svg.length });
    expect((await bytesOf(store, ref)).equals(svg)).toBe(true);
    const blocks = contentOf(run);
    expect(blocks[0]).toEqual(raw.content[0]);
    expectStoredBlock(
      blocks,
      1,
      ref,
      `Rendered the Tableau view (SVG image, ${formatBytes(svg.length)}). Artifact ${ref.id}`,
    );
    expect(run.stats.charsAfter).toBeLessThan(run.stats.charsBefore);
  });

  it('get-view-image with S3 offload: the presigned resource_link stays lazy and _meta.slack stays', async () => {
    const url = 'https://tableau-mcp-images.s3.amazonaws.com/site/user/view-images/abc.png?X-Amz-Signature=deadbeef';
    const link = {
      type: 'resource_link',
      uri: url,
      name: 'view-image.png',
      mimeType: 'image/png',
      description: 'Rendered view image stored in blob storage.',
    };
    const meta = { slack: { blocks: [{ type: 'image', image_url: url, alt_text: 'Tableau view image' }] } };
    const readResource = vi.fn();
    const run = await transformToolResult(
      'get-view-image',
      { isError: false, content: [link], _meta: meta },
      { store: memoryStore(), serverName: 'tableau', readResource },
    );

    expect(CallToolResultSchema.safeParse(run.result).success).toBe(true);
    expect(run.artifacts).toEqual([]);
    expect(readResource).not.toHaveBeenCalled();
    const blocks = contentOf(run);
    expect(blocks[0]).toEqual(link);
    expect(blocks[1].text).toContain(`Resource 'view-image.png' (PNG image) is available at ${url}.`);
    expect((run.result as any)._meta).toEqual(meta);
  });

  it('download-workbook (tableau-mcp): the path JSON and the S3 link carry no bytes and pass through', async () => {
    const store = memoryStore();
    const onDisk = textResult({
      path: '/tmp/tableau-mcp-workbooks/5f0c-Superstore.twbx',
      filename: 'Superstore.twbx',
      mimeType: 'application/octet-stream',
    });
    const fromDisk = await transformToolResult('download-workbook', onDisk, { store, serverName: 'tableau' });
    expect(fromDisk.result).toEqual(onDisk);

    const link = {
      type: 'resource_link',
      uri: 'https://bucket.s3.amazonaws.com/workbooks/Superstore.twbx?X-Amz-Signature=abc',
      name: 'Superstore.twbx',
      mimeType: 'application/octet-stream',
      description: 'Downloaded Tableau workbook content stored in S3. This is a short-lived presigned URL.',
    };
    const fromS3 = await transformToolResult(
      'download-workbook',
      { isError: false, content: [link] },
      { store, serverName: 'tableau' },
    );
    expect(contentOf(fromS3)[0]).toEqual(link);
    expect(contentOf(fromS3)[1].text).toContain(
      "Resource 'Superstore.twbx' (binary file) is available at https://bucket.s3.amazonaws.com/",
    );
    expect([...fromDisk.artifacts, ...fromS3.artifacts]).toEqual([]);
  });

  it('download-workbook (rizky-battlehooks fork): the base64 .twb XML in `data` is stored as application/xml', async () => {
    const store = memoryStore();
    const twb = Buffer.from(
      `<?xml version='1.0' encoding='utf-8' ?>\n<workbook source-build='2024.2.0' version='18.1'>\n` +
        Array.from(
          { length: 40 },
          (_, i) => `  <worksheet name='Sheet ${i + 1}'><table><view><datasources/></view></table></worksheet>\n`,
        ).join('') +
        '</workbook>\n',
    );
    const raw = textResult({
      filename: 'Superstore.twb',
      mimeType: 'application/xml',
      encoding: 'base64',
      data: b64(twb),
    });
    const run = await transformToolResult('download-workbook', raw, { store, serverName: 'tableau' });

    expectModelSafe(run, 1024);
    const ref = run.artifacts[0]!;
    expect(ref).toMatchObject({
      mimeType: 'application/xml',
      filename: 'Superstore.twb',
      namespace: 'tableau.download-workbook',
      sizeBytes: twb.length,
    });
    expect((await bytesOf(store, ref)).equals(twb)).toBe(true);
    const doc = docOf(run.result);
    expect(doc).toMatchObject({ filename: 'Superstore.twb', mimeType: 'application/xml', encoding: 'base64' });
    expect(doc.data.summary).toBe(
      `Downloaded workbook 'Superstore.twb' (${formatBytes(twb.length)}). Artifact ${ref.id}`,
    );
  });
});

describe('github get_file_contents', () => {
  const sha = '3f2a9c0e5b7d41a8e6f0c2b4d6e8f0a1b3c5d7e9';
  const commit = '9b1c7a2f4e6d8c0b2a4f6e8d0c2b4a6f8e0d2c4e';
  const uri = (path: string) => `repo://octo/hello/sha/${commit}/contents/${path}`;

  it('github-mcp-server, binary file: the embedded blob is stored under its file name; the status text stays', async () => {
    const store = memoryStore();
    const png = payloads.png(30_000);
    const pdf = await payloads.pdf(2, 'Q3 report');
    const status = { type: 'text', text: `successfully downloaded binary file (SHA: ${sha})` };
    for (const [path, bytes, mime, type] of [
      ['docs/logo.png', png, 'image/png', 'PNG image'],
      ['reports/q3.pdf', pdf, 'application/pdf', 'PDF'],
    ] as const) {
      const raw = {
        content: [status, { type: 'resource', resource: { uri: uri(path), mimeType: mime, blob: b64(bytes) } }],
      };
      const run = await transformToolResult('get_file_contents', raw, { store, serverName: 'github' });

      expectModelSafe(run);
      const ref = run.artifacts[0]!;
      const name = path.slice(path.lastIndexOf('/') + 1);
      expect(ref).toMatchObject({
        mimeType: mime,
        filename: name,
        sizeBytes: bytes.length,
        namespace: 'github.get_file_contents',
        source: { tool: 'get_file_contents', server: 'github' },
      });
      expect((await bytesOf(store, ref)).equals(bytes)).toBe(true);
      const blocks = contentOf(run);
      expect(blocks).toHaveLength(3);
      expect(blocks[0]).toEqual(status);
      expectStoredBlock(
        blocks,
        1,
        ref,
        `Downloaded '${name}' (${type}, ${formatBytes(bytes.length)}) from ${uri(path)}. Artifact ${ref.id}`,
      );
    }
  });

  it('github-mcp-server, a zip the server sniffed as application/zip: the magic bytes give the real type', async () => {
    const store = memoryStore();
    const xlsx = payloads.xlsx();
    const raw = {
      content: [
        { type: 'text', text: `successfully downloaded binary file (SHA: ${sha})` },
        { type: 'resource', resource: { uri: uri('data/q3.xlsx'), mimeType: 'application/zip', blob: b64(xlsx) } },
      ],
    };
    const run = await transformToolResult('get_file_contents', raw, { store, serverName: 'github' });
    const ref = run.artifacts[0]!;
    expect(ref).toMatchObject({
      mimeType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      filename: 'q3.xlsx',
      source: { declaredMimeType: 'application/zip' },
    });
    expect((await bytesOf(store, ref)).equals(xlsx)).toBe(true);
    expect(contentOf(run)[1].text).toBe(
      `Downloaded 'q3.xlsx' (Excel workbook, ${formatBytes(xlsx.length)}) from ${uri('data/q3.xlsx')}. Artifact ${ref.id}`,
    );
  });

  it('github-mcp-server, text file: a small text resource stays inline, untouched', async () => {
    const raw = {
      content: [
        { type: 'text', text: `successfully downloaded text file (SHA: ${sha})` },
        {
          type: 'resource',
          resource: {
            uri: uri('README.md'),
            mimeType: 'text/plain; charset=utf-8',
            text: '# hello\n\nA tiny repository.\n',
          },
        },
      ],
    };
    const run = await transformToolResult('get_file_contents', raw, { store: memoryStore(), serverName: 'github' });
    expect(run.result).toEqual(raw);
    expect(run.artifacts).toEqual([]);
  });

  it('github-mcp-server, long text file: stored as text, with the summary and a preview', async () => {
    const store = memoryStore();
    const log = Array.from({ length: 1500 }, (_, i) => `${i}: build step ok`).join('\n');
    const raw = {
      content: [
        { type: 'text', text: `successfully downloaded text file (SHA: ${sha})` },
        {
          type: 'resource',
          resource: { uri: uri('logs/build.log'), mimeType: 'text/plain; charset=utf-8', text: log },
        },
      ],
    };
    const run = await transformToolResult('get_file_contents', raw, { store, serverName: 'github' });
    expectModelSafe(run, 2000);
    const ref = run.artifacts[0]!;
    expect(ref).toMatchObject({ mimeType: 'text/plain; charset=utf-8', filename: 'build.log', sizeBytes: log.length });
    expect((await bytesOf(store, ref)).toString('utf8')).toBe(log);
    const text = contentOf(run)[1].text as string;
    expect(
      text.startsWith(
        `Downloaded 'build.log' (text, ${formatBytes(log.length)}) from ${uri('logs/build.log')}. Artifact ${ref.id}\n\nPreview:\n0: build step ok`,
      ),
    ).toBe(true);
  });

  it('github-mcp-server, file of 1 MiB or more: the resource_link stays a lazy link with a read hint', async () => {
    const readResource = vi.fn();
    const status = {
      type: 'text',
      text: `File big.bin is too large to display (5242880 bytes). Use the download URL to fetch the content: https://raw.githubusercontent.com/octo/hello/${commit}/big.bin (SHA: ${sha})`,
    };
    const link = {
      type: 'resource_link',
      uri: uri('big.bin'),
      name: 'big.bin',
      title: 'File: big.bin',
      size: 5_242_880,
    };
    const run = await transformToolResult(
      'get_file_contents',
      { content: [status, link] },
      { store: memoryStore(), serverName: 'github', readResource },
    );

    expect(CallToolResultSchema.safeParse(run.result).success).toBe(true);
    expect(readResource).not.toHaveBeenCalled();
    expect(run.artifacts).toEqual([]);
    const blocks = contentOf(run);
    expect(blocks.slice(0, 2)).toEqual([status, link]);
    expect(blocks[2].text).toContain(`Resource 'big.bin' (5.0 MiB) is available at ${uri('big.bin')}.`);
    expect(blocks[2].text).toContain(`read the resource ${uri('big.bin')} (MCP resources/read)`);
  });

  it('github-mcp-server with embedded resources off: the image block (any type) gets the default summary', async () => {
    const store = memoryStore();
    const pdf = await payloads.pdf(2);
    const raw = {
      content: [
        { type: 'text', text: `successfully downloaded binary file (SHA: ${sha})` },
        { type: 'image', data: b64(pdf), mimeType: 'application/pdf', _meta: { uri: uri('reports/q3.pdf') } },
      ],
    };
    const run = await transformToolResult('get_file_contents', raw, { store, serverName: 'github' });
    expectModelSafe(run);
    const ref = run.artifacts[0]!;
    expect(ref).toMatchObject({ mimeType: 'application/pdf', filename: 'get_file_contents.pdf' });
    expect((await bytesOf(store, ref)).equals(pdf)).toBe(true);
    expect(contentOf(run)[1].text).toBe(
      `PDF (${formatBytes(pdf.length)}) from get_file_contents, stored as artifact ${ref.id}.`,
    );
  });

  /** go-github's RepositoryContent, as the first github-mcp-server releases marshalled it. */
  const restContent = (path: string, bytes: Buffer) => {
    const wrapped = payloads.wrapped60(bytes);
    return {
      type: 'file',
      encoding: 'base64',
      size: bytes.length,
      name: path.slice(path.lastIndexOf('/') + 1),
      path,
      content: wrapped.endsWith('\n') ? wrapped : `${wrapped}\n`,
      sha,
      url: `https://api.github.com/repos/octo/hello/contents/${path}?ref=main`,
      git_url: `https://api.github.com/repos/octo/hello/git/blobs/${sha}`,
      html_url: `https://github.com/octo/hello/blob/main/${path}`,
      download_url: `https://raw.githubusercontent.com/octo/hello/main/${path}`,
    };
  };

  it('older github-mcp-server: base64 `content` wrapped every 60 chars is stored byte-identical; the other fields stay', async () => {
    const store = memoryStore();
    const png = payloads.png(20_000);
    const file = restContent('docs/logo.png', png);
    expect(file.content.split('\n')[0]).toHaveLength(60);
    const run = await transformToolResult('get_file_contents', textResult(file), { store, serverName: 'github' });

    expectModelSafe(run);
    const ref = run.artifacts[0]!;
    expect(ref).toMatchObject({
      mimeType: 'image/png',
      filename: 'logo.png',
      sizeBytes: png.length,
      namespace: 'github.get_file_contents',
      source: { field: 'content' },
    });
    expect((await bytesOf(store, ref)).equals(png)).toBe(true);
    const doc = docOf(run.result);
    const { content: _content, ...rest } = file;
    expect(doc).toMatchObject(rest);
    expect(doc.content.summary).toBe(`Downloaded 'docs/logo.png' (${formatBytes(png.length)}). Artifact ${ref.id}`);
    expect(run.stats.byLayer.fields).toBe(1);
  });

  it('older github-mcp-server: a text file in base64 (no magic bytes) is stored too', async () => {
    const store = memoryStore();
    const source = Buffer.from(
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the file's own text holds a template literal.
      'export function greet(name: string): string {\n  return `Hello, ${name}!`;\n}\n'.repeat(20),
    );
    const run = await transformToolResult('get_file_contents', textResult(restContent('src/greet.ts', source)), {
      store,
      serverName: 'github',
    });
    const ref = run.artifacts[0]!;
    // No magic bytes, but valid UTF-8: stored as text, so a browser shows it.
    expect(ref).toMatchObject({
      filename: 'greet.ts',
      sizeBytes: source.length,
      mimeType: 'text/plain; charset=utf-8',
    });
    expect((await bytesOf(store, ref)).equals(source)).toBe(true);
    expect(docOf(run.result).content.summary).toBe(
      `Downloaded 'src/greet.ts' (${formatBytes(source.length)}). Artifact ${ref.id}`,
    );
  });

  it('@modelcontextprotocol/server-github: already-decoded text under encoding "base64" is left alone', async () => {
    const file = { ...restContent('README.md', Buffer.from('')), content: '# hello\n\nA tiny repository.\n', size: 28 };
    const raw = { content: [{ type: 'text', text: JSON.stringify(file, null, 2) }] };
    const run = await transformToolResult('get_file_contents', raw, { store: memoryStore(), serverName: 'github' });
    expect(run.result).toEqual(raw);
    expect(run.artifacts).toEqual([]);
  });

  it('the encoding "none" of files over 1 MB (empty content) is left alone', async () => {
    const file = { ...restContent('big.bin', Buffer.from('')), content: '', encoding: 'none', size: 5_242_880 };
    const run = await transformToolResult('get_file_contents', textResult(file), {
      store: memoryStore(),
      serverName: 'github',
    });
    expect(docOf(run.result)).toEqual(file);
    expect(run.artifacts).toEqual([]);
  });
});

describe('playwright browser_take_screenshot', () => {
  const markdown = (file: string, type: string) =>
    `### Result\n- [Screenshot of viewport](${file})\n### Ran Playwright code\n\`\`\`js\n// Screenshot viewport and save it as /tmp/playwright-mcp-output/${file}\nawait page.screenshot({\n  scale: 'css',\n  type: '${type}'\n});\n\`\`\`\n### Page\n- Page URL: https://example.com/\n- Page Title: Example Domain`;

  for (const [type, bytes, mime, ext, label, pixels] of [
    ['png', images.pngOf(1280, 720, 60_000), 'image/png', 'png', 'PNG image', '1280×720'],
    ['jpeg', images.jpeg16x9(60_000), 'image/jpeg', 'jpg', 'JPEG image', '16×9'],
  ] as const) {
    it(`the markdown text stays, the ${type} stays inline for the model, and it is stored and linked too`, async () => {
      const store = memoryStore();
      const text = { type: 'text', text: markdown(`page-2025-10-01T12-00-00-000Z.${type}`, type) };
      const image = { type: 'image', data: b64(bytes), mimeType: mime };
      const raw = { content: [text, image] };
      const run = await transformToolResult('browser_take_screenshot', raw, { store, serverName: 'playwright' });

      expect(CallToolResultSchema.safeParse(run.result).success).toBe(true);
      const ref = run.artifacts[0]!;
      expect(ref).toMatchObject({
        mimeType: mime,
        filename: `screenshot.${ext}`,
        sizeBytes: bytes.length,
        namespace: 'playwright.browser_take_screenshot',
      });
      expect((await bytesOf(store, ref)).equals(bytes)).toBe(true);
      const blocks = contentOf(run);
      expect(blocks).toHaveLength(4);
      expect(blocks[0]).toEqual(text);
      expect(blocks[1]).toEqual(image);
      expectStoredBlock(
        blocks,
        2,
        ref,
        summaryOf(
          `Took a screenshot (${label}, ${formatBytes(bytes.length)}). Artifact ${ref.id}. Shown above (${pixels} px).`,
          label,
        ),
      );
    });
  }

  it('a screenshot over the image limits becomes a ref, and the summary says why it is not shown', async () => {
    const store = memoryStore();
    const big = images.pngOf(1280, 720, 5 * 1024 * 1024);
    const tall = images.pngOf(1280, 8000);
    for (const [bytes, reason] of [
      [big, 'it is over the 768 KiB limit for images shown'],
      [tall, '1280×8000 px is over the 2000 px limit for images shown'],
    ] as const) {
      const raw = { content: [{ type: 'image', data: b64(bytes), mimeType: 'image/png' }] };
      const run = await transformToolResult('browser_take_screenshot', raw, { store, serverName: 'playwright' });
      expectModelSafe(run);
      const ref = run.artifacts[0]!;
      expect((await bytesOf(store, ref)).equals(bytes)).toBe(true);
      expectStoredBlock(
        contentOf(run),
        0,
        ref,
        `Took a screenshot (PNG image, ${formatBytes(bytes.length)}). Artifact ${ref.id}. Not shown inline: ${reason}.`,
      );
    }
  });

  it('a text-only result (fullPage on some versions, --image-responses=omit) passes through', async () => {
    const raw = {
      content: [
        {
          type: 'text',
          text: '### Result\nTook the full page screenshot and saved it as /tmp/playwright-mcp-output/page.png',
        },
      ],
    };
    const run = await transformToolResult('browser_take_screenshot', raw, {
      store: memoryStore(),
      serverName: 'playwright',
    });
    expect(run.result).toEqual(raw);
    expect(run.artifacts).toEqual([]);
  });
});

describe('mapbox static_map_image_tool', () => {
  const url = 'https://api.mapbox.com/styles/v1/mapbox/streets-v12/static/-122.42,37.77,13/800x600';

  for (const [style, bytes, mime, ext, label] of [
    ['streets-v12', payloads.png(50_000), 'image/png', 'png', 'PNG image'],
    ['satellite-v9', payloads.jpeg(50_000), 'image/jpeg', 'jpg', 'JPEG image'],
  ] as const) {
    it(`${style}: the URL text and _meta.viewUUID stay, the image becomes a summary and a link`, async () => {
      const store = memoryStore();
      const link = { type: 'text', text: url.replace('streets-v12', style) };
      const raw = {
        isError: false,
        content: [link, { type: 'image', data: b64(bytes), mimeType: mime }],
        _meta: { viewUUID: '5f0c2a9e-0d1b-4c1e-9a57-3c2b1d0e4f6a' },
      };
      const run = await transformToolResult('static_map_image_tool', raw, { store, serverName: 'mapbox' });

      expectModelSafe(run);
      const ref = run.artifacts[0]!;
      expect(ref).toMatchObject({
        mimeType: mime,
        filename: `static-map.${ext}`,
        sizeBytes: bytes.length,
        namespace: 'mapbox.static_map_image_tool',
      });
      expect((await bytesOf(store, ref)).equals(bytes)).toBe(true);
      const blocks = contentOf(run);
      expect(blocks[0]).toEqual(link);
      expectStoredBlock(
        blocks,
        1,
        ref,
        summaryOf(`Rendered a static map (${label}, ${formatBytes(bytes.length)}). Artifact ${ref.id}`, label),
      );
      expect((run.result as any)._meta).toEqual(raw._meta);
      expect((run.result as any).isError).toBe(false);
    });
  }

  it('older release with MCP-UI: the ui://mapbox/static-map resource stays inline, the image is stored', async () => {
    const store = memoryStore();
    const png = payloads.png(30_000);
    const ui = {
      type: 'resource',
      resource: {
        uri: 'ui://mapbox/static-map/streets-v12/-122.42,37.77,13',
        mimeType: 'text/uri-list',
        text: `${url}?access_token=pk.test`,
      },
    };
    const raw = { content: [{ type: 'image', data: b64(png), mimeType: 'image/png' }, ui] };
    const run = await transformToolResult('static_map_image_tool', raw, { store, serverName: 'mapbox' });

    expectModelSafe(run);
    expect(run.artifacts).toHaveLength(1);
    expect((await bytesOf(store, run.artifacts[0]!)).equals(png)).toBe(true);
    const blocks = contentOf(run);
    expect(blocks.map((b) => b.type)).toEqual(['text', 'resource_link', 'resource']);
    expect(blocks[2]).toEqual(ui);
  });

  it('an image over 700 KB comes as text naming a mapbox:// resource: passed through', async () => {
    const raw = {
      content: [
        { type: 'text', text: url },
        {
          type: 'text',
          text: '⚠️ Image (912KB) stored as temporary resource.\nResource URI: mapbox://temp/static-map-0123456789abcdef0123456789abcdef\nTTL: 30 minutes',
        },
      ],
    };
    const run = await transformToolResult('static_map_image_tool', raw, { store: memoryStore(), serverName: 'mapbox' });
    expect(run.result).toEqual(raw);
    expect(run.artifacts).toEqual([]);
  });
});

describe('preset selection', () => {
  it("presets: 'none' turns them off; the heuristics still store the binary, with default names and summaries", async () => {
    const store = memoryStore();
    const config = { presets: 'none' as const };
    const pdf = await payloads.pdf(4);
    const png = payloads.png(20_000);

    const incident = await transformToolResult(
      'download_workbook',
      textResult({ content: b64(pdf), name: 'Sales Dashboard', format: 'pdf' }),
      { store, serverName: 'tableau', config },
    );
    const ref = incident.artifacts[0]!;
    expect(ref).toMatchObject({
      mimeType: 'application/pdf',
      filename: 'Sales Dashboard.pdf',
      namespace: 'tableau.download_workbook',
    });
    expect((await bytesOf(store, ref)).equals(pdf)).toBe(true);
    expect(docOf(incident.result).content.summary).toBe(
      `PDF 'Sales Dashboard.pdf' (${formatBytes(pdf.length)}) from download_workbook (content), stored as artifact ${ref.id}.`,
    );
    expect(incident.stats.byLayer).toMatchObject({ fields: 0, heuristic: 1 });

    const shot = await transformToolResult(
      'browser_take_screenshot',
      {
        content: [
          { type: 'text', text: '### Result' },
          { type: 'image', data: b64(png), mimeType: 'image/png' },
        ],
      },
      { store, serverName: 'playwright', config },
    );
    expect(shot.artifacts[0]).toMatchObject({ mimeType: 'image/png', filename: 'browser_take_screenshot.png' });
    expect(contentOf(shot)[1].text).toBe(
      `PNG image (${formatBytes(png.length)}) from browser_take_screenshot, stored as artifact ${shot.artifacts[0]!.id}.`,
    );

    // Old GitHub JSON: a PNG is found by its magic bytes; base64 text has none and stays as it was.
    const file = {
      type: 'file',
      encoding: 'base64',
      name: 'logo.png',
      path: 'docs/logo.png',
      content: `${payloads.wrapped60(png)}\n`,
    };
    const old = await transformToolResult('get_file_contents', textResult(file), {
      store,
      serverName: 'github',
      config,
    });
    expect(old.artifacts[0]).toMatchObject({ mimeType: 'image/png', filename: 'logo.png' });
    const text = {
      ...file,
      name: 'notes.txt',
      path: 'notes.txt',
      content: `${payloads.wrapped60(Buffer.from('plain notes, nothing binary\n'.repeat(30)))}\n`,
    };
    const kept = await transformToolResult('get_file_contents', textResult(text), {
      store,
      serverName: 'github',
      config,
    });
    expect(kept.artifacts).toEqual([]);
    expect(docOf(kept.result).content).toBe(text.content);
  });

  it('a list applies only the named presets', async () => {
    const png = payloads.png(5000);
    const raw = { content: [{ type: 'image', data: b64(png), mimeType: 'image/png' }] };
    const config = { presets: ['playwright' as const] };
    const shot = await transformToolResult('browser_take_screenshot', raw, { store: memoryStore(), config });
    expect(contentOf(shot)[0]).toEqual(raw.content[0]);
    expect(contentOf(shot)[1].text).toMatch(/^Took a screenshot \(PNG image/);
    const map = await transformToolResult('static_map_image_tool', raw, { store: memoryStore(), config });
    expect(contentOf(map)[0].text).toMatch(/^PNG image \(.+\) from static_map_image_tool, stored as artifact/);
  });

  it('config.tools wins over a preset', async () => {
    const png = payloads.png(5000);
    const raw = { content: [{ type: 'image', data: b64(png), mimeType: 'image/png' }] };
    const config = {
      tools: {
        browser_take_screenshot: {
          blocks: { filename: 'home.{ext}', summary: 'Home page ({size_human}): {artifact_id}' },
        },
      },
    };
    const run = await transformToolResult('browser_take_screenshot', raw, { store: memoryStore(), config });
    expect(run.artifacts[0]!.filename).toBe('home.png');
    // The preset still says the screenshot is for the model: config.tools named only its blocks.
    expect(contentOf(run)[1].text).toBe(
      `Home page (${formatBytes(png.length)}): ${run.artifacts[0]!.id}. Shown above (1×1 px).`,
    );
    const off = await transformToolResult('browser_take_screenshot', raw, {
      store: memoryStore(),
      config: { ...config, tools: { browser_take_screenshot: { images: { inline: false } } } },
    });
    expect(contentOf(off).map((b: any) => b.type)).toEqual(['text', 'resource_link']);
  });

  it('every preset is a valid tool spec with parseable field paths', () => {
    for (const [preset, tools] of Object.entries(PRESETS)) {
      for (const [tool, specs] of Object.entries(tools)) {
        for (const spec of specs) {
          expect(ToolSpecSchema.safeParse(spec).success, `${preset}.${tool}`).toBe(true);
          for (const field of spec.fields ?? []) expect(() => parseFieldPath(field.path)).not.toThrow();
        }
      }
    }
  });
});
