/**
 * The SDK's own in-memory store: an ArtifactStore in plain JavaScript, for browsers and for code
 * that has only this package. It is not the service: it has the service's ids, validation, scoping,
 * TTLs, listing order and cursors, named versions and session ends (the rules in core/, the tables as
 * memory-table.ts), and none of its quotas, eviction, views, events or links. For the service's own
 * rules in memory, the server package has `openArtifactStore({ memory: true })` (artifact-store/node).
 */
import { decodeBase64 } from '../core/base64.js';
import { compareListed, isAfter, listPageOf, matchesSearch, readListQuery } from '../core/listing.js';
import { isArtifactId } from '../core/ids.js';
import { TEXT_MIME } from '../core/put-options.js';
import type { ArtifactScope, ListQuery, PutOptions } from '../core/schemas.js';
import { narrowFilter, narrowScope } from '../core/scope.js';
import { sessionEndFilter, sessionToEnd, type SessionEndReport } from '../core/sessions.js';
import { readAccessOf, resolveByteRange } from '../core/store-scope.js';
import type { ArtifactStore, ArtifactStoreCapabilities, GetStreamOptions } from './artifact-store.js';
import { memoryNames } from './memory-names.js';
import { commitPut, type MemoryStoreContext } from './memory-put.js';
import { createMemoryTable, refOf } from './memory-table.js';

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

/** An ArtifactStore in memory, plus views of the same data under other scopes. */
export interface InMemoryArtifactStore extends ArtifactStore {
  readonly scope: ArtifactScope;
  /** Another store over the same artifacts, acting for `scope` (for example another session). */
  withScope(scope: ArtifactScope): InMemoryArtifactStore;
  /** Ends `sessionId` (default: this store's session), as the service does. */
  endSession(sessionId?: string): Promise<SessionEndReport>;
}

/**
 * The SDK's own store, in memory: for browsers and for code that has only this package (tests,
 * demos). What it has answers as the service does (ids, validation, scopes, TTLs, listings, named
 * versions, session ends; a differential test holds it to the service); it has no quotas, eviction,
 * views, events or links. For those in memory, `openArtifactStore({ memory: true })` from
 * artifact-store/node runs the service itself. Bytes live as long as the store; a put first removes
 * the references that have expired, as a retention run of the service would.
 *
 * @example
 * const store = createInMemoryArtifactStore({ scope: { tenantId: 'demo', sessionId: 's-1' } });
 * const ref = await store.putText('hello', { filename: 'hello.txt' });
 */
export function createInMemoryArtifactStore(options: InMemoryArtifactStoreOptions = {}): InMemoryArtifactStore {
  const context: MemoryStoreContext = {
    table: createMemoryTable(),
    maxArtifactBytes: options.maxArtifactBytes ?? Number.POSITIVE_INFINITY,
    defaultTtlSeconds: options.defaultTtlSeconds ?? 3600,
    maxTtlSeconds: options.maxTtlSeconds ?? 7 * 24 * 3600,
    allowNoExpiry: options.allowNoExpiry ?? false,
    now: options.now ?? Date.now,
  };
  return scopedView(context, options.scope ?? { tenantId: 'local' });
}

function scopedView(context: MemoryStoreContext, scope: ArtifactScope): InMemoryArtifactStore {
  const { table, now } = context;
  const access = readAccessOf(scope);
  const capabilities: ArtifactStoreCapabilities = {
    persistent: false,
    ranges: true,
    signedUrls: false,
    events: false,
    names: true,
  };

  /** Before a put: the expired references go, then its scope is checked (first, as in the embedded store). */
  function beforePut(o: PutOptions): void {
    table.expireRefs(now());
    narrowScope(scope, o.scope);
  }

  const find = (id: string) =>
    isArtifactId(id) ? table.findRef(access.tenantId, id, access.filter, now()) : undefined;

  async function getStream(id: string, o: GetStreamOptions = {}): Promise<ReadableStream<Uint8Array> | null> {
    const row = find(id);
    if (!row) return null;
    const bytes = table.bytesOf(row);
    const range = resolveByteRange(o.range, bytes.byteLength);
    table.touch(row, now());
    return streamOf(range ? bytes.slice(range.start, range.end + 1) : bytes.slice());
  }

  return {
    capabilities,
    scope,
    withScope: (other: ArtifactScope) => scopedView(context, other),
    names: memoryNames(context, scope),

    async putBytes(data: Uint8Array, o: PutOptions = {}) {
      beforePut(o);
      return commitPut(context, scope, data, o);
    },
    async putText(text: string, o: PutOptions = {}) {
      beforePut(o);
      return commitPut(context, scope, new TextEncoder().encode(text), { mimeType: TEXT_MIME, ...o });
    },
    async putBase64(data: string, o: PutOptions = {}) {
      beforePut(o);
      // A data: URL's type, unless mimeType is given.
      const decoded = decodeBase64(data);
      return commitPut(context, scope, decoded.bytes, {
        ...(decoded.mimeType ? { mimeType: decoded.mimeType } : {}),
        ...o,
      });
    },
    async putStream(stream: ReadableStream<Uint8Array>, o: PutOptions = {}) {
      try {
        beforePut(o);
      } catch (err) {
        await stream.cancel(err).catch(() => {});
        throw err;
      }
      return commitPut(context, scope, stream, o);
    },

    async get(id: string) {
      const body = await getStream(id);
      return body && new Uint8Array(await new Response(body).arrayBuffer());
    },
    getStream,
    getRef: async (id: string) => {
      const row = find(id);
      return row ? refOf(row) : null;
    },
    exists: async (id: string) => find(id) !== undefined,
    delete: async (id: string) => isArtifactId(id) && table.deleteRefs(access.tenantId, id, access.filter, now()) > 0,

    async endSession(sessionId?: string): Promise<SessionEndReport> {
      const session = sessionToEnd(sessionId, scope.sessionId);
      const { sessionId: _session, ...filter } = sessionEndFilter(access.filter, session);
      return { sessionId: session, ...table.endSession(access.tenantId, session, filter, now()) };
    },

    async list(raw: ListQuery = {}) {
      const { query: q, limit, sort, createdAfter, createdBefore, after } = readListQuery(raw);
      const rows = table
        .live(access.tenantId, narrowFilter(access.filter, q), now())
        .filter(
          (row) =>
            (q.namespace === undefined || row.namespace === q.namespace) &&
            (q.mimePrefix === undefined || row.mimeType.startsWith(q.mimePrefix)) &&
            (createdAfter === undefined || row.createdAt >= createdAfter) &&
            (createdBefore === undefined || row.createdAt < createdBefore) &&
            (q.q === undefined || matchesSearch(row, q.q)) &&
            (after === undefined || isAfter(row, after)),
        )
        .sort(compareListed(sort));
      return listPageOf(rows.slice(0, limit + 1), limit, refOf, sort);
    },
  };
}

const streamOf = (bytes: Uint8Array) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  });
