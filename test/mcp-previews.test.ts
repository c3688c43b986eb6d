/**
 * Previews and summaries never carry base64: a data: URL or a long base64 run in the first
 * characters of a stored text is shown as `[type, size base64 — in artifact X]`, wherever a preview
 * is cut (text blocks, embedded resources, resources read by the auto-read policy, the size net's
 * strings and JSON, the guardrail's preview and its truncation).
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createInMemoryArtifactStore } from '../src/client/memory-store.js';
import { clampObservation, transformToolResult } from '../src/mcp/index.js';
import { hideBase64, previewText } from '../src/mcp/transform/previews.js';
import * as payloads from './helpers/payloads.js';

const scope = { tenantId: 'acme', sessionId: 's-1' };
const memoryStore = () => createInMemoryArtifactStore({ scope });

/** A run the rule calls base64: a data: URL's body, or 100+ base64 characters in a row. */
const DATA_URL_BODY = /;base64,[A-Za-z0-9+/_-]{16}/;
const LONG_RUN = /[A-Za-z0-9+/_=-]{100,}/;
const expectNoBase64 = (v: unknown) => {
  const text = typeof v === 'string' ? v : JSON.stringify(v);
  expect(text).not.toMatch(DATA_URL_BODY);
  expect(text).not.toMatch(LONG_RUN);
};

describe('the incident: a 10 KiB PNG embedded in markdown', () => {
  const png = payloads.png(10 * 1024);
  const markdown = `# Quarterly revenue\n\nRevenue by region, Q3:\n\n![chart](data:image/png;base64,${png.toString('base64')})\n\n| Region | Revenue |\n|---|---|\n${Array.from({ length: 40 }, (_, i) => `| R${i} | ${i * 1000} |`).join('\n')}\n`;

  it('the observation holds a placeholder naming type, size and artifact, and no base64', async () => {
    const store = memoryStore();
    const run = await transformToolResult(
      'get_view_summary',
      { content: [{ type: 'text', text: markdown }] },
      {
        store,
        serverName: 'tableau',
      },
    );
    const ref = run.artifacts[0]!;
    expect(Buffer.from((await store.get(ref.id))!).toString('utf8')).toBe(markdown);
    const text = (run.result as any).content[0].text as string;
    expectNoBase64(run.result);
    expect(text).toContain(`![chart]([image/png, 10 KiB base64 — in artifact ${ref.id}])`);
    // The text after the image fills the preview.
    expect(text).toContain('| Region | Revenue |');
  });

  it('through the guardrail too: stored whole, previewed without base64; truncated without a store', async () => {
    const store = memoryStore();
    const observation = { report: markdown.repeat(5) };
    const stored = await clampObservation<any>(observation, {
      store,
      config: { maxObservationChars: 5000, autoArtifactThreshold: 0 },
    });
    expectNoBase64(stored.observation);
    expect(stored.observation.preview.report).toContain(
      `[image/png, 10 KiB base64 — in artifact ${stored.artifact!.id}]`,
    );
    const truncated = await clampObservation<any>(observation, { config: { maxObservationChars: 5000 } });
    expectNoBase64(truncated.observation);
    expect(truncated.observation.report).toContain('[image/png, 10 KiB base64, not shown]');
  });
});

describe('every preview', () => {
  const image = `data:image/png;base64,${payloads.png(4000).toString('base64')}`;
  const bare = randomBytes(3000).toString('base64');

  it('embedded resource text, a resource read by the auto-read policy, and size-net strings and JSON', async () => {
    const store = memoryStore();
    const doc = `<p>Logo: <img src="${image}"></p>\n${'body text\n'.repeat(2000)}`;
    const embedded = await transformToolResult(
      'get_file_contents',
      {
        content: [
          { type: 'resource', resource: { uri: 'repo://o/r/contents/README.html', mimeType: 'text/html', text: doc } },
        ],
      },
      { store, serverName: 'github' },
    );
    expectNoBase64(embedded.result);
    expect(JSON.stringify(embedded.result)).toContain('[image/png, 3.9 KiB base64 — in artifact ');

    const linked = await transformToolResult(
      'fetch',
      { content: [{ type: 'resource_link', uri: 'file:///doc.html', name: 'doc.html', size: 100 }] },
      {
        store,
        config: { autoReadIfSizeUnderBytes: 1000 },
        readResource: async (uri) => ({ contents: [{ uri, mimeType: 'text/html', text: doc }] }),
      },
    );
    expectNoBase64(linked.result);

    // Heuristics off: the data: URL stays in the JSON, and the size net's preview hides it.
    const json = await transformToolResult(
      'list_posts',
      {
        content: [
          {
            type: 'text',
            text: JSON.stringify({ posts: [{ body: `${image} then text` }, { body: 'x'.repeat(20_000) }] }),
          },
        ],
      },
      { store, config: { heuristics: false } },
    );
    expectNoBase64(json.result);
    const long = await transformToolResult(
      'dump',
      { raw: `${bare}${'.'.repeat(20_000)}` },
      { store, config: { heuristics: false } },
    );
    expectNoBase64(long.result);
    expect((long.result as any).raw.preview).toMatch(/^\[2\.9 KiB base64 — in artifact \S+\]/);
  });

  it('a summary template filled with a base64 sibling shows its placeholder', async () => {
    const pdf = await payloads.pdf(1);
    const name = randomBytes(120).toString('base64');
    const run = await transformToolResult(
      'download_workbook',
      { content: [{ type: 'text', text: JSON.stringify({ content: pdf.toString('base64'), name, format: 'pdf' }) }] },
      { store: memoryStore(), serverName: 'tableau' },
    );
    expectNoBase64(JSON.parse((run.result as any).content[0].text).content.summary);
  });
});

