import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, bytesOf, createTestApp, putArtifact, RUNTIME, type TestApp } from './helpers/app.js';

/**
 * GET /v1/artifacts/{id}/text, /search and /query over HTTP, on both runtimes: answers against ground
 * truth computed here another way, the budget, and every bad input a careless or hostile caller sends.
 */
let t: TestApp;
let token: string;

beforeAll(async () => {
  t = await createTestApp();
  token = await t.token({ tenant: 'acme', perms: ['read', 'write'] });
});
afterAll(async () => {
  await t.cleanup();
});

async function put(body: string | Uint8Array, type: string, headers: Record<string, string> = {}, who = token) {
  const bytes = typeof body === 'string' ? new TextEncoder().encode(body) : body;
  const { json } = await putArtifact(t.app, who, bytes, { 'Content-Type': type, ...headers });
  return json.id as string;
}

async function get(path: string, who = token) {
  const res = await t.app.request(path, { headers: bearer(who) });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

const q = (o: Record<string, string | number | boolean>) =>
  new URLSearchParams(Object.entries(o).map(([k, v]) => [k, String(v)])).toString();

/** A build log: numbered lines, a few errors, unicode and an empty line. */
function buildLog(lines: number): string {
  const out: string[] = [];
  for (let i = 1; i <= lines; i++) {
    if (i % 997 === 0) out.push(`ERROR step ${i}: compiler exited with code ${i % 7} — see “${i}.log” 🚨`);
    else if (i % 250 === 0) out.push('');
    else out.push(`[${String(i).padStart(6, '0')}] INFO compiled module_${i % 31}.ts in ${i % 97} ms`);
  }
  return `${out.join('\n')}\n`;
}

/** grep -n, written out: 1-based numbers of the lines holding `needle`. */
const grepN = (text: string, test: (line: string) => boolean) =>
  text
    .split('\n')
    .slice(0, text.endsWith('\n') ? -1 : undefined)
    .flatMap((line, i) => (test(line) ? [{ line: i + 1, text: line }] : []));

describe('read', () => {
  it('pages through a whole log: joined, the pages give its exact text', async () => {
    const text = buildLog(12_000);
    const id = await put(text, 'text/plain', { 'X-Artifact-Filename': 'build.log' });
    const lines: string[] = [];
    let offset: number | null = 1;
    let pages = 0;
    while (offset !== null) {
      const { status, body } = await get(`/v1/artifacts/${id}/text?${q({ offset, budget: 20_000 })}`);
      expect(status).toBe(200);
      expect(body.text.length).toBeLessThanOrEqual(20_000);
      expect(body.offset).toBe(offset);
      expect(body.totalLines).toBe(12_000);
      expect(body.view).toBe('text');
      lines.push(...body.lines);
      offset = body.nextOffset;
      pages++;
    }
    expect(pages).toBeGreaterThan(5);
    expect(`${lines.join('\n')}\n`).toBe(text);
  });

  it('numbers the lines for the model and says how to go on', async () => {
    const id = await put('alpha\nbeta\ngamma\n', 'text/plain', { 'X-Artifact-Filename': 'g.txt' });
    const { body } = await get(`/v1/artifacts/${id}/text?${q({ offset: 2, limit: 1 })}`);
    expect(body.lines).toEqual(['beta']);
    expect(body.nextOffset).toBe(3);
    expect(body.text).toContain('     2\tbeta');
    expect(body.text).toContain('line 2 of 3');
    expect(body.text).toContain(`artifact_read {"id":"${id}","offset":3}`);
    const end = await get(`/v1/artifacts/${id}/text?${q({ offset: 3 })}`);
    expect(end.body.nextOffset).toBeNull();
    expect(end.body.text).toContain('End of the artifact');
  });

  it('a line longer than the budget is read in parts that never split a character', async () => {
    const long = `${'𝄞é'.repeat(3000)}x`;
    const text = `head\n${long}\ntail`;
    const id = await put(text, 'text/plain');
    const parts: string[] = [];
    let column: number | undefined;
    const offset: number | null = 2;
    for (;;) {
      const { status, body } = await get(
        `/v1/artifacts/${id}/text?${q({ offset: offset!, budget: 1000, limit: 1, ...(column ? { column } : {}) })}`,
      );
      expect(status).toBe(200);
      expect(body.text.length).toBeLessThanOrEqual(1000);
      const part = body.lines[0] as string;
      // No lone surrogate at either end.
      expect(part).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
      parts.push(part);
      if (body.nextColumn === undefined) break;
      expect(body.nextOffset).toBe(2);
      column = body.nextColumn;
    }
    expect(parts.join('')).toBe(long);
    expect(parts.length).toBeGreaterThan(5);
  });

  it('answers bad offsets, limits and budgets with 400 and what to do', async () => {
    const id = await put('one\ntwo\n', 'text/plain');
    for (const query of [
      'offset=3',
      'offset=0',
      'limit=0',
      'budget=10',
      'budget=999999999',
      'offset=abc',
      'column=0',
    ]) {
      const { status, body } = await get(`/v1/artifacts/${id}/text?${query}`);
      expect(status, query).toBe(400);
      expect(body.code).toBe('bad_request');
      expect(body.message.length).toBeGreaterThan(20);
    }
    const past = await get(`/v1/artifacts/${id}/text?offset=3`);
    expect(past.body.message).toContain('2 lines');
    // A huge limit is an upper bound: the budget decides.
    const huge = await get(`/v1/artifacts/${id}/text?limit=1000000000`);
    expect(huge.status).toBe(200);
    expect(huge.body.lines).toEqual(['one', 'two']);
  });

  it('a binary artifact has no lines: 415 with its type, pointing at artifact_url', async () => {
    const id = await put(bytesOf(4000, 3), 'application/octet-stream', { 'X-Artifact-Filename': 'blob.bin' });
    for (const path of [`text`, `search?pattern=a`, `query?path=%24`]) {
      const { status, body } = await get(`/v1/artifacts/${id}/${path}`);
      expect(status, path).toBe(415);
      expect(body.code).toBe('unsupported_type');
      expect(body.message).toContain('application/octet-stream');
      expect(body.message).toContain('artifact_url');
    }
  });

  it('an image answers its type and pixel size and a link, never bytes', async () => {
    // A 3×2 PNG: signature, IHDR, IDAT, IEND (the pixels need not decode for the header to be read).
    const png = new Uint8Array([
      0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 3, 0, 0, 0, 2, 8, 2,
      0, 0, 0, 0x12, 0x16, 0xf1, 0x4d, 0, 0, 0, 0, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
    ]);
    const id = await put(png, 'image/png', { 'X-Artifact-Filename': 'shot.png' });
    const { status, body } = await get(`/v1/artifacts/${id}/text`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ view: 'image', width: 3, height: 2, lines: [] });
    expect(body.text).toContain('3×2 px');
    expect(body.text).not.toMatch(/iVBOR/);
  });
});

