/**
 * Opens the SQLite database the repository's parts share: better-sqlite3 in WAL mode with a busy
 * timeout (so the service, the CLI and a second instance can share one file), migrated, with drizzle
 * over it and the wrapper every write goes through.
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { createRecentRefs, type RecentRefs } from '../recent-refs.js';
import * as schema from '../schema.js';
import { createRemoval, type Removal } from './removal.js';
import type { RawRefRow } from './rows.js';
import type { Stmt } from '../plans/sql.js';
import { createCheckpointer, type CheckpointResult, type CheckpointThread } from './checkpointer.js';

export interface SqliteRepositoryOptions {
  /** A file path, or ':memory:'. */
  path: string;
  /** How long a writer waits for another process's lock before failing (ms). */
  busyTimeoutMs?: number;
  /**
   * SQLite's page cache for this connection (default 4 MiB; better-sqlite3's own default is 16 MB).
   * A retention run or a large listing fills it; the OS page cache serves what falls out.
   */
  cacheBytes?: number;
  /**
   * Write time (ms of transactions) after which the WAL is checkpointed, on a thread of its own
   * (default 200). 0 checkpoints after every write.
   */
  checkpointAfterWriteMs?: number;
  /** Where checkpoints run: a worker thread (default), or this thread. */
  checkpointThread?: CheckpointThread;
  /** Told of each checkpoint once it is done. */
  onCheckpoint?: (result: CheckpointResult) => void;
}

/** migrations/ at the package root: three levels above src/db/sqlite/ and dist/db/sqlite/ alike (package.json ships it). */
export const MIGRATIONS_FOLDER = resolve(dirname(fileURLToPath(import.meta.url)), '../../../migrations');

/** What each part of the SQLite repository builds its methods from. */
export interface SqliteContext {
  sqlite: Database.Database;
  db: BetterSQLite3Database<typeof schema>;
  /** Recent answers of findRef, valid while the database is unchanged. */
  recentRefs: RecentRefs<RawRefRow>;
  /** Runs a write on this connection, then drops cached lookups it may have changed. */
  writing<T>(write: () => T): T;
  /** Removal of references with their events, shared by deletes and retention. */
  removal: Removal;
  /** Statements (a plan shared with D1) as one immediate transaction, each one's rows (none for a write), like a D1 batch. */
  runPlan(stmts: Stmt[]): unknown[][];
  /** Stops the checkpoint thread, then closes the connection (the last one to close checkpoints what is left). */
  close(): Promise<void>;
}

/**
 * Runs the migrations when several processes may open a new file at the same moment (the service,
 * the CLI, a second instance). drizzle decides what to apply before it takes the write lock, so two
 * processes can both try; the loser sees "already exists" or a busy lock, waits, and retries, and by
 * then the migrations table says everything is applied.
 */
function migrateShared(db: BetterSQLite3Database<typeof schema>): void {
  for (let attempt = 1; ; attempt++) {
    try {
      migrate(db, { migrationsFolder: MIGRATIONS_FOLDER });
      return;
    } catch (err) {
      const text = `${String(err)} ${String((err as { cause?: unknown }).cause ?? '')}`;
      if (attempt >= 10 || !/already exists|SQLITE_BUSY|database is locked/i.test(text)) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50 * attempt);
    }
  }
}

/** Write time after which the WAL is copied into the database file (see scheduleCheckpoints). */
const CHECKPOINT_AFTER_WRITE_MS = 200;

/**
 * WAL checkpoints off the commits. SQLite's automatic checkpoint runs inside the commit that takes
 * the WAL past 1,000 pages, so one put or one retention batch pays for copying everyone's pages into
 * the database file. Here the connection's automatic checkpoint is off; once its transactions have
 * taken CHECKPOINT_AFTER_WRITE_MS, a PASSIVE checkpoint (it waits for no one) runs on a thread of its
 * own (checkpointer.ts), one at a time. Fewer checkpoints also copy less: a page written by several
 * transactions in between reaches the database file once. Closing the last connection checkpoints
 * what is left, as before.
 */
function scheduleCheckpoints(sqlite: Database.Database, options: SqliteRepositoryOptions) {
  if (options.path === ':memory:') return { wrote() {}, close: async () => {} };
  const after = Math.max(0, options.checkpointAfterWriteMs ?? CHECKPOINT_AFTER_WRITE_MS);
  sqlite.pragma('wal_autocheckpoint = 0');
  const checkpointer = createCheckpointer(
    resolve(options.path),
    () => {
      if (!sqlite.open || sqlite.inTransaction) return { busy: 1, log: -1, checkpointed: -1 };
      const [row] = sqlite.pragma('wal_checkpoint(PASSIVE)') as { busy: number; log: number; checkpointed: number }[];
      return row!;
    },
    options.checkpointThread,
  );
  // Write time and transactions since the last checkpoint began.
  let writeMs = 0;
  let writes = 0;
  let running = false;
  let closing = false;
  const due = () => !closing && writes > 0 && writeMs >= after;
  const checkpoint = () => {
    running = true;
    writeMs = 0;
    writes = 0;
    void checkpointer.checkpoint().then((result) => {
      running = false;
      if (result) options.onCheckpoint?.(result);
      // Writes that came during it may already call for the next (not once closing began: the
      // connection is about to close, and a new worker would outlive it).
      if (due() && sqlite.open) checkpoint();
    });
  };
  return {
    wrote(ms: number) {
      writeMs += ms;
      writes++;
      if (due() && !running) checkpoint();
    },
    close: () => {
      closing = true;
      return checkpointer.close();
    },
  };
}

export function openSqlite(options: SqliteRepositoryOptions): SqliteContext {
  if (options.path !== ':memory:') mkdirSync(dirname(resolve(options.path)), { recursive: true });
  const sqlite = new Database(options.path);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`busy_timeout = ${Math.trunc(options.busyTimeoutMs ?? 5000)}`);
  // FULL: a put that answered 201 survives a power loss too (WAL is fsynced at each commit).
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  // A negative cache_size is in KiB.
  sqlite.pragma(`cache_size = -${Math.max(64, Math.trunc((options.cacheBytes ?? 4 * 1024 * 1024) / 1024))}`);
  const db: BetterSQLite3Database<typeof schema> = drizzle(sqlite, { schema });
  migrateShared(db);

  const recentRefs = createRecentRefs<RawRefRow>(sqlite, 10_000);
  const checkpoints = scheduleCheckpoints(sqlite, options);
  const writing = <T>(write: () => T): T => {
    const began = performance.now();
    try {
      return write();
    } finally {
      recentRefs.clear();
      checkpoints.wrote(performance.now() - began);
    }
  };
  const planStatements = new Map<string, Database.Statement>();
  const runPlan = (stmts: Stmt[]): unknown[][] =>
    writing(() =>
      sqlite
        .transaction(() =>
          stmts.map(({ sql, params }) => {
            let stmt = planStatements.get(sql);
            if (!stmt) {
              stmt = sqlite.prepare(sql);
              planStatements.set(sql, stmt);
            }
            if (stmt.reader) return stmt.all(params);
            stmt.run(params);
            return [];
          }),
        )
        .immediate(),
    );
  const close = async () => {
    await checkpoints.close();
    if (sqlite.open) sqlite.close();
  };
  return { sqlite, db, recentRefs, writing, removal: createRemoval(sqlite), runPlan, close };
}
