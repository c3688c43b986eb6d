/**
 * Named versions in memory, for the in-memory store: the same keys, numbering, validation and
 * answers as the service (core/names.ts), with every view over one shared state. Versions live as
 * long as the process; they are kept apart from the content store's list().
 */
import type { NamedArtifactStore } from '../core/artifact-store.js';
import { streamOfBytes } from '../core/bytes.js';
import { errors } from '../core/errors.js';
import { sha256Hex } from '../core/hash.js';
import { artifactId } from '../core/ids.js';
import { checkVersion, nameCursorOf, nameKeyFor, nameOfCursor } from '../core/names.js';
import { DEFAULT_MIME, expiryOf, NEVER_EXPIRES_AT, TEXT_MIME, validatePutOptions } from '../core/put-options.js';
import type { ArtifactRef, ArtifactScope, NameInfo } from '../core/schemas.js';
import { resolveByteRange } from '../core/store-scope.js';

interface StoredVersion {
  ref: ArtifactRef;
  bytes: Uint8Array;
  expiresAt: number;
}

interface NameEntry {
  next: number;
  versions: Map<number, StoredVersion>;
}

/** Shared by every view of one in-memory store: `${tenant}\n${app}\n${user}\n${session}\n${name}` → entry. */
export type MemoryNames = Map<string, NameEntry>;

export interface MemoryNameSettings {
  maxArtifactBytes: number;
  maxTtlSeconds: number;
  allowNoExpiry: boolean;
  now: () => number;
  collect(stream: ReadableStream<Uint8Array>, maxBytes: number): Promise<Uint8Array>;
}

const keyOf = (k: { tenantId: string; app: string; userId: string; sessionId: string; name: string }) =>
  `${k.tenantId}\n${k.app}\n${k.userId}\n${k.sessionId}\n${k.name}`;
const scopePrefix = (k: { tenantId: string; app: string; userId: string; sessionId: string }) =>
  `${k.tenantId}\n${k.app}\n${k.userId}\n${k.sessionId}\n`;

/**
 * Ends a session's names (of one user, when given): every version, live or not, and the names
 * themselves, so a later save starts at 0. Returns how many versions went and their bytes.
 */
export function endSessionNames(
  names: MemoryNames,
  tenantId: string,
  sessionId: string,
  userId: string | undefined,
): { versions: number; bytes: number } {
  let versions = 0;
  let bytes = 0;
  const prefix = `${tenantId}\n`;
  for (const [key, entry] of names) {
    // After the tenant (which could hold anything) come app, user, session and name: no line breaks.
    if (!key.startsWith(prefix)) continue;
    const [, user, session] = key.slice(prefix.length).split('\n');
    if (session !== sessionId || (userId !== undefined && user !== userId)) continue;
    for (const v of entry.versions.values()) {
      versions++;
      bytes += v.bytes.byteLength;
    }
    names.delete(key);
  }
  return { versions, bytes };
}

