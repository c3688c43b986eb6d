/**
 * The JSON view's query: an RFC 9535 JSONPath (json-p3) over a parsed document, answered as the
 * matched values with their normalized paths and a text a model reads within its budget. A value too
 * big for its share of the budget is cut structurally (keys and first items kept, long strings and
 * arrays ended with a marker, deep nesting replaced by one), so every value line stays JSON.
 *
 * Bounds, since the document is hostile input and may be 100 MB:
 * - evaluation is lazy and stops after MAX_COUNTED_MATCHES nodes (`totalIsLowerBound` then says so);
 *   only the first matches (as many as could fit the budget) are kept;
 * - descendant segments (`..`) refuse nesting deeper than MAX_DESCENT_DEPTH;
 * - cutting a value touches no more of it than the characters it may take.
 *
 * Regular expressions: `match()` and `search()` in filters take I-Regexp patterns (RFC 9485), which
 * json-p3 checks and then runs as JavaScript RegExps with the `u` flag, on V8's backtracking engine.
 * A pattern such as `(a+)+$` can take exponential time on a hostile string. V8's linear-time engine
 * (the `l` flag, or `--enable-experimental-regexp-engine-on-excessive-backtracks`) does not accept
 * the `u` flag (Node 20), so it cannot run these patterns. The protection is where queries run: a
 * worker thread with a wall-clock timeout on Node, the platform's CPU limit on Workers (sandbox.ts).
 */
import {
  JSONPathEnvironment,
  JSONPathError,
  type JSONPathNode,
  type JSONPathQuery,
  JSONPathRecursionLimitError,
  type JSONValue,
} from 'json-p3';
import { errors } from '../../core/errors.js';
import type { JsonQueryResult } from './sandbox.js';
import type { QueryMatch } from './types.js';

/** Longest path accepted, in characters. */
export const MAX_PATH_CHARS = 2000;
/** Nodes counted at most; past it `totalMatches` is a lower bound. */
export const MAX_COUNTED_MATCHES = 100_000;
/** Nesting a descendant segment (`..`) walks into at most. */
export const MAX_DESCENT_DEPTH = 256;

const PATH_EXAMPLES = "$.items[0].name, $..title or $.issues[?@.state == 'open']";
/** The shortest value line: `$[0] = 0`. Bounds how many matches could ever be shown. */
const MIN_LINE_CHARS = 8;
/** Characters a cut value line gets at least before later matches are left out. */
const LINE_FLOOR = 120;
/** Longest path quoted in a header or an error message. */
const QUOTED_PATH_CHARS = 200;

const environment = new JSONPathEnvironment({ maxRecursionDepth: MAX_DESCENT_DEPTH });

/**
 * Refuses a path that is not RFC 9535 JSONPath (or too long) with a `bad_request` that quotes it, says
 * where it is wrong and shows valid paths. Parses only: cheap enough to run before any byte is read.
 */
export function checkJsonPath(path: string): void {
  compilePath(path);
}

/**
 * Runs `path` over `doc` and answers with the first matches in document order, as many as fit
 * `budget` characters of `text`, each value cut structurally when it is too big for its share.
 *
 * @example
 * queryJson({ issues }, "$.issues[?@.state == 'open'].title", 4000).text
 * // 2 values match $.issues[?@.state == 'open'].title:
 * // $['issues'][0]['title'] = "Crash on start"
 * // $['issues'][4]['title'] = "Slow query"
 */