describe('search', () => {
  const text = buildLog(20_000);
  let id: string;
  beforeAll(async () => {
    id = await put(text, 'text/plain', { 'X-Artifact-Filename': 'build.log' });
  });

  it('finds the lines grep -n finds, fixed and regex, and counts them all', async () => {
    const cases: [Record<string, string | number | boolean>, (l: string) => boolean][] = [
      [{ pattern: 'ERROR' }, (l) => l.includes('ERROR')],
      [{ pattern: 'error', ignoreCase: true }, (l) => l.toLowerCase().includes('error')],
      [{ pattern: 'code [35] — ', regex: true }, (l) => /code [35] — /.test(l)],
      [{ pattern: '^$', regex: true }, (l) => l === ''],
      [{ pattern: 'Module_1\\d\\.TS', regex: true, ignoreCase: true }, (l) => /module_1\d\.ts/i.test(l)],
      [{ pattern: '🚨' }, (l) => l.includes('🚨')],
    ];
    for (const [params, test] of cases) {
      const truth = grepN(text, test);
      const got: { line: number; text: string }[] = [];
      let offset: number | null = 1;
      while (offset !== null) {
        const { status, body } = await get(
          `/v1/artifacts/${id}/search?${q({ ...params, maxMatches: 500, offset, budget: 1_000_000 })}`,
        );
        expect(status, JSON.stringify(params)).toBe(200);
        if (offset === 1) expect(body.totalMatches, JSON.stringify(params)).toBe(truth.length);
        got.push(...body.lines.filter((l: any) => l.match).map((l: any) => ({ line: l.line, text: l.text })));
        offset = body.nextOffset;
      }
      expect(got, JSON.stringify(params)).toEqual(truth);
    }
  });

  it('shows context lines around matches, grouped like grep -C', async () => {
    const { body } = await get(`/v1/artifacts/${id}/search?${q({ pattern: 'ERROR', context: 2, maxMatches: 2 })}`);
    expect(body.lines.map((l: any) => [l.line, l.match])).toEqual([
      [995, false],
      [996, false],
      [997, true],
      [998, false],
      [999, false],
      [1992, false],
      [1993, false],
      [1994, true],
      [1995, false],
      [1996, false],
    ]);
    expect(body.text).toContain('   997: ERROR step 997');
    expect(body.text).toContain('--\n');
    expect(body.nextOffset).toBe(2991);
    expect(body.text).toContain(`"offset":2991`);
  });

  it('a match right after another is a match, not context, and context stops where grep -C stops', async () => {
    const rows = Array.from({ length: 40 }, (_, i) => ([10, 11, 30].includes(i + 1) ? `hit ${i + 1}` : `row ${i + 1}`));
    const near = await put(`${rows.join('\n')}\n`, 'text/plain');
    const { body } = await get(`/v1/artifacts/${near}/search?${q({ pattern: 'hit', context: 2 })}`);
    expect(body.returnedMatches).toBe(3);
    expect(body.lines.map((l: any) => `${l.line}${l.match ? ':' : '-'}`)).toEqual([
      '8-',
      '9-',
      '10:',
      '11:',
      '12-',
      '13-',
      '28-',
      '29-',
      '30:',
      '31-',
      '32-',
    ]);
  });

  // Workers' V8 has no linear-time engine: there the platform's CPU limit per request bounds a hostile pattern.
  it.skipIf(RUNTIME === 'workerd')(
    'a catastrophic pattern on a long line answers, and is not a match (not on workerd: its V8 has no linear-time regexp engine)',
    async () => {
      const long = await put(`${'a'.repeat(50_000)}b\n`, 'text/plain');
      const hostile = await get(`/v1/artifacts/${long}/search?${q({ pattern: '(a+)+$', regex: true })}`);
      expect(hostile.status).toBe(200);
      expect(hostile.body.totalMatches).toBe(0);
    },
  );

  it('a regex leaves out lines too long to run it over, and says so; a fixed string finds them', async () => {
    const long = `${'x'.repeat(70_000)} needle-in-a-long-line`;
    const id = await put(`first needle\n${long}\nlast needle\n`, 'text/plain');
    const regex = await get(`/v1/artifacts/${id}/search?${q({ pattern: 'needle', regex: true })}`);
    expect(regex.status).toBe(200);
    expect(regex.body.lines.map((l: any) => l.line)).toEqual([1, 3]);
    expect(regex.body.longLinesSkipped).toEqual({ count: 1, first: 2 });
    expect(regex.body.text).toContain('1 line was left out, the first line 2');
    const fixed = await get(`/v1/artifacts/${id}/search?${q({ pattern: 'needle' })}`);
    expect(fixed.body.lines.map((l: any) => l.line)).toEqual([1, 2, 3]);
    expect(fixed.body.longLinesSkipped).toBeUndefined();
    expect(fixed.body.lines[1].text).toContain('needle-in-a-long-line');
  });

  it('refuses broken patterns with 400 and what to change', async () => {
    const long = await put(`${'a'.repeat(500)}b\n`, 'text/plain');
    const linearOnly: (readonly [string, boolean])[] =
      RUNTIME === 'node'
        ? [
            ['(a)\\1', true],
            ['a(?=b)', true],
          ]
        : [];
    for (const [pattern, regex] of [
      ...linearOnly,
      ['(unclosed', true],
      ['', false],
      ['x'.repeat(1001), false],
      ['two\nlines', false],
    ] as const) {
      const { status, body } = await get(`/v1/artifacts/${long}/search?${q({ pattern, regex })}`);
      expect(status, pattern.slice(0, 20)).toBe(400);
      expect(body.code).toBe('bad_request');
    }
    const missing = await get(`/v1/artifacts/${long}/search`);
    expect(missing.status).toBe(400);
  });
});

