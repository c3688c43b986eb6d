/**
 * JSON.parse for big text blocks. A tool that returns a file as base64 inside JSON text (Tableau's
 * download_workbook: 10 MiB of text, 9.3 MiB of it one string) makes JSON.parse scan that string
 * character by character and copy it into a new one: most of the cost of parsing the block, and
 * another 9 MiB of memory. Here each long string literal that holds plain base64, or a base64 data:
 * URL, is cut out of the text before parsing (a short marker stands in its place) and put back
 * afterwards as a slice of the text, which V8 makes without copying.
 *
 * The result is what JSON.parse(text) returns, and this throws when JSON.parse would: a literal is
 * cut only when it holds base64 characters and nothing else (no escapes) after an optional data:
 * header of plain characters, so it parses to exactly its own characters, and the text around it
 * is parsed as it stands.
 */
import { isBase64Run } from './detect.js';
import { setKey } from './json.js';

/** Texts shorter than this go straight to JSON.parse. */
const MIN_TEXT_CHARS = 1024 * 1024;
/** String literals at least this long are cut out (when they are plain base64). */
const MIN_LITERAL_CHARS = 64 * 1024;

export function parseJsonText(text: string): unknown {
  if (text.length < MIN_TEXT_CHARS) return JSON.parse(text);
  const spans = base64Literals(text, MIN_LITERAL_CHARS);
  if (spans.length === 0) return JSON.parse(text);

  const nonce = new Uint32Array(2);
  crypto.getRandomValues(nonce);
  const prefix = `artifact-store-literal-${nonce[0]!.toString(36)}${nonce[1]!.toString(36)}-`;
  const parts: string[] = [];
  let at = 0;
  spans.forEach(([from, to], i) => {
    parts.push(text.slice(at, from), `${prefix}${i}`);
    at = to;
  });
  parts.push(text.slice(at));
  const doc = JSON.parse(parts.join('')) as unknown;

  // Put each literal back where its marker landed. A marker missing is a value a later duplicate
  // key replaced, as JSON.parse(text) would have; a marker seen twice cannot come from the text (the
  // nonce is random), and then the text is parsed the plain way.
  const seen = new Set<number>();
  const restore = (value: unknown): unknown => {
    if (typeof value !== 'string' || !value.startsWith(prefix)) return undefined;
    const i = Number(value.slice(prefix.length));
    const span = spans[i];
    if (!span || seen.has(i)) throw new RepeatedMarker();
    seen.add(i);
    return text.slice(span[0], span[1]);
  };
  try {
    const stack: unknown[] = [doc];
    while (stack.length > 0 && seen.size < spans.length) {
      const node = stack.pop();
      if (Array.isArray(node)) {
        for (let k = 0; k < node.length; k++) {
          const v = node[k];
          if (typeof v === 'object' && v !== null) stack.push(v);
          else {
            const literal = restore(v);
            if (literal !== undefined) node[k] = literal;
          }
        }
      } else if (typeof node === 'object' && node !== null) {
        const record = node as Record<string, unknown>;
        for (const key of Object.keys(record)) {
          const v = record[key];
          if (typeof v === 'object' && v !== null) stack.push(v);
          else {
            const literal = restore(v);
            if (literal !== undefined) setKey(record, key, literal);
          }
        }
      }
    }
  } catch (err) {
    if (err instanceof RepeatedMarker) return JSON.parse(text);
    throw err;
  }
  return doc;
}

class RepeatedMarker extends Error {}

/**
 * The [from, to) ranges of string literals of at least `min` characters that are values (after ":",
 * "[" or ",", so not an escaped quote, and before ",", "}" or "]") and hold only base64 characters
 * (after a data: URL header, if any), found without reading the
 * text quote by quote: it is probed every `min` characters for the quotes on either side. A run of
 * `min` characters with no quote in it always holds a probe, and the probes in between cost a memchr
 * each. Only base64 characters between two quotes means a string literal: outside strings, two
 * string tokens are always separated by ":" or ",".
 */
function base64Literals(text: string, min: number): [number, number][] {
  const spans: [number, number][] = [];
  // Everything before `from` is done, and text[from - 1] is a quote (or from is 0).
  for (let from = 0; ; ) {
    const probe = from + min;
    if (probe >= text.length) break;
    const close = text.indexOf('"', probe);
    if (close < 0) break;
    const open = text.lastIndexOf('"', probe - 1);
    if (
      open >= 0 &&
      close - open - 1 >= min &&
      /[:[,]/.test(nearest(text, open - 1, -1)) &&
      /[,}\]]/.test(nearest(text, close + 1, 1)) &&
      isBase64Run(text, bodyStart(text, open + 1, close), close)
    )
      spans.push([open + 1, close]);
    from = close + 1;
  }
  return spans;
}

/** A data: URL's header with nothing JSON would unescape in it: `data:image/png;base64,`. */
const DATA_URL_HEADER = /^data:[A-Za-z0-9.+/=;-]{0,200};base64,/i;

/**
 * Where the base64 of a literal starting at `from` begins: after a data: URL's header when it has
 * one (the header holds no quote or backslash, so the literal still parses to its own characters).
 */
function bodyStart(text: string, from: number, to: number): number {
  if (!text.startsWith('data:', from)) return from;
  const header = DATA_URL_HEADER.exec(text.slice(from, Math.min(to, from + 256)));
  return header ? from + header[0].length : from;
}

/** The first character that is not JSON whitespace from `at` on, going `dir` (-1 or 1); '' at either end. */
function nearest(text: string, at: number, dir: -1 | 1): string {
  for (let i = at; i >= 0 && i < text.length; i += dir) {
    const c = text[i]!;
    if (c !== ' ' && c !== '\n' && c !== '\r' && c !== '\t') return c;
  }
  return '';
}
