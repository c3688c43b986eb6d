/**
 * What a checkpoint holds where a value was stored: the marker, how the value was encoded, and the
 * line that stands for it when it is not restored. Private to checkpoint.ts.
 */
import type { ArtifactRef } from '../core/schemas.js';
import { decodeBase64, encodeBase64 } from '../core/base64.js';
import { formatBytes } from '../core/bytes.js';

/** What stands in the saved JSON for a stored value. */
export interface Marker {
  $artifact: { id: string; mimeType: string; sizeBytes: number; sha256: string };
  encoding: Encoding;
  /** data-url: the header up to the comma. lc-bytes and buffer: the record without its numbers. */
  prefix?: string;
  shell?: Record<string, unknown>;
}

export type Encoding =
  | 'text'
  | 'base64'
  | 'base64-unpadded'
  | 'base64url'
  | 'base64url-unpadded'
  | 'data-url'
  | 'lc-bytes'
  | 'buffer'
  | 'raw';

export const ENCODINGS = new Set<string>([
  'text',
  'base64',
  'base64-unpadded',
  'base64url',
  'base64url-unpadded',
  'data-url',
  'lc-bytes',
  'buffer',
  'raw',
]);

/** Content blocks that carry media: in 'refs' mode the whole block becomes a text block. */
export const MEDIA_BLOCKS = new Set([
  'image',
  'audio',
  'video',
  'file',
  'image_url',
  'input_image',
  'input_file',
  'document',
]);
/** Keeps the most recent stand-ins: 10,000 of them, each a line and a small marker. */
export function remember<V>(map: Map<string, V>, line: string, value: V): void {
  map.delete(line);
  map.set(line, value);
  if (map.size > 10_000) map.delete(map.keys().next().value!);
}

export function whole(value: number | undefined, fallback: number, name: string, min: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < min)
    throw new TypeError(`${name} is a whole number from ${min}, not ${value}.`);
  return value;
}

export function markerOf(ref: ArtifactRef, encoding: Encoding): Marker {
  const marker: Marker & { expiresAt?: number } = {
    $artifact: { id: ref.id, mimeType: ref.mimeType, sizeBytes: ref.sizeBytes, sha256: ref.sha256 },
    encoding,
  };
  // Kept beside the marker in memory only (not enumerable, so never written), for the cache's freshness.
  if (ref.expiresAt)
    Object.defineProperty(marker, 'expiresAt', { value: Date.parse(ref.expiresAt), enumerable: false });
  return marker;
}

export function isMarker(v: unknown): v is Marker {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const m = v as Partial<Marker>;
  return (
    typeof m.$artifact === 'object' &&
    m.$artifact !== null &&
    typeof m.$artifact.id === 'string' &&
    typeof m.encoding === 'string' &&
    ENCODINGS.has(m.encoding) &&
    Object.keys(v).every((k) => k === '$artifact' || k === 'encoding' || k === 'prefix' || k === 'shell')
  );
}

export function isMediaBlock(v: unknown): boolean {
  return v !== null && typeof v === 'object' && MEDIA_BLOCKS.has((v as { type?: string }).type ?? '');
}

/** The line that stands for a stored value that is not restored. */
export function placeholder(marker: Marker, gone: boolean): string {
  const { id, mimeType, sizeBytes } = marker.$artifact;
  const type = marker.encoding === 'text' ? 'text' : mimeType;
  return gone
    ? `[${type}, ${formatBytes(sizeBytes)} — artifact ${id}, no longer in the store]`
    : `[${type}, ${formatBytes(sizeBytes)} — in artifact ${id}]`;
}

/** The value a marker stood for, in the JSON form it was saved in. */
export function revive(marker: Marker, value: string | Uint8Array): unknown {
  if (typeof value === 'string') return value;
  switch (marker.encoding) {
    case 'base64':
      return encodeBase64(value);
    case 'base64-unpadded':
      return encodeBase64(value).replace(/=+$/, '');
    case 'base64url':
      return toUrl(encodeBase64(value));
    case 'base64url-unpadded':
      return toUrl(encodeBase64(value)).replace(/=+$/, '');
    case 'data-url':
      return `${marker.prefix ?? ''}${encodeBase64(value)}`;
    case 'lc-bytes':
      return { ...marker.shell, args: [Array.from(value)] };
    case 'buffer':
      return { ...marker.shell, data: Array.from(value) };
    default:
      return new TextDecoder().decode(value);
  }
}

