/**
 * Previews and summaries never carry base64. A stored text is previewed by its first characters, and
 * those may hold a data: URL or a long base64 run (a markdown image, an inline font): to a model
 * that is noise that costs tokens. Such a run is shown as a short placeholder naming its type, its
 * decoded size, and where the bytes are: `[image/png, 10 KiB base64 — in artifact tableau.x_3f1c…]`.
 *
 * What counts as a run: a base64 data: URL (its body at least 16 characters), or at least
 * MIN_RUN_CHARS characters of the base64 alphabets (standard and url-safe) with upper case, lower
 * case and digits, and no more than one in five of them `+ / - _`. Hex digests (one case, 64 or 128
 * characters), words, paths and slugs (separators every few characters) do not match.
 */
import { formatBytes } from '../../core/bytes.js';
import { setKey, type JsonValue } from '../json.js';
import { formatCount } from '../summary.js';

/** Bare runs shorter than this are left as they are. */
export const MIN_RUN_CHARS = 100;
/** data: URL bodies shorter than this are left as they are. */
const MIN_DATA_URL_CHARS = 16;

const RUN =
  /data:([a-z]+\/[a-z0-9.+-]+)?(?:;[a-z0-9.+-]+=[^;,\s"'()<>]*)*;base64,([A-Za-z0-9+/_-]+={0,2})|[A-Za-z0-9+/_-]{100,}={0,2}/gi;

const isRunChar = (c: number): boolean =>
  (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47 || c === 45 || c === 95;

/** A bare run that reads like base64 rather than a word, path or digest. */
function isBareBase64(run: string): boolean {
  if (run.length < MIN_RUN_CHARS) return false;
  const sample = run.length > 4096 ? run.slice(0, 4096) : run;
  if (!/[A-Z]/.test(sample) || !/[a-z]/.test(sample) || !/[0-9]/.test(sample)) return false;
  let separators = 0;
  for (let i = 0; i < sample.length; i++) {
    const c = sample.charCodeAt(i);
    if (c === 43 || c === 47 || c === 45 || c === 95) separators++;
  }
  return separators * 5 <= sample.length;
}

/** Bytes a base64 body decodes to. */
const decodedSize = (body: string): number => {
  const pad = body.endsWith('==') ? 2 : body.endsWith('=') ? 1 : 0;
  return Math.floor(((body.length - pad) * 3) / 4);
};

/** The type the first decoded bytes name, for the common formats; undefined when none does. */
function sniffType(body: string): string | undefined {
  let head: string;
  try {
    head = atob(body.slice(0, 16).replace(/-/g, '+').replace(/_/g, '/'));
  } catch {
    return undefined;
  }
  const at = (i: number) => head.charCodeAt(i);
  const starts = (s: string, from = 0) => head.startsWith(s, from);
  if (at(0) === 0x89 && starts('PNG', 1)) return 'image/png';
  if (at(0) === 0xff && at(1) === 0xd8 && at(2) === 0xff) return 'image/jpeg';
  if (starts('GIF8')) return 'image/gif';
  if (starts('RIFF') && starts('WEBP', 8)) return 'image/webp';
  if (starts('RIFF') && starts('WAVE', 8)) return 'audio/wav';
  if (starts('%PDF')) return 'application/pdf';
  if (starts('PK\u0003\u0004')) return 'application/zip';
  if (at(0) === 0x1f && at(1) === 0x8b) return 'application/gzip';
  if (starts('ID3')) return 'audio/mpeg';
  if (starts('ftyp', 4)) return 'video/mp4';
  if (starts('<svg') || starts('<?xml')) return 'image/svg+xml';
  return undefined;
}

/** `[image/png, 10 KiB base64 — in artifact X]`; `holder` says where the bytes are, else "not shown". */
export function base64Placeholder(body: string, declaredType: string | undefined, holder?: string): string {
  const type = declaredType?.toLowerCase() ?? sniffType(body);
  return `[${type ? `${type}, ` : ''}${formatBytes(decodedSize(body))} base64${holder ? ` — ${holder}` : ', not shown'}]`;
}

/** The text with every data: URL and base64 run replaced by its placeholder. */
export function hideBase64(text: string, holder?: string): string {
  if (text.length < MIN_DATA_URL_CHARS + 13) return text;
  return text.replace(RUN, (match: string, type: string | undefined, body: string | undefined) => {
    if (body !== undefined) return body.length < MIN_DATA_URL_CHARS ? match : base64Placeholder(body, type, holder);
    return isBareBase64(match) ? base64Placeholder(match, undefined, holder) : match;
  });
}

/**
 * About the first `chars` characters of a text with base64 hidden, and where in the text they end.
 * A run that the cut falls inside (a data: URL's header included) is taken whole, measured and
 * replaced, so no part of it is left; the text after a replaced run fills the room it freed.
 */
export function hiddenHead(text: string, chars: number, holder?: string): { head: string; end: number } {
  let head = '';
  let at = 0;
  for (let step = 0; step < 64 && at < text.length && head.length < chars; step++) {
    let end = Math.min(text.length, at + chars - head.length);
    if (end < text.length) end = runEnd(text, at, end) ?? end;
    head += hideBase64(end === text.length && at === 0 ? text : text.slice(at, end), holder);
    at = end;
  }
  return { head, end: at };
}

/** Where a run that `end` cuts through ends, when it is one to hide; the text is read from `at`. */
function runEnd(text: string, at: number, end: number): number | undefined {
  const windowEnd = Math.min(text.length, end + 256);
  const window = text.slice(at, windowEnd);
  RUN.lastIndex = 0;
  for (let m = RUN.exec(window); m; m = RUN.exec(window)) {
    const from = at + m.index;
    if (from >= end) return undefined;
    let to = from + m[0].length;
    if (to <= end) continue;
    if (to === windowEnd && !m[0].endsWith('=')) {
      while (to < text.length && isRunChar(text.charCodeAt(to))) to++;
      for (let pad = 0; pad < 2 && text.charCodeAt(to) === 61; pad++) to++;
    }
    const body = m[2];
    if (body !== undefined) return body.length + (to - from - m[0].length) >= MIN_DATA_URL_CHARS ? to : undefined;
    return isBareBase64(text.slice(from, to)) ? to : undefined;
  }
  return undefined;
}

/** The first `chars` of a text (base64 hidden), and how many more the artifact holds. */
export function previewText(text: string, chars: number, holder?: string): string {
  const { head, end } = hiddenHead(text, chars, holder);
  if (end >= text.length) return head;
  return `${head}… [${formatCount(text.length - end)} more chars in the artifact]`;
}

/**
 * A JSON value whose strings show no base64 in their first `headChars` characters, for previews
 * cut from it: a string with a run there keeps its head (run replaced) and says how much was cut;
 * the rest is left as it is, shared with `value`.
 */
export function hideBase64Deep(value: JsonValue, headChars: number, holder?: string): JsonValue {
  if (typeof value === 'string') {
    if (value.length < MIN_DATA_URL_CHARS + 13) return value;
    const { head, end } = hiddenHead(value, headChars, holder);
    if (end >= value.length) return head;
    if (head.length === end && head === value.slice(0, end)) return value;
    return `${head}… [truncated: ${formatCount(value.length - end)} chars]`;
  }
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let out: JsonValue[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const next = hideBase64Deep(value[i]!, headChars, holder);
      if (next !== value[i] && !out) out = value.slice(0, i);
      if (out) out.push(next);
    }
    return out ?? value;
  }
  let out: Record<string, JsonValue> | undefined;
  const keys = Object.keys(value);
  for (let k = 0; k < keys.length; k++) {
    const key = keys[k]!;
    const next = hideBase64Deep(value[key]!, headChars, holder);
    if (next !== value[key] && !out) {
      out = {};
      for (const before of keys.slice(0, k)) setKey(out, before, value[before]);
    }
    if (out) setKey(out, key, next);
  }
  return out ?? value;
}
