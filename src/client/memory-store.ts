import { concatBytes } from '../core/bytes.js';
import { decodeBase64 } from '../core/base64.js';
import { errors } from '../core/errors.js';
import { sha256Hex } from '../core/hash.js';
import { artifactId, DEFAULT_NAMESPACE, isArtifactId } from '../core/ids.js';
import { DEFAULT_MIME, expiryOf, NEVER_EXPIRES_AT, TEXT_MIME, validatePutOptions } from '../core/put-options.js';
import {
  ListQuerySchema,
  type ArtifactRef,
  type ArtifactScope,
  type ListPage,
  type ListQuery,
  type PutOptions,
} from '../core/schemas.js';
import { decodeCursor, encodeCursor } from '../core/cursor.js';
import type { ArtifactStore, ArtifactStoreCapabilities, GetStreamOptions } from './artifact-store.js';
import { readAccessOf, resolveByteRange } from '../core/store-scope.js';
import { narrowFilter, narrowScope } from '../core/scope.js';
import { sessionEndFilter, sessionToEnd, type SessionEndReport } from '../core/sessions.js';
import { endSessionNames, memoryNames, type MemoryNames } from './memory-names.js';

export interface InMemoryArtifactStoreOptions {
  /** Who this store acts for; default `{ tenantId: 'local' }`. */
  scope?: ArtifactScope;
  /** Puts larger than this fail with payload_too_large. Default: no limit. */
  maxArtifactBytes?: number;
  /** Default 3600, as the service. */
  defaultTtlSeconds?: number;
  /** Default 7 days, as the service. */
  maxTtlSeconds?: number;
  /** Puts may ask for `ttl: 'never'`. Default false, as the service. */
  allowNoExpiry?: boolean;
  /** Milliseconds since the epoch; injectable for tests. */
  now?: () => number;
}

/** An ArtifactStore in a Map, plus views of the same data under other scopes. */
export interface InMemoryArtifactStore extends ArtifactStore {
  readonly scope: ArtifactScope;
  /** Another store over the same artifacts, acting for `scope` (for example another session). */
  withScope(scope: ArtifactScope): InMemoryArtifactStore;
  /** Ends `sessionId` (default: this store's session), as the service does. */
  endSession(sessionId?: string): Promise<SessionEndReport>;
}

interface StoredRef {
  seq: number;
  tenantId: string;
  artifactId: string;
  userId?: string;
  sessionId?: string;
  traceId?: string;
  mimeType: string;
  filename?: string;
  meta?: Record<string, unknown>;
  source?: Record<string, unknown>;
  createdAt: number;
  lastAccessedAt: number;
  expiresAt: number;
}

interface StoredArtifact {
  namespace: string;
  sha256: string;
  bytes: Uint8Array;
}

/** The shared state behind every scoped view. */
interface MemoryState {
  /** `${tenantId}\n${artifactId}` → artifact. */
  artifacts: Map<string, StoredArtifact>;
  /** `${tenantId}\n${artifactId}\n${user}\n${session}\n${trace}` → reference. */
  refs: Map<string, StoredRef>;
  /** Named versions (memory-names.ts). */
  names: MemoryNames;
  seq: number;
  lastSweep: number;
}

const SWEEP_EVERY_MS = 60_000;

const artifactKey = (tenantId: string, id: string) => `${tenantId}\n${id}`;
const refKey = (s: ArtifactScope, id: string) =>
  `${s.tenantId}\n${id}\n${s.userId ?? ''}\n${s.sessionId ?? ''}\n${s.traceId ?? ''}`;

/**
 * Pure-JS store for tests, demos and browsers: no SQLite, nothing Node-only. Same ids, validation,
 * TTL and session scoping as the service; bytes live as long as the process.
 *
 * @example
 * const store = createInMemoryArtifactStore({ scope: { tenantId: 'demo', sessionId: 's-1' } });
 * const ref = await store.putText('hello', { filename: 'hello.txt' });
 */
