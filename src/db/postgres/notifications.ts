/**
 * What a process learns from Postgres's notifications (LISTEN on EVENTS_CHANNEL, one connection per
 * process, opened on first use): event streams are woken when another transaction appended events,
 * and recent reference lookups are kept while no transaction that could change them has committed.
 *
 * Every transaction that adds, changes or removes a reference appends an event (artifact.stored,
 * .deleted, .evicted, .expired) and so notifies at its commit. The lookup cache is therefore emptied
 * by every notification, by every write of this process (at once, not when its own notification comes
 * back), and on each (re)connection of the LISTEN (notifications sent while it was down are lost). It
 * is used only while the LISTEN is up, and an entry is kept at most MAX_AGE_MS, which bounds what a
 * process whose notifications stall could serve. A lookup that began before an emptying is not kept.
 */
import type { RefRow } from '../repository.js';
import type { PgSql } from './connection.js';
import { EVENTS_CHANNEL } from './connection.js';

/** How long a cached lookup may be served, whatever the notifications say. */
const MAX_AGE_MS = 2000;
const MAX_ENTRIES = 10_000;

export interface Notifications {
  /** Resolves at the next notification (or reconnection) after the call. */
  waitForEvents(): Promise<void>;
  /** A reference lookup, answered from the cache when it may be. */
  cachedRef(key: string, now: number, lookup: () => Promise<RefRow | undefined>): Promise<RefRow | undefined>;
  /** This process wrote: cached lookups may be stale. */
  wrote(): void;
  close(): void;
}

const copyOf = (row: RefRow): RefRow => ({
  ...row,
  meta: row.meta === null ? null : structuredClone(row.meta),
  source: row.source === null ? null : structuredClone(row.source),
});

export function createNotifications(sql: PgSql): Notifications {
  let next: { promise: Promise<void>; resolve: () => void } | undefined;
  let listening: Promise<unknown> | undefined;
  /** True while the LISTEN connection is up (from its onlisten until it fails). */
  let live = false;
  let closed = false;
  /** Moves on every emptying: a lookup that began under another generation is not kept. */
  let generation = 0;
  const entries = new Map<string, { row: RefRow; at: number }>();

  const empty = () => {
    generation++;
    entries.clear();
  };
  const wakeAll = () => {
    const woken = next;
    next = undefined;
    woken?.resolve();
  };
  const onNotify = () => {
    empty();
    wakeAll();
  };
  const listen = () => {
    if (listening !== undefined || closed) return;
    listening = sql
      .listen(
        EVENTS_CHANNEL,
        onNotify,
        // (Re)connected: what was sent meanwhile is lost.
        () => {
          empty();
          live = true;
          wakeAll();
        },
      )
      .catch(() => {
        // The database is down: no cache, readers on their timer; the next use tries again.
        live = false;
        listening = undefined;
      });
  };

  return {
    waitForEvents() {
      listen();
      if (!next) {
        let resolve!: () => void;
        const promise = new Promise<void>((r) => {
          resolve = r;
        });
        next = { promise, resolve };
      }
      return next.promise;
    },

    async cachedRef(key, now, lookup) {
      listen();
      if (!live) return lookup();
      const t = Date.now();
      const hit = entries.get(key);
      if (hit && hit.row.expiresAt > now && t - hit.at < MAX_AGE_MS) return copyOf(hit.row);
      const began = generation;
      const row = await lookup();
      if (row && began === generation && live) {
        if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value!);
        entries.set(key, { row: copyOf(row), at: t });
      }
      return row;
    },

    wrote: empty,

    close() {
      closed = true;
      live = false;
      empty();
      wakeAll();
    },
  };
}