export function queryJson(doc: unknown, path: string, budget: number): JsonQueryResult {
  const query = compilePath(path);
  const budgetChars = Math.max(0, Math.floor(budget));
  const keepAtMost = Math.ceil(budgetChars / MIN_LINE_CHARS) + 1;
  const kept: JSONPathNode[] = [];
  let total = 0;
  let lowerBound = false;
  try {
    for (const node of query.lazyQuery(doc as JSONValue)) {
      if (total === MAX_COUNTED_MATCHES) {
        lowerBound = true;
        break;
      }
      total++;
      if (kept.length < keepAtMost) kept.push(node);
    }
  } catch (err) {
    if (err instanceof JSONPathRecursionLimitError)
      throw errors.unprocessable(
        `The document nests deeper than ${MAX_DESCENT_DEPTH} levels, too deep for a descendant segment (..) in ${quotePath(path)}. ` +
          'Select the way down with child segments instead, e.g. $.a.b[0].c.',
        { cause: err },
      );
    throw err;
  }
  const text = total === 0 ? noMatchText(doc, path, budgetChars) : undefined;
  if (text !== undefined) return { totalMatches: 0, matches: [], text: fitText(text, budgetChars) };
  const answer = renderMatches(path, kept, total, lowerBound, budgetChars);
  return lowerBound ? { ...answer, totalIsLowerBound: true } : answer;
}

function compilePath(path: string): JSONPathQuery {
  if (path.length > MAX_PATH_CHARS)
    throw errors.badRequest(
      `The JSONPath ${quotePath(path)} is ${formatCount(path.length)} characters long; at most ${formatCount(MAX_PATH_CHARS)} are allowed. ` +
        `Use a shorter path, e.g. ${PATH_EXAMPLES}.`,
    );
  try {
    return environment.compile(path);
  } catch (err) {
    // RangeError: a path nested deep enough to exhaust the parser's stack.
    if (!(err instanceof JSONPathError) && !(err instanceof RangeError)) throw err;
    // json-p3 ends its messages with `('<excerpt>':<0-based index>)`; the position is said in words instead.
    const at = err instanceof JSONPathError ? err.token?.index : undefined;
    const what = err.message.replace(/ \('.*':\d+\)$/s, '');
    const where =
      at === undefined
        ? ''
        : ` at character ${formatCount(at + 1)} (near ${JSON.stringify(path.slice(Math.max(0, at - 12), at + 12))})`;
    throw errors.badRequest(
      `Invalid JSONPath ${quotePath(path)}: ${what}${where}. A valid RFC 9535 path starts at $, e.g. ${PATH_EXAMPLES}.`,
      { cause: err },
    );
  }
}

// ---------------------------------------------------------------------------------------------------
// The answer's text

interface Line {
  path: string;
  value: unknown;
  /** Characters of `${path} = ${JSON}`, capped just over what any line may take. */
  size: number;
}

function renderMatches(
  path: string,
  nodes: JSONPathNode[],
  total: number,
  lowerBound: boolean,
  budget: number,
): JsonQueryResult {
  const header = headerLine(path, total, lowerBound, budget);
  const cap = budget + 1;
  const lines: Line[] = nodes.map((node) => {
    const at = normalizedPath(node.location);
    return { path: at, value: node.value, size: at.length + 3 + jsonSize(node.value, cap) };
  });
  const room = budget - header.length;

  // Everything whole, no footer needed.
  if (!lowerBound && lines.length === total) {
    const whole = lines.reduce((n, l) => n + 1 + l.size, 0);
    if (whole <= room) {
      const matches = lines.map((l) => ({ path: l.path, value: l.value }));
      return { totalMatches: total, matches, text: [header, ...matches.map(lineText)].join('\n') };
    }
  }

  const footerFor = (shown: number) => footerLine(shown, total, lowerBound, budget);
  let avail = room - 1 - footerFor(lines.length).length;
  // The prefix of matches that can each get at least the floor (or all they need).
  const shown: Line[] = [];
  for (const line of lines) {
    const floor = Math.min(line.size, shown.length === 0 ? Math.min(LINE_FLOOR, avail - 1) : LINE_FLOOR);
    if (floor < MIN_LINE_CHARS || floor + 1 > avail) break;
    shown.push(line);
    avail -= floor + 1;
  }
  const allots = shareOut(
    shown.map((l) => l.size),
    room - 1 - footerFor(lines.length).length - shown.length,
  );
  const matches: QueryMatch[] = shown.map((line, i) => fitLine(line, allots[i]!));
  const parts = [header, ...matches.map(lineText)];
  if (shown.length < total) parts.push(footerFor(shown.length));
  return { totalMatches: total, matches, text: fitText(parts.join('\n'), budget) };
}

