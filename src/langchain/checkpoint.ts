/**
 * Checkpoints that hold refs instead of bytes (langchain-ai/langgraph #7714).
 *
 * Every LangGraph checkpointer (`BaseCheckpointSaver`: MemorySaver, SqliteSaver, PostgresSaver, …)
 * writes checkpoints, their metadata and pending writes through one `serde` (`SerializerProtocol`:
 * `dumpsTyped` / `loadsTyped`, both async), given to its constructor or set on it. This serializer
 * wraps that one: it lets the saver's own serializer write the value, then, in the JSON written,
 * puts each base64 payload, byte array and oversized string in the store and writes a small marker
 * in its place. Loading reads the markers back: the bytes, byte for byte (`restore: 'bytes'`), or a
 * line that names the artifact (`restore: 'refs'`), so that a thread's earlier turns reach the model
 * without their bytes.
 */
import type { BaseCheckpointSaver, SerializerProtocol } from '@langchain/langgraph-checkpoint';
import type { ArtifactStore } from '../client/artifact-store.js';
import { isNoOpArtifactStore } from '../client/noop-store.js';
import type { ArtifactRef, ArtifactScope, PutOptions } from '../core/schemas.js';
import { detectBinary } from '../mcp/detect.js';
import {
  byteRecord,
  type Encoding,
  exactBase64,
  type Freshness,
  fresh,
  isMarker,
  isMediaBlock,
  type Marker,
  markerOf,
  NESTED_RAW,
  parseStandIn,
  placeholder,
  revive,
  SizedCache,
  type StandIn,
  whole,
} from './markers.js';

export interface ArtifactCheckpointOptions {
  /** Where the payloads go. It must keep bytes: the no-op store is refused. */
  store: ArtifactStore;
  /**
   * What a checkpoint loads as. `'bytes'` (the default): every value as it was saved, fetched from the
   * store. `'refs'`: each stored value as a line naming its artifact (`[image/png, 48 KiB — in artifact
   * checkpoint_3f1c…]`), and an image, audio or file content block as a text block of that line, so a
   * thread resumed from its checkpoint sends the model no bytes from earlier turns.
   */
  restore?: 'bytes' | 'refs';
  /** A string holding a run of this many base64 characters or more is stored. Default 256. */
  minBase64Chars?: number;
  /** A string this long or longer is stored, base64 or not. Default 32,768. */
  maxStringChars?: number;
  /** The scope the artifacts are put under. */
  scope?: Partial<ArtifactScope>;
  /** Namespace of the artifacts. Default `checkpoint`. */
  namespace?: string;
  /**
   * How long the artifacts live (seconds, or 'never'). Default: the store's (the service's default is
   * an hour). A checkpoint outlives its artifacts only as a line saying they are gone: set this to how
   * long threads are resumed.
   */
  ttl?: PutOptions['ttl'];
  /** Characters of recent payloads kept in memory, so a checkpoint saved again does not upload them again. Default 64 Mi. */
  cacheChars?: number;
}

const MIME_FIELDS = ['mimeType', 'mime_type', 'media_type'];
const MIME = /^[\w.+-]+\/[\w.+-]+$/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const DEFAULTS = { minBase64Chars: 256, maxStringChars: 32_768, cacheChars: 64 * 1024 * 1024 };
/** Uploads (and downloads) of one checkpoint at a time. */
const CONCURRENCY = 8;

/** Runs the jobs, at most `limit` at a time; their results in order. */
async function pooled<T>(jobs: (() => Promise<T>)[], limit: number): Promise<T[]> {
  const out = new Array<T>(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      out[i] = await jobs[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker));
  return out;
}

type SaveSite = { holder: Record<string, unknown> | unknown[]; key: string | number; job: () => Promise<unknown> };

/**
 * A SerializerProtocol that keeps payloads in the store: wrap the saver's serializer with it and
 * pass it to the saver (`new SqliteSaver(db, artifactSerializer(new JsonPlusSerializer(), { store }))`),
 * or let `withArtifactCheckpoints` do both for a saver you already have.
 */
