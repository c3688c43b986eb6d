/**
 * The pool the Postgres repository runs on (postgres.js), its migrations, and the statement context
 * the shared statement repository runs through.
 *
 * Transactions. A batch is sent as one pipeline ending in one Sync (postgres.js `sql.batch`): one
 * round trip, one transaction; a put is one such batch. Every transaction that appends to the outbox
 * first takes one transaction-level advisory lock (EVENTS_LOCK) and holds it to its commit, so such
 * transactions commit one at a time, in the order they took their sequence numbers: a reader that
 * has seen seq 10 can never later find a seq 9 commit (see docs/architecture.md). The same lock makes
 * a put's quota decision (counted in SQL, then written) exact across any number of replicas, as the
 * one SQLite writer does on one machine, and names' counters give 0, 1, 2… with no gap. Such
 * transactions end with a NOTIFY on EVENTS_CHANNEL, which readers LISTEN to.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
export { redactedUrl } from '../../core/config.js';
import type { StatementContext } from '../d1/index.js';
import type { Stmt } from '../plans/sql.js';
import { toPostgres } from './dialect.js';

/** migrations/postgres at the package root (four levels above src/db/postgres/ and dist/db/postgres/). */
export const PG_MIGRATIONS_FOLDER = resolve(dirname(fileURLToPath(import.meta.url)), '../../../migrations/postgres');

/** Transactions that append events hold this (pg_advisory_xact_lock) from their start to their commit. */
export const EVENTS_LOCK = 0x61727401;
/** Migrations run under this session lock: one process migrates, the others wait, then find nothing to do. */
const MIGRATIONS_LOCK = 0x61727402;
/** Every transaction that appended events notifies this channel when it commits. */
export const EVENTS_CHANNEL = 'artifact_store_events';

export interface PostgresRepositoryOptions {
  /** postgres://user:password@host:port/database?sslmode=require */
  url: string;
  /** Connections in this process's pool (default 10). */
  poolSize?: number;
  /**
   * Seconds a query waits for a free connection before it fails with backend_unavailable (503 with
   * Retry-After) rather than queueing without end (default 5).
   */
  queueTimeoutSeconds?: number;
  /** Seconds to wait for a connection to the server (default 10). */
  connectTimeoutSeconds?: number;
  /** Run the migrations on open (default true); `artifact-store db migrate` runs them ahead. */
  migrate?: boolean;
  /**
   * Where a put that passes `clock` (see CommitPutInput) takes its time from: 'database' (default),
   * Postgres's clock once the put holds its lock, so times follow commit order across replicas (which
   * lru and fifo rank by); 'caller': `clock()` just before the batch (tests that drive time by hand).
   */
  clock?: 'database' | 'caller';
}

export type PgSql = postgres.Sql;

export interface PostgresContext extends StatementContext {
  sql: PgSql;
  close(): Promise<void>;
}

const WRITES_EVENTS = /\bINSERT INTO outbox\b/;

/** `wrote`: called after every statement or batch that may have written (this process's caches go stale). */
export function openPostgres(options: PostgresRepositoryOptions, wrote: () => void = () => {}): PostgresContext {
  const sql = postgres(options.url, {
    max: options.poolSize ?? 10,
    // One request's statements at a time on a connection: a query is never pipelined behind another
    // request's (a put waiting for the events lock, say), where it would wait with no bound; it waits
    // in the pool's queue instead, for at most queue_timeout.
    max_pipeline: 1,
    queue_timeout: options.queueTimeoutSeconds ?? 5,
    connect_timeout: options.connectTimeoutSeconds ?? 10,
    onnotice: () => {},
    connection: { application_name: 'artifact-store' },
    // bigint and numeric (sum()) as JS numbers: sizes, counts and ms times are far below 2^53.
    types: {
      bigint: { to: 20, from: [20, 1700], serialize: (x: number) => String(x), parse: (x: string) => Number(x) },
    },
  });
  const query = (s: Stmt) => {
    const { text, values } = toPostgres(s);
    return sql.unsafe(text, values as postgres.ParameterOrJSON<never>[], { prepare: true });
  };
  const lock: Stmt = { sql: `SELECT pg_advisory_xact_lock(${EVENTS_LOCK})`, params: {} };
  const notify: Stmt = { sql: `SELECT pg_notify('${EVENTS_CHANNEL}', '')`, params: {} };

  async function batch(stmts: Stmt[]): Promise<unknown[][]> {
    const events = stmts.some((s) => WRITES_EVENTS.test(s.sql));
    const all = events ? [lock, ...stmts, notify] : stmts;
    try {
      const results = await sql.batch(all.map(query));
      const rows = results.map((r) => [...r] as unknown[]);
      return events ? rows.slice(1, -1) : rows;
    } finally {
      wrote();
    }
  }

  return {
    sql,
    sqlClock: (options.clock ?? 'database') === 'database',
    all: async <T>(text: string, params = {}) => [...(await query({ sql: text, params }))] as T[],
    run: async (text, params = {}) => {
      if (WRITES_EVENTS.test(text)) {
        await batch([{ sql: text, params }]);
        return 1;
      }
      try {
        return (await query({ sql: text, params })).count;
      } finally {
        wrote();
      }
    },
    batch,
    close: () => sql.end({ timeout: 5 }),
  };
}

interface Journal {
  entries: { idx: number; when: number; tag: string }[];
}

/**
 * Applies the migrations this code has, under a session advisory lock so that replicas starting
 * together take turns (the first migrates; the others find nothing left). Refuses a database that
 * has a migration newer than this code's newest: an older release must not run on a newer schema.
 */
export async function migratePostgres(sql: PgSql, folder = PG_MIGRATIONS_FOLDER): Promise<{ applied: number }> {
  const journal = JSON.parse(readFileSync(join(folder, 'meta', '_journal.json'), 'utf8')) as Journal;
  const newest = journal.entries.at(-1)!;
  const conn = await sql.reserve();
  try {
    await conn.unsafe(`SELECT pg_advisory_lock(${MIGRATIONS_LOCK})`);
    try {
      const before = await appliedMigrations(conn);
      const last = before.at(-1);
      if (last !== undefined && last > newest.when)
        throw new SchemaTooNewError(
          `The database's schema is newer than this release of artifact-store: a migration from ` +
            `${new Date(last).toISOString()} is applied, and this release's newest is ${newest.tag} ` +
            `(${new Date(newest.when).toISOString()}). Run the release that migrated it, or a newer one.`,
        );
      await migrate(drizzle(sql), { migrationsFolder: folder });
      return { applied: (await appliedMigrations(conn)).length - before.length };
    } finally {
      await conn.unsafe(`SELECT pg_advisory_unlock(${MIGRATIONS_LOCK})`);
    }
  } finally {
    conn.release();
  }
}

/** The creation times (the journal's `when`) of the migrations applied, oldest first. */
async function appliedMigrations(conn: postgres.ReservedSql): Promise<number[]> {
  const [exists] = await conn.unsafe(`SELECT to_regclass('drizzle.__drizzle_migrations') IS NOT NULL AS ok`);
  if (!exists?.ok) return [];
  const rows = await conn.unsafe('SELECT created_at FROM drizzle.__drizzle_migrations ORDER BY created_at');
  return rows.map((r) => Number(r.created_at));
}

/** The database has migrations this release does not know. */
export class SchemaTooNewError extends Error {
  override name = 'SchemaTooNewError';
}