/** Max-min fair shares of `room`: lines that need little get it whole, the rest split what is left. */
function shareOut(sizes: number[], room: number): number[] {
  const order = sizes.map((_, i) => i).sort((a, b) => sizes[a]! - sizes[b]!);
  const allots = new Array<number>(sizes.length).fill(0);
  let left = Math.max(0, room);
  order.forEach((index, k) => {
    const share = Math.floor(left / (order.length - k));
    allots[index] = Math.min(sizes[index]!, share);
    left -= allots[index]!;
  });
  return allots;
}

/** One match within `allot` characters of line: whole, or with its value cut (and the path if need be). */
function fitLine(line: Line, allot: number): QueryMatch {
  if (line.size <= allot) return { path: line.path, value: line.value };
  let at = line.path;
  const pathRoom = Math.max(1, allot - 3 - 16);
  if (at.length > pathRoom) at = `${cutText(at, pathRoom - 1)}…`;
  const cut = cutValue(line.value, allot - at.length - 3, line.path);
  const notes = at === line.path ? cut.notes : ['path cut', ...cut.notes];
  return { path: at, value: cut.value, ...(notes.length ? { cut: notes.join('; ') } : {}) };
}

const lineText = (m: QueryMatch) => `${m.path} = ${JSON.stringify(m.value)}`;

function headerLine(path: string, total: number, lowerBound: boolean, budget: number): string {
  const shownPath = cutPath(path, Math.max(16, Math.floor(budget / 4)));
  if (lowerBound) return `At least ${formatCount(total)} values match ${shownPath}:`;
  return total === 1 ? `1 value matches ${shownPath}:` : `${formatCount(total)} values match ${shownPath}:`;
}

function footerLine(shown: number, total: number, lowerBound: boolean, budget: number): string {
  const of = `Showing ${formatCount(shown)} of ${lowerBound ? 'at least ' : ''}${formatCount(total)} values`;
  const full = `${of}; narrow the path (a filter, an index or a slice such as [0:50]) to see others.`;
  return full.length <= budget / 3 ? full : `${of}; narrow the path to see others.`;
}

/**
 * No match: what the model most often got wrong is a key, so the answer lists the top-level keys
 * (an object) or says what the document is.
 */
function noMatchText(doc: unknown, path: string, budget: number): string {
  const head = `No value matches ${cutPath(path, Math.max(16, Math.floor(budget / 4)))}.`;
  if (Array.isArray(doc))
    return `${head} The document is an array of ${formatCount(doc.length)} items: check the path from the top, e.g. $[0] for the first item or $[*].name for a key of each.`;
  if (doc === null || typeof doc !== 'object')
    return `${head} The document is ${doc === null ? 'null' : `a ${typeof doc}`}, not an object or an array: only $ selects it.`;
  const keys = Object.keys(doc);
  if (keys.length === 0) return `${head} The document is an empty object.`;
  const intro = `${head} Check the keys at the top level (${formatCount(keys.length)}): `;
  const tail = '. Keys are case-sensitive; e.g. $.items[0].name selects under the key "items".';
  let listed = '';
  let count = 0;
  for (const key of keys) {
    const item = (count ? ', ' : '') + JSON.stringify(key.length > 80 ? `${cutText(key, 79)}…` : key);
    const more = ` and ${formatCount(keys.length - count - 1)} more`;
    if (intro.length + listed.length + item.length + more.length + tail.length > budget) break;
    listed += item;
    count++;
  }
  if (count < keys.length) listed += `${count ? ' and ' : ''}${formatCount(keys.length - count)} more`;
  return intro + listed + tail;
}

