/**
 * The JSON view's query (src/service/views/json-query.ts). Ground truth comes from hand-written walks
 * over JSON.parse'd documents (normalized paths built here, in document order); every answer must fit
 * its budget, keep its value lines JSON, cut values only by the markers, and never split a surrogate
 * pair. A large document (about 100 MB as JSON, far less in memory: its long strings are shared)
 * checks that `$..*` stops counting at the cap.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ArtifactError } from '../src/core/errors.js';
import { checkJsonPath, MAX_COUNTED_MATCHES, MAX_PATH_CHARS, queryJson } from '../src/service/views/json-query.js';
import type { JsonQueryResult } from '../src/service/views/sandbox.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
interface Found {
  path: string;
  value: unknown;
}

// ---------------------------------------------------------------------------------------------------
// Ground truth: walks written by hand

const isObject = (v: unknown): v is Record<string, Json> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A member name in a normalized path (RFC 9535 §2.7): single quotes; \b \f \n \r \t, \\, \' and \u00xx escapes. */
function nameSegment(key: string): string {
  let out = '';
  for (const ch of key) {
    const c = ch.codePointAt(0)!;
    if (ch === "'") out += "\\'";
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `['${out}']`;
}

function children(v: unknown, path: string): Found[] {
  if (Array.isArray(v)) return v.map((item, i) => ({ path: `${path}[${i}]`, value: item }));
  if (isObject(v)) return Object.keys(v).map((k) => ({ path: path + nameSegment(k), value: v[k] }));
  return [];
}

/** The node and every node under it, parents before children, in document order. */
function descendants(v: unknown, path = '$'): Found[] {
  const out: Found[] = [{ path, value: v }];
  for (const child of children(v, path)) out.push(...descendants(child.value, child.path));
  return out;
}

const member = (found: Found[], key: string): Found[] =>
  found.flatMap((f) =>
    isObject(f.value) && Object.hasOwn(f.value, key) ? [{ path: f.path + nameSegment(key), value: f.value[key] }] : [],
  );

// ---------------------------------------------------------------------------------------------------
// Documents

/** A small PRNG so the generated documents are the same on every run. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A GitHub search-issues answer: `{ total_count, incomplete_results, items }`. */
function githubIssues(count: number): { total_count: number; incomplete_results: boolean; items: Json[] } {
  const next = random(42);
  const words = ['crash', 'slow', 'docs', 'login', 'cache', 'upload', 'timeout', 'emoji 🎉', 'config'];
  const labels = ['bug', 'p1', 'docs', 'perf', 'good first issue'];
  const items: Json[] = [];
  for (let i = 0; i < count; i++) {
    const word = words[Math.floor(next() * words.length)]!;
    const login = next() < 0.2 ? `bot-${Math.floor(next() * 100)}` : `user${Math.floor(next() * 500)}`;
    items.push({
      number: 10_000 - i,
      title: `${word[0]!.toUpperCase()}${word.slice(1)} in module ${i % 37}`,
      state: next() < 0.6 ? 'open' : 'closed',
      user: { login, id: Math.floor(next() * 1e6) },
      labels: labels.filter(() => next() < 0.3).map((name) => ({ name })),
      comments: Math.floor(next() * 40),
      body: `Seen on build ${i}. `.repeat(1 + Math.floor(next() * 20)),
      assignee: next() < 0.5 ? null : { login: `user${i % 50}` },
    });
  }
  return { total_count: count, incomplete_results: false, items };
}

const issues = githubIssues(5000);
const items = issues.items as Record<string, Json>[];
const listIssues = JSON.parse(
  readFileSync(new URL('./fixtures/views/json/github-list-issues.json', import.meta.url), 'utf8'),
) as Json[];

const odd = JSON.parse(
  JSON.stringify({
    "it's": 1,
    'a"b': [true, null],
    'tab\there': { 'new\nline': 'x' },
    'back\\slash': 2,
    '\u0001': 3,
    '\u0002': 4,
    '\u001f': 5,
  }),
) as Json;

// ---------------------------------------------------------------------------------------------------
// Checks every answer must pass

/** No lone surrogate: every high surrogate is followed by a low one, every low one preceded by a high one. */
const wellFormed = (s: string) => !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);
const lineText = (m: { path: string; value: unknown }) => `${m.path} = ${JSON.stringify(m.value)}`;
const stringCut = /^(.*)… \[cut: ([\d,]+) more chars?\]$/s;
const itemsCut = /^… \[cut: ([\d,]+) more items?\]$/;
const keysCut = /^\[cut: ([\d,]+) more keys?\]$/;
const containerCut = /^\[cut: (array|object) of ([\d,]+) (items?|keys?)\]$/;
const count = (s: string) => Number(s.replaceAll(',', ''));