export const toUrl = (b64: string) => b64.replace(/\+/g, '-').replace(/\//g, '_');

/**
 * The bytes a string encodes when it is exactly their base64 (standard or url-safe, padded or not)
 * or a base64 data: URL, so that encoding them again gives back the same string.
 */
export function exactBase64(
  s: string,
): { bytes: Uint8Array; encoding: Encoding; mimeType?: string; prefix?: string } | undefined {
  let body = s;
  let prefix: string | undefined;
  let mimeType: string | undefined;
  if (s.startsWith('data:')) {
    const comma = s.indexOf(',');
    if (comma < 0 || comma > 256 || !s.slice(0, comma).endsWith(';base64')) return undefined;
    prefix = s.slice(0, comma + 1);
    body = s.slice(comma + 1);
    mimeType = s.slice(5, comma).split(';')[0] || undefined;
  }
  const url = /^[A-Za-z0-9_-]+={0,2}$/.test(body) && /[-_]/.test(body);
  if (!url && !/^[A-Za-z0-9+/]+={0,2}$/.test(body)) return undefined;
  let bytes: Uint8Array;
  try {
    bytes = decodeBase64(body).bytes;
  } catch {
    return undefined;
  }
  const standard = encodeBase64(bytes);
  const unpadded = standard.replace(/=+$/, '');
  const candidates: [string, Encoding][] = prefix
    ? [[standard, 'data-url']]
    : [
        [standard, 'base64'],
        [unpadded, 'base64-unpadded'],
        [toUrl(standard), 'base64url'],
        [toUrl(unpadded), 'base64url-unpadded'],
      ];
  const match = candidates.find(([text]) => text === body);
  if (!match) return undefined;
  return { bytes, encoding: match[1], ...(mimeType ? { mimeType } : {}), ...(prefix ? { prefix } : {}) };
}

/** A byte array as LangGraph's serializer writes one (`Uint8Array.from([…])`), or as JSON writes a Buffer. */
export function byteRecord(
  obj: Record<string, unknown>,
): { list: number[]; encoding: Encoding; shell: Record<string, unknown> } | undefined {
  const isBytes = (a: unknown): a is number[] =>
    Array.isArray(a) && a.every((n) => typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= 255);
  if (
    obj.lc === 2 &&
    obj.type === 'constructor' &&
    Array.isArray(obj.id) &&
    obj.id.length === 1 &&
    obj.id[0] === 'Uint8Array' &&
    Array.isArray(obj.args) &&
    obj.args.length === 1 &&
    isBytes(obj.args[0])
  ) {
    const { args: _, ...shell } = obj;
    return { list: obj.args[0], encoding: 'lc-bytes', shell };
  }
  if (obj.type === 'Buffer' && Object.keys(obj).length === 2 && isBytes(obj.data)) {
    const { data: _, ...shell } = obj;
    return { list: obj.data, encoding: 'buffer', shell };
  }
  return undefined;
}

/** A least-recently-used map with a budget of characters (or bytes). */
export class SizedCache<V> {
  private readonly map = new Map<string, { value: V; size: number }>();
  private total = 0;
  constructor(private readonly budget: number) {}
  get(key: string): V | undefined {
    const hit = this.map.get(key);
    if (!hit) return undefined;
    this.map.delete(key);
    this.map.set(key, hit);
    return hit.value;
  }
  set(key: string, value: V, size: number): void {
    if (size > this.budget) return;
    const old = this.map.get(key);
    if (old) {
      this.total -= old.size;
      this.map.delete(key);
    }
    this.map.set(key, { value, size });
    this.total += size;
    for (const [k, v] of this.map) {
      if (this.total <= this.budget) break;
      this.map.delete(k);
      this.total -= v.size;
    }
  }
}
