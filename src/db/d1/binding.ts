/**
 * The D1 binding as the repository sees it, and the context every part of the D1 repository builds
 * its methods from: the connection (or read-replication session), and statements with `@name`
 * parameters run one at a time or as one batch.
 */
import type { Params, Stmt } from '../plans/sql.js';

/**
 * The part of Cloudflare's D1 binding this repository uses (`D1Database` of
 * @cloudflare/workers-types), so it compiles without the Workers types and runs against Miniflare's
 * binding from Node in tests.
 */
export interface D1ResultLike<T = Record<string, unknown>> {
  results?: T[];
  meta: { changes?: number; last_row_id?: number };
}
export interface D1PreparedStatementLike {
  bind(...values: unknown[]): D1PreparedStatementLike;
  all<T = Record<string, unknown>>(): Promise<D1ResultLike<T>>;
  run<T = Record<string, unknown>>(): Promise<D1ResultLike<T>>;
  first<T = Record<string, unknown>>(): Promise<T | null>;
}
/** What D1 and a D1 session have in common. */
export interface D1QueryableLike {
  prepare(sql: string): D1PreparedStatementLike;
  batch<T = Record<string, unknown>>(statements: D1PreparedStatementLike[]): Promise<D1ResultLike<T>[]>;
}
export interface D1DatabaseLike extends D1QueryableLike {
  withSession?(constraintOrBookmark?: string): D1QueryableLike;
}

export interface D1RepositoryOptions {
  db: D1DatabaseLike;
  /**
   * Read replication. Absent: every query goes to `db` as given, and D1 serves queries made outside
   * a session from the primary, so every read sees every committed write.
   * 'first-primary': the repository runs all its queries in one D1 session (`db.withSession`) whose
   * first query goes to the primary; later reads may be served by replicas, but only by ones that
   * have caught up with everything the session has written or read. A put followed by a get through
   * the same repository then always finds the put. The session's position only moves forward, so
   * create the repository per request (or per client session), not once per isolate. Ignored when the
   * binding has no Sessions API (then everything goes to the primary anyway).
   */
  consistency?: 'first-primary';
  /**
   * Where a put that passes `clock` (see CommitPutInput) takes its time from. 'database' (default):
   * inside the put's batch, from the database's clock, never earlier than the caller's. In a Worker
   * `Date.now()` does not move during a request, so only the database can say when the batch
   * actually ran, and times then follow commit order, which lru and fifo eviction rank by. 'caller':
   * from `clock()` just before the batch (tests that drive time by hand).
   */
  clock?: 'database' | 'caller';
}

/**
 * What the statement repository (index.ts) runs its SQL through: D1 here, Postgres in ../postgres/
 * (which rewrites the text into its dialect). Statements use `@name` placeholders.
 */
export interface StatementContext {
  /** A put with a clock takes its time from the database (the `clock` option). */
  sqlClock: boolean;
  /** The rows of one statement. */
  all<T>(sql: string, params?: Params): Promise<T[]>;
  /** One statement's changed-row count. */
  run(sql: string, params?: Params): Promise<number>;
  /** Statements as one batch (one transaction): each one's rows. */
  batch(stmts: Stmt[]): Promise<unknown[][]>;
}

export interface D1Context extends StatementContext {
  /** The binding, or the read-replication session every query of this repository goes through. */
  conn: D1QueryableLike;
}

/** `@name` placeholders as D1's `?NNN`, numbered by first appearance (compiled once per SQL text). */
const compiled = new Map<string, { sql: string; names: string[] }>();
function compile(sql: string): { sql: string; names: string[] } {
  let c = compiled.get(sql);
  if (!c) {
    const names: string[] = [];
    const text = sql.replace(/@([A-Za-z_][A-Za-z0-9_]*)/g, (_, name: string) => {
      let i = names.indexOf(name);
      if (i < 0) i = names.push(name) - 1;
      return `?${i + 1}`;
    });
    c = { sql: text, names };
    compiled.set(sql, c);
  }
  return c;
}

export function openD1(options: D1RepositoryOptions): D1Context {
  const { db } = options;
  const replicated = options.consistency === 'first-primary' && typeof db.withSession === 'function';
  const conn: D1QueryableLike = replicated ? db.withSession!('first-primary') : db;

  const prepare = (s: Stmt): D1PreparedStatementLike => {
    const c = compile(s.sql);
    const values = c.names.map((name) => {
      if (!(name in s.params)) throw new Error(`No value for @${name}`);
      const v = s.params[name];
      return v === undefined ? null : typeof v === 'boolean' ? Number(v) : v;
    });
    const stmt = conn.prepare(c.sql);
    return values.length > 0 ? stmt.bind(...values) : stmt;
  };

  return {
    conn,
    sqlClock: (options.clock ?? 'database') === 'database',
    all: async <T>(sql: string, params: Params = {}) => (await prepare({ sql, params }).all<T>()).results ?? [],
    run: async (sql, params = {}) => (await prepare({ sql, params }).run()).meta.changes ?? 0,
    batch: async (stmts) => (await conn.batch(stmts.map(prepare))).map((r) => r.results ?? []),
  };
}
