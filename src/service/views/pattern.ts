/**
 * Search patterns: a fixed string or a regular expression, matched line by line as grep does.
 *
 * A regular expression from a caller is hostile input: `(a+)+$` on a long line backtracks for longer
 * than the universe has left. V8 has a second engine that runs in linear time (no backreferences, no
 * lookahead, no capture group in a lookbehind, no `i` or `u` flag). The Node runtime switches it on
 * (src/node/regexps.ts) with two flags: one makes the `l` flag parse, which checks a pattern can run
 * in linear time; the other makes every regexp that backtracks too much (50,000 backtracks) finish its
 * match on the linear engine. So a pattern is refused unless the linear engine could run it, and
 * ordinary patterns keep the fast backtracking engine. ignoreCase is rewritten into the pattern (`a` →
 * `[aA]`), since the linear engine has no `i`. Where the runtime has no linear engine (Workers),
 * patterns run as they are, and the platform's CPU limit per request bounds them.
 */
import { errors } from '../../core/errors.js';

/** How lines are matched. */
export type LineMatcher =
  | { kind: 'bytes'; needle: Uint8Array }
  | {
      kind: 'regex';
      /** With g and m: finds candidates in a span of many lines. */
      scan: RegExp;
      /** Without m: confirms a candidate on its line alone, `^` and `$` at its ends only (not at a \r in it). */
      line: RegExp;
    };

export const MAX_PATTERN_CHARS = 1000;
/** V8's flag for its linear-time engine (a variable: parsers that do not know it reject a literal). */
const LINEAR = 'l';

let linear = false;
/** Whether this runtime has V8's linear-time engine switched on (asked again until it is: a flag may come later). */
export function hasLinearEngine(): boolean {
  if (!linear) {
    try {
      new RegExp('a', LINEAR);
      linear = true;
    } catch {
      // Not (yet) switched on.
    }
  }
  return linear;
}

const escapeRegExp = (s: string) => s.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&');

/** Builds the matcher, or refuses the pattern with bad_request and what to change. */
export function compilePattern(pattern: string, regex: boolean, ignoreCase: boolean): LineMatcher {
  if (pattern.length === 0) throw errors.badRequest('The pattern is empty. Give the text (or regex) to look for.');
  if (pattern.length > MAX_PATTERN_CHARS) {
    throw errors.badRequest(
      `The pattern is ${pattern.length} characters; at most ${MAX_PATTERN_CHARS} are taken. Search for a shorter, distinctive part.`,
    );
  }
  if (!regex && /[\r\n]/.test(pattern)) {
    throw errors.badRequest(
      'Lines are matched one at a time, so a pattern cannot hold a line break. Search for one line of it.',
    );
  }
  if (!regex && !ignoreCase) return { kind: 'bytes', needle: new TextEncoder().encode(pattern) };
  let source = regex ? pattern : escapeRegExp(pattern);
  try {
    new RegExp(source);
  } catch (err) {
    throw errors.badRequest(
      `Invalid regular expression ${JSON.stringify(pattern)}: ${(err as Error).message.replace(/^Invalid regular expression: /, '')}. Patterns use JavaScript syntax; pass regex: false to search for the text as it is.`,
    );
  }
  if (ignoreCase) source = foldCase(source);
  if (hasLinearEngine()) {
    try {
      new RegExp(source, LINEAR);
    } catch {
      throw errors.badRequest(
        `The regular expression ${JSON.stringify(pattern)} cannot run in linear time: backreferences (\\1, \\k<name>), lookahead ((?=…), (?!…)) and lookbehind with a capture group are not supported, so that no pattern can stall the service. Rewrite it without them (a lookbehind such as (?<=x) is fine when it holds no group), or search for a fixed string.`,
      );
    }
  }
  return { kind: 'regex', scan: new RegExp(source, 'gm'), line: new RegExp(source) };
}

/**
 * The pattern with every letter matching each character the `i` flag would: `a` → `[aA]`, `[a-f]` →
 * `[a-f\u0041-\u0046]`. Characters are folded as `i` folds them without `u`: two match when their
 * uppercase (one UTF-16 unit, not non-ASCII to ASCII) is the same, so `µ` matches `μ` and `Μ`. Not
 * folded: octal escapes and backreferences (the linear engine refuses backreferences anyway).
 */
