/**
 * Search patterns: a fixed string or a regular expression, matched line by line as grep does.
 *
 * A regular expression from a caller is hostile input: `(a+)+$` on a long line backtracks for longer
 * than the universe has left. V8 has a second engine that runs in linear time (no backreferences or
 * lookaround, no `i` or `u` flag). The Node runtime switches it on (src/node/regexps.ts) with two
 * flags: one makes the `l` flag parse, which checks a pattern can run in linear time; the other makes
 * every regexp that backtracks too much (50,000 backtracks) finish its match on the linear engine.
 * So a pattern is refused unless the linear engine could run it, and ordinary patterns keep the fast
 * backtracking engine. ignoreCase is rewritten into the pattern (`a` → `[aA]`), since the linear
 * engine has no `i`. Where the runtime has no linear engine (Workers), patterns run as they are, and
 * the platform's CPU limit per request bounds them.
 */
import { errors } from '../../core/errors.js';

/** How lines are matched. */
export type LineMatcher =
  | { kind: 'bytes'; needle: Uint8Array }
  | {
      kind: 'regex';
      /** With g and m: finds candidates in a span of many lines. */
      scan: RegExp;
      /** With m: confirms a candidate on its line alone. */
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
        `The regular expression ${JSON.stringify(pattern)} cannot run in linear time: backreferences (\\1, \\k<name>), lookahead and lookbehind are not supported, so that no pattern can stall the service. Rewrite it without them, or search for a fixed string.`,
      );
    }
  }
  return { kind: 'regex', scan: new RegExp(source, 'gm'), line: new RegExp(source, 'm') };
}

/** The pattern with every letter matching both cases: `a` → `[aA]`, `[a-f]` → `[a-fA-F]`. */
export function foldCase(src: string): string {
  let out = '';
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (c === '\\') {
      const esc = escapeAt(src, i);
      out += esc;
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
    } else if (c === '{') {
      const q = /^\{\d+(,\d*)?\}/.exec(src.slice(i));
      out += q ? q[0] : c;
      i += q ? q[0].length : 1;
    } else {
      const other = otherCase(c);
      out += other ? `[${c}${other}]` : c;
      i++;
    }
  }
  return out;
}

function otherCase(c: string): string | undefined {
  const lower = c.toLowerCase();
  const upper = c.toUpperCase();
  if (lower.length !== 1 || upper.length !== 1 || lower === upper) return undefined;
  return c === lower ? upper : lower;
}

/** The escape sequence that starts at `i` (a backslash), whole: `\d`, `\x41`, `\u{1F600}`, `\p{L}`, `\k<n>`, `\12`. */
function escapeAt(src: string, i: number): string {
  const next = src[i + 1];
  if (next === undefined) return '\\';
  const braced = (open: string, close: string) => {
    if (src[i + 2] !== open) return undefined;
    const end = src.indexOf(close, i + 3);
    return end === -1 ? undefined : src.slice(i, end + 1);
  };
  if (next === 'x') return src.slice(i, i + 4);
  if (next === 'u') return braced('{', '}') ?? src.slice(i, i + 6);
  if (next === 'c') return src.slice(i, i + 3);
  if (next === 'p' || next === 'P') return braced('{', '}') ?? src.slice(i, i + 2);
  if (next === 'k') return braced('<', '>') ?? src.slice(i, i + 2);
  if (/[0-9]/.test(next)) return `\\${/^[0-9]+/.exec(src.slice(i + 1))![0]}`;
  return src.slice(i, i + 2);
}

/** Index of the `]` that closes the class opened at `open`. */
function classEnd(src: string, open: number): number {
  let i = open + 1;
  if (src[i] === '^') i++;
  while (i < src.length) {
    if (src[i] === '\\') i += escapeAt(src, i).length;
    else if (src[i] === ']') return i;
    else i++;
  }
  return src.length;
}

/** A class body with each letter's other case added: `^a-fx` → `[^a-fxA-FX]`. */
function foldClass(body: string): string {
  let i = 0;
  let out = '';
  let extra = '';
  if (body[0] === '^') {
    out = '^';
    i = 1;
  }
  while (i < body.length) {
    if (body[i] === '\\') {
      const esc = escapeAt(body, i);
      out += esc;
      i += esc.length;
      continue;
    }
    const c = body[i]!;
    if (body[i + 1] === '-' && i + 2 < body.length && body[i + 2] !== '\\') {
      const d = body[i + 2]!;
      out += `${c}-${d}`;
      const oc = otherCase(c);
      const od = otherCase(d);
      if (oc && od && (c === c.toLowerCase()) === (d === d.toLowerCase())) extra += `${oc}-${od}`;
      i += 3;
      continue;
    }
    out += c;
    extra += otherCase(c) ?? '';
    i++;
  }
  return `[${out}${extra}]`;
}