/** The last guard: text never over the budget, cut at a code point boundary. */
function fitText(text: string, budget: number): string {
  return text.length <= budget ? text : cutText(text, budget);
}

// ---------------------------------------------------------------------------------------------------
// Structural cutting

interface Limits {
  /** Characters of a string kept. */
  chars: number;
  /** Items of an array kept. */
  items: number;
  /** Keys of an object kept. */
  keys: number;
  /** Containers nested below the value kept (0: the value itself becomes a marker if it is one). */
  depth: number;
}

/** A chain of path segments, built only when a note needs its text. */
interface Where {
  parent: Where | undefined;
  segment: string;
}

interface Notes {
  strings: { at: Where; kept: number; of: number }[];
  items: { at: Where; kept: number; of: number }[];
  keys: { at: Where; kept: number; of: number }[];
  deep: { at: Where; depth: number }[];
}

const stringMarker = (n: number) => `… [cut: ${plural(n, 'more char')}]`;
const itemsMarker = (n: number) => `… [cut: ${plural(n, 'more item')}]`;
const keysMarker = (n: number) => `[cut: ${plural(n, 'more key')}]`;

/** Stops a cut as soon as what it built is over its room. */
class OverRoom extends Error {}

/**
 * `value` cut to fit `room` characters of compact JSON: limits halve until it fits; each round stops
 * as soon as it is over, so the work is bounded by `room`, not by the value. Returns the notes of
 * what was left out, in words, with paths under `path` (the value's normalized path).
 */
function cutValue(value: unknown, room: number, path: string): { value: unknown; notes: string[] } {
  const limits: Limits = {
    chars: Math.max(0, room),
    items: Math.max(1, Math.floor(room / 2)),
    keys: Math.max(1, Math.floor(room / 4)),
    depth: 64,
  };
  const root: Where = { parent: undefined, segment: path };
  for (let round = 0; round < 80; round++) {
    const notes: Notes = { strings: [], items: [], keys: [], deep: [] };
    const budget = { left: room };
    try {
      const cut = cutNode(value, limits, 0, root, notes, budget);
      return { value: cut, notes: describeNotes(notes) };
    } catch (err) {
      if (!(err instanceof OverRoom)) throw err;
    }
    if (limits.chars === 0 && limits.items === 1 && limits.keys === 1 && limits.depth === 0) break;
    limits.chars = Math.floor(limits.chars / 2);
    limits.items = Math.max(1, Math.floor(limits.items / 2));
    limits.keys = Math.max(1, Math.floor(limits.keys / 2));
    limits.depth = Math.floor(limits.depth / 2);
  }
  // Not even a marker fits whole: the shortest cut string that does.
  const marker = typeof value === 'string' ? fitJsonString(value, room) : fitJsonString(containerMarker(value), room);
  return { value: marker.text, notes: [`value at ${pathText(root)} left out`] };
}

