import { fileTypeFromBuffer } from 'file-type';
import { decodeStandard } from '../core/base64.js';

/**
 * Finding binary payloads hidden in strings. The alphabet checks are only a cheap pre-filter; a
 * string counts as binary when `file-type` recognises a format from its decoded bytes, and only
 * formats with signatures strong enough that text never matches them by chance (hex digests, JWTs
 * and long words decode to noise that weak signatures such as MPEG frame sync or ARJ do match).
 */

export interface Base64Candidate {
  /** The base64 text without any `data:` header. */
  body: string;
  /** The media type a data: URL declared. */
  declaredMime?: string;
  dataUrl: boolean;
  /** base64url alphabet (`-` / `_`) seen in the head. */
  url: boolean;
}

const HEAD_CHARS = 128;
const HEAD_ALPHABET = /^[A-Za-z0-9+/\-_\r\n]+$/;
const TAIL_ALPHABET = /[A-Za-z0-9+/\-_]={0,2}[\r\n]*$/;

/** A string that may be base64, base64url or a base64 data: URL; undefined when it plainly is not. */
export function base64Candidate(s: string, minChars: number): Base64Candidate | undefined {
  if (s.length < minChars) return undefined;
  if (s.startsWith('data:')) {
    const comma = s.indexOf(',', 5);
    if (comma < 0 || comma > 256) return undefined;
    const params = s.slice(5, comma).split(';');
    if (params.pop()?.trim().toLowerCase() !== 'base64') return undefined;
    // The URL declares base64: a malformed body is corruption to report, not a reason to look away.
    const body = s.slice(comma + 1);
    if (body.length === 0) return undefined;
    const type = params[0]?.trim().toLowerCase();
    return {
      body,
      dataUrl: true,
      url: /[-_]/.test(body.slice(0, HEAD_CHARS)),
      ...(type ? { declaredMime: type } : {}),
    };
  }
  if (!looksLikeBase64(s)) return undefined;
  return { body: s, dataUrl: false, url: /[-_]/.test(s.slice(0, HEAD_CHARS)) };
}

function looksLikeBase64(body: string): boolean {
  if (body.length < 8) return false;
  const head = body.length > HEAD_CHARS ? body.slice(0, HEAD_CHARS) : body.replace(/=*[\r\n]*$/, '');
  return head.length > 0 && HEAD_ALPHABET.test(head) && TAIL_ALPHABET.test(body.slice(-8));
}

export class CorruptBase64Error extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'CorruptBase64Error';
  }
}

/** base64 text ready to decode: line breaks removed, padding checked. */
export interface CleanBase64 {
  text: string;
  /** Exactly how many bytes it decodes to. */
  byteLength: number;
}

/**
 * Checks the shape of base64 (or base64url) text and works out its exact decoded size without
 * decoding: padding, impossible lengths. Line breaks (GitHub wraps every 60 chars, PEM every 64) are
 * removed; any other whitespace is corruption.
 */
export function cleanBase64(body: string): CleanBase64 {
  // includes() is a memchr; a regex test over megabytes runs interpreted until V8 tiers it up.
  const text = body.includes('\n') || body.includes('\r') ? body.replace(/[\r\n]+/g, '') : body;
  const pad = trailingPad(text);
  if (pad > 2) throw new CorruptBase64Error('too much "=" padding at the end');
  const chars = text.length - pad;
  if (chars % 4 === 1)
    throw new CorruptBase64Error(
      `its length (${chars} characters) is impossible for base64; the payload looks truncated`,
    );
  if (pad > 0 && text.length % 4 !== 0) throw new CorruptBase64Error('the "=" padding does not match the length');
  return { text, byteLength: Math.floor((chars * 3) / 4) };
}

function trailingPad(s: string): number {
  let pad = 0;
  while (pad < s.length && s.charCodeAt(s.length - 1 - pad) === 61 /* = */) pad++;
  return pad;
}

type NodeBufferLike = Uint8Array & { write(s: string, offset: number, encoding: 'base64'): number };
type BufferLike = { from(s: string, enc: 'base64'): Uint8Array; allocUnsafe(size: number): NodeBufferLike };
const NodeBuffer = (globalThis as { Buffer?: BufferLike }).Buffer;

/** Base64 characters decoded per step on Node: a multiple of 4, so every step ends on a whole quantum. */
const DECODE_STEP_CHARS = 1 << 20;