describe('query', () => {
  it('selects JSON values with their normalized paths', async () => {
    const doc = {
      total_count: 3,
      items: [
        { number: 41, title: 'Crash on start', state: 'open', labels: [{ name: 'bug' }] },
        { number: 42, title: 'Slow query', state: 'closed', labels: [] },
        { number: 43, title: 'Docs typo', state: 'open', labels: [{ name: 'docs' }] },
      ],
    };
    const id = await put(JSON.stringify(doc), 'application/json');
    const { status, body } = await get(`/v1/artifacts/${id}/query?${q({ path: "$.items[?@.state == 'open'].title" })}`);
    expect(status).toBe(200);
    expect(body.totalMatches).toBe(2);
    expect(body.matches).toEqual([
      { path: "$['items'][0]['title']", value: 'Crash on start' },
      { path: "$['items'][2]['title']", value: 'Docs typo' },
    ]);
    expect(body.text).toContain(`$['items'][2]['title'] = "Docs typo"`);
    const bad = await get(`/v1/artifacts/${id}/query?${q({ path: '$.items[' })}`);
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain('JSONPath');
  });

  it('a document that is not JSON answers 422', async () => {
    const id = await put('{"a": [1, 2,', 'application/json');
    const { status, body } = await get(`/v1/artifacts/${id}/query?${q({ path: '$.a' })}`);
    expect(status).toBe(422);
    expect(body.code).toBe('unprocessable');
  });
});