function cutNode(
  value: unknown,
  limits: Limits,
  depth: number,
  at: Where,
  notes: Notes,
  budget: { left: number },
): unknown {
  if (typeof value === 'string') {
    if (value.length > limits.chars) {
      const kept = cutText(value, limits.chars);
      notes.strings.push({ at, kept: kept.length, of: value.length });
      return spend(kept + stringMarker(value.length - kept.length), budget);
    }
    spendChars(stringSize(value, budget.left + 1), budget);
    return value;
  }
  if (value === null || typeof value !== 'object') {
    spendChars(jsonSize(value, budget.left + 1), budget);
    return value;
  }
  if (depth >= limits.depth) {
    notes.deep.push({ at, depth });
    return spend(containerMarker(value), budget);
  }
  if (Array.isArray(value)) {
    spendChars(2, budget);
    const out: unknown[] = [];
    const n = Math.min(value.length, limits.items);
    for (let i = 0; i < n; i++) {
      if (i > 0) spendChars(1, budget);
      out.push(cutNode(value[i], limits, depth + 1, { parent: at, segment: `[${i}]` }, notes, budget));
    }
    if (value.length > n) {
      notes.items.push({ at, kept: n, of: value.length });
      spendChars(1, budget);
      out.push(spend(itemsMarker(value.length - n), budget));
    }
    return out;
  }
  spendChars(2, budget);
  const out: Record<string, unknown> = {};
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  const n = Math.min(keys.length, limits.keys);
  for (let i = 0; i < n; i++) {
    const key = keys[i]!;
    spendChars((i > 0 ? 1 : 0) + stringSize(key, budget.left + 1) + 1, budget);
    setKey(
      out,
      key,
      cutNode(record[key], limits, depth + 1, { parent: at, segment: `[${canonicalName(key)}]` }, notes, budget),
    );
  }
  if (keys.length > n) {
    notes.keys.push({ at, kept: n, of: keys.length });
    const markerKey = Object.hasOwn(record, '…') ? '… ' : '…';
    spendChars(1 + stringSize(markerKey) + 1, budget);
    setKey(out, markerKey, spend(keysMarker(keys.length - n), budget));
  }
  return out;
}

function spendChars(n: number, budget: { left: number }): void {
  budget.left -= n;
  if (budget.left < 0) throw new OverRoom();
}

function spend(s: string, budget: { left: number }): string {
  spendChars(stringSize(s, budget.left + 1), budget);
  return s;
}

function containerMarker(value: unknown): string {
  if (Array.isArray(value)) return `[cut: array of ${plural(value.length, 'item')}]`;
  if (value !== null && typeof value === 'object')
    return `[cut: object of ${plural(Object.keys(value).length, 'key')}]`;
  return '[cut]';
}

/** `s` cut (with a marker when anything is left out) so that its JSON takes at most `room` chars. */
function fitJsonString(s: string, room: number): { text: string } {
  if (stringSize(s) <= room) return { text: s };
  // Room for the kept characters: the marker's count has at most the digits of the whole length.
  let left = room - stringSize(stringMarker(s.length));
  if (left < 0) return { text: room >= 3 ? '…' : '' };
  let end = 0;
  while (end < s.length) {
    const width = charJsonWidth(s, end);
    const step = isHighSurrogate(s.charCodeAt(end)) && isLowSurrogate(s.charCodeAt(end + 1)) ? 2 : 1;
    if (width > left) break;
    left -= width;
    end += step;
  }
  return { text: s.slice(0, end) + stringMarker(s.length - end) };
}

function describeNotes(notes: Notes): string[] {
  const out: string[] = [];
  const [s] = notes.strings;
  if (s)
    out.push(
      notes.strings.length === 1
        ? `string at ${pathText(s.at)} cut to ${formatCount(s.kept)} of ${formatCount(s.of)} chars`
        : `${formatCount(notes.strings.length)} strings cut (the first at ${pathText(s.at)}, to ${formatCount(s.kept)} of ${formatCount(s.of)} chars)`,
    );
  const [a] = notes.items;
  if (a)
    out.push(
      notes.items.length === 1
        ? `${formatCount(a.of - a.kept)} of ${formatCount(a.of)} items of ${pathText(a.at)} left out`
        : `items of ${formatCount(notes.items.length)} arrays left out (the first: ${formatCount(a.of - a.kept)} of ${formatCount(a.of)} at ${pathText(a.at)})`,
    );
  const [k] = notes.keys;
  if (k)
    out.push(
      notes.keys.length === 1
        ? `${formatCount(k.of - k.kept)} of ${formatCount(k.of)} keys of ${pathText(k.at)} left out`
        : `keys of ${formatCount(notes.keys.length)} objects left out (the first: ${formatCount(k.of - k.kept)} of ${formatCount(k.of)} at ${pathText(k.at)})`,
    );
  const [d] = notes.deep;
  if (d)
    out.push(
      notes.deep.length === 1
        ? `the contents of ${pathText(d.at)} left out (nested too deep)`
        : `the contents of ${formatCount(notes.deep.length)} values nested ${d.depth} levels down left out (the first at ${pathText(d.at)})`,
    );
  return out;
}

