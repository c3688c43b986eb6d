/**
 * The model reads back what real tools returned: each output shape of the presets (Tableau's PDF and
 * packaged workbook, GitHub's file contents and issue lists) goes through the transformer into the
 * service, and the model's tools find the part it needs. Ground truth is computed another way:
 * `grep -n` on the same file, `JSON.parse` and a walk, the text Chromium printed on each page.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ArtifactStore } from '../src/client/artifact-store.js';
import { artifactTools, transformToolResult } from '../src/mcp/index.js';
import { createEmbeddedArtifactStore } from '../src/service/embedded-store.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import * as payloads from './helpers/payloads.js';

const ROOT = join(import.meta.dirname, '..');
const FIXTURES = join(ROOT, 'test/fixtures/views');

let t: TestApp;
let store: ArtifactStore;
let tools: Record<string, { call(args: Record<string, unknown>): Promise<CallToolResult> }>;
const BUDGET = 6000;

beforeAll(async () => {
  t = await createTestApp();
  store = createEmbeddedArtifactStore({
    service: t.service,
    scope: { tenantId: 'acme', sessionId: 's-42' },
    publicUrl: 'http://127.0.0.1:8787',
  });
  tools = Object.fromEntries(artifactTools(store, { budget: BUDGET }).map((tool) => [tool.name, tool]));
});
afterAll(async () => {
  await t.cleanup();
});

const textOf = (r: CallToolResult) => {
  const first = r.content[0];
  if (first?.type !== 'text') throw new Error(`not a text result: ${JSON.stringify(r).slice(0, 200)}`);
  return first.text;
};

async function call(name: string, args: Record<string, unknown>): Promise<string> {
  const r = await tools[name]!.call(args);
  const text = textOf(r);
  expect(r.isError, text).toBeFalsy();
  expect(text.length).toBeLessThanOrEqual(BUDGET);
  return text;
}

describe('Tableau', () => {
  it("download_workbook's PDF: the summary names the way in, and page 3 holds what Chromium printed there", async () => {
    const pdf = readFileSync(join(FIXTURES, 'report.pdf'));
    // The incident's shape: base64 PDF inside a JSON text block.
    const raw = {
      content: [
        {
          type: 'text',
          text: JSON.stringify({ name: 'Sales Dashboard', format: 'pdf', content: pdf.toString('base64') }),
        },
      ],
    };
    const run = await transformToolResult('download_workbook', raw, {
      store,
      serverName: 'tableau',
      config: { viewTools: true },
    });
    const ref = run.artifacts[0]!;
    expect(ref.mimeType).toBe('application/pdf');
    expect(JSON.stringify(run.result)).toContain('artifact_read (by page) or artifact_search to look inside');

    const found = await call('artifact_search', { id: ref.id, pattern: 'Total revenue' });
    expect(found).toMatch(
      /^1 line of Sales Dashboard\.pdf .* matches the text "Total revenue":\np3 +\d+: Total revenue: 4,211,337 EUR/m,
    );
    const page3 = await call('artifact_read', { id: ref.id, page: 3 });
    expect(page3).toContain('page 3 of');
    expect(page3).toMatch(/\tTotal revenue: 4,211,337 EUR\n/);
    const pdftotext = spawnSync('pdftotext', ['-v']).status === 0;
    if (process.env.CI && !pdftotext) throw new Error('CI needs poppler-utils (pdftotext): .ci/run installs it');
    if (pdftotext) {
      // Every word pdftotext finds on page 3 is in the page the model reads.
      const truth = spawnSync('pdftotext', ['-f', '3', '-l', '3', '-layout', join(FIXTURES, 'report.pdf'), '-'], {
        encoding: 'utf8',
      }).stdout;
      for (const word of truth.split(/\s+/).filter((w) => w.length > 3)) expect(page3).toContain(word);
    }
  });

  it('a packaged workbook (.twbx) lists its entries, and the .twb inside reads and searches as XML', async () => {
    const twb = `<?xml version='1.0' encoding='utf-8' ?>\n<workbook version='18.1'>\n${Array.from(
      { length: 400 },
      (_, i) => `  <column caption='Measure ${i}' datatype='real' name='[Calculation_${i}]' role='measure' />`,
    ).join('\n')}\n  <worksheet name='Regional Sales' />\n</workbook>\n`;
    const twbx = payloads.zip({
      'Sales.twb': twb,
      'Data/Extracts/sales.hyper': Buffer.concat([Buffer.from('HyPe\0\0\0\x01'), payloads.png(4096)]),
    });
    const ref = await store.putBytes(twbx, {
      mimeType: 'application/vnd.tableau.packaged-workbook',
      filename: 'Sales.twbx',
    });
    const listing = await call('artifact_read', { id: ref.id });
    expect(listing).toMatch(/Sales\.twb {2}\(/);
    expect(listing).toContain('Data/Extracts/sales.hyper');
    expect(listing).toContain(`artifact_read {"id":"${ref.id}","entry":"Sales.twb"}`);
    const found = await call('artifact_search', { id: ref.id, entry: 'Sales.twb', pattern: 'Regional Sales' });
    const line = twb.split('\n').findIndex((l) => l.includes('Regional Sales')) + 1;
    expect(found).toContain(`${String(line).padStart(6)}:   <worksheet name='Regional Sales' />`);
    const binary = await tools.artifact_read!.call({ id: ref.id, entry: 'Data/Extracts/sales.hyper' });
    expect(binary.isError).toBe(true);
    expect(textOf(binary)).toMatch(/is binary/);
  });
});

describe('GitHub', () => {
  it('get_file_contents (REST JSON, base64 wrapped every 60 characters): a search equals grep -n on the file', async () => {
    const path = join(ROOT, 'src/service/views/search.ts');
    const source = readFileSync(path);
    const raw = {
      content: [
        {
          type: 'text',
          text: JSON.stringify({
            type: 'file',
            encoding: 'base64',
            name: 'search.ts',
            path: 'src/service/views/search.ts',
            content: payloads.wrapped60(source),
          }),
        },
      ],
    };
    const run = await transformToolResult('get_file_contents', raw, { store, serverName: 'github' });
    const ref = run.artifacts[0]!;
    const grep = spawnSync('grep', ['-n', '-F', 'const ', path], { encoding: 'utf8' }).stdout.trim().split('\n');
    const answer = await store.search!(ref.id, { pattern: 'const ', maxMatches: 500, budget: 1_000_000 });
    expect(answer.totalMatches).toBe(grep.length);
    expect(answer.lines.filter((l) => l.match).map((l) => `${l.line}:${l.text}`)).toEqual(grep);
    const regexGrep = spawnSync('grep', ['-n', '-E', '^export (async )?function', path], { encoding: 'utf8' })
      .stdout.trim()
      .split('\n');
    const regex = await store.search!(ref.id, { pattern: '^export (async )?function', regex: true, maxMatches: 500 });
    expect(regex.lines.map((l) => `${l.line}:${l.text}`)).toEqual(regexGrep);
  });

  it('list_issues (a large JSON array): the one issue asked about, by JSONPath, equals a walk of JSON.parse', async () => {
    const issues = Array.from({ length: 3000 }, (_, i) => ({
      number: 7000 + i,
      title: `Issue ${7000 + i}`,
      state: i % 4 === 0 ? 'closed' : 'open',
      user: { login: `dev${i % 17}` },
      labels: i % 10 === 0 ? [{ name: 'bug' }] : [],
      body: 'x'.repeat(200),
    }));
    const raw = { content: [{ type: 'text', text: JSON.stringify(issues) }] };
    const run = await transformToolResult('list_issues', raw, {
      store,
      serverName: 'github',
      config: { viewTools: true },
    });
    const ref = run.artifacts[0]!;
    expect(JSON.stringify(run.result)).toContain('artifact_query, artifact_search or artifact_read to look inside');
    const answer = await store.query!(ref.id, {
      path: "$[?@.user.login == 'dev5' && @.labels[0].name == 'bug'].number",
    });
    const truth = (JSON.parse(raw.content[0]!.text) as typeof issues)
      .map((issue, i) => ({ issue, i }))
      .filter(({ issue }) => issue.user.login === 'dev5' && issue.labels[0]?.name === 'bug')
      .map(({ issue, i }) => ({ path: `$[${i}]['number']`, value: issue.number }));
    expect(answer.matches).toEqual(truth);
    expect(answer.totalMatches).toBe(truth.length);
    const text = await call('artifact_query', { id: ref.id, path: '$[2999]' });
    expect(text).toContain(`$[2999] = {"number":9999,"title":"Issue 9999"`);
  });
});

describe('artifact_list', () => {
  it("shows the scope's artifacts newest first, as the model sees refs, and pages on", async () => {
    const first = JSON.parse(await call('artifact_list', { limit: 2 }));
    expect(first.artifacts).toHaveLength(2);
    expect(first.nextCursor).toEqual(expect.any(String));
    const next = JSON.parse(await call('artifact_list', { limit: 2, cursor: first.nextCursor }));
    expect(next.artifacts[0].id).not.toBe(first.artifacts[0].id);
    const pdfs = JSON.parse(await call('artifact_list', { mimePrefix: 'application/pdf' }));
    expect(pdfs.artifacts.map((a: { mimeType: string }) => a.mimeType)).toEqual(['application/pdf']);
    const bad = await tools.artifact_list!.call({ limit: 1000 });
    expect(bad.isError).toBe(true);
  });
});