export function artifactSerializer(serde: SerializerProtocol, options: ArtifactCheckpointOptions): SerializerProtocol {
  return new ArtifactSerializer(serde, options);
}

/**
 * The saver, its checkpoints now holding refs: its `serde` is wrapped by `artifactSerializer`. Works
 * with any BaseCheckpointSaver, since each writes and reads through its `serde`.
 *
 * @example
 * const checkpointer = withArtifactCheckpoints(new MemorySaver(), { store, ttl: 7 * 24 * 3600 });
 * const graph = builder.compile({ checkpointer });
 */
export function withArtifactCheckpoints<T extends BaseCheckpointSaver>(
  saver: T,
  options: ArtifactCheckpointOptions,
): T {
  if (!saver || typeof saver.serde?.dumpsTyped !== 'function')
    throw new TypeError('withArtifactCheckpoints takes a LangGraph checkpointer (a BaseCheckpointSaver with a serde).');
  if (saver.serde instanceof ArtifactSerializer)
    throw new TypeError('This checkpointer already keeps its payloads in an artifact store.');
  saver.serde = artifactSerializer(saver.serde, options);
  return saver;
}

class ArtifactSerializer implements SerializerProtocol {
  private readonly store: ArtifactStore;
  private readonly restore: 'bytes' | 'refs';
  private readonly minRun: number;
  private readonly maxChars: number;
  private readonly run: RegExp;
  private readonly put: PutOptions;
  /** Recent values by their text, with the marker they were saved as; and restored values by artifact. */
  private readonly saved: SizedCache<Marker & Freshness>;
  private readonly loaded: SizedCache<string | Uint8Array>;
  /**
   * The artifacts that lines loaded in 'refs' mode name, as the store described them, so that saving
   * those lines again writes their markers without asking the store each time. At most 10,000: one
   * that falls out is asked for again.
   */
  private readonly described = new Map<string, { ref: ArtifactRef; freshness: Freshness }>();

  constructor(
    readonly inner: SerializerProtocol,
    options: ArtifactCheckpointOptions,
  ) {
    if (!inner || typeof inner.dumpsTyped !== 'function' || typeof inner.loadsTyped !== 'function')
      throw new TypeError('artifactSerializer wraps a serializer (SerializerProtocol: dumpsTyped and loadsTyped).');
    if (!options?.store || typeof options.store.putBytes !== 'function')
      throw new TypeError(
        'Checkpoints need { store }: an ArtifactStore (createHttpArtifactStore, openArtifactStore, …).',
      );
    if (isNoOpArtifactStore(options.store))
      throw new TypeError(
        'Checkpoints need a store that keeps bytes: the no-op store keeps nothing, so nothing could be restored.',
      );
    if (options.restore !== undefined && options.restore !== 'bytes' && options.restore !== 'refs')
      throw new TypeError(`restore is 'bytes' or 'refs', not ${JSON.stringify(options.restore)}.`);
    this.store = options.store;
    this.restore = options.restore ?? 'bytes';
    this.minRun = whole(options.minBase64Chars, DEFAULTS.minBase64Chars, 'minBase64Chars', 16);
    this.maxChars = whole(options.maxStringChars, DEFAULTS.maxStringChars, 'maxStringChars', 64);
    this.run = new RegExp(`[A-Za-z0-9+/_-]{${this.minRun},}`);
    const cacheChars = whole(options.cacheChars, DEFAULTS.cacheChars, 'cacheChars', 0);
    this.saved = new SizedCache(cacheChars);
    this.loaded = new SizedCache(cacheChars);
    this.put = {
      namespace: options.namespace ?? 'checkpoint',
      source: { langgraph: 'checkpoint' },
      ...(options.scope ? { scope: options.scope } : {}),
      ...(options.ttl !== undefined ? { ttl: options.ttl } : {}),
    };
  }