/** A note's path, cut if long (a key can be megabytes). */
function pathText(at: Where): string {
  const segments: string[] = [];
  for (let w: Where | undefined = at; w; w = w.parent) segments.push(w.segment);
  return cutPath(segments.reverse().join(''), QUOTED_PATH_CHARS);
}

// ---------------------------------------------------------------------------------------------------
// Sizes and small helpers

/**
 * Characters of `JSON.stringify(value)`, exact up to `cap`; past it, some number over `cap` (the
 * walk stops there, so measuring a 100 MB value costs what the cap does).
 */
function jsonSize(value: unknown, cap = Number.POSITIVE_INFINITY): number {
  if (value === null) return 4;
  switch (typeof value) {
    case 'boolean':
      return value ? 4 : 5;
    case 'number':
      return Number.isFinite(value) ? String(value).length : 4;
    case 'string':
      return stringSize(value, cap);
    case 'object':
      break;
    default:
      return 4;
  }
  let total = 1;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length && total <= cap; i++) total += jsonSize(value[i], cap - total) + 1;
    if (value.length === 0) total += 1;
    return total;
  }
  let n = 0;
  for (const key of Object.keys(value as object)) {
    total += stringSize(key, cap - total) + 1 + jsonSize((value as Record<string, unknown>)[key], cap - total) + 1;
    n++;
    if (total > cap) break;
  }
  if (n === 0) total += 1;
  return total;
}

/** Characters of a string's JSON; past `cap` (by its length alone), a number over `cap`. */
function stringSize(s: string, cap = Number.POSITIVE_INFINITY): number {
  if (s.length + 2 > cap) return s.length + 2;
  return JSON.stringify(s).length;
}

/** Characters of JSON that the character (or surrogate pair) at `i` takes. */
function charJsonWidth(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c === 0x22 || c === 0x5c) return 2;
  if (c < 0x20) return c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d ? 2 : 6;
  if (isHighSurrogate(c)) return isLowSurrogate(s.charCodeAt(i + 1)) ? 2 : 6;
  if (isLowSurrogate(c)) return 6;
  return 1;
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/** The first `max` UTF-16 units of `s`, one fewer when that would split a surrogate pair. */
function cutText(s: string, max: number): string {
  if (s.length <= max) return s;
  let end = Math.max(0, max);
  if (end > 0 && isHighSurrogate(s.charCodeAt(end - 1)) && isLowSurrogate(s.charCodeAt(end))) end--;
  return s.slice(0, end);
}

function cutPath(path: string, max: number): string {
  return path.length <= max ? path : `${cutText(path, max - 1)}…`;
}

function quotePath(path: string): string {
  return JSON.stringify(cutPath(path, QUOTED_PATH_CHARS));
}

/**
 * A node's RFC 9535 normalized path, from its location. Written here rather than taken from json-p3,
 * whose canonical form drops control characters from member names (`{"\u0002": 0}` gave `$[~'']`).
 */
function normalizedPath(location: readonly unknown[]): string {
  let out = '$';
  for (const part of location) out += typeof part === 'number' ? `[${part}]` : `[${canonicalName(String(part))}]`;
  return out;
}

/** A member name as RFC 9535 normalized paths write it: single quotes, JSON escapes otherwise. */
function canonicalName(name: string): string {
  return `'${JSON.stringify(name).slice(1, -1).replaceAll('\\"', '"').replaceAll("'", "\\'")}'`;
}

/** Sets a key on a plain object, `__proto__` included (as an own property, like JSON.parse does). */
function setKey(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

const formatCount = (n: number): string => n.toLocaleString('en-US');
const plural = (n: number, noun: string): string => `${formatCount(n)} ${noun}${n === 1 ? '' : 's'}`;
