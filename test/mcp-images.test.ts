/**
 * Images for the model (the transformer's `images` policy) and the view tools' clause in summaries
 * (`viewTools`). Shapes are the servers' own: Playwright MCP's screenshot (a markdown text block, then
 * the image), server-everything's annotated image (audience: user), tableau-mcp's SVG view image, a
 * Go SDK server's image beside structuredContent.
 */
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { createInMemoryArtifactStore } from '../src/client/memory-store.js';
import { formatBytes } from '../src/core/bytes.js';
import { clampObservation, transformToolResult, type TransformResult } from '../src/mcp/index.js';
import * as images from './helpers/images.js';
import * as payloads from './helpers/payloads.js';

const scope = { tenantId: 'acme', sessionId: 's-1' };
const memoryStore = () => createInMemoryArtifactStore({ scope });
const b64 = (b: Buffer) => b.toString('base64');
const contentOf = (run: TransformResult): any[] => (run.result as any).content;
const types = (run: TransformResult) => contentOf(run).map((b) => b.type);

const screenshotText = {
  type: 'text',
  text: "### Result\n- [Screenshot of viewport](page.png)\n### Ran Playwright code\n```js\nawait page.screenshot({ scale: 'css', type: 'png' });\n```",
};
const imageBlock = (bytes: Buffer, mimeType = 'image/png') => ({ type: 'image', data: b64(bytes), mimeType });