describe('scope', () => {
  it("another tenant's id answers exactly as a missing one, on every view", async () => {
    const id = await put('secret\nlines\n', 'text/plain');
    const other = await t.token({ tenant: 'rival', perms: ['read', 'write'] });
    const never = `${id.slice(0, -4)}ffff`;
    for (const path of ['text', 'search?pattern=secret', 'query?path=%24']) {
      const foreign = await get(`/v1/artifacts/${id}/${path}`, other);
      const missing = await get(`/v1/artifacts/${never}/${path}`, other);
      expect(foreign.status, path).toBe(404);
      expect(foreign.body.code).toBe('not_found');
      expect(foreign.body.message.replace(id, '<id>')).toBe(missing.body.message.replace(never, '<id>'));
    }
  });

  it('a session-bound token sees only its session', async () => {
    const a = await t.token({ tenant: 'acme', perms: ['read', 'write'], session: 's-a' });
    const b = await t.token({ tenant: 'acme', perms: ['read', 'write'], session: 's-b' });
    const id = await put('only for a\n', 'text/plain', {}, a);
    expect((await get(`/v1/artifacts/${id}/text`, a)).status).toBe(200);
    expect((await get(`/v1/artifacts/${id}/text`, b)).status).toBe(404);
    expect((await get(`/v1/artifacts/${id}/search?pattern=a`, b)).status).toBe(404);
  });
});