export function foldCase(src: string): string {
  let out = '';
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (c === '\\') {
      const esc = escapeAt(src, i, false);
      const code = escapeCode(esc, false);
      out += code === undefined ? esc : foldChar(code, esc);
      i += esc.length;
    } else if (c === '[') {
      const end = classEnd(src, i);
      out += foldClass(src.slice(i + 1, end));
      i = end + 1;
    } else if (src.startsWith('(?<', i) && src[i + 3] !== '=' && src[i + 3] !== '!') {
      // A named group: its name is not text to match.
      const close = src.indexOf('>', i);
      const stop = close === -1 ? src.length : close + 1;
      out += src.slice(i, stop);
      i = stop;
    } else if (src.startsWith('(?', i)) {
      // A group's modifiers (`(?:`, `(?i:`) are not text to match.
      const m = /^\(\?[a-zA-Z-]*:?/.exec(src.slice(i))![0];
      out += m;
      i += m.length;
    } else if (c === '{') {
      const q = /^\{\d+(,\d*)?\}/.exec(src.slice(i));
      out += q ? q[0] : c;
      i += q ? q[0].length : 1;
    } else {
      out += foldChar(c.charCodeAt(0), c);
      i++;
    }
  }
  return out;
}

/** The case-folding classes of UTF-16 units with more than one member, made once when first needed. */
let folding: { classOf: Map<number, number[]>; codes: number[] } | undefined;

/** What `i` compares without `u`: the unit's uppercase, unless that is several units or non-ASCII to ASCII. */
function canonicalize(code: number): number {
  const upper = String.fromCharCode(code).toUpperCase();
  if (upper.length !== 1) return code;
  const u = upper.charCodeAt(0);
  return code >= 128 && u < 128 ? code : u;
}

function foldingTable() {
  if (!folding) {
    const byCanon = new Map<number, number[]>();
    for (let code = 0; code <= 0xffff; code++) {
      const canon = canonicalize(code);
      const members = byCanon.get(canon);
      if (members) members.push(code);
      else byCanon.set(canon, [code]);
    }
    const classOf = new Map<number, number[]>();
    for (const members of byCanon.values()) {
      if (members.length > 1) for (const m of members) classOf.set(m, members);
    }
    folding = { classOf, codes: [...classOf.keys()].sort((a, b) => a - b) };
  }
  return folding;
}