/**
 * Decodes clean base64 and proves every character was valid: Node's decoder skips characters
 * outside the alphabet and stops at a stray "=", so any of those leaves the output short. On Node,
 * big inputs are decoded a megabyte at a time into the output buffer: decoding a whole string at
 * once first copies all of it, which for a 10 MB payload is 10 MB more at the peak.
 */
export function decodeClean(clean: CleanBase64, from = 0, to = clean.text.length): Uint8Array {
  const slice = from === 0 && to === clean.text.length ? clean.text : clean.text.slice(from, to);
  let out: Uint8Array;
  if (NodeBuffer && slice.length > DECODE_STEP_CHARS) {
    const expected = Math.floor(((slice.length - trailingPad(slice)) * 3) / 4);
    const buf = NodeBuffer.allocUnsafe(expected);
    let written = 0;
    for (let at = 0; at < slice.length; at += DECODE_STEP_CHARS) {
      const step = slice.slice(at, at + DECODE_STEP_CHARS);
      const want = Math.floor(((step.length - trailingPad(step)) * 3) / 4);
      if (buf.write(step, written, 'base64') !== want)
        throw new CorruptBase64Error('it holds characters outside the base64 alphabet (or "=" in the middle)');
      written += want;
    }
    // A "=" that happened to end a step made that step look padded: the total comes up short.
    if (written !== expected) throw new CorruptBase64Error('it holds "=" in the middle');
    return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  }
  if (NodeBuffer) out = decodeStandard(slice);
  else {
    // atob knows only the standard alphabet, and throws rather than skip a stray character.
    const std = slice.replace(/=+$/, '').replace(/-/g, '+').replace(/_/g, '/');
    if (/[^A-Za-z0-9+/]/.test(std)) throw new CorruptBase64Error('it holds characters outside the base64 alphabet');
    out = decodeStandard(std);
  }
  const chars = slice.length - trailingPad(slice);
  const expected = Math.floor((chars * 3) / 4);
  if (out.byteLength !== expected)
    throw new CorruptBase64Error('it holds characters outside the base64 alphabet (or "=" in the middle)');
  return out;
}

/**
 * True when text[from, to) holds nothing but base64 characters (either alphabet), with "=" only at
 * its end: no line break, quote, backslash or other character. Checked by decoding it a megabyte at
 * a time into scratch memory: the decoder skips what is not base64, so anything else leaves a step
 * short. Several times faster than a regular expression over megabytes. Node only: false where
 * there is no Buffer.
 */
export function isBase64Run(text: string, from: number, to: number): boolean {
  // Every step but the last is a multiple of 4 characters. A length of 4n + 1 is never base64, and
  // it is the one length where a skipped character can leave the decoded size unchanged.
  if (!NodeBuffer || to <= from || (to - from) % 4 === 1) return false;
  const scratch = NodeBuffer.allocUnsafe((DECODE_STEP_CHARS / 4) * 3);
  for (let at = from; at < to; at += DECODE_STEP_CHARS) {
    const end = Math.min(at + DECODE_STEP_CHARS, to);
    const step = text.slice(at, end);
    const pad = trailingPad(step);
    if (pad > 0 && (end < to || pad > 2)) return false;
    if (scratch.write(step, 0, 'base64') !== Math.floor(((step.length - pad) * 3) / 4)) return false;
  }
  return true;
}

/** The first bytes of a candidate, enough for file-type to recognise a format. */
export function decodeHead(clean: CleanBase64, bytes = 4100): Uint8Array {
  const chars = Math.min(clean.text.length, Math.ceil(bytes / 3) * 4);
  const end = chars === clean.text.length ? chars : chars - (chars % 4);
  return decodeClean(clean, 0, end);
}

export interface DetectedType {
  mime: string;
  ext: string;
  /** A guess from the bytes' look (valid UTF-8 → text), below any declared type. */
  guessed?: boolean;
}

/**
 * Formats confirmed by strong signatures (four or more fixed bytes, or structure file-type checks).
 * Covers the families the MCP layer promises: PDF, PNG, JPEG, GIF, WebP, ZIP/OOXML, MP3, WAV, OGG,
 * MP4, and their common neighbours.
 */
