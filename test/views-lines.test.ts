/**
 * The line engine of the views (src/service/views/lines.ts, search.ts, pattern.ts) against naive
 * models written here: random texts (empty lines, CRLF, no or a trailing newline, é, 中, emoji, a
 * U+FEFF, very long lines) delivered in random chunks, or by positioned reads that may come up short,
 * with checkpoints every few bytes and tiny spans, so that every seam between checkpoints, spans,
 * chunks and buffers is crossed many times.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { enableLinearRegExps } from '../src/node/regexps.js';
import { buildIndex, type LineIndex, type LineSource, readLines } from '../src/service/views/lines.js';
import { compilePattern, foldCase, hasLinearEngine } from '../src/service/views/pattern.js';
import { type FoundLine, searchLines } from '../src/service/views/search.js';

// As the Node service runs: every pattern is checked to run on the linear engine.
enableLinearRegExps();

const encoder = new TextEncoder();

/** A source over bytes in memory that counts what is left open (streams not read to the end nor cancelled). */
function memorySource(
  bytes: Uint8Array,
  o: { chunks: number[]; reader: boolean; shortReads: number[] },
): LineSource & { open_: () => number } {
  let open = 0;
  let turn = 0;
  const nextSize = (list: number[]) => list[turn++ % list.length]!;
  return {
    size: bytes.byteLength,
    open_: () => open,
    async open(from) {
      let pos = from;
      let ended = false;
      open++;
      const end = () => {
        if (!ended) open--;
        ended = true;
      };
      return new ReadableStream<Uint8Array>(
        {
          pull(c) {
            if (pos >= bytes.byteLength) {
              end();
              c.close();
              return;
            }
            // Chunks of 0 bytes now and then: a stream may deliver them.
            const n = nextSize(o.chunks);
            c.enqueue(bytes.slice(pos, pos + n));
            pos += n;
          },
          cancel: end,
        },
        { highWaterMark: 0 },
      );
    },
    ...(o.reader
      ? {
          async openReader() {
            open++;
            return {
              async read(target: Uint8Array, position: number) {
                const short = o.shortReads.length > 0 ? Math.max(1, nextSize(o.shortReads)) : target.byteLength;
                const n = Math.max(0, Math.min(target.byteLength, short, bytes.byteLength - position));
                target.set(bytes.subarray(position, position + n));
                return n;
              },
              async close() {
                open--;
              },
            };
          },
        }
      : {}),
  };
}

/** The lines as grep counts them: split at \n; a final empty piece (the text ends in \n) is no line. */
function naiveLines(text: string): string[] {
  if (text === '') return [];
  const parts = text.split('\n');
  if (text.endsWith('\n')) parts.pop();
  return parts;
}

const CHARS = ['a', 'b', 'c', 'x', 'X', 'A', 'B', '1', '42', ' ', '\t', 'é', 'É', '中', '😀', '\r', '\uFEFF'];
const shortLine = fc.array(fc.constantFrom(...CHARS), { maxLength: 12 }).map((a) => a.join(''));
const longLine = fc
  .tuple(fc.array(fc.constantFrom(...CHARS), { minLength: 1, maxLength: 8 }), fc.integer({ min: 20, max: 400 }))
  .map(([a, n]) => a.join('').repeat(n));
const line = fc.oneof(
  { weight: 6, arbitrary: shortLine },
  { weight: 2, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: longLine },
);
/** A text of lines ending \n or \r\n, with or without a final line end. */
const text = fc.tuple(fc.array(fc.tuple(line, fc.boolean()), { maxLength: 30 }), fc.boolean()).map(([ls, trailing]) => {
  const body = ls.map(([l, crlf], i) => (i < ls.length - 1 ? `${l}${crlf ? '\r\n' : '\n'}` : l)).join('');
  return trailing && ls.length > 0 ? `${body}\n` : body;
});

