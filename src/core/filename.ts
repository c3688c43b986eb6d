import { errors } from './errors.js';

// C0 controls, DEL and C1 controls: refused outright, since a filename ends up in a header. Also
// the bidirectional overrides and line separators, which make "…fdp.exe" display as "…exe.pdf".
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/;

/**
 * Turns what a caller sent into a display name: directory parts stripped (both `/` and `\`),
 * control characters (CR/LF included) refused. Quotes are allowed here and escaped at the header.
 * Returns undefined for an empty result.
 */
export function sanitizeFilename(input: string | undefined): string | undefined {
  if (input === undefined) return undefined;
  if (CONTROL_CHARS.test(input)) {
    throw errors.badRequest(
      'Filename contains control characters or bidirectional overrides (CR, LF, NUL, U+202E, ...). Send a plain display name.',
    );
  }
  const base = input.split(/[\\/]/).pop()!.trim();
  if (base === '' || base === '.' || base === '..') return undefined;
  if (base.length > 255)
    throw errors.badRequest('Filename is longer than 255 characters. Send a shorter display name.');
  return base;
}

/** Decodes an RFC 8187 ext-value (`UTF-8''na%C3%AFve.pdf`) or returns the plain value as is. */
export function decodeExtValue(value: string): string {
  // Only the charsets RFC 8187 names: a plain name such as rock'n'roll.mp3 is not an ext-value.
  const m = /^(UTF-8|ISO-8859-1)'[A-Za-z0-9-]*'(.*)$/i.exec(value);
  if (!m) return value;
  if (m[1]!.toLowerCase() !== 'utf-8')
    throw errors.badRequest(`Filename charset ${m[1]} is not supported; use UTF-8''<percent-encoded>.`);
  try {
    return decodeURIComponent(m[2]!);
  } catch {
    throw errors.badRequest(
      "Filename is not valid percent-encoded UTF-8. Use UTF-8''<percent-encoded name> (RFC 8187).",
    );
  }
}

/**
 * Header values reach us as latin1 code units. A client that sent raw UTF-8 (curl does) would show as
 * mojibake; when the units form valid UTF-8, decode them so the name comes out as the sender meant.
 */
export function headerUtf8(value: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the whole Latin-1 range, \u0000 included.
  if (!/[\u0080-\u00ff]/.test(value) || /[^\u0000-\u00ff]/.test(value)) return value;
  const bytes = Uint8Array.from(value, (ch) => ch.charCodeAt(0));
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return value;
  }
}

/** Percent-encodes a value for an RFC 8187 ext-value (attr-char is stricter than encodeURIComponent). */
export function encodeExtValue(value: string): string {
  return `UTF-8''${encodeURIComponent(value).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}

/**
 * A Content-Disposition header safe against header injection: an ASCII fallback in `filename="…"`
 * (quotes and backslashes replaced) and the exact name in `filename*` (RFC 6266) when it is not plain ASCII.
 */
export function contentDisposition(type: 'inline' | 'attachment', filename: string | undefined): string {
  if (!filename) return type;
  const fallback = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  const needsExt = fallback !== filename;
  return needsExt
    ? `${type}; filename="${fallback}"; filename*=${encodeExtValue(filename)}`
    : `${type}; filename="${fallback}"`;
}