describe('images for the model', () => {
  it("the playwright preset's screenshot stays an image block, is stored, and has a link with its size", async () => {
    const store = memoryStore();
    const shot = images.pngOf(1280, 720, 40_000);
    const raw = { content: [screenshotText, imageBlock(shot)] };
    const run = await transformToolResult('browser_take_screenshot', raw, { store, serverName: 'playwright' });
    expect(CallToolResultSchema.safeParse(run.result).success).toBe(true);
    expect(types(run)).toEqual(['text', 'image', 'text', 'resource_link']);
    expect(contentOf(run)[1]).toEqual(imageBlock(shot));
    const ref = run.artifacts[0]!;
    expect(Buffer.from((await store.get(ref.id))!).equals(shot)).toBe(true);
    expect(contentOf(run)[3]).toEqual({
      type: 'resource_link',
      uri: `artifact://${ref.id}`,
      name: 'screenshot.png',
      mimeType: 'image/png',
      size: shot.length,
    });
    expect(contentOf(run)[2].text).toMatch(/Shown above \(1280×720 px\)\.$/);
  });

  it('an image of 5 MB becomes a ref, even where every image may stay inline', async () => {
    const store = memoryStore();
    const big = images.pngOf(800, 600, 5 * 1024 * 1024);
    const run = await transformToolResult(
      'render_chart',
      { content: [imageBlock(big)] },
      { store, config: { images: { inline: true } } },
    );
    expect(types(run)).toEqual(['text', 'resource_link']);
    expect(contentOf(run)[0].text).toContain('Not shown inline: it is over the 768 KiB limit for images shown.');
    expect(contentOf(run)[1].size).toBe(big.length);
    expect(JSON.stringify(run.result).length).toBeLessThan(1000);
  });

  it('maxPerResult: of three images with a limit of one, the first stays inline and the others are refs', async () => {
    const store = memoryStore();
    const shots = [images.pngOf(640, 480), images.pngOf(320, 240), images.jpeg16x9(2000)];
    const raw = { content: shots.map((s, i) => imageBlock(s, i === 2 ? 'image/jpeg' : 'image/png')) };
    const run = await transformToolResult('browser_take_screenshot', raw, { store, serverName: 'playwright' });
    expect(types(run)).toEqual(['image', 'text', 'resource_link', 'text', 'resource_link', 'text', 'resource_link']);
    expect(contentOf(run)[0].data).toBe(b64(shots[0]!));
    for (const at of [3, 5])
      expect(contentOf(run)[at].text).toMatch(/Not shown inline: only 1 image per result is shown\.$/);
    expect(run.artifacts).toHaveLength(3);

    const two = await transformToolResult('browser_take_screenshot', raw, {
      store,
      serverName: 'playwright',
      config: { images: { maxPerResult: 2 } },
    });
    expect(types(two).filter((t) => t === 'image')).toHaveLength(2);
    expect(contentOf(two).at(-2).text).toMatch(/only 2 images per result are shown\.$/);
  });

  it('an inline image displaces structuredContent: its JSON goes to a text block, once', async () => {
    const store = memoryStore();
    const structured = { url: 'https://example.com/', title: 'Example Domain', viewport: { width: 1280, height: 720 } };
    const shot = images.pngOf(1280, 720);
    // A Go SDK typed handler: the image and the structured output, and no text copy of it.
    const bare = { content: [imageBlock(shot)], structuredContent: structured };
    const config = { images: { inline: true } };
    const run = await transformToolResult('capture', bare, { store, config });
    expect(run.result).not.toHaveProperty('structuredContent');
    expect(types(run)).toEqual(['image', 'text', 'resource_link', 'text']);
    expect(JSON.parse(contentOf(run)[3].text)).toEqual(structured);
    expect(CallToolResultSchema.safeParse(run.result).success).toBe(true);

    // The spec's serialized copy is already there: it is not added twice.
    const copied = {
      content: [{ type: 'text', text: JSON.stringify(structured, null, 2) }, imageBlock(shot)],
      structuredContent: structured,
    };
    const again = await transformToolResult('capture', copied, { store, config });
    expect(again.result).not.toHaveProperty('structuredContent');
    expect(types(again)).toEqual(['text', 'image', 'text', 'resource_link']);

    // Large structure goes through the size net like any other JSON.
    const rows = Array.from({ length: 2000 }, (_, i) => ({ id: i, name: `row ${i}` }));
    const large = await transformToolResult(
      'capture',
      { content: [imageBlock(shot)], structuredContent: { rows } },
      { store, config },
    );
    const text = contentOf(large).at(-1).text as string;
    expect(text.length).toBeLessThan(3000);
    expect(JSON.parse(text).rows).toMatchObject({ artifact: { mimeType: 'application/json' } });

    // No image inline: structuredContent stays.
    const off = await transformToolResult('capture', bare, { store });
    expect(off.result).toHaveProperty('structuredContent', structured);
  });

  it('by default only the tools a preset or config names show images; inline: false turns all off', async () => {
    const store = memoryStore();
    const shot = images.pngOf(100, 100);
    const other = await transformToolResult('get-tiny-image', { content: [imageBlock(shot)] }, { store });
    expect(types(other)).toEqual(['text', 'resource_link']);
    expect(contentOf(other)[0].text).not.toContain('Not shown inline');
    const named = await transformToolResult(
      'get-tiny-image',
      { content: [imageBlock(shot)] },
      { store, config: { tools: { 'get-tiny-image': { images: { inline: true } } } } },
    );
    expect(types(named)).toEqual(['image', 'text', 'resource_link']);
    const off = await transformToolResult(
      'browser_take_screenshot',
      { content: [imageBlock(shot)] },
      { store, serverName: 'playwright', config: { images: { inline: false } } },
    );
    expect(types(off)).toEqual(['text', 'resource_link']);
  });

  it('an image the server marks for the user (server-everything get-annotated-message) gets the link only', async () => {
    const store = memoryStore();
    const raw = {
      content: [
        { type: 'text', text: 'Operation completed successfully', annotations: { priority: 0.7, audience: ['user'] } },
        { ...imageBlock(payloads.PNG_1X1), annotations: { priority: 0.5, audience: ['user'] } },
      ],
    };
    const run = await transformToolResult('get-annotated-message', raw, {
      store,
      config: { images: { inline: true } },
    });
    expect(types(run)).toEqual(['text', 'text', 'resource_link']);
    expect(contentOf(run)[2]).toMatchObject({ annotations: { audience: ['user'] }, size: payloads.PNG_1X1.length });
  });

  it('an SVG (tableau-mcp get-view-image, format SVG) is not image content a model takes: a ref', async () => {
    const svg =
      '<svg xmlns="http://www.w3.org/2000/svg" width="800" height="600"><rect width="800" height="600"/></svg>';
    const raw = { content: [{ type: 'image', data: Buffer.from(svg).toString('base64'), mimeType: 'image/svg+xml' }] };
    const run = await transformToolResult('get-view-image', raw, {
      store: memoryStore(),
      config: { images: { inline: true } },
    });
    expect(types(run)).toEqual(['text', 'resource_link']);
    expect(contentOf(run)[0].text).toContain('Not shown inline: models take PNG, JPEG, GIF and WebP images only.');
  });

  it('the block says the type the bytes have, whatever the server declared', async () => {
    const run = await transformToolResult(
      'browser_take_screenshot',
      { content: [imageBlock(images.jpeg16x9(), 'image/png')] },
      { store: memoryStore(), serverName: 'playwright' },
    );
    expect(contentOf(run)[0]).toMatchObject({ type: 'image', mimeType: 'image/jpeg' });
  });

  it('validates the policy, naming a misspelt key', async () => {
    await expect(
      transformToolResult('x', { content: [] }, { config: { images: { maxPerResul: 2 } } as never }),
    ).rejects.toThrow(/images: unknown key "maxPerResul"\. Did you mean "maxPerResult"\?/);
    await expect(
      transformToolResult('x', { content: [] }, { config: { images: { inline: 'yes' } } as never }),
    ).rejects.toThrow(/Invalid transform config at images\.inline/);
  });
});