  async dumpsTyped(data: unknown): Promise<[string, Uint8Array]> {
    const [type, bytes] = await this.inner.dumpsTyped(data);
    if (type === 'bytes') {
      if (bytes.byteLength * 4 < this.minRun * 3) return [type, bytes];
      const marker = await this.storeBytes(bytes, 'raw', undefined);
      return ['json', new TextEncoder().encode(JSON.stringify(marker))];
    }
    if (type !== 'json') return [type, bytes];
    const text = new TextDecoder().decode(bytes);
    if (!this.mayHold(text)) return [type, bytes];
    const root = { value: JSON.parse(text) as unknown };
    const sites: SaveSite[] = [];
    this.collect(root, 'value', undefined, sites);
    if (sites.length === 0) return [type, bytes];
    try {
      const values = await pooled(
        sites.map((s) => s.job),
        CONCURRENCY,
      );
      sites.forEach((s, i) => {
        (s.holder as Record<string | number, unknown>)[s.key] = values[i];
      });
    } catch (err) {
      // The saver serializes a checkpoint, its metadata and each pending write apart: only this value is
      // not written. Pending writes of the same step serialized before it may be saved already.
      throw new Error(
        `The checkpoint was not saved: the artifact store did not take one of its payloads (${(err as Error).message}). ` +
          'The value that held it was not written; the last checkpoint saved stands.',
        { cause: err },
      );
    }
    return ['json', new TextEncoder().encode(JSON.stringify(root.value))];
  }

  async loadsTyped(type: string, data: Uint8Array | string): Promise<unknown> {
    if (type !== 'json') return this.inner.loadsTyped(type, data);
    const text = typeof data === 'string' ? data : new TextDecoder().decode(data);
    if (!text.includes('"$artifact"')) return this.inner.loadsTyped(type, data);
    const root = { value: JSON.parse(text) as unknown };
    if (isMarker(root.value) && root.value.encoding === 'raw') {
      const bytes = this.restore === 'bytes' ? await this.fetch(root.value) : undefined;
      // In 'refs' mode, a line that says it was bytes: saved again, it is the bytes again.
      return bytes instanceof Uint8Array ? bytes : placeholder(root.value, bytes === null);
    }
    const found: Found[] = [];
    this.markers(root, 'value', [], found);
    const values = new Map<Marker, string | Uint8Array | null | undefined>();
    if (this.restore === 'bytes') {
      const fetched = await pooled(
        found.map((f) => () => this.fetch(f.marker)),
        CONCURRENCY,
      );
      for (let i = 0; i < found.length; i++) values.set(found[i]!.marker, fetched[i]);
    }
    for (const f of found) {
      const value = values.get(f.marker);
      if (value === undefined || value === null) {
        const gone = value === null;
        // A media block whose payload is not restored becomes a text block that says where it is,
        // and what the block was (once, for its first marker: the others stay in that description).
        if (f.block) {
          const blocks = f.block.holder as Record<string | number, unknown>;
          if (blocks[f.block.key] !== f.block.value) continue;
          const shape = JSON.parse(JSON.stringify(f.block.value)) as Record<string, unknown>;
          setAt(shape, f.block.at, null);
          blocks[f.block.key] = { type: 'text', text: placeholder(f.marker, gone, { block: shape, at: f.block.at }) };
        } else (f.holder as Record<string | number, unknown>)[f.key] = placeholder(f.marker, gone);
      } else (f.holder as Record<string | number, unknown>)[f.key] = revive(f.marker, value);
    }
    return this.inner.loadsTyped('json', JSON.stringify(root.value));
  }

  /** Whether the JSON text may hold anything to store (a long base64 run, a long string, a byte array) or a stand-in. */
  private mayHold(text: string): boolean {
    if (text.length >= this.maxChars) return true;
    if (text.includes(' — in artifact ')) return true;
    return this.run.test(text) || text.includes('"Uint8Array"') || text.includes('"Buffer"');
  }