/** `cut` is `orig` cut only as the markers say: kept prefixes of strings, first items, first keys. */
function expectCutOf(cut: unknown, orig: unknown, at: string): void {
  if (cut === orig) return;
  const container = typeof cut === 'string' ? containerCut.exec(cut) : null;
  if (container && orig !== null && typeof orig === 'object') {
    expect(container[1], at).toBe(Array.isArray(orig) ? 'array' : 'object');
    expect(count(container[2]!), at).toBe(Array.isArray(orig) ? orig.length : Object.keys(orig).length);
    return;
  }
  if (typeof orig === 'string') {
    expect(typeof cut, at).toBe('string');
    if (cut === '…' || cut === '') return;
    const m = stringCut.exec(cut as string);
    expect(m, `${at}: ${String(cut).slice(0, 80)}`).not.toBeNull();
    expect(orig.startsWith(m![1]!), at).toBe(true);
    expect(count(m![2]!), at).toBe(orig.length - m![1]!.length);
    return;
  }
  if (Array.isArray(orig)) {
    expect(Array.isArray(cut), at).toBe(true);
    const list = cut as unknown[];
    const last = list.at(-1);
    const marker = typeof last === 'string' && list.length <= orig.length ? itemsCut.exec(last) : null;
    const kept = marker ? list.length - 1 : list.length;
    if (marker) expect(count(marker[1]!), at).toBe(orig.length - kept);
    else expect(list.length, at).toBe(orig.length);
    for (let i = 0; i < kept; i++) expectCutOf(list[i], orig[i], `${at}[${i}]`);
    return;
  }
  if (isObject(orig)) {
    expect(isObject(cut), at).toBe(true);
    const keys = Object.keys(cut as object);
    const origKeys = Object.keys(orig);
    const lastKey = keys.at(-1);
    const marker =
      lastKey?.startsWith('…') && !Object.hasOwn(orig, lastKey)
        ? keysCut.exec(String((cut as Record<string, unknown>)[lastKey]))
        : null;
    const kept = marker ? keys.slice(0, -1) : keys;
    if (marker) expect(count(marker[1]!), at).toBe(origKeys.length - kept.length);
    else expect(keys.length, at).toBe(origKeys.length);
    expect(kept, at).toEqual(origKeys.slice(0, kept.length));
    for (const k of kept) expectCutOf((cut as Record<string, unknown>)[k], orig[k], at + nameSegment(k));
    return;
  }
  expect(cut, at).toEqual(orig);
}

/** Everything an answer must be, against the ground truth. */
function expectAnswer(result: JsonQueryResult, truth: Found[], budget: number): void {
  expect(result.text.length).toBeLessThanOrEqual(budget);
  expect(wellFormed(result.text)).toBe(true);
  expect(result.totalMatches).toBe(truth.length);
  expect(result.totalIsLowerBound).toBeUndefined();
  expect(result.matches.length).toBeLessThanOrEqual(truth.length);
  const lines = result.text.split('\n');
  if (truth.length === 0) {
    expect(result.text).toMatch(/^No value matches /);
    return;
  }
  expect(lines[0]).toMatch(/^[\d,]+ values? match(es)? /);
  result.matches.forEach((m, i) => {
    const expected = truth[i]!;
    if (m.path.endsWith('…')) expect(m.cut).toMatch(/^path cut/);
    else expect(m.path).toBe(expected.path);
    if (m.cut === undefined) expect(m.value).toEqual(expected.value);
    else expectCutOf(m.value, expected.value, expected.path);
    expect(lines[i + 1]).toBe(lineText(m));
    // The line is JSON after "path = ": the markers are JSON strings.
    expect(JSON.parse(lines[i + 1]!.slice(m.path.length + 3))).toEqual(m.value);
  });
  if (result.matches.length < truth.length) {
    expect(lines).toHaveLength(result.matches.length + 2);
    expect(lines.at(-1)).toMatch(
      new RegExp(
        `^Showing ${result.matches.length.toLocaleString('en-US')} of ${truth.length.toLocaleString('en-US')} values; narrow the path`,
      ),
    );
  } else {
    expect(lines).toHaveLength(result.matches.length + 1);
  }
}