describe('summaries name the view tools (viewTools)', () => {
  const lines = Array.from(
    { length: 18_432 },
    (_, i) => `2026-11-28T06:00:${String(i % 60).padStart(2, '0')} GET /v1/rows/${i} 200`,
  ).join('\n');

  it('long text: the line count and artifact_search or artifact_read', async () => {
    const store = memoryStore();
    const raw = { content: [{ type: 'text', text: lines }] };
    const on = await transformToolResult('tail_logs', raw, { store, config: { viewTools: true } });
    const summary = (contentOf(on)[0].text as string).split('\n')[0]!;
    expect(summary).toMatch(
      /, stored as artifact \S+; 18,432 lines; artifact_search or artifact_read to look inside\.$/,
    );
    const off = await transformToolResult('tail_logs', raw, { store });
    expect(contentOf(off)[0].text).not.toMatch(/artifact_(search|read|query)/);
  });

  it('JSON adds artifact_query; PDFs are read by page; a ZIP lists its entries; images say nothing', async () => {
    const store = memoryStore();
    const config = { viewTools: true };
    const rows = Array.from({ length: 3000 }, (_, i) => ({ id: i, name: `row ${i}` }));
    const json = await transformToolResult(
      'list_rows',
      { content: [{ type: 'text', text: JSON.stringify({ rows }) }] },
      { store, config },
    );
    expect(JSON.parse(contentOf(json)[0].text).rows.summary).toMatch(
      /; artifact_query, artifact_search or artifact_read to look inside\.$/,
    );
    const pdf = await payloads.pdf(2);
    const tableau = await transformToolResult(
      'download_workbook',
      {
        content: [
          { type: 'text', text: JSON.stringify({ content: b64(pdf), name: 'Sales Dashboard', format: 'pdf' }) },
        ],
      },
      { store, serverName: 'tableau', config },
    );
    expect(JSON.parse(contentOf(tableau)[0].text).content.summary).toBe(
      `Downloaded workbook 'Sales Dashboard' as PDF (${formatBytes(pdf.length)}). Artifact ${tableau.artifacts[0]!.id}; artifact_read (by page) or artifact_search to look inside.`,
    );
    const zip = payloads.zip({ 'a.txt': 'hello', 'b.csv': 'x,y\n1,2\n' });
    const zipped = await transformToolResult(
      'export',
      { content: [{ type: 'resource', resource: { uri: 'file:///out.zip', blob: b64(zip) } }] },
      { store, config },
    );
    expect(contentOf(zipped)[0].text).toMatch(/; artifact_read lists its entries\.$/);
    const png = await transformToolResult('render', { content: [imageBlock(images.pngOf(10, 10))] }, { store, config });
    expect(contentOf(png)[0].text).not.toMatch(/artifact_(search|read|query)/);
    // Source code in base64 (older github-mcp-server JSON): text, with its lines counted.
    const source = `${Array.from({ length: 40 }, (_, i) => `export const v${i} = ${i};`).join('\n')}\n`;
    const gh = await transformToolResult(
      'get_file_contents',
      {
        content: [
          {
            type: 'text',
            text: JSON.stringify({
              name: 'v.ts',
              path: 'src/v.ts',
              encoding: 'base64',
              content: b64(Buffer.from(source)),
            }),
          },
        ],
      },
      { store, serverName: 'github', config },
    );
    expect(JSON.parse(contentOf(gh)[0].text).content.summary).toMatch(
      /; 40 lines; artifact_search or artifact_read to look inside\.$/,
    );
  });

  it("the guardrail's stored observation names them when told to", async () => {
    const store = memoryStore();
    const observation = { rows: Array.from({ length: 2000 }, (_, i) => ({ id: i, note: `note ${i}` })) };
    const on = await clampObservation<any>(observation, { store, config: { viewTools: true } });
    expect(on.observation.summary).toMatch(/; artifact_query, artifact_search or artifact_read to look inside\.$/);
    const text = await clampObservation<any>(lines, { store, config: { viewTools: true } });
    expect(text.observation.summary).toMatch(/; 18,432 lines; artifact_search or artifact_read to look inside\.$/);
    const off = await clampObservation<any>(observation, { store });
    expect(off.observation.summary).not.toMatch(/artifact_(search|read|query)/);
  });
});
