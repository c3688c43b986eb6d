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
export function whole(value: number | undefined, fallback: number, name: string, min: number): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < min)
    throw new TypeError(`${name} is a whole number from ${min}, not ${value}.`);
  return value;
}

/** Freshness kept beside a marker in memory only (not enumerable, so never written). */
export interface Freshness {
  expiresAt?: number;
  /** When a save should put the artifact again, so that it lives on: half its life before it expires. */
  refreshAt?: number;
}

/**
 * The marker of a stored value, with its freshness: the artifact is put again once under half its
 * life is left, half of `ttl` when that is a number of seconds, else half of what was left when the
 * ref was had (a put: the store's whole TTL).
 */
export function markerOf(
  ref: ArtifactRef,
  encoding: Encoding,
  ttl: number | 'never' | undefined,
  extra: { prefix?: string; shell?: Record<string, unknown> } = {},
): Marker & Freshness {
  const marker: Marker & Freshness = {
    $artifact: { id: ref.id, mimeType: ref.mimeType, sizeBytes: ref.sizeBytes, sha256: ref.sha256 },
    encoding,
    ...(extra.prefix !== undefined ? { prefix: extra.prefix } : {}),
    ...(extra.shell !== undefined ? { shell: extra.shell } : {}),
  };
  const expiresAt = ref.expiresAt ? Date.parse(ref.expiresAt) : Number.NaN;
  if (Number.isFinite(expiresAt)) {
    const now = Date.now();
    const refreshAt = typeof ttl === 'number' ? expiresAt - ttl * 500 : now + (expiresAt - now) / 2;
    Object.defineProperty(marker, 'expiresAt', { value: expiresAt, enumerable: false, configurable: true });
    Object.defineProperty(marker, 'refreshAt', { value: refreshAt, enumerable: false, configurable: true });
  }
  return marker;
}

/** Whether a marker's artifact may be written again as it is: before half its life is gone, and more than a minute left. */
export function fresh(marker: Freshness): boolean {
  if (marker.expiresAt === undefined) return true;
  const now = Date.now();
  return now < (marker.refreshAt ?? marker.expiresAt) && marker.expiresAt - now > 60_000;
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

const LC_BYTES_SHELL = { lc: 2, type: 'constructor', id: ['Uint8Array'] };
const BUFFER_SHELL = { type: 'Buffer' };

/** What a stand-in says beyond its artifact: how the value was encoded, and the media block it was in. */
export interface StandIn {
  id: string;
  /** The line's type: the mime type, or `text`. */
  type: string;
  encoding: Encoding;
  prefix?: string;
  shell?: Record<string, unknown>;
  /** The media block the value was in, with null at `at`, the marker's place in it. */
  block?: Record<string, unknown>;
  at?: (string | number)[];
}

/**
 * The line that stands for a stored value that is not restored. It names the artifact and says how
 * the value was saved (its encoding, and the media block it was in), so that saving the line again
 * writes the marker back: `[image/png, 117 KiB — in artifact checkpoint_3f1c…, saved as base64]`.
 * A text value says nothing more (`[text, 47 KiB — in artifact checkpoint_…]`).
 */
export function placeholder(
  marker: Marker,
  gone: boolean,
  block?: { block: Record<string, unknown>; at: (string | number)[] },
): string {
  const { id, mimeType, sizeBytes } = marker.$artifact;
  const type = marker.encoding === 'text' ? 'text' : mimeType;
  if (gone) return `[${type}, ${formatBytes(sizeBytes)} — artifact ${id}, no longer in the store]`;
  const spec: Record<string, unknown> = { encoding: marker.encoding };
  if (marker.encoding === 'data-url' && marker.prefix !== undefined && marker.prefix !== `data:${mimeType};base64,`)
    spec.prefix = marker.prefix;
  const shell =
    marker.encoding === 'lc-bytes' ? LC_BYTES_SHELL : marker.encoding === 'buffer' ? BUFFER_SHELL : undefined;
  if (shell && marker.shell && JSON.stringify(marker.shell) !== JSON.stringify(shell)) spec.shell = marker.shell;
  if (block) {
    spec.block = block.block;
    spec.at = block.at;
  }
  const said =
    Object.keys(spec).length > 1
      ? `, saved as ${JSON.stringify(spec)}`
      : marker.encoding === 'text'
        ? ''
        : `, saved as ${marker.encoding}`;
  return `[${type}, ${formatBytes(sizeBytes)} — in artifact ${id}${said}]`;
}

const STAND_IN =
  /^\[(.+), (\d+(?:\.\d+)? (?:B|KiB|MiB|GiB|TiB)) — in artifact ([A-Za-z0-9._:-]+)(?:, saved as (.+))?\]$/s;

/** What a line written by `placeholder` stands for; undefined for any other string. */
export function parseStandIn(line: string): StandIn | undefined {
  if (!line.startsWith('[') || !line.endsWith(']')) return undefined;
  const m = STAND_IN.exec(line);
  if (!m) return undefined;
  const [, type, , id, said] = m as unknown as [string, string, string, string, string | undefined];
  let spec: Record<string, unknown> = { encoding: type === 'text' ? 'text' : undefined };
  if (said !== undefined) {
    if (said.startsWith('{')) {
      try {
        spec = JSON.parse(said) as Record<string, unknown>;
      } catch {
        return undefined;
      }
      if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) return undefined;
    } else spec = { encoding: said };
  }
  const encoding = spec.encoding;
  if (typeof encoding !== 'string' || !ENCODINGS.has(encoding)) return undefined;
  const out: StandIn = { id, type, encoding: encoding as Encoding };
  if (encoding === 'data-url') out.prefix = typeof spec.prefix === 'string' ? spec.prefix : `data:${type};base64,`;
  if (encoding === 'lc-bytes' || encoding === 'buffer') {
    const shell = spec.shell ?? (encoding === 'lc-bytes' ? LC_BYTES_SHELL : BUFFER_SHELL);
    if (shell === null || typeof shell !== 'object' || Array.isArray(shell)) return undefined;
    out.shell = structuredClone(shell as Record<string, unknown>);
  }
  if (spec.block !== undefined) {
    const at = spec.at;
    if (
      spec.block === null ||
      typeof spec.block !== 'object' ||
      Array.isArray(spec.block) ||
      !Array.isArray(at) ||
      at.length === 0 ||
      !at.every((k) => typeof k === 'string' || (typeof k === 'number' && Number.isInteger(k) && k >= 0))
    )
      return undefined;
    out.block = spec.block as Record<string, unknown>;
    out.at = at as (string | number)[];
  }
  return out;
}

/** The value a marker stood for, as a whole-bytes value nested in JSON is written: LangGraph's `Uint8Array.from([…])`. */
export const NESTED_RAW = { encoding: 'lc-bytes' as const, shell: LC_BYTES_SHELL };

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