export function memoryNames(
  names: MemoryNames,
  settings: MemoryNameSettings,
  scope: ArtifactScope,
): NamedArtifactStore {
  const { now } = settings;
  const live = (entry: NameEntry | undefined, at: number) =>
    entry
      ? [...entry.versions.values()].filter((v) => v.expiresAt > at).sort((a, b) => a.ref.version! - b.ref.version!)
      : [];

  const find = (ref: Parameters<NamedArtifactStore['loadVersion']>[0], version?: number) => {
    const key = nameKeyFor(scope, ref);
    checkVersion(version);
    const versions = live(names.get(keyOf(key)), now());
    return version === undefined ? versions[versions.length - 1] : versions.find((v) => v.ref.version === version);
  };

  return {
    async versionRef(ref, version) {
      const found = find(ref, version);
      return found ? structuredClone(found.ref) : null;
    },
    async saveVersion(ref, data, raw = {}) {
      const key = nameKeyFor(scope, ref);
      const { scope: _scope, namespace: _namespace, ...rest } = raw;
      const o = validatePutOptions(
        typeof data === 'string' && rest.mimeType === undefined ? { ...rest, mimeType: TEXT_MIME } : rest,
        settings,
      );
      const bytes =
        typeof data === 'string'
          ? new TextEncoder().encode(data)
          : data instanceof ReadableStream
            ? await settings.collect(data, settings.maxArtifactBytes)
            : new Uint8Array(data);
      if (bytes.byteLength > settings.maxArtifactBytes) throw errors.payloadTooLarge(settings.maxArtifactBytes);
      const sha256 = await sha256Hex(bytes);
      if (o.sha256 && o.sha256 !== sha256) throw errors.checksumMismatch(o.sha256, sha256);
      const at = now();
      const expiresAt = o.ttl === undefined ? NEVER_EXPIRES_AT : expiryOf(at, o.ttl);
      let entry = names.get(keyOf(key));
      if (!entry) {
        entry = { next: 0, versions: new Map() };
        names.set(keyOf(key), entry);
      }
      const version = entry.next++;
      const stamp = new Date(at).toISOString();
      const versionRef: ArtifactRef = {
        id: artifactId(key.app, sha256),
        mimeType: o.mimeType ?? DEFAULT_MIME,
        sizeBytes: bytes.byteLength,
        sha256,
        namespace: key.app,
        scope: {
          tenantId: key.tenantId,
          ...(key.userId ? { userId: key.userId } : {}),
          ...(key.sessionId ? { sessionId: key.sessionId } : {}),
        },
        createdAt: stamp,
        lastAccessedAt: stamp,
        ...(expiresAt < NEVER_EXPIRES_AT ? { expiresAt: new Date(expiresAt).toISOString() } : {}),
        ...(o.filename ? { filename: o.filename } : {}),
        ...(o.source ? { source: o.source } : {}),
        ...(o.meta ? { meta: o.meta } : {}),
        name: key.name,
        version,
      };
      entry.versions.set(version, { ref: versionRef, bytes, expiresAt });
      return structuredClone(versionRef);
    },

    async loadVersion(ref, version) {
      const found = find(ref, version);
      return found ? { ref: structuredClone(found.ref), bytes: new Uint8Array(found.bytes) } : null;
    },

    async loadVersionStream(ref, version, o = {}) {
      const found = find(ref, version);
      if (!found) return null;
      const range = resolveByteRange(o.range, found.bytes.byteLength);
      const bytes = range ? found.bytes.slice(range.start, range.end + 1) : new Uint8Array(found.bytes);
      return { ref: structuredClone(found.ref), stream: streamOfBytes(bytes) };
    },

    async listVersions(ref) {
      return live(names.get(keyOf(nameKeyFor(scope, ref))), now()).map((v) => structuredClone(v.ref));
    },

    async listNames(where, query = {}) {
      const key = nameKeyFor(scope, where);
      const at = scopePrefix(key);
      const limit = query.limit ?? 100;
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
        throw errors.badRequest('limit must be a whole number from 1 to 1000.');
      const after = query.cursor ? nameOfCursor(query.cursor) : '';
      const t = now();
      const items: NameInfo[] = [];
      for (const [k, entry] of names) {
        if (!k.startsWith(at)) continue;
        const name = k.slice(at.length);
        const versions = live(entry, t);
        if (name <= after || versions.length === 0) continue;
        const latest = versions[versions.length - 1]!;
        items.push({
          name,
          scope: key.sessionId ? 'session' : 'user',
          latestVersion: latest.ref.version!,
          versions: versions.length,
          updatedAt: latest.ref.createdAt,
        });
      }
      items.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      const page = items.slice(0, limit);
      return items.length > limit
        ? { items: page, nextCursor: nameCursorOf(page[page.length - 1]!.name) }
        : { items: page };
    },

    async deleteName(ref) {
      return names.delete(keyOf(nameKeyFor(scope, ref)));
    },
  };
}