/** How the bytes arrive, and how the index is spaced. */
const delivery = fc.record({
  chunks: fc.array(fc.oneof(fc.integer({ min: 1, max: 16 }), fc.integer({ min: 1, max: 4096 }), fc.constant(0)), {
    minLength: 1,
    maxLength: 8,
  }),
  reader: fc.boolean(),
  shortReads: fc.oneof(
    fc.constant([] as number[]),
    fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 5 }),
  ),
  checkpointBytes: fc.integer({ min: 7, max: 200 }),
});
// A stream of 0-byte chunks only would never end.
const sourceFor = (bytes: Uint8Array, d: { chunks: number[]; reader: boolean; shortReads: number[] }) =>
  memorySource(bytes, { ...d, chunks: d.chunks.some((n) => n > 0) ? d.chunks : [1] });

const lone = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function checkIndex(index: LineIndex, bytes: Uint8Array, lines: string[]) {
  expect(index.totalLines).toBe(lines.length);
  expect(index.lines[0]).toBe(1);
  expect(index.bytes[0]).toBe(0);
  // Every checkpoint is where its line starts.
  let at = 0;
  const starts: number[] = [];
  for (const l of lines) {
    starts.push(at);
    at += encoder.encode(l).byteLength + 1;
  }
  for (let k = 1; k < index.lines.length; k++) {
    expect(index.bytes[k]).toBe(starts[index.lines[k]! - 1]);
    expect(index.bytes[k]!).toBeGreaterThan(index.bytes[k - 1]!);
    expect(index.bytes[k]!).toBeLessThan(bytes.byteLength);
  }
}

