import type Database from 'better-sqlite3';

export interface RecentRefs<Row> {
  get(key: string): Row | undefined;
  set(key: string, row: Row): void;
  /** After any write through this connection (data_version does not move for those). */
  clear(): void;
}

/**
 * Recent answers of the reference lookup every download makes, kept only while the database is
 * unchanged. SQLite's `PRAGMA data_version` moves whenever another connection (a second instance,
 * the CLI, a retention run) commits; this connection's own writes call `clear()`.
 *
 * The version is read once per turn of the event loop, not once per lookup: the pragma opens a read
 * transaction (two fcntl calls on the shared-memory file), which cost more than the rest of a small
 * GET's database work. So all lookups in one turn share one snapshot, as if they ran in one read
 * transaction; a commit by another process is seen from the next turn on (under full load, a turn
 * lasts a few milliseconds). Expiry is still checked by the caller against the row on every hit.
 */
export function createRecentRefs<Row>(sqlite: Database.Database, maxEntries: number): RecentRefs<Row> {
  const dataVersion = sqlite.prepare('PRAGMA data_version').pluck();
  let seenVersion = dataVersion.get();
  let checkedThisTurn = false;
  const endTurn = () => {
    checkedThisTurn = false;
  };
  const entries = new Map<string, Row>();
  return {
    get(key: string): Row | undefined {
      if (!checkedThisTurn) {
        checkedThisTurn = true;
        setImmediate(endTurn);
        const version = dataVersion.get();
        if (version !== seenVersion) {
          seenVersion = version;
          entries.clear();
          return undefined;
        }
      }
      return entries.get(key);
    },
    set(key: string, row: Row): void {
      if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!);
      entries.set(key, row);
    },
    clear(): void {
      entries.clear();
    },
  };
}