// ---------------------------------------------------------------------------------------------------

const CASES: { name: string; doc: Json; path: string; truth: (doc: Json) => Found[] }[] = [
  {
    name: 'a member of a member',
    doc: { a: { b: [1, 2] } },
    path: '$.a.b',
    truth: () => [{ path: "$['a']['b']", value: [1, 2] }],
  },
  { name: 'the root', doc: listIssues, path: '$', truth: (d) => [{ path: '$', value: d }] },
  {
    name: 'one field of each item (fixture)',
    doc: listIssues,
    path: '$[*].title',
    truth: (d) => member(children(d, '$'), 'title'),
  },
  {
    name: 'open issues (fixture)',
    doc: listIssues,
    path: "$[?@.state == 'open'].number",
    truth: (d) =>
      member(
        children(d, '$').filter((f) => isObject(f.value) && f.value.state === 'open'),
        'number',
      ),
  },
  {
    name: 'descendants named name (fixture)',
    doc: listIssues,
    path: '$..name',
    truth: (d) => member(descendants(d), 'name'),
  },
  {
    name: 'every node (fixture)',
    doc: listIssues,
    path: '$..*',
    truth: (d) => descendants(d).flatMap((f) => children(f.value, f.path)),
  },
  {
    name: 'keys that need escapes',
    doc: odd,
    path: '$.*',
    truth: () => [
      { path: "$['it\\'s']", value: 1 },
      { path: `$['a"b']`, value: [true, null] },
      { path: "$['tab\\there']", value: { 'new\nline': 'x' } },
      { path: "$['back\\\\slash']", value: 2 },
      { path: "$['\\u0001']", value: 3 },
      { path: "$['\\u0002']", value: 4 },
      { path: "$['\\u001f']", value: 5 },
    ],
  },
  {
    name: 'a scalar member',
    doc: issues,
    path: '$.total_count',
    truth: () => [{ path: "$['total_count']", value: 5000 }],
  },
  {
    name: 'one field of each of 5,000 items',
    doc: issues,
    path: '$.items[*].number',
    truth: (d) => member(children((d as Record<string, Json>).items, "$['items']"), 'number'),
  },
  { name: 'descendants named login', doc: issues, path: '$..login', truth: (d) => member(descendants(d), 'login') },
  {
    name: 'a slice with a step',
    doc: issues,
    path: '$.items[10:40:3].title',
    truth: () =>
      [10, 13, 16, 19, 22, 25, 28, 31, 34, 37, 40]
        .filter((i) => i < 40)
        .map((i) => ({ path: `$['items'][${i}]['title']`, value: items[i]!.title })),
  },
  {
    name: 'a negative slice',
    doc: issues,
    path: '$.items[-2:]',
    truth: () => [4998, 4999].map((i) => ({ path: `$['items'][${i}]`, value: items[i] })),
  },
  {
    name: 'a filter with && and a comparison',
    doc: issues,
    path: "$.items[?@.comments > 30 && @.state == 'closed'].title",
    truth: () =>
      items.flatMap((it, i) =>
        (it.comments as number) > 30 && it.state === 'closed'
          ? [{ path: `$['items'][${i}]['title']`, value: it.title }]
          : [],
      ),
  },
  {
    name: 'length() in a filter',
    doc: issues,
    path: '$.items[?length(@.labels) >= 2].number',
    truth: () =>
      items.flatMap((it, i) =>
        (it.labels as Json[]).length >= 2 ? [{ path: `$['items'][${i}]['number']`, value: it.number }] : [],
      ),
  },
  {
    name: 'search() and match() in filters',
    doc: issues,
    path: "$.items[?search(@.title, 'Crash|Slow') && match(@.user.login, 'bot-[0-9]+')].user",
    truth: () =>
      items.flatMap((it, i) =>
        /Crash|Slow/.test(it.title as string) && /^bot-[0-9]+$/.test((it.user as Record<string, string>).login!)
          ? [{ path: `$['items'][${i}]['user']`, value: it.user }]
          : [],
      ),
  },
  {
    name: 'an existence test on null members',
    doc: issues,
    path: '$.items[?@.assignee == null].number',
    truth: () =>
      items.flatMap((it, i) =>
        it.assignee === null ? [{ path: `$['items'][${i}]['number']`, value: it.number }] : [],
      ),
  },
  { name: 'no match', doc: issues, path: '$.issues[*].title', truth: () => [] },
];