  /**
   * Walks the saved JSON and lists what to store, with where its marker goes, and the lines that stood
   * in for stored values ('refs' mode), whose markers (or media blocks) go back in their place.
   */
  private collect(
    holder: Record<string, unknown> | unknown[],
    key: string | number,
    parent: Record<string, unknown> | undefined,
    sites: SaveSite[],
  ): void {
    const value = (holder as Record<string | number, unknown>)[key];
    if (typeof value === 'string') {
      const standIn = value.includes(' — in artifact ') ? parseStandIn(value) : undefined;
      if (standIn && !standIn.block) {
        // A whole-bytes value's line nested in the JSON: the bytes, as LangGraph writes them nested.
        const top =
          key === 'value' && parent === undefined && !Array.isArray(holder) && Object.keys(holder).length === 1;
        const as = standIn.encoding === 'raw' && !top ? { ...standIn, ...NESTED_RAW } : standIn;
        sites.push({ holder, key, job: async () => (await this.standInMarker(as)) ?? value });
        return;
      }
      const job = this.stringJob(value, parent);
      if (job) sites.push({ holder, key, job });
      return;
    }
    if (value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const item = value[i] as { type?: unknown; text?: unknown } | null;
        const standIn =
          item?.type === 'text' && typeof item.text === 'string' && item.text.includes(' — in artifact ')
            ? parseStandIn(item.text)
            : undefined;
        if (standIn?.block && standIn.at) {
          const { block, at } = standIn;
          sites.push({
            holder: value,
            key: i,
            job: async () => {
              const marker = await this.standInMarker(standIn);
              if (!marker) return item;
              const restored = structuredClone(block);
              setAt(restored, at, marker);
              return restored;
            },
          });
        } else this.collect(value, i, undefined, sites);
      }
      return;
    }
    const obj = value as Record<string, unknown>;
    const numbers = byteRecord(obj);
    if (numbers && numbers.list.length * 4 >= this.minRun * 3) {
      sites.push({
        holder,
        key,
        job: () => this.storeBytes(Uint8Array.from(numbers.list), numbers.encoding, undefined, numbers.shell),
      });
      return;
    }
    for (const k of Object.keys(obj)) this.collect(obj, k, obj, sites);
  }

  /**
   * The marker a line stands for, its artifact as the store describes it; put again when under half
   * its life is left, so a thread saved again keeps it. Undefined when the store no longer has it.
   */
  private async standInMarker(standIn: StandIn): Promise<Marker | undefined> {
    const extra = {
      ...(standIn.prefix !== undefined ? { prefix: standIn.prefix } : {}),
      ...(standIn.shell !== undefined ? { shell: standIn.shell } : {}),
    };
    const known = this.described.get(standIn.id);
    if (known && fresh(known.freshness))
      return withFreshness(markerOf(known.ref, standIn.encoding, undefined, extra), known.freshness);
    let ref: ArtifactRef | null = await this.store.getRef(standIn.id);
    if (!ref) return undefined;
    let marker = markerOf(ref, standIn.encoding, this.put.ttl, extra);
    if (!fresh(marker)) {
      const bytes = await this.store.get(standIn.id);
      if (!bytes) return undefined;
      ref = await this.store.putBytes(bytes, { ...this.put, mimeType: ref.mimeType });
      marker = markerOf(ref, standIn.encoding, this.put.ttl, extra);
    }
    this.described.delete(standIn.id);
    this.described.set(standIn.id, { ref, freshness: { expiresAt: marker.expiresAt, refreshAt: marker.refreshAt } });
    if (this.described.size > 10_000) this.described.delete(this.described.keys().next().value!);
    return marker;
  }

  /** How a string is stored: as the bytes its base64 encodes (when they encode back to it exactly), else as text. */
  private stringJob(s: string, parent: Record<string, unknown> | undefined): (() => Promise<Marker>) | undefined {
    if (s.length < this.minRun) return undefined;
    const long = s.length >= this.maxChars;
    if (!long && !this.run.test(s)) return undefined;
    // A value saved before is written as its marker again while its artifact has over half its life left;
    // after that it is put again (the store then counts its TTL from now).
    const cached = this.saved.get(s);
    if (cached && fresh(cached)) return () => Promise.resolve(cached);
    const declared = parent
      ? MIME_FIELDS.map((f) => parent[f]).find((m): m is string => typeof m === 'string')
      : undefined;
    const exact = exactBase64(s);
    if (exact) {
      const job = async () => {
        const marker = await this.storeBytes(
          exact.bytes,
          exact.encoding,
          exact.mimeType ?? declared,
          undefined,
          exact.prefix,
        );
        this.saved.set(s, marker, s.length);
        return marker;
      };
      return job;
    }
    // Text that cannot be UTF-8 exactly (a lone surrogate) stays where it is.
    if (LONE_SURROGATE.test(s)) return undefined;
    return async () => {
      const ref = await this.store.putText(s, { ...this.put, mimeType: 'text/plain; charset=utf-8' });
      const marker = markerOf(ref, 'text', this.put.ttl);
      this.saved.set(s, marker, s.length);
      return marker;
    };
  }

  private async storeBytes(
    bytes: Uint8Array,
    encoding: Encoding,
    declared: string | undefined,
    shell?: Record<string, unknown>,
    prefix?: string,
  ): Promise<Marker> {
    let mimeType = declared && MIME.test(declared.split(';')[0]!.trim()) ? declared.split(';')[0]!.trim() : undefined;
    mimeType ??= (await detectBinary(bytes.subarray(0, 4100)))?.mime ?? 'application/octet-stream';
    const ref = await this.store.putBytes(bytes, { ...this.put, mimeType });
    return markerOf(ref, encoding, this.put.ttl, { ...(prefix ? { prefix } : {}), ...(shell ? { shell } : {}) });
  }

  /** Walks loaded JSON for markers, noting the media block each sits in, if any. */
  private markers(
    holder: Record<string, unknown> | unknown[],
    key: string | number,
    ancestors: Site[],
    found: Found[],
  ): void {
    const value = (holder as Record<string | number, unknown>)[key];
    if (value === null || typeof value !== 'object') return;
    if (isMarker(value)) {
      const chain = [...ancestors, { holder, key }].slice(-3);
      const j = chain.findIndex(
        (a) => Array.isArray(a.holder) && isMediaBlock((a.holder as unknown[])[a.key as number]),
      );
      const site = chain[j];
      const block =
        site && j < chain.length - 1
          ? {
              ...site,
              value: (site.holder as unknown[])[site.key as number] as Record<string, unknown>,
              at: chain.slice(j + 1).map((a) => a.key),
            }
          : undefined;
      found.push({ holder, key, marker: value, ...(block ? { block } : {}) });
      return;
    }
    const next = [...ancestors.slice(-2), { holder, key }];
    if (Array.isArray(value)) for (let i = 0; i < value.length; i++) this.markers(value, i, next, found);
    else for (const k of Object.keys(value)) this.markers(value as Record<string, unknown>, k, next, found);
  }

  /** The stored value, from memory or the store; null when the store no longer has it. */
  private async fetch(marker: Marker): Promise<string | Uint8Array | null> {
    const key = `${marker.$artifact.id}\u0000${marker.encoding}`;
    const cached = this.loaded.get(key);
    if (cached !== undefined) return cached;
    const bytes = await this.store.get(marker.$artifact.id);
    if (!bytes) return null;
    const value = marker.encoding === 'text' ? new TextDecoder().decode(bytes) : bytes;
    this.loaded.set(key, value, typeof value === 'string' ? value.length : value.byteLength);
    return value;
  }
}

interface Site {
  holder: Record<string, unknown> | unknown[];
  key: string | number;
}

/** A marker in loaded JSON, and the media block it is in: the block, and the marker's place in it. */
interface Found {
  holder: Record<string, unknown> | unknown[];
  key: string | number;
  marker: Marker;
  block?: Site & { value: Record<string, unknown>; at: (string | number)[] };
}

/** Sets the value at a path of keys inside a JSON value. */
function setAt(root: Record<string, unknown>, at: (string | number)[], value: unknown): void {
  let node = root as Record<string | number, unknown>;
  for (const k of at.slice(0, -1)) node = node[k] as Record<string | number, unknown>;
  node[at[at.length - 1]!] = value;
}

/** The marker with the freshness of the artifact it names, as first learned. */
function withFreshness(marker: Marker & Freshness, f: Freshness): Marker & Freshness {
  for (const k of ['expiresAt', 'refreshAt'] as const)
    if (f[k] !== undefined) Object.defineProperty(marker, k, { value: f[k], enumerable: false, configurable: true });
  return marker;
}
