import { errors } from './errors.js';

export interface DecodedBase64 {
  bytes: Uint8Array;
  /** The media type of a data: URL, when the input was one. */
  mimeType?: string;
}

const BASE64_BODY = /^[A-Za-z0-9+/\-_]*={0,2}$/;

/**
 * Decodes base64, base64url (padding optional) or a `data:` URL. Whitespace (line wraps every 60 or
 * 76 chars, as GitHub and PEM produce) is ignored. Anything else is a bad_request, never a silent
 * partial decode.
 */
export function decodeBase64(input: string): DecodedBase64 {
  let body = input;
  let mimeType: string | undefined;
  if (body.startsWith('data:')) {
    const comma = body.indexOf(',');
    if (comma < 0) throw errors.badRequest('Malformed data: URL: no comma before the payload.');
    const header = body.slice(5, comma);
    const parts = header.split(';');
    if (parts[parts.length - 1] !== 'base64') {
      throw errors.badRequest('Only base64 data: URLs are accepted (data:<mime>;base64,<payload>).');
    }
    // RFC 2397: parameters (charset) stay with the type; with none named, the type is text/plain.
    const params = parts
      .slice(1, -1)
      .map((p) => p.trim())
      .filter(Boolean);
    const type = parts[0]!.trim() || (params.length > 0 ? 'text/plain' : '');
    mimeType = type ? [type, ...params].join(';') : undefined;
    body = body.slice(comma + 1);
  }
  const fast = decodeFast(body);
  if (fast) return mimeType ? { bytes: fast, mimeType } : { bytes: fast };
  body = body.replace(/\s+/g, '');
  if (
    !BASE64_BODY.test(body) ||
    ((body.includes('-') || body.includes('_')) && (body.includes('+') || body.includes('/')))
  ) {
    throw errors.badRequest(
      'Malformed base64: only A-Z a-z 0-9 + / (or - _ for base64url) and trailing = are allowed.',
    );
  }
  const unpadded = body.replace(/=+$/, '');
  if (unpadded.length % 4 === 1)
    throw errors.badRequest('Malformed base64: the length is impossible (truncated payload?).');
  if (body.includes('=') && body.length % 4 !== 0) throw errors.badRequest('Malformed base64: wrong padding.');
  const standard = unpadded.replace(/-/g, '+').replace(/_/g, '/');
  const bytes = decodeStandard(standard);
  return mimeType ? { bytes, mimeType } : { bytes };
}

/**
 * The common case in one decode: one alphabet, no whitespace, no stray characters. Node's decoder
 * skips what is not base64, so a body that decodes to exactly the length its characters promise
 * held nothing else; anything less goes the checked way (and gets its precise error there).
 */
function decodeFast(body: string): Uint8Array | undefined {
  const maybeBuffer = (globalThis as { Buffer?: { from(s: string, enc: string): Uint8Array } }).Buffer;
  if (!maybeBuffer || body.length % 4 !== 0 || body.length === 0) return undefined;
  if ((body.includes('-') || body.includes('_')) && (body.includes('+') || body.includes('/'))) return undefined;
  const pad = body.endsWith('==') ? 2 : body.endsWith('=') ? 1 : 0;
  if (body.indexOf('=') !== body.length - pad && pad > 0) return undefined;
  const b = maybeBuffer.from(body, 'base64');
  if (b.byteLength !== (body.length / 4) * 3 - pad) return undefined;
  return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
}

/**
 * Decodes base64 with no checks of its own: Node's decoder where there is one (it also takes the
 * url-safe alphabet), else atob on the standard alphabet, padding optional.
 */
export function decodeStandard(unpadded: string): Uint8Array {
  const maybeBuffer = (globalThis as { Buffer?: { from(s: string, enc: string): Uint8Array } }).Buffer;
  if (maybeBuffer) {
    const b = maybeBuffer.from(unpadded, 'base64');
    return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  }
  const bin = atob(unpadded + '='.repeat((4 - (unpadded.length % 4)) % 4));
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Encodes bytes as standard base64. */
export function encodeBase64(bytes: Uint8Array): string {
  const maybeBuffer = (globalThis as { Buffer?: { from(b: Uint8Array): { toString(enc: string): string } } }).Buffer;
  if (maybeBuffer) return maybeBuffer.from(bytes).toString('base64');
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}