describe('queryJson against hand-written walks', () => {
  for (const c of CASES) {
    it(`${c.name}: ${c.path}`, () => {
      const truth = c.truth(c.doc);
      if (c.name !== 'no match') expect(truth.length).toBeGreaterThan(0);
      const whole = queryJson(c.doc, c.path, 100_000_000);
      expect(whole.matches).toEqual(truth);
      expectAnswer(whole, truth, 100_000_000);
      for (const budget of [200, 257, 600, 1000, 2500, 8000, 30_000])
        expectAnswer(queryJson(c.doc, c.path, budget), truth, budget);
    });
  }

  it('reads as the model is meant to read it', () => {
    const result = queryJson(listIssues, "$[?@.state == 'open'].title", 4000);
    expect(result.text).toBe(
      "2 values match $[?@.state == 'open'].title:\n" +
        `$[0]['title'] = "Crash on start when the config file is empty"\n` +
        `$[2]['title'] = "Slow query on the issues page"`,
    );
    const one = queryJson(listIssues, '$[1].number', 4000);
    expect(one.text).toBe("1 value matches $[1].number:\n$[1]['number'] = 4209");
  });

  it('shows the first matches and says how to see others when not all fit', () => {
    const result = queryJson(issues, '$.items[*].title', 2000);
    expect(result.totalMatches).toBe(5000);
    expect(result.matches.length).toBeGreaterThan(10);
    expect(result.text.split('\n').at(-1)).toBe(
      `Showing ${result.matches.length} of 5,000 values; narrow the path (a filter, an index or a slice such as [0:50]) to see others.`,
    );
  });
});

describe('cutting a value too big for the budget', () => {
  const doc = {
    id: 7,
    body: 'lorem ipsum '.repeat(4018),
    rows: Array.from({ length: 5000 }, (_, i) => ({ i, tags: ['a', 'b'] })),
    deep: { a: { b: { c: { d: { e: { f: { g: 'bottom' } } } } } } },
  };
  const body = doc.body.length;

  it('keeps the structure and says what was left out', () => {
    const result = queryJson(doc, '$', 2000);
    expectAnswer(result, [{ path: '$', value: doc }], 2000);
    const [m] = result.matches;
    const value = m!.value as typeof doc;
    expect(value.id).toBe(7);
    expect(value.body).toMatch(/… \[cut: [\d,]+ more chars\]$/);
    expect(value.rows.at(-1)).toMatch(/^… \[cut: [\d,]+ more items\]$/);
    expect(m!.cut).toContain(`string at $['body'] cut to`);
    expect(m!.cut).toContain(`of ${body.toLocaleString('en-US')} chars`);
    expect(m!.cut).toMatch(/[\d,]+ of 5,000 items of \$\['rows'\] left out/);
  });

  it('replaces deep nesting with a marker', () => {
    let deep: Json = ['bottom'];
    for (let i = 0; i < 100; i++) deep = { level: deep };
    const result = queryJson(deep, '$', 300);
    expectAnswer(result, [{ path: '$', value: deep }], 300);
    expect(result.text).toMatch(/"\[cut: object of 1 key\]"\}+$/);
    expect(result.matches[0]!.cut).toMatch(/^the contents of \$\['level'\]\['level'\].* left out \(nested too deep\)$/);
  });

  it('shares the budget among matches: a big value does not crowd out the small ones', () => {
    const result = queryJson(doc, '$.*', 1500);
    expect(result.matches.map((m) => m.path)).toEqual(["$['id']", "$['body']", "$['rows']", "$['deep']"]);
    expect(result.matches[0]!.value).toBe(7);
    expect(result.matches[3]!.value).toEqual(doc.deep);
    expectAnswer(result, children(doc, '$'), 1500);
  });

  it('never splits a surrogate pair', () => {
    const emoji = {
      '😀 key 😀': '😀'.repeat(30_000),
      list: Array.from({ length: 300 }, (_, i) => '🎉'.repeat(i + 1)),
      mixed: `a${'𝄞'.repeat(999)}`,
    };
    for (const path of ['$', '$.*', '$..*', "$['😀 key 😀']", '$.list[*]']) {
      const truth = path === '$' ? [{ path: '$', value: emoji }] : undefined;
      for (let budget = 200; budget < 3000; budget += 37) {
        const result = queryJson(emoji, path, budget);
        expect(result.text.length).toBeLessThanOrEqual(budget);
        expect(wellFormed(result.text), `${path} @ ${budget}`).toBe(true);
        expect(result.text).not.toMatch(/\\ud[89a-f]/i);
        for (const m of result.matches) expect(wellFormed(JSON.stringify(m.value))).toBe(true);
        if (truth) expectAnswer(result, truth, budget);
      }
    }
  });
});

