/**
 * Named versions of the in-memory store, as the service's (service/names.ts): a version is a
 * reference with a name and a number in the store's tables (memory-table.ts), so it also lists,
 * reads and deletes by its id like any reference, and ending its session removes it.
 */
import type { NamedArtifactStore } from '../core/artifact-store.js';
import { streamOfBytes } from '../core/bytes.js';
import { checkVersion, nameKeyFor, nameListLimit, nameOfCursor, namePageOf } from '../core/names.js';
import { TEXT_MIME } from '../core/put-options.js';
import type { ArtifactScope, NameKey } from '../core/schemas.js';
import { resolveByteRange } from '../core/store-scope.js';
import { commitPut, type MemoryStoreContext } from './memory-put.js';
import { refOf } from './memory-table.js';

/** The named versions of an in-memory store acting for `scope`, over the tables its views share. */
export function memoryNames(context: MemoryStoreContext, scope: ArtifactScope): NamedArtifactStore {
  const { table, now } = context;

  /** The version asked for (or the latest live one) of the name a ref means here. */
  const find = (key: NameKey, version: number | undefined) => {
    checkVersion(version);
    return table.findVersion(key, version, now());
  };

  /** A version's ref and bytes (or a range of them); the read refreshes last-accessed. */
  const read = (
    ref: Parameters<NamedArtifactStore['loadVersion']>[0],
    version?: number,
    range?: { start: number; end: number },
  ) => {
    const row = find(nameKeyFor(scope, ref), version);
    if (!row) return null;
    const bytes = table.bytesOf(row);
    const r = resolveByteRange(range, bytes.byteLength);
    // The ref as it was before this read, as the service answers.
    const versionRef = refOf(row);
    table.touch(row, now());
    return { ref: versionRef, bytes: r ? bytes.slice(r.start, r.end + 1) : bytes.slice() };
  };

  return {
    async versionRef(ref, version) {
      const row = find(nameKeyFor(scope, ref), version);
      return row ? refOf(row) : null;
    },

    async saveVersion(ref, data, o = {}) {
      table.expireRefs(now());
      const key = nameKeyFor(scope, ref);
      const { scope: _scope, namespace: _namespace, ...rest } = o;
      const typed = typeof data === 'string' && rest.mimeType === undefined ? { ...rest, mimeType: TEXT_MIME } : rest;
      const body = typeof data === 'string' ? new TextEncoder().encode(data) : data;
      const at = {
        tenantId: key.tenantId,
        ...(key.userId ? { userId: key.userId } : {}),
        ...(key.sessionId ? { sessionId: key.sessionId } : {}),
      };
      return commitPut(context, at, body, { ...typed, namespace: key.app }, key.name);
    },

    loadVersion: async (ref, version) => read(ref, version),

    async loadVersionStream(ref, version, o = {}) {
      const loaded = read(ref, version, o.range);
      return loaded && { ref: loaded.ref, stream: streamOfBytes(loaded.bytes) };
    },

    async listVersions(ref) {
      return table.listVersions(nameKeyFor(scope, ref), now()).map(refOf);
    },

    async listNames(where, query = {}) {
      const { name: _name, ...at } = nameKeyFor(scope, where);
      const limit = nameListLimit(query.limit);
      const after = query.cursor ? nameOfCursor(query.cursor) : '';
      return namePageOf(at, table.listNames(at, after, limit + 1, now()), limit);
    },

    deleteName: async (ref) => table.deleteName(nameKeyFor(scope, ref)),
  };
}