/** A unit as it may stand in a class: itself when a letter or digit, else escaped. */
function unit(code: number): string {
  const c = String.fromCharCode(code);
  return /[A-Za-z0-9]/.test(c) ? c : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** One character of the pattern (written `written`), as a class of the characters it matches under `i`. */
function foldChar(code: number, written: string): string {
  const members = foldingTable().classOf.get(code);
  return members ? `[${members.map(unit).join('')}]` : written;
}

/** The sequence that starts at `i` (a backslash), whole: `\d`, `\x41`, `\u0041`, `\cJ`, `\k<n>`, `\12`. */
function escapeAt(src: string, i: number, inClass: boolean): string {
  const next = src[i + 1];
  if (next === undefined) return '\\';
  // Without the `u` flag `\u{41}` is `u` repeated and `\p{L}` is `p{L}`; a malformed `\x` is `x`.
  if (next === 'x' && /^[0-9a-fA-F]{2}$/.test(src.slice(i + 2, i + 4))) return src.slice(i, i + 4);
  if (next === 'u' && /^[0-9a-fA-F]{4}$/.test(src.slice(i + 2, i + 6))) return src.slice(i, i + 6);
  if (next === 'c' && /^[A-Za-z]$/.test(src[i + 2] ?? '')) return src.slice(i, i + 3);
  if (next === 'k' && !inClass && src[i + 2] === '<') {
    const end = src.indexOf('>', i + 3);
    if (end !== -1) return src.slice(i, end + 1);
  }
  if (/[0-9]/.test(next)) return `\\${/^[0-9]+/.exec(src.slice(i + 1))![0]}`;
  return src.slice(i, i + 2);
}

/** The one UTF-16 unit an escape stands for, if it stands for one: `\x41`, `\u0041`, `\-`, `\q` (a `q`). */
function escapeCode(esc: string, inClass: boolean): number | undefined {
  const next = esc[1];
  if (next === undefined) return undefined;
  if (esc.length > 2 && (next === 'x' || next === 'u')) return Number.parseInt(esc.slice(2), 16);
  if (esc.length > 2) return undefined;
  const controls: Record<string, number> = { f: 12, n: 10, r: 13, t: 9, v: 11 };
  if (controls[next] !== undefined) return controls[next];
  if (inClass && next === 'b') return 8;
  // Classes (\d \w \s), assertions (\b \B), \c and \k, and digits are not one character; in a class \B is B.
  if (/[dDwWsSbBck0-9]/.test(next) && !(inClass && next === 'B')) return undefined;
  return next.charCodeAt(0);
}

/** Index of the `]` that closes the class opened at `open`. */
function classEnd(src: string, open: number): number {
  let i = open + 1;
  if (src[i] === '^') i++;
  while (i < src.length) {
    if (src[i] === '\\') i += escapeAt(src, i, true).length;
    else if (src[i] === ']') return i;
    else i++;
  }
  return src.length;
}

/**
 * A class body with the other cases of its characters and ranges added: `^a-fx` →
 * `[^a-fx\u0041-\u0046\u0058]`. It is written out again item by item, every literal `-` escaped,
 * so that nothing added can join an item into a range.
 */
function foldClass(body: string): string {
  let i = 0;
  let out = '';
  if (body[0] === '^') {
    out = '^';
    i = 1;
  }
  /** The items: a unit (with its code) or a class such as `\d`; `dash`: a `-` as written, which may make a range. */
  const items: { written: string; code?: number; dash?: boolean }[] = [];
  while (i < body.length) {
    if (body[i] === '\\') {
      const esc = escapeAt(body, i, true);
      const code = escapeCode(esc, true);
      items.push(code === undefined ? { written: esc } : { written: esc, code });
      i += esc.length;
    } else {
      const dash = body[i] === '-';
      items.push({ written: dash ? '\\-' : body[i]!, code: body.charCodeAt(i), ...(dash ? { dash } : {}) });
      i++;
    }
  }
  if (items.length === 0) return `[${body}]`;
  const { classOf, codes } = foldingTable();
  const extra = new Set<number>();
  const addRange = (lo: number, hi: number) => {
    // The first foldable unit at or after lo.
    let a = 0;
    let b = codes.length;
    while (a < b) {
      const mid = (a + b) >> 1;
      if (codes[mid]! < lo) a = mid + 1;
      else b = mid;
    }
    for (let k = a; k < codes.length && codes[k]! <= hi; k++) {
      for (const m of classOf.get(codes[k]!)!) if (m < lo || m > hi) extra.add(m);
    }
  };
  for (let k = 0; k < items.length; k++) {
    const item = items[k]!;
    const dash = items[k + 1];
    const last = items[k + 2];
    // A range: two units with a `-` between them. With a class on either side (`[\d-z]`) the three
    // are items of their own; either way the item after the `-` starts no range.
    if (dash?.dash && last) {
      if (item.code !== undefined && last.code !== undefined) {
        out += `${item.written}-${last.written}`;
        addRange(item.code, last.code);
      } else {
        out += `${item.written}${dash.written}${last.written}`;
        if (item.code !== undefined) addRange(item.code, item.code);
        if (last.code !== undefined) addRange(last.code, last.code);
      }
      k += 2;
      continue;
    }
    out += item.written;
    if (item.code !== undefined) addRange(item.code, item.code);
  }
  return `[${out}${runs([...extra].sort((a, b) => a - b))}]`;
}

/** Sorted units as a class body: runs of three or more as ranges. */
function runs(codes: number[]): string {
  let out = '';
  for (let k = 0; k < codes.length; ) {
    let j = k;
    while (j + 1 < codes.length && codes[j + 1] === codes[j]! + 1) j++;
    if (j - k >= 2) out += `${unit(codes[k]!)}-${unit(codes[j]!)}`;
    else for (let x = k; x <= j; x++) out += unit(codes[x]!);
    k = j + 1;
  }
  return out;
}