describe('the property: any JSON, any budget', () => {
  const PATHS: Record<string, (doc: Json) => Found[]> = {
    $: (d) => [{ path: '$', value: d }],
    '$.*': (d) => children(d, '$'),
    '$..*': (d) => descendants(d).flatMap((f) => children(f.value, f.path)),
    '$..a': (d) => member(descendants(d), 'a'),
    '$..[0]': (d) =>
      descendants(d).flatMap((f) =>
        Array.isArray(f.value) && f.value.length ? [{ path: `${f.path}[0]`, value: f.value[0] }] : [],
      ),
  };
  const key = fc.oneof(fc.constantFrom('a', 'b', 'items', "it's", '😀'), fc.string({ unit: 'binary', maxLength: 6 }));
  const leaf = fc.oneof(
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.string({ unit: 'binary', maxLength: 40 }),
    fc.string({ unit: 'grapheme', minLength: 200, maxLength: 3000 }),
  );
  const json: fc.Arbitrary<Json> = fc
    .letrec<{ value: Json }>((tie) => ({
      value: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        leaf,
        fc.array(tie('value'), { maxLength: 30 }),
        fc.dictionary(key, tie('value'), { maxKeys: 12 }),
      ),
    }))
    .value.map((v) => JSON.parse(JSON.stringify(v)) as Json);

  it('fits the budget, keeps document order and cuts only by the markers', () => {
    fc.assert(
      fc.property(
        json,
        fc.constantFrom(...Object.keys(PATHS)),
        fc.integer({ min: 200, max: 50_000 }),
        (doc, path, budget) => {
          expectAnswer(queryJson(doc, path, budget), PATHS[path]!(doc), budget);
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe('no match', () => {
  it('lists the top-level keys of an object', () => {
    const result = queryJson(issues, '$.issues[*].title', 4000);
    expect(result).toEqual({ totalMatches: 0, matches: [], text: expect.any(String) });
    expect(result.text).toContain('No value matches $.issues[*].title.');
    expect(result.text).toContain('Check the keys at the top level (3): "total_count", "incomplete_results", "items"');
  });

  it('cuts a long list of keys to the budget and says how many more there are', () => {
    const doc = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`key_${i}`, i]));
    for (const budget of [200, 500, 4000]) {
      const result = queryJson(doc, '$.nope', budget);
      expect(result.text.length).toBeLessThanOrEqual(budget);
      expect(result.text).toMatch(/"key_0", .* and [\d,]+ more/);
    }
  });

  it('says what the document is when it is not an object', () => {
    expect(queryJson(listIssues, '$.items', 1000).text).toContain('The document is an array of 3 items');
    expect(queryJson('just text', '$.a', 1000).text).toContain('The document is a string');
  });
});

describe('invalid paths', () => {
  const refused = (path: string): ArtifactError => {
    try {
      checkJsonPath(path);
    } catch (err) {
      expect(err).toBeInstanceOf(ArtifactError);
      expect(() => queryJson({}, path, 1000)).toThrow(ArtifactError);
      return err as ArtifactError;
    }
    throw new Error(`${path} was accepted`);
  };

  it.each([
    ['$.a[', 'unclosed bracketed selection at character 5'],
    ['items[0]', "expected '$'"],
    ['$[?@.a == ]', 'at character'],
    ['$[?match(@.a)]', 'match() takes 2 arguments'],
    ['$.a[1:2:0', 'at character'],
    ['$..', 'at character'],
    ["$[?@.a == 'open]", 'at character'],
  ])('%s → bad_request saying where and what', (path, says) => {
    const err = refused(path);
    expect(err.code).toBe('bad_request');
    expect(err.message).toContain(`Invalid JSONPath ${JSON.stringify(path)}`);
    expect(err.message).toContain(says);
    expect(err.message).toContain("$.items[0].name, $..title or $.issues[?@.state == 'open']");
  });

  it('refuses a path over 2,000 characters', () => {
    const path = `$${'.a'.repeat(MAX_PATH_CHARS)}`;
    const err = refused(path);
    expect(err.code).toBe('bad_request');
    expect(err.message).toContain('at most 2,000 are allowed');
    expect(err.message.length).toBeLessThan(600);
  });

  it('accepts the examples it gives', () => {
    for (const path of ['$.items[0].name', '$..title', "$.issues[?@.state == 'open']", '$', '$[0:50]'])
      expect(() => checkJsonPath(path)).not.toThrow();
  });
});

describe('bounds on a large document', () => {
  it('refuses a descendant segment over nesting deeper than it walks', () => {
    let deep: Json = 'bottom';
    for (let i = 0; i < 400; i++) deep = { a: deep };
    expect(() => queryJson(deep, '$..a', 1000)).toThrow(expect.objectContaining({ code: 'unprocessable' }));
    // Child segments reach it.
    expect(queryJson(deep, '$.a.a.a', 1000).totalMatches).toBe(1);
  });

  it('counts at most MAX_COUNTED_MATCHES nodes of $..* over ~100 MB of JSON and says so', () => {
    // 200,000 issues; the long strings are shared, so the JSON is ~100 MB but the heap holds far less.
    const body = 'Steps to reproduce: open the page, wait, see the error. '.repeat(8);
    const big = {
      items: Array.from({ length: 200_000 }, (_, i) => ({
        number: i,
        title: `Issue ${i}`,
        state: i % 3 ? 'open' : 'closed',
        labels: [{ name: 'bug' }],
        user: { login: `user${i % 100}` },
        body,
      })),
    };
    const started = performance.now();
    const result = queryJson(big, '$..*', 8000);
    expect(result.totalIsLowerBound).toBe(true);
    expect(result.totalMatches).toBe(MAX_COUNTED_MATCHES);
    expect(result.text.length).toBeLessThanOrEqual(8000);
    expect(result.text).toMatch(/^At least 100,000 values match \$\.\.\*:/);
    expect(result.text.split('\n').at(-1)).toMatch(/^Showing [\d,]+ of at least 100,000 values; narrow the path/);
    expect(result.matches[0]!.path).toBe("$['items']");
    expect(result.matches[1]!.path).toBe("$['items'][0]");

    // A whole-document value is cut without walking the whole of it.
    const root = queryJson(big, '$', 4000);
    expect(root.text.length).toBeLessThanOrEqual(4000);
    expect(root.matches[0]!.cut).toMatch(/of 200,000 items of \$\['items'\] left out/);

    // A filter that selects nothing still walks every item once, and says so in time.
    const none = queryJson(big, '$.items[?@.number == -1]', 4000);
    expect(none.totalMatches).toBe(0);
    expect(performance.now() - started).toBeLessThan(20_000);
  });
});
