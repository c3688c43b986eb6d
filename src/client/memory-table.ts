/**
 * The in-memory store's data, laid out as the service's tables are (src/db/schema.ts) and read and
 * written as its repository's SQL does (src/db/plans/): one row per reference, named versions being
 * references with a name and a number; the artifacts they hold, by tenant and id; each name's
 * counter. Reads see live references only. test/memory-store-differential.test.ts holds the two to
 * the same answers.
 */
import { NEVER_EXPIRES_AT } from '../core/put-options.js';
import type { ArtifactRef, NameKey, NameScope } from '../core/schemas.js';

/** One reference: a row of artifact_refs, with '' for an absent user, session, trace or name. */
export interface RefRow {
  refId: number;
  tenantId: string;
  artifactId: string;
  userId: string;
  sessionId: string;
  traceId: string;
  mimeType: string;
  filename: string | null;
  /** Each read gets its own copy (structuredClone, not JSON: a read parses no JSON). */
  meta: Record<string, unknown> | null;
  source: Record<string, unknown> | null;
  createdAt: number;
  lastAccessedAt: number;
  expiresAt: number;
  name: string;
  /** The version under `name`, or -1. */
  version: number;
}

export interface Artifact {
  namespace: string;
  sha256: string;
  bytes: Uint8Array;
}

/** A reference with the artifact it holds. */
export interface Found {
  row: RefRow;
  artifact: Artifact;
}

/** The scope parts a read is narrowed to (the tenant aside). */
export interface Filter {
  userId?: string;
  sessionId?: string;
  traceId?: string;
}

/** What a put commits: the fields of its reference, and the bytes (kept when the artifact is new). */
export type PutRow = Omit<RefRow, 'refId' | 'lastAccessedAt' | 'name' | 'version'> & {
  namespace: string;
  sha256: string;
  bytes: Uint8Array;
  /** The name a save makes the next version of. */
  name?: string;
};