export function createInMemoryArtifactStore(options: InMemoryArtifactStoreOptions = {}): InMemoryArtifactStore {
  const state: MemoryState = { artifacts: new Map(), refs: new Map(), names: new Map(), seq: 0, lastSweep: 0 };
  const settings = {
    maxArtifactBytes: options.maxArtifactBytes ?? Number.POSITIVE_INFINITY,
    defaultTtlSeconds: options.defaultTtlSeconds ?? 3600,
    maxTtlSeconds: options.maxTtlSeconds ?? 7 * 24 * 3600,
    allowNoExpiry: options.allowNoExpiry ?? false,
    now: options.now ?? Date.now,
  };
  return scopedView(state, settings, options.scope ?? { tenantId: 'local' });
}

type Settings = {
  maxArtifactBytes: number;
  defaultTtlSeconds: number;
  maxTtlSeconds: number;
  allowNoExpiry: boolean;
  now: () => number;
};

function scopedView(state: MemoryState, settings: Settings, scope: ArtifactScope): InMemoryArtifactStore {
  const { now } = settings;
  const access = readAccessOf(scope);
  const capabilities: ArtifactStoreCapabilities = {
    persistent: false,
    ranges: true,
    signedUrls: false,
    events: false,
    names: true,
  };

  const visible = (ref: StoredRef, at: number) =>
    ref.tenantId === access.tenantId &&
    ref.expiresAt > at &&
    (access.filter.sessionId === undefined || ref.sessionId === access.filter.sessionId) &&
    (access.filter.traceId === undefined || ref.traceId === access.filter.traceId);

  const newestFirst = (a: StoredRef, b: StoredRef) => b.createdAt - a.createdAt || b.seq - a.seq;

  /** The newest live reference visible here; reads of the bytes refresh last-accessed (LRU), as in the service. */
  function find(id: string, touch = false): { ref: StoredRef; artifact: StoredArtifact } | undefined {
    if (!isArtifactId(id)) return undefined;
    const at = now();
    let best: StoredRef | undefined;
    for (const ref of state.refs.values()) {
      if (ref.artifactId === id && visible(ref, at) && (!best || newestFirst(ref, best) < 0)) best = ref;
    }
    const artifact = best && state.artifacts.get(artifactKey(best.tenantId, id));
    if (!best || !artifact) return undefined;
    if (touch) best.lastAccessedAt = at;
    return { ref: best, artifact };
  }

  function toRef(ref: StoredRef, artifact: StoredArtifact): ArtifactRef {
    const out: ArtifactRef = {
      id: ref.artifactId,
      mimeType: ref.mimeType,
      sizeBytes: artifact.bytes.byteLength,
      sha256: artifact.sha256,
      namespace: artifact.namespace,
      scope: scopeOf(ref),
      createdAt: new Date(ref.createdAt).toISOString(),
      lastAccessedAt: new Date(ref.lastAccessedAt).toISOString(),
    };
    if (ref.expiresAt < NEVER_EXPIRES_AT) out.expiresAt = new Date(ref.expiresAt).toISOString();
    if (ref.filename !== undefined) out.filename = ref.filename;
    if (ref.source !== undefined) out.source = structuredClone(ref.source);
    if (ref.meta !== undefined) out.meta = structuredClone(ref.meta);
    return out;
  }

  function checkPutOptions(raw: PutOptions) {
    const o = validatePutOptions(raw, settings);
    return { ...o, scope: narrowScope(scope, o.scope) };
  }

  async function commit(bytes: Uint8Array, raw: PutOptions): Promise<ArtifactRef> {
    const o = checkPutOptions(raw);
    if (bytes.byteLength > settings.maxArtifactBytes) throw errors.payloadTooLarge(settings.maxArtifactBytes);
    const sha256 = await sha256Hex(bytes);
    if (o.sha256 && o.sha256 !== sha256) throw errors.checksumMismatch(o.sha256, sha256);
    const namespace = o.namespace ?? DEFAULT_NAMESPACE;
    const id = artifactId(namespace, sha256);
    const at = now();
    sweep(at);

    const aKey = artifactKey(o.scope.tenantId, id);
    let artifact = state.artifacts.get(aKey);
    if (artifact && artifact.sha256 !== sha256) throw errors.hashCollision(id);
    if (!artifact) {
      // Copy: the caller may reuse its buffer.
      artifact = { namespace, sha256, bytes: new Uint8Array(bytes) };
      state.artifacts.set(aKey, artifact);
    }
    const rKey = refKey(o.scope, id);
    const prior = state.refs.get(rKey);
    const live = prior !== undefined && prior.expiresAt > at;
    const ref: StoredRef = {
      seq: prior?.seq ?? ++state.seq,
      tenantId: o.scope.tenantId,
      artifactId: id,
      ...(o.scope.userId !== undefined ? { userId: o.scope.userId } : {}),
      ...(o.scope.sessionId !== undefined ? { sessionId: o.scope.sessionId } : {}),
      ...(o.scope.traceId !== undefined ? { traceId: o.scope.traceId } : {}),
      mimeType: o.mimeType ?? DEFAULT_MIME,
      ...(o.filename !== undefined ? { filename: o.filename } : {}),
      ...(o.meta !== undefined ? { meta: structuredClone(o.meta) } : {}),
      ...(o.source !== undefined ? { source: structuredClone(o.source) } : {}),
      // A re-put refreshes expiry; an expired reference not swept yet counts as new.
      createdAt: live ? prior.createdAt : at,
      lastAccessedAt: at,
      expiresAt: expiryOf(at, o.ttl ?? settings.defaultTtlSeconds),
    };
    state.refs.set(rKey, ref);
    return toRef(ref, artifact);
  }

  /** Drops expired references and artifacts nothing references any more (at most once a minute). */
  function sweep(at: number) {
    if (at - state.lastSweep < SWEEP_EVERY_MS) return;
    state.lastSweep = at;
    for (const [key, ref] of state.refs) if (ref.expiresAt <= at) state.refs.delete(key);
    dropUnreferenced();
  }

  function dropUnreferenced() {
    const held = new Set<string>();
    for (const ref of state.refs.values()) held.add(artifactKey(ref.tenantId, ref.artifactId));
    for (const key of state.artifacts.keys()) if (!held.has(key)) state.artifacts.delete(key);
  }

  async function getStream(id: string, getOptions: GetStreamOptions = {}): Promise<ReadableStream<Uint8Array> | null> {
    const found = find(id, true);
    if (!found) return null;
    const { bytes } = found.artifact;
    const range = resolveByteRange(getOptions.range, bytes.byteLength);
    const view = range ? bytes.slice(range.start, range.end + 1) : bytes.slice();
    return new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(view);
        controller.close();
      },
    });
  }

  return {
    capabilities,
    scope,
    withScope: (other: ArtifactScope) => scopedView(state, settings, other),
    names: memoryNames(state.names, { ...settings, collect }, scope),

    putBytes: (data: Uint8Array, o: PutOptions = {}) => commit(data, o),
    putText: (text: string, o: PutOptions = {}) =>
      commit(new TextEncoder().encode(text), { mimeType: TEXT_MIME, ...o }),
    async putBase64(data: string, o: PutOptions = {}) {
      const decoded = decodeBase64(data);
      return commit(decoded.bytes, { ...(decoded.mimeType ? { mimeType: decoded.mimeType } : {}), ...o });
    },
    async putStream(stream: ReadableStream<Uint8Array>, o: PutOptions = {}) {
      try {
        checkPutOptions(o);
      } catch (err) {
        await stream.cancel(err).catch(() => {});
        throw err;
      }
      return commit(await collect(stream, settings.maxArtifactBytes), o);
    },

    async get(id: string) {
      const found = find(id, true);
      return found ? found.artifact.bytes.slice() : null;
    },
    getStream,
    async getRef(id: string) {
      const found = find(id);
      return found ? toRef(found.ref, found.artifact) : null;
    },
    async exists(id: string) {
      if (!isArtifactId(id)) return false;
      const at = now();
      for (const ref of state.refs.values()) if (ref.artifactId === id && visible(ref, at)) return true;
      return false;
    },
    async delete(id: string) {
      if (!isArtifactId(id)) return false;
      const at = now();
      let removed = 0;
      for (const [key, ref] of state.refs) {
        if (ref.artifactId === id && visible(ref, at)) {
          state.refs.delete(key);
          removed++;
        }
      }
      if (removed > 0) dropUnreferenced();
      return removed > 0;
    },

    async endSession(sessionId?: string): Promise<SessionEndReport> {
      const session = sessionToEnd(sessionId, scope.sessionId);
      const { userId } = sessionEndFilter(access.filter, session);
      const at = now();
      let refs = 0;
      let bytes = 0;
      for (const [key, ref] of state.refs) {
        if (ref.tenantId !== access.tenantId || ref.sessionId !== session || ref.expiresAt <= at) continue;
        if (userId !== undefined && ref.userId !== userId) continue;
        state.refs.delete(key);
        refs++;
        bytes += state.artifacts.get(artifactKey(ref.tenantId, ref.artifactId))?.bytes.byteLength ?? 0;
      }
      if (refs > 0) dropUnreferenced();
      const named = endSessionNames(state.names, access.tenantId, session, userId);
      return { sessionId: session, refs: refs + named.versions, bytes: bytes + named.bytes, versions: named.versions };
    },

    async list(rawQuery: ListQuery = {}): Promise<ListPage> {
      const parsed = ListQuerySchema.safeParse(rawQuery);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        throw errors.badRequest(`Invalid list filter ${issue.path.join('.')}: ${issue.message}.`);
      }
      const q = parsed.data;
      narrowFilter(access.filter, q); // naming another of the bound parts is refused
      const after = q.cursor ? decodeCursor(q.cursor) : undefined;
      const createdAfter = q.createdAfter ? Date.parse(q.createdAfter) : undefined;
      const createdBefore = q.createdBefore ? Date.parse(q.createdBefore) : undefined;
      const at = now();
      const rows: { ref: StoredRef; artifact: StoredArtifact }[] = [];
      for (const ref of state.refs.values()) {
        if (!visible(ref, at)) continue;
        if (q.sessionId !== undefined && ref.sessionId !== q.sessionId) continue;
        if (q.traceId !== undefined && ref.traceId !== q.traceId) continue;
        if (q.userId !== undefined && ref.userId !== q.userId) continue;
        if (q.mimePrefix !== undefined && !ref.mimeType.startsWith(q.mimePrefix)) continue;
        if (createdAfter !== undefined && ref.createdAt < createdAfter) continue;
        if (createdBefore !== undefined && ref.createdAt >= createdBefore) continue;
        if (after && !(ref.createdAt < after.createdAt || (ref.createdAt === after.createdAt && ref.seq < after.refId)))
          continue;
        const artifact = state.artifacts.get(artifactKey(ref.tenantId, ref.artifactId));
        if (!artifact || (q.namespace !== undefined && artifact.namespace !== q.namespace)) continue;
        rows.push({ ref, artifact });
      }
      rows.sort((a, b) => newestFirst(a.ref, b.ref));
      const limit = q.limit ?? 100;
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      const items = page.map((r) => toRef(r.ref, r.artifact));
      return rows.length > limit && last
        ? { items, nextCursor: encodeCursor({ createdAt: last.ref.createdAt, refId: last.ref.seq }) }
        : { items };
    },
  };
}

function scopeOf(ref: StoredRef): ArtifactScope {
  const scope: ArtifactScope = { tenantId: ref.tenantId };
  if (ref.userId !== undefined) scope.userId = ref.userId;
  if (ref.sessionId !== undefined) scope.sessionId = ref.sessionId;
  if (ref.traceId !== undefined) scope.traceId = ref.traceId;
  return scope;
}

/** Reads a stream into one buffer, refusing it as soon as it passes `maxBytes`. */
async function collect(stream: ReadableStream<Uint8Array>, maxBytes: number): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) throw errors.payloadTooLarge(maxBytes);
      chunks.push(value);
    }
  } catch (err) {
    await reader.cancel(err).catch(() => {});
    throw err;
  } finally {
    reader.releaseLock();
  }
  return concatBytes(chunks, size);
}