describe('the rule', () => {
  it('leaves hex digests, words, paths, slugs and short base64 alone', () => {
    const keep = [
      'sha256 3f1c9a0b7e5d4c2a1f0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a',
      `sha512 ${'0123456789abcdef'.repeat(8)}`,
      `${'ABCDEF0123456789'.repeat(8)}`,
      '/usr/local/lib/node_modules/artifact-store/dist/src/mcp/transform/previews.js',
      'https://example.com/Some-Long-Article-Title-About-Base64-Encoding-In-2026-And-Why-Previews-Matter-For-Models-Today',
      'Supercalifragilisticexpialidocious'.repeat(4),
      `id ${randomBytes(48).toString('base64')}`,
      'data:text/plain,hello%20world',
    ];
    for (const text of keep) expect(hideBase64(text, 'in artifact a_1')).toBe(text);
  });

  it('hides data: URLs (any declared type, base64url) and long runs, sized by their decoded bytes', () => {
    const pdf = randomBytes(3000);
    pdf.write('%PDF-1.7', 0);
    expect(hideBase64(`see ${randomBytes(1500).toString('base64')} here`)).toBe('see [1.5 KiB base64, not shown] here');
    expect(hideBase64(`x=data:application/octet-stream;base64,${pdf.toString('base64')}`, 'in artifact a_1')).toBe(
      'x=[application/octet-stream, 2.9 KiB base64 — in artifact a_1]',
    );
    expect(hideBase64(`"${pdf.toString('base64url')}"`)).toBe('"[application/pdf, 2.9 KiB base64, not shown]"');
    expect(hideBase64(`url(data:image/gif;charset=binary;base64,${payloads.GIF_1X1.toString('base64')})`)).toBe(
      'url([image/gif, 43 B base64, not shown])',
    );
  });

  it('a run the cut falls inside is taken whole', () => {
    const run = randomBytes(6000).toString('base64');
    const text = `${'word '.repeat(90)}data:image/png;base64,${payloads.png(6000).toString('base64')} tail ${run} end`;
    const preview = previewText(text, 700, 'in artifact a_1');
    expectNoBase64(preview);
    expect(preview).toContain(
      '[image/png, 5.9 KiB base64 — in artifact a_1] tail [5.9 KiB base64 — in artifact a_1] end',
    );
    // Cut inside the header.
    expectNoBase64(previewText(text, 460, 'in artifact a_1'));
  });

  it('property: no preview holds a data: URL body or a base64 run, wherever they are in the text', () => {
    const word = fc.stringMatching(/^[a-z]{1,12}$/);
    const payload = fc.oneof(
      fc
        .tuple(
          fc.constantFrom('image/png', 'application/pdf', 'image/svg+xml', ''),
          fc.uint8Array({ minLength: 12, maxLength: 4000 }),
        )
        .map(([type, bytes]) => `data:${type};base64,${Buffer.from(bytes).toString('base64')}`),
      fc.uint8Array({ minLength: 75, maxLength: 4000 }).map((bytes) => Buffer.from(bytes).toString('base64url')),
      fc
        .tuple(fc.uint8Array({ minLength: 12, maxLength: 3000 }), fc.constantFrom('![img](', '<img src="', '"', ' '))
        .map(([bytes, before]) => `${before}data:image/png;base64,${Buffer.from(bytes).toString('base64')}`),
    );
    const piece = fc.oneof({ arbitrary: word, weight: 4 }, { arbitrary: payload, weight: 1 });
    fc.assert(
      fc.property(
        fc.array(piece, { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 16, max: 3000 }),
        (pieces, chars) => {
          const text = pieces.join(' ');
          const preview = previewText(text, chars, 'in artifact a_1');
          expect(preview).not.toMatch(DATA_URL_BODY);
          expect(preview).not.toMatch(LONG_RUN);
        },
      ),
      { numRuns: 300 },
    );
  });
});