const STRONG = new Set([
  'application/pdf',
  'image/png',
  'image/apng',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'image/heic',
  'image/heif',
  'image/tiff',
  'image/jxl',
  'image/vnd.adobe.photoshop',
  'image/jp2',
  'application/zip',
  'application/epub+zip',
  'application/java-archive',
  'application/x-xpinstall',
  'application/gzip',
  'application/x-bzip2',
  'application/x-7z-compressed',
  'application/x-rar-compressed',
  'application/vnd.rar',
  'application/x-xz',
  'application/zstd',
  'application/x-tar',
  'audio/mpeg',
  'audio/wav',
  'audio/x-wav',
  'audio/vnd.wave',
  'audio/ogg',
  'audio/opus',
  'audio/flac',
  'audio/x-flac',
  'audio/mp4',
  'audio/x-m4a',
  'audio/aiff',
  'audio/x-aiff',
  'audio/webm',
  'video/mp4',
  'video/quicktime',
  'video/webm',
  'video/x-matroska',
  'video/ogg',
  'video/x-m4v',
  'video/3gpp',
  'application/wasm',
  'application/x-sqlite3',
  'font/woff',
  'font/woff2',
  'font/ttf',
  'font/otf',
  'application/x-msdownload',
  'application/x-elf',
  'application/x-mach-binary',
]);
const STRONG_PREFIXES = [
  'application/vnd.openxmlformats-officedocument.',
  'application/vnd.oasis.opendocument.',
  'application/vnd.ms-',
];

/** The format of `bytes` when a strong signature confirms it; undefined for text and noise. */
export async function detectBinary(bytes: Uint8Array): Promise<DetectedType | undefined> {
  let found: { mime: string; ext: string } | undefined;
  try {
    found = await fileTypeFromBuffer(bytes);
  } catch {
    return undefined;
  }
  if (!found) return undefined;
  const strong = STRONG.has(found.mime) || STRONG_PREFIXES.some((p) => found!.mime.startsWith(p));
  if (!strong) return undefined;
  // MPEG audio without an ID3 tag is only an 11-bit frame sync: demand a second frame where the first ends.
  if (found.mime === 'audio/mpeg' && !startsWithId3(bytes) && !hasTwoMpegFrames(bytes)) return undefined;
  // Windows executables start with "MZ" only; require the PE header it points at.
  if (found.mime === 'application/x-msdownload' && !hasPeHeader(bytes)) return undefined;
  return { mime: found.mime, ext: found.ext };
}

const startsWithId3 = (b: Uint8Array) => b[0] === 0x49 && b[1] === 0x44 && b[2] === 0x33;

// MPEG-1/2 Layer III bitrates (kbit/s) by version, and sample rates (Hz).
const BITRATES_V1 = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const BITRATES_V2 = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
const SAMPLE_RATES = [44100, 48000, 32000];

function mpegFrameLength(b: Uint8Array, at: number): number | undefined {
  if (at + 4 > b.length || b[at] !== 0xff || (b[at + 1]! & 0xe0) !== 0xe0) return undefined;
  const version = (b[at + 1]! >> 3) & 3; // 3 = MPEG-1, 2 = MPEG-2, 0 = MPEG-2.5
  const layer = (b[at + 1]! >> 1) & 3; // 1 = Layer III
  const bitrateIndex = b[at + 2]! >> 4;
  const rateIndex = (b[at + 2]! >> 2) & 3;
  if (version === 1 || layer !== 1 || bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) return undefined;
  const padding = (b[at + 2]! >> 1) & 1;
  const bitrate = (version === 3 ? BITRATES_V1 : BITRATES_V2)[bitrateIndex]! * 1000;
  const sampleRate = SAMPLE_RATES[rateIndex]! / (version === 3 ? 1 : version === 2 ? 2 : 4);
  return Math.floor(((version === 3 ? 144 : 72) * bitrate) / sampleRate) + padding;
}

function hasTwoMpegFrames(b: Uint8Array): boolean {
  const first = mpegFrameLength(b, 0);
  return first !== undefined && mpegFrameLength(b, first) !== undefined;
}

function hasPeHeader(b: Uint8Array): boolean {
  if (b.length < 0x40) return false;
  const offset = b[0x3c]! | (b[0x3d]! << 8) | (b[0x3e]! << 16) | (b[0x3f]! << 24);
  return (
    offset > 0 &&
    offset + 4 <= b.length &&
    b[offset] === 0x50 &&
    b[offset + 1] === 0x45 &&
    b[offset + 2] === 0 &&
    b[offset + 3] === 0
  );
}