describe('line index and reads', () => {
  it('counts lines as grep does, with a checkpoint at a line start every few bytes', async () => {
    await fc.assert(
      fc.asyncProperty(text, delivery, async (t, d) => {
        const bytes = encoder.encode(t);
        const src = sourceFor(bytes, d);
        const index = await buildIndex(src, { checkpointBytes: d.checkpointBytes });
        checkIndex(index, bytes, naiveLines(t));
        expect(src.open_()).toBe(0);
      }),
      { numRuns: 300 },
    );
  });

  it('reads every line exactly once, page by page, within each budget, cutting no surrogate pair', async () => {
    const pages = fc.array(
      fc.record({ limit: fc.integer({ min: 1, max: 6 }), maxChars: fc.integer({ min: 0, max: 300 }) }),
      { minLength: 1, maxLength: 6 },
    );
    await fc.assert(
      fc.asyncProperty(text, delivery, pages, fc.integer({ min: 1, max: 9 }), async (t, d, budgets, perLine) => {
        const bytes = encoder.encode(t);
        const src = sourceFor(bytes, d);
        const index = await buildIndex(src, { checkpointBytes: d.checkpointBytes });
        const want = naiveLines(t);
        const got: string[] = [];
        let offset: number | null = 1;
        let column = 1;
        for (let page = 0; offset !== null; page++) {
          expect(page).toBeLessThan(t.length + 2 * want.length + 5);
          const { limit, maxChars } = budgets[page % budgets.length]!;
          const r = await readLines(src, index, { offset, limit, column, maxChars, perLine });
          expect(src.open_()).toBe(0);
          expect(r.totalLines).toBe(want.length);
          expect(r.offset).toBe(offset);
          expect(r.lines.length).toBeLessThanOrEqual(limit);
          if (want.length > 0) expect(r.lines.length).toBeGreaterThan(0);
          // The first line shows at least one character however small the budget; the rest fit.
          const used = r.lines.reduce((a, l) => a + l.length + perLine, 0);
          if (maxChars - perLine >= 2) expect(used).toBeLessThanOrEqual(maxChars);
          for (const l of r.lines) expect(l).not.toMatch(lone);
          if (column > 1) got[got.length - 1] += r.lines[0]!;
          else if (r.lines.length > 0) got.push(r.lines[0]!);
          got.push(...r.lines.slice(1));
          if (r.nextColumn !== undefined) {
            expect(r.nextOffset).toBe(offset + r.lines.length - 1);
            expect(r.nextColumn).toBeGreaterThan(r.lines.length === 1 ? column : 1);
          }
          offset = r.nextOffset;
          column = r.nextColumn ?? 1;
        }
        expect(got).toEqual(want);
        expect(got.join('\n') + (t.endsWith('\n') ? '\n' : '')).toBe(t);
      }),
      { numRuns: 300 },
    );
  });

  it('reads from any line and column, and refuses an offset past the end', async () => {
    await fc.assert(
      fc.asyncProperty(
        text.filter((t) => t.length > 0),
        delivery,
        fc.nat(),
        fc.integer({ min: 1, max: 5 }),
        fc.nat({ max: 50 }),
        async (t, d, pick, limit, skip) => {
          const bytes = encoder.encode(t);
          const src = sourceFor(bytes, d);
          const index = await buildIndex(src, { checkpointBytes: d.checkpointBytes });
          const want = naiveLines(t);
          const offset = (pick % want.length) + 1;
          // A column at a character boundary: not inside a surrogate pair.
          let column = Math.min(skip, want[offset - 1]!.length) + 1;
          const code = want[offset - 1]!.charCodeAt(column - 1);
          if (code >= 0xdc00 && code <= 0xdfff) column++;
          const r = await readLines(src, index, { offset, limit, column, maxChars: 1e9, perLine: 1 });
          expect(src.open_()).toBe(0);
          expect(r.lines).toEqual([want[offset - 1]!.slice(column - 1), ...want.slice(offset, offset - 1 + limit)]);
          expect(r.nextOffset).toBe(offset - 1 + limit < want.length ? offset + limit : null);
          await expect(
            readLines(src, index, { offset: want.length + 1, limit, column: 1, maxChars: 1e9, perLine: 1 }),
          ).rejects.toThrow(/past the end/);
          expect(src.open_()).toBe(0);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('reads the empty text as no lines', async () => {
    const src = memorySource(new Uint8Array(0), { chunks: [1], reader: false, shortReads: [] });
    const index = await buildIndex(src, { checkpointBytes: 7 });
    expect(index.totalLines).toBe(0);
    const r = await readLines(src, index, { offset: 1, limit: 10, column: 1, maxChars: 100, perLine: 8 });
    expect(r).toEqual({ offset: 1, lines: [], totalLines: 0, nextOffset: null });
  });

  it('makes progress at a budget of one character before a surrogate pair', async () => {
    const src = memorySource(encoder.encode('😀😀\nb'), { chunks: [3], reader: false, shortReads: [] });
    const index = await buildIndex(src, { checkpointBytes: 7 });
    const r = await readLines(src, index, { offset: 1, limit: 5, column: 1, maxChars: 9, perLine: 8 });
    expect(r.lines).toEqual(['😀']);
    expect(r.nextColumn).toBe(3);
  });
});

/** How a search's pattern is given, and the naive test of a line for it. */
interface Case {
  pattern: string;
  regex: boolean;
  ignoreCase: boolean;
}
const escapeRe = (s: string) => s.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');
const naiveTest = (c: Case) => {
  const re = new RegExp(c.regex ? c.pattern : escapeRe(c.pattern), c.ignoreCase ? 'i' : '');
  return (l: string) => (c.regex || c.ignoreCase ? re.test(l) : l.includes(c.pattern));
};
const REGEXES = ['^x', 'x$', '\\d+', '[a-c]+', '.', '^$', 'é', '中+', 'a|X', '\\bab', 'b\\s', '^\\s*$', '😀'];
const caseFor = (t: string) =>
  fc.oneof(
    fc.tuple(fc.nat(), fc.integer({ min: 1, max: 6 }), fc.boolean()).map(([at, n, ignoreCase]) => {
      // A piece of the text without a line break (at a character boundary), or an absent string.
      const chars = [...t.replace(/[\r\n]/g, '')];
      const start = chars.length ? at % chars.length : 0;
      const pattern = chars.slice(start, start + n).join('') || 'zq';
      return { pattern, regex: false, ignoreCase };
    }),
    fc.record({ pattern: fc.constantFrom('zq', 'Q#', 'éA'), regex: fc.constant(false), ignoreCase: fc.boolean() }),
    fc.record({ pattern: fc.constantFrom(...REGEXES), regex: fc.constant(true), ignoreCase: fc.boolean() }),
  );

/** What grep -n -C shows from `offset` with `maxMatches`, the context after the last match stopping at the next one. */
function naiveSearch(
  lines: string[],
  test: (l: string) => boolean,
  offset: number,
  context: number,
  maxMatches: number,
) {
  const matches: number[] = [];
  for (let n = offset; n <= lines.length; n++) if (test(lines[n - 1]!)) matches.push(n);
  const shown = matches.slice(0, maxMatches);
  const next = matches[maxMatches];
  const lineSet = new Set<number>();
  for (const m of shown) {
    for (let n = Math.max(offset, m - context); n <= Math.min(lines.length, m + context); n++) {
      if (next === undefined || n < next) lineSet.add(n);
    }
  }
  const entries = [...lineSet]
    .sort((a, b) => a - b)
    .map((n) => ({ line: n, text: lines[n - 1]!, match: shown.includes(n) }));
  return { matches, entries };
}

const spans = fc.record({
  spanBytes: fc.integer({ min: 1, max: 300 }),
  regexSpanBytes: fc.integer({ min: 1, max: 300 }),
  maxSpanExtra: fc.integer({ min: 1, max: 400 }),
});

async function search(
  src: LineSource,
  index: LineIndex,
  c: Case,
  o: { offset: number; context: number; maxMatches: number; maxChars: number; perLine: number; maxLineChars: number },
  s: { spanBytes: number; regexSpanBytes: number; maxSpanBytes: number },
) {
  return searchLines(src, index, {
    matcher: compilePattern(c.pattern, c.regex, c.ignoreCase),
    ...o,
    deadline: Number.POSITIVE_INFINITY,
    now: () => 0,
    ...s,
  });
}

const longest = (t: string) => Math.max(0, ...naiveLines(t).map((l) => encoder.encode(l).byteLength));

describe('search', () => {
  it('finds the lines grep finds, with grep -C context, within the budget, counting every match', async () => {
    await fc.assert(
      fc.asyncProperty(
        text.chain((t) => fc.tuple(fc.constant(t), caseFor(t))),
        delivery,
        spans,
        fc.record({
          pick: fc.nat(),
          context: fc.integer({ min: 0, max: 4 }),
          maxMatches: fc.integer({ min: 0, max: 8 }),
          maxChars: fc.oneof(fc.integer({ min: 0, max: 400 }), fc.constant(1e9)),
          perLine: fc.integer({ min: 1, max: 9 }),
        }),
        async ([t, c], d, sp, q) => {
          const bytes = encoder.encode(t);
          const src = sourceFor(bytes, d);
          const index = await buildIndex(src, { checkpointBytes: d.checkpointBytes });
          const lines = naiveLines(t);
          const offset = (q.pick % Math.max(1, lines.length)) + 1;
          const sizes = { ...sp, maxSpanBytes: longest(t) + sp.maxSpanExtra };
          const r = await search(src, index, c, { ...q, offset, maxLineChars: 1e9 }, sizes);
          expect(src.open_()).toBe(0);
          const want = naiveSearch(lines, naiveTest(c), offset, q.context, q.maxMatches);
          expect(r.totalMatches).toBe(want.matches.length);
          // What is shown is the start of what grep shows: it stops where the next line (or a match
          // with its context before) would not fit.
          expect(r.lines).toEqual(want.entries.slice(0, r.lines.length));
          const shownMatches = r.lines.filter((l) => l.match).length;
          expect(r.returnedMatches).toBe(shownMatches);
          expect(r.nextOffset).toBe(want.matches[shownMatches] ?? null);
          const used = r.lines.reduce((a, l) => a + l.text.length + q.perLine, 0);
          expect(used).toBeLessThanOrEqual(q.maxChars);
          if (r.lines.length < want.entries.length) {
            const lastMatch = r.lines.filter((l) => l.match).at(-1)?.line;
            const rest = want.entries.slice(r.lines.length);
            const k = rest.findIndex((e) => e.match);
            // Context after the last match shown goes line by line; a match goes with its context before.
            const after = lastMatch !== undefined && rest[0]!.line <= lastMatch + q.context;
            const group = after ? [rest[0]!] : rest.slice(0, k + 1);
            const cost = group.reduce((a, e) => a + e.text.length + q.perLine, 0);
            expect(cost).toBeGreaterThan(q.maxChars - used);
          }
        },
      ),
      { numRuns: 700 },
    );
  });

  it('pages through every match exactly once by nextOffset', async () => {
    await fc.assert(
      fc.asyncProperty(
        text.chain((t) => fc.tuple(fc.constant(t), caseFor(t))),
        delivery,
        spans,
        fc.record({
          pick: fc.nat(),
          context: fc.integer({ min: 0, max: 3 }),
          maxMatches: fc.integer({ min: 1, max: 5 }),
          extra: fc.nat({ max: 500 }),
          maxLineChars: fc.integer({ min: 16, max: 80 }),
        }),
        async ([t, c], d, sp, q) => {
          const bytes = encoder.encode(t);
          const src = sourceFor(bytes, d);
          const index = await buildIndex(src, { checkpointBytes: d.checkpointBytes });
          const lines = naiveLines(t);
          const test = naiveTest(c);
          const from = (q.pick % Math.max(1, lines.length)) + 1;
          const sizes = { ...sp, maxSpanBytes: longest(t) + sp.maxSpanExtra };
          const perLine = 8;
          // Room for a match with its context, each line cut to maxLineChars (and its markers).
          const maxChars = (2 * q.context + 1) * (q.maxLineChars + 40 + perLine) + q.extra;
          const seen: number[] = [];
          let offset: number | null = from;
          let first: number | undefined;
          for (let page = 0; offset !== null; page++) {
            expect(page).toBeLessThanOrEqual(lines.length);
            const r = await search(
              src,
              index,
              c,
              { offset, context: q.context, maxMatches: q.maxMatches, maxChars, perLine, maxLineChars: q.maxLineChars },
              sizes,
            );
            expect(src.open_()).toBe(0);
            first ??= r.totalMatches;
            if (r.totalMatches > 0) expect(r.returnedMatches).toBeGreaterThan(0);
            checkShown(r.lines, lines, test, q.maxLineChars, c);
            seen.push(...r.lines.filter((l) => l.match).map((l) => l.line));
            offset = r.nextOffset;
          }
          const want = naiveSearch(lines, test, from, 0, Number.MAX_SAFE_INTEGER).matches;
          expect(seen).toEqual(want);
          if (want.length > 0) expect(first).toBe(want.length);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('counts a line longer than a span once, however many of its pieces match', async () => {
    // A one-byte pattern cannot run across a cut, so the count is exact.
    const lineOfX = fc
      .tuple(fc.array(fc.constantFrom('x', 'a', 'é', '\n', 'xx'), { maxLength: 400 }), fc.boolean())
      .map(([a]) => a.join(''));
    await fc.assert(
      fc.asyncProperty(
        lineOfX,
        delivery,
        fc.constantFrom<Case>(
          { pattern: 'x', regex: false, ignoreCase: false },
          { pattern: 'x', regex: true, ignoreCase: false },
          { pattern: 'X', regex: false, ignoreCase: true },
          { pattern: '[a]', regex: true, ignoreCase: false },
        ),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 0, max: 2 }),
        async (t, d, c, maxSpanBytes, context) => {
          const bytes = encoder.encode(t);
          const src = sourceFor(bytes, { ...d, reader: false });
          const index = await buildIndex(src, { checkpointBytes: d.checkpointBytes });
          const lines = naiveLines(t);
          const sizes = { spanBytes: maxSpanBytes, regexSpanBytes: maxSpanBytes, maxSpanBytes };
          const r = await search(
            src,
            index,
            c,
            { offset: 1, context, maxMatches: 1e6, maxChars: 1e9, perLine: 1, maxLineChars: 1e9 },
            sizes,
          );
          const want = naiveSearch(lines, naiveTest(c), 1, context, 1e6);
          expect(r.totalMatches).toBe(want.matches.length);
          expect(r.lines.filter((l) => l.match).map((l) => l.line)).toEqual(want.matches);
          const numbers = r.lines.map((l) => l.line);
          expect(new Set(numbers).size).toBe(numbers.length);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('cuts a long matching line around its match, counted in characters', async () => {
    const src = memorySource(encoder.encode(`${'é'.repeat(300)}needle${'b'.repeat(300)}\n`), {
      chunks: [4096],
      reader: true,
      shortReads: [],
    });
    const index = await buildIndex(src, { checkpointBytes: 7 });
    const r = await search(
      src,
      index,
      { pattern: 'needle', regex: false, ignoreCase: false },
      { offset: 1, context: 0, maxMatches: 5, maxChars: 1e6, perLine: 8, maxLineChars: 40 },
      { spanBytes: 64, regexSpanBytes: 64, maxSpanBytes: 8 << 20 },
    );
    expect(r.lines[0]!.text).toContain('needle');
  });

  it('refuses an offset past the end, and finds nothing in the empty text', async () => {
    const src = memorySource(encoder.encode('a\nb'), { chunks: [1], reader: false, shortReads: [] });
    const index = await buildIndex(src, { checkpointBytes: 7 });
    const o = { context: 0, maxMatches: 5, maxChars: 1e6, perLine: 8, maxLineChars: 100 };
    const sizes = { spanBytes: 64, regexSpanBytes: 64, maxSpanBytes: 1024 };
    const c = { pattern: 'a', regex: false, ignoreCase: false };
    await expect(search(src, index, c, { ...o, offset: 3 }, sizes)).rejects.toThrow(/past the end/);
    const empty = memorySource(new Uint8Array(0), { chunks: [1], reader: false, shortReads: [] });
    const none = await search(empty, await buildIndex(empty), c, { ...o, offset: 1 }, sizes);
    expect(none).toEqual({ totalMatches: 0, returnedMatches: 0, lines: [], nextOffset: null });
  });
});

/** Each shown line is its line (cut around the match when long), a match exactly when it matches. */
function checkShown(shown: FoundLine[], lines: string[], test: (l: string) => boolean, max: number, c: Case) {
  const numbers = shown.map((l) => l.line);
  expect([...numbers].sort((a, b) => a - b)).toEqual(numbers);
  expect(new Set(numbers).size).toBe(numbers.length);
  for (const l of shown) {
    const whole = lines[l.line - 1]!;
    if (l.match) expect(test(whole)).toBe(true);
    if (whole.length <= max) {
      expect(l.text).toBe(whole);
      continue;
    }
    const m = /^(?:\[…([\d,]+) chars\] )?([\s\S]*?)(?: \[…([\d,]+) chars\])?$/.exec(l.text)!;
    const head = Number((m[1] ?? '0').replace(/,/g, ''));
    const body = m[2]!;
    const tail = Number((m[3] ?? '0').replace(/,/g, ''));
    expect(body.length).toBeLessThanOrEqual(max);
    expect(whole.slice(head, head + body.length)).toBe(body);
    expect(head + body.length + tail).toBe(whole.length);
    expect(body).not.toMatch(lone);
    // A fixed string is in the part shown, when the part has room for it on both sides.
    if (l.match && !c.regex && !c.ignoreCase && c.pattern.length * 2 + 4 <= max) expect(body).toContain(c.pattern);
  }
}

/** Patterns from a small grammar: letters (some non-ASCII), classes, ranges, escapes, groups, quantifiers. */
const LETTERS = ['a', 'A', 'b', 'B', 'k', 'K', 's', 'S', 'z', 'Z', 'é', 'É', 'µ', 'μ', 'ς', 'Σ', '1', '_', '-', ' '];
const ESCAPES = ['\\d', '\\w', '\\W', '\\s', '\\b', '\\B', '\\x41', '\\x7a', '\\u00e9', '\\-', '\\.', '\\q', '.'];
const CLASS_ENDS = ['a', 'c', 'A', 'C', 'X', 'Z', 'z', '0', '9', '_', '`', 'é', 'Ω', 'ω', '\\x41', '\\x62'];
type Node = string | { group: 'plain' | 'nc' | 'named'; body: Node[][] };
const atom: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...LETTERS),
  fc.constantFrom(...ESCAPES),
  fc
    .tuple(
      fc.boolean(),
      fc.array(
        fc.oneof(
          fc.constantFrom(...LETTERS, '\\d', '\\w', '\\b', '\\B', '-'),
          fc.tuple(fc.constantFrom(...CLASS_ENDS), fc.constantFrom(...CLASS_ENDS)).map(([a, b]) => `${a}-${b}`),
        ),
        { maxLength: 4 },
      ),
    )
    .map(([neg, items]) => `[${neg ? '^' : ''}${items.join('')}]`),
);
const quantifier = fc.constantFrom('', '', '', '*', '+', '?', '{1,2}', '{2}');
const { pattern } = fc.letrec<{ pattern: Node[][]; piece: Node }>((tie) => ({
  pattern: fc.array(fc.array(tie('piece'), { maxLength: 4 }), { minLength: 1, maxLength: 3 }),
  piece: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.tuple(atom, quantifier).map(([a, q]) => a + q),
    fc.record({ group: fc.constantFrom('plain', 'nc', 'named'), body: tie('pattern') }) as fc.Arbitrary<Node>,
  ),
}));
function render(alts: Node[][], names = { n: 0 }): string {
  return alts
    .map((seq) =>
      seq
        .map((p) => {
          if (typeof p === 'string') return p;
          const open = p.group === 'plain' ? '(' : p.group === 'nc' ? '(?:' : `(?<g${++names.n}>`;
          return `${open}${render(p.body, names)})`;
        })
        .join(''),
    )
    .join('|');
}
const subject = fc
  .array(fc.constantFrom(...LETTERS, 'x', 'X', 'é', 'ſ', '\u212A', 'ω', 'Ω', '[', ']', '`', '9', 'Y', 'y'), {
    maxLength: 8,
  })
  .map((a) => a.join(''));

describe('foldCase', () => {
  it('matches what the i flag matches, with the same groups', () => {
    fc.assert(
      fc.property(
        pattern.map((p) => render(p)),
        fc.array(subject, { minLength: 1, maxLength: 6 }),
        (p, strings) => {
          let withFlag: RegExp;
          try {
            withFlag = new RegExp(p, 'i');
          } catch {
            fc.pre(false);
            return;
          }
          const folded = foldCase(p);
          const bare = new RegExp(folded);
          if (hasLinearEngine()) new RegExp(folded, 'l');
          for (const s of strings) {
            const a = withFlag.exec(s);
            const b = bare.exec(s);
            expect(
              b && { m: [...b], index: b.index, groups: b.groups },
              `${p} → ${folded} on ${JSON.stringify(s)}`,
            ).toEqual(a && { m: [...a], index: a.index, groups: a.groups });
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('folds classes with a trailing dash, ranges across the cases, and escaped letters', () => {
    for (const [p, yes, no] of [
      ['[a-]', ['A', '-'], ['b']],
      ['[X-c]', ['y', 'B', '_'], ['d']],
      ['\\x41', ['a'], ['b']],
      ['µ', ['μ', 'Μ'], ['m']],
      ['[^a-c]', ['d'], ['B']],
    ] as const) {
      const re = new RegExp(`^${foldCase(p)}$`);
      for (const s of yes) expect(re.test(s), `${p} ${s}`).toBe(true);
      for (const s of no) expect(re.test(s), `${p} ${s}`).toBe(false);
    }
  });
});