/** SQLite's order of text (UTF-8 bytes, which is code point order), not JavaScript's UTF-16 one. */
export function compareText(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < x.length && i < y.length; i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

const matches = (row: RefRow, f: Filter) =>
  (f.userId === undefined || row.userId === f.userId) &&
  (f.sessionId === undefined || row.sessionId === f.sessionId) &&
  (f.traceId === undefined || row.traceId === f.traceId);

/** Newest first: created, then reference id (the service's listing order). */
export const newestFirst = (a: RefRow, b: RefRow) => b.createdAt - a.createdAt || b.refId - a.refId;

/** What callers see of a stored reference (the service's rowToRef). */
export function refOf({ row, artifact }: Found): ArtifactRef {
  const ref: ArtifactRef = {
    id: row.artifactId,
    mimeType: row.mimeType,
    sizeBytes: artifact.bytes.byteLength,
    sha256: artifact.sha256,
    namespace: artifact.namespace,
    scope: {
      tenantId: row.tenantId,
      ...(row.userId ? { userId: row.userId } : {}),
      ...(row.sessionId ? { sessionId: row.sessionId } : {}),
      ...(row.traceId ? { traceId: row.traceId } : {}),
    },
    createdAt: new Date(row.createdAt).toISOString(),
    lastAccessedAt: new Date(row.lastAccessedAt).toISOString(),
  };
  if (row.expiresAt < NEVER_EXPIRES_AT) ref.expiresAt = new Date(row.expiresAt).toISOString();
  if (row.filename) ref.filename = row.filename;
  if (row.source) ref.source = structuredClone(row.source);
  if (row.meta) ref.meta = structuredClone(row.meta);
  if (row.name) {
    ref.name = row.name;
    ref.version = row.version;
  }
  return ref;
}

export function createMemoryTable() {
  const artifacts = new Map<string, Artifact>();
  /** By reference id, so iterating goes in id order, as SQLite's rowid. */
  const refs = new Map<number, RefRow>();
  /** The next version of each name (the names table). */
  const names = new Map<string, number>();
  let lastRefId = 0;

  // Artifact ids have a fixed alphabet without spaces, so the id first makes the key unambiguous.
  const artifactKey = (tenantId: string, id: string) => `${id} ${tenantId}`;
  const nameKey = (k: NameKey) => JSON.stringify([k.tenantId, k.app, k.userId, k.sessionId, k.name]);
  const found = (row: RefRow): Found => ({ row, artifact: artifacts.get(artifactKey(row.tenantId, row.artifactId))! });

  /** Removes references, and each artifact with its last reference. */
  function remove(rows: RefRow[]): void {
    for (const row of rows) refs.delete(row.refId);
    const held = new Set<string>();
    for (const row of refs.values()) held.add(artifactKey(row.tenantId, row.artifactId));
    for (const row of rows) {
      const key = artifactKey(row.tenantId, row.artifactId);
      if (!held.has(key)) artifacts.delete(key);
    }
  }

  /** The versions of a name (the references of its scope with its name, in its app), live or not. */
  const versionsOf = (k: Omit<NameKey, 'name'> & { name?: string }) =>
    [...refs.values()]
      .filter(
        (r) =>
          r.tenantId === k.tenantId &&
          r.userId === k.userId &&
          r.sessionId === k.sessionId &&
          r.traceId === '' &&
          r.name !== '' &&
          (k.name === undefined || r.name === k.name) &&
          found(r).artifact.namespace === k.app,
      )
      .sort((a, b) => a.version - b.version);

  const sizeOf = (row: RefRow) => found(row).artifact.bytes.byteLength;

  return {
    /** The hash an artifact id already has in this tenant, if it is stored. */
    storedSha256: (tenantId: string, id: string) => artifacts.get(artifactKey(tenantId, id))?.sha256,

    /**
     * A put: an unnamed reference is updated in place where its scope already holds one (its id kept,
     * its createdAt too while live), else inserted; a save inserts its name's next version.
     */
    commitPut(put: PutRow, now: number): Found {
      const key = artifactKey(put.tenantId, put.artifactId);
      if (!artifacts.has(key)) artifacts.set(key, { namespace: put.namespace, sha256: put.sha256, bytes: put.bytes });
      const { namespace: _n, sha256: _s, bytes: _b, name, ...fields } = put;
      if (name) {
        const counter = nameKey({ ...put, app: put.namespace, name });
        const version = names.get(counter) ?? 0;
        names.set(counter, version + 1);
        const row: RefRow = { ...fields, refId: ++lastRefId, traceId: '', lastAccessedAt: now, name, version };
        refs.set(row.refId, row);
        return found(row);
      }
      const same = [...refs.values()].find(
        (r) =>
          r.tenantId === put.tenantId &&
          r.artifactId === put.artifactId &&
          r.userId === put.userId &&
          r.sessionId === put.sessionId &&
          r.traceId === put.traceId &&
          r.name === '',
      );
      const row: RefRow = {
        ...fields,
        refId: same?.refId ?? ++lastRefId,
        createdAt: same && same.expiresAt > now ? same.createdAt : now,
        lastAccessedAt: now,
        name: '',
        version: -1,
      };
      refs.set(row.refId, row);
      return found(row);
    },

    /** The newest live reference to `id` the filter sees. */
    findRef(tenantId: string, id: string, filter: Filter, now: number): Found | undefined {
      let best: RefRow | undefined;
      for (const r of refs.values())
        if (r.tenantId === tenantId && r.artifactId === id && r.expiresAt > now && matches(r, filter))
          if (!best || newestFirst(r, best) < 0) best = r;
      return best && found(best);
    },

    /** A read refreshes last-accessed (never backwards). */
    touch(row: RefRow, at: number): void {
      if (row.lastAccessedAt < at) row.lastAccessedAt = at;
    },

    /** Live references the filter sees, newest first, for a listing to narrow further. */
    live(tenantId: string, filter: Filter, now: number): Found[] {
      return [...refs.values()]
        .filter((r) => r.tenantId === tenantId && r.expiresAt > now && matches(r, filter))
        .sort(newestFirst)
        .map(found);
    },

    /** Removes the live references to `id` the filter sees; how many went. */
    deleteRefs(tenantId: string, id: string, filter: Filter, now: number): number {
      const gone = [...refs.values()].filter(
        (r) => r.tenantId === tenantId && r.artifactId === id && r.expiresAt > now && matches(r, filter),
      );
      remove(gone);
      return gone.length;
    },

    /** Removes every expired reference, as a retention run does. */
    expireRefs(now: number): void {
      remove([...refs.values()].filter((r) => r.expiresAt <= now));
    },

    /**
     * Ends a session for a filter (user and / or trace): its named versions live or not, its other
     * references while live; then, without a trace, the session's names no version holds any more.
     */
    endSession(tenantId: string, sessionId: string, filter: Filter, now: number) {
      const gone = [...refs.values()].filter(
        (r) =>
          r.tenantId === tenantId &&
          r.sessionId === sessionId &&
          (r.expiresAt > now || r.name !== '') &&
          matches(r, { userId: filter.userId, traceId: filter.traceId }),
      );
      const tally = {
        refs: gone.length,
        bytes: gone.reduce((n, r) => n + sizeOf(r), 0),
        versions: gone.filter((r) => r.name !== '').length,
      };
      remove(gone);
      if (filter.traceId === undefined)
        for (const key of names.keys()) {
          const [tenant, app, userId, session, name] = JSON.parse(key) as string[];
          if (tenant !== tenantId || session !== sessionId) continue;
          if (filter.userId !== undefined && userId !== filter.userId) continue;
          const k = { tenantId: tenant, app: app!, userId: userId!, sessionId: sessionId, name: name! };
          if (versionsOf(k).length === 0) names.delete(key);
        }
      return tally;
    },

    /** The live version asked for, or the latest live one. */
    findVersion(key: NameKey, version: number | undefined, now: number): Found | undefined {
      const live = versionsOf(key).filter((r) => r.expiresAt > now && (version === undefined || r.version === version));
      const row = live[live.length - 1];
      return row && found(row);
    },

    /** Every live version of a name, oldest first. */
    listVersions(key: NameKey, now: number): Found[] {
      return versionsOf(key)
        .filter((r) => r.expiresAt > now)
        .map(found);
    },

    /** Names with a live version in a scope, by name, after `after`: the latest, how many, when. */
    listNames(scope: NameScope, after: string, limit: number, now: number) {
      const byName = new Map<string, RefRow[]>();
      for (const r of versionsOf(scope))
        if (r.expiresAt > now && compareText(r.name, after) > 0) byName.set(r.name, [...(byName.get(r.name) ?? []), r]);
      return [...byName.entries()]
        .sort(([a], [b]) => compareText(a, b))
        .slice(0, limit)
        .map(([name, rows]) => ({
          name,
          latestVersion: rows[rows.length - 1]!.version,
          versions: rows.length,
          updatedAt: Math.max(...rows.map((r) => r.createdAt)),
        }));
    },

    /** Removes a name's versions (live or not) and its counter; whether there was either. */
    deleteName(key: NameKey): boolean {
      const gone = versionsOf(key);
      remove(gone);
      return names.delete(nameKey(key)) || gone.length > 0;
    },
  };
}

export type MemoryTable = ReturnType<typeof createMemoryTable>;
