/**
 * The in-memory store's data, laid out as the service's tables are (src/db/schema.ts) and read and
 * written as its repository's SQL does (src/db/plans/): one row per reference, a named version being
 * a reference with a name and a number; the bytes of each artifact, by tenant and id; each name's
 * counter. Reads see live references only. test/memory-store-differential.test.ts holds the two to
 * the same answers.
 */
import { rowToRef, type StoredRef } from '../core/refs.js';
import type { ArtifactRef, NameKey, NameScope } from '../core/schemas.js';
import type { ReadFilter } from '../core/scope.js';

/** One reference (a row of artifact_refs joined with its artifact), '' for no name. */
export interface RefRow extends StoredRef {
  refId: number;
  name: string;
  /** The version under `name`, or -1. */
  version: number;
}

/** What a put commits: its reference's fields, the bytes (kept if the artifact is new), and a save's name. */
export type PutRow = Omit<RefRow, 'refId' | 'lastAccessedAt' | 'name' | 'version'> & {
  bytes: Uint8Array;
  name?: string;
};

/** SQLite's order of text (UTF-8 bytes, which is code point order), not JavaScript's UTF-16 one. */
function compareText(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < x.length && i < y.length; i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

const matches = (row: RefRow, f: ReadFilter) =>
  (f.userId === undefined || row.userId === f.userId) &&
  (f.sessionId === undefined || row.sessionId === f.sessionId) &&
  (f.traceId === undefined || row.traceId === f.traceId);

/** Newest first: created, then reference id (the service's order for lookups and listings). */
const newestFirst = (a: RefRow, b: RefRow) => b.createdAt - a.createdAt || b.refId - a.refId;

/** What callers see of a reference (core's rule), with meta and source of their own. */
export const refOf = (row: RefRow): ArtifactRef =>
  rowToRef({ ...row, meta: row.meta && structuredClone(row.meta), source: row.source && structuredClone(row.source) });

export function createMemoryTable() {
  // Artifact ids have a fixed alphabet without spaces, so the id first makes the key unambiguous.
  const artifactKey = (row: Pick<RefRow, 'tenantId' | 'artifactId'>) => `${row.artifactId} ${row.tenantId}`;
  const artifacts = new Map<string, { sha256: string; bytes: Uint8Array }>();
  /** By reference id, so iterating goes in id order, as SQLite's rowid. */
  const refs = new Map<number, RefRow>();
  /** The names table: each name's key and the next version it gives. */
  const names = new Map<string, { key: NameKey; next: number }>();
  const nameKey = (k: NameKey) => JSON.stringify([k.tenantId, k.app, k.userId, k.sessionId, k.name]);
  let lastRefId = 0;

  const rows = (where: (r: RefRow) => boolean) => [...refs.values()].filter(where);

  /** Removes references, and each artifact with its last reference. */
  function remove(gone: RefRow[]): void {
    for (const row of gone) refs.delete(row.refId);
    const held = new Set([...refs.values()].map(artifactKey));
    for (const row of gone) if (!held.has(artifactKey(row))) artifacts.delete(artifactKey(row));
  }

  /** The versions of a name (or of every name of a scope), live or not, by version. */
  const versionsOf = (k: NameScope & { name?: string }) =>
    rows(
      (r) =>
        r.tenantId === k.tenantId &&
        r.userId === k.userId &&
        r.sessionId === k.sessionId &&
        r.traceId === '' &&
        r.name !== '' &&
        (k.name === undefined || r.name === k.name) &&
        r.namespace === k.app,
    ).sort((a, b) => a.version - b.version);

  return {
    /** The bytes of a reference's artifact. */
    bytesOf: (row: RefRow) => artifacts.get(artifactKey(row))!.bytes,

    /** The hash an artifact id already has in this tenant, if it is stored. */
    storedSha256: (tenantId: string, artifactId: string) =>
      artifacts.get(artifactKey({ tenantId, artifactId }))?.sha256,

    /**
     * A put: an unnamed reference is updated in place where its scope already holds one (its id kept,
     * its createdAt too while live), else inserted; a save inserts its name's next version.
     */
    commitPut(put: PutRow, now: number): RefRow {
      const { bytes, name, ...fields } = put;
      if (!artifacts.has(artifactKey(put))) artifacts.set(artifactKey(put), { sha256: put.sha256, bytes });
      let row: RefRow;
      if (name) {
        const key = { tenantId: put.tenantId, app: put.namespace, userId: put.userId, sessionId: put.sessionId, name };
        const counter = names.get(nameKey(key)) ?? { key, next: 0 };
        names.set(nameKey(key), counter);
        const version = counter.next++;
        row = { ...fields, refId: ++lastRefId, traceId: '', lastAccessedAt: now, name, version };
      } else {
        const same = rows(
          (r) =>
            r.tenantId === put.tenantId &&
            r.artifactId === put.artifactId &&
            r.userId === put.userId &&
            r.sessionId === put.sessionId &&
            r.traceId === put.traceId &&
            r.name === '',
        )[0];
        const createdAt = same && same.expiresAt > now ? same.createdAt : now;
        row = { ...fields, refId: same?.refId ?? ++lastRefId, createdAt, lastAccessedAt: now, name: '', version: -1 };
      }
      refs.set(row.refId, row);
      return row;
    },

    /** The newest live reference to `id` the filter sees. */
    findRef: (tenantId: string, id: string, filter: ReadFilter, now: number): RefRow | undefined =>
      rows((r) => r.tenantId === tenantId && r.artifactId === id && r.expiresAt > now && matches(r, filter)).sort(
        newestFirst,
      )[0],

    /** A read refreshes last-accessed (never backwards). */
    touch(row: RefRow, at: number): void {
      if (row.lastAccessedAt < at) row.lastAccessedAt = at;
    },

    /** Live references the filter sees, newest first, for a listing to narrow further. */
    live: (tenantId: string, filter: ReadFilter, now: number): RefRow[] =>
      rows((r) => r.tenantId === tenantId && r.expiresAt > now && matches(r, filter)).sort(newestFirst),

    /** Removes the live references to `id` the filter sees; how many went. */
    deleteRefs(tenantId: string, id: string, filter: ReadFilter, now: number): number {
      const gone = rows(
        (r) => r.tenantId === tenantId && r.artifactId === id && r.expiresAt > now && matches(r, filter),
      );
      remove(gone);
      return gone.length;
    },

    /** Removes every expired reference, as a retention run does. */
    expireRefs(now: number): void {
      remove(rows((r) => r.expiresAt <= now));
    },

    /**
     * Ends a session for a filter (user and / or trace): its named versions live or not, its other
     * references while live; then, without a trace, the session's names no version holds any more.
     */
    endSession(tenantId: string, sessionId: string, filter: ReadFilter, now: number) {
      const gone = rows(
        (r) =>
          r.tenantId === tenantId &&
          r.sessionId === sessionId &&
          (r.expiresAt > now || r.name !== '') &&
          matches(r, { userId: filter.userId, traceId: filter.traceId }),
      );
      remove(gone);
      if (filter.traceId === undefined)
        for (const [id, { key }] of names)
          if (key.tenantId === tenantId && key.sessionId === sessionId)
            if ((filter.userId === undefined || key.userId === filter.userId) && versionsOf(key).length === 0)
              names.delete(id);
      return {
        refs: gone.length,
        bytes: gone.reduce((n, r) => n + r.sizeBytes, 0),
        versions: gone.filter((r) => r.name !== '').length,
      };
    },

    /** The live version asked for, or the latest live one. */
    findVersion: (key: NameKey, version: number | undefined, now: number): RefRow | undefined =>
      versionsOf(key)
        .filter((r) => r.expiresAt > now && (version === undefined || r.version === version))
        .pop(),

    /** Every live version of a name, oldest first. */
    listVersions: (key: NameKey, now: number): RefRow[] => versionsOf(key).filter((r) => r.expiresAt > now),

    /** Names with a live version in a scope, by name, after `after`: the latest, how many, when. */
    listNames(scope: NameScope, after: string, limit: number, now: number) {
      const byName = new Map<string, RefRow[]>();
      for (const r of versionsOf(scope))
        if (r.expiresAt > now && compareText(r.name, after) > 0) byName.set(r.name, [...(byName.get(r.name) ?? []), r]);
      return [...byName.entries()]
        .sort(([a], [b]) => compareText(a, b))
        .slice(0, limit)
        .map(([name, versions]) => ({
          name,
          latestVersion: versions[versions.length - 1]!.version,
          versions: versions.length,
          updatedAt: Math.max(...versions.map((r) => r.createdAt)),
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
