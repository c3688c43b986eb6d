/**
 * The Postgres repository against a real Postgres (test/helpers/postgres.ts).
 *
 * - Differential: the seeded random workloads of the D1 differential (test/d1-workload.ts) run
 *   through the SQLite repository (the reference) and the Postgres one; every answer (rows, ids,
 *   evictions, error codes, messages and details) and the final tables must be the same, and the
 *   scratch tables empty after every batch, and a refused put must change no table.
 * - Migrations: replicas starting together migrate once; a schema newer than the code is refused.
 */
import { type ChildProcess, execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual, promisify } from 'node:util';
import Database from 'better-sqlite3';
import postgres from 'postgres';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  CopyRefusedError,
  copySqliteToPostgres,
  createPostgresRepository,
  EVENTS_LOCK,
  migratePostgres,
  SchemaTooNewError,
} from '../src/db/postgres.js';
import type { CommitPutInput } from '../src/db/repository.js';
import { createSqliteRepository } from '../src/db/sqlite.js';
import { dumpTables, generateWorkload, runWorkload, type Op, type Outcome, type Query } from './d1-workload.js';
import { CLI_ARGS, ROOT } from './helpers/cli-server.js';
import { describePostgres, freshDatabase } from './helpers/postgres.js';
import { spawnProcess, stopProcess } from './helpers/processes.js';

/** A put of 10 bytes numbered `n` (its id and sha256 are n, padded) into tenant t, session s{n mod 13}. */
function putOf(n: number, now: number, expiresAt: number): CommitPutInput {
  return {
    scope: { tenantId: 't', sessionId: `s${n % 13}` },
    artifactId: `ns_${String(n).padStart(24, '0')}`,
    namespace: 'ns',
    sha256: String(n).padStart(64, '0'),
    sizeBytes: 10,
    mimeType: 'text/plain',
    now,
    expiresAt,
  };
}

const SEEDS = Array.from({ length: 12 }, (_, i) => i + 1);
const OPS_PER_SEED = 150;

/** Columns holding JSON text: compared as values (each database writes its own spacing). */
const JSON_COLUMNS = new Set(['scope', 'ref', 'data', 'meta', 'source', 'options', 'perms', 'report', 'details']);

/** A table's rows as comparable values: JSON parsed, booleans as 0/1, SQLite's rowid left out, in a fixed order. */
function normalized(rows: unknown[]): unknown[] {
  return rows
    .map((row) =>
      Object.fromEntries(
        Object.entries(row as Record<string, unknown>)
          .filter(([k]) => k !== 'rowid')
          .map(([k, v]) => [
            k,
            JSON_COLUMNS.has(k) && typeof v === 'string' ? JSON.parse(v) : typeof v === 'boolean' ? Number(v) : v,
          ]),
      ),
    )
    .map((r) => [JSON.stringify(r), r] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, r]) => r);
}

/**
 * An answer with what the interface leaves open made comparable: the order of the blobs a collection
 * marked (UPDATE … RETURNING has none), and the position a walk over artifacts continues from, an
 * opaque cursor (SQLite reuses a deleted last rowid; Postgres's identity never gives a number twice).
 */
function comparable([method]: Op, outcome: Outcome | undefined): Outcome | undefined {
  const ok = outcome?.ok as Record<string, unknown> | undefined;
  if (!ok) return outcome;
  if (method === 'markBlobsForCollection') {
    const marked = [...(ok.marked as { sha256: string }[])].sort((a, b) => (a.sha256 < b.sha256 ? -1 : 1));
    return { ok: { ...ok, marked } };
  }
  if (method === 'dropUnreferencedArtifacts') return { ok: { ...ok, next: ok.next === null ? null : 'more' } };
  return outcome;
}

function normalizedDump(dump: Record<string, unknown[]>): Record<string, unknown[]> {
  const { sqlite_sequence: _, ...tables } = dump;
  return Object.fromEntries(Object.entries(tables).map(([t, rows]) => [t, normalized(rows)]));
}

/** dumpTables' statements on Postgres: its tables have no rowid (rows are sorted by normalized()), nor sqlite_sequence. */
const pgQuery =
  (sql: postgres.Sql): Query =>
  async (sqls) =>
    Promise.all(
      sqls.map(async (text) => {
        if (text.includes('sqlite_sequence')) return [];
        const rows = await sql.unsafe(text.replace(/ ORDER BY rowid$/, ''));
        return normalized([...rows]);
      }),
    );

describePostgres('Postgres repository', () => {
  const dbs: { drop(): Promise<void> }[] = [];
  let scratch: string;
  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), 'pg-differential-'));
  });
  afterAll(async () => {
    rmSync(scratch, { recursive: true, force: true });
    await Promise.all(dbs.map((d) => d.drop()));
  });

  it.concurrent.each(SEEDS)('SQLite ⇔ Postgres, seed %i: same answers, same tables', async (seed) => {
    const ops = generateWorkload(seed, OPS_PER_SEED);
    const db = await freshDatabase();
    dbs.push(db);
    const repo = await createPostgresRepository({ url: db.url, clock: 'caller', poolSize: 2 });
    const raw = postgres(db.url, {
      max: 1,
      onnotice: () => {},
      types: { bigint: { to: 20, from: [20], serialize: String, parse: Number } },
    });
    let got: Awaited<ReturnType<typeof runWorkload>>;
    let gotDump: Record<string, unknown[]>;
    try {
      got = await runWorkload(repo, ops, pgQuery(raw));
      gotDump = normalizedDump(await dumpTables(pgQuery(raw)));
    } finally {
      await repo.close();
      await raw.end();
    }

    const file = join(scratch, `seed-${seed}.db`);
    const sqlite = createSqliteRepository({ path: file });
    const reference = await runWorkload(sqlite, ops);
    await sqlite.close();
    const reader = new Database(file, { readonly: true });
    const referenceDump = normalizedDump(await dumpTables(async (sqls) => sqls.map((s) => reader.prepare(s).all())));
    reader.close();

    expect(got.violations).toEqual([]);
    const outcomes = (o: Outcome[]) => ops.map((op, i) => comparable(op, o[i]));
    const [mine, theirs] = [outcomes(got.outcomes), outcomes(reference.outcomes)];
    const first = ops.findIndex((_, i) => !isDeepStrictEqual(mine[i], theirs[i]));
    if (first >= 0)
      expect({ op: ops[first], index: first, outcome: mine[first] }).toEqual({
        op: ops[first],
        index: first,
        outcome: theirs[first],
      });
    expect(gotDump).toEqual(referenceDump);
  });

  it('an event that commits after a later one is not skipped by a reader that has seen the later one', async () => {
    const db = await freshDatabase();
    dbs.push(db);
    const [a, b] = await Promise.all([
      createPostgresRepository({ url: db.url, clock: 'caller' }),
      createPostgresRepository({ url: db.url, clock: 'caller' }),
    ]);
    const raw = postgres(db.url, { max: 1, onnotice: () => {} });
    try {
      const now = Date.now();
      await a.commitPut(putOf(1, now, now + 600_000));
      const after = await a.lastEventSeq();
      // Replica a's delete appends its event, then waits for a row another transaction holds: it has
      // its sequence number, and has not committed.
      let release!: () => void;
      const held = new Promise<void>((r) => {
        release = r;
      });
      let locked!: () => void;
      const isLocked = new Promise<void>((r) => {
        locked = r;
      });
      const holder = raw.begin(async (tx) => {
        await tx.unsafe(`SELECT 1 FROM artifact_refs FOR UPDATE`);
        locked();
        await held;
      });
      await isLocked;
      const deleting = a.deleteRefs('t', putOf(1, 0, 0).artifactId, {}, now + 1);
      await new Promise((r) => setTimeout(r, 200));
      // Replica b appends an event meanwhile; a reader that then reads the outbox…
      const appending = b.appendEvent({
        tenantId: 't',
        type: 'resource.updated',
        subject: 'mcp://s/r',
        scope: {},
        data: {},
        at: now,
      });
      await new Promise((r) => setTimeout(r, 200));
      const first = await b.readEvents(undefined, after, 100);
      const resumeAt = first.at(-1)?.seq ?? after;
      release();
      await holder;
      await Promise.all([deleting, appending]);
      // …and goes on from the last one it saw, gets the delete's event too.
      const rest = await b.readEvents(undefined, resumeAt, 100);
      expect([...first, ...rest].map((e) => e.type).sort()).toEqual(['artifact.deleted', 'resource.updated']);
    } finally {
      await raw.end();
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('a pool with no free connection answers backend_unavailable with Retry-After after its wait, not a hang', async () => {
    const db = await freshDatabase();
    dbs.push(db);
    const repo = await createPostgresRepository({ url: db.url, poolSize: 1, queueTimeoutSeconds: 0.3 });
    const raw = postgres(db.url, { max: 1, onnotice: () => {} });
    try {
      // Another process holds the events lock: a put waits for it, on the pool's one connection.
      await raw.unsafe(`SELECT pg_advisory_lock(${EVENTS_LOCK})`);
      const now = Date.now();
      const putting = repo.commitPut(putOf(1, now, now + 600_000));
      await new Promise((r) => setTimeout(r, 100));
      const err = await repo.findRef('t', putOf(1, 0, 0).artifactId, {}, now).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toMatchObject({ code: 'backend_unavailable', retryAfter: 1 });
      expect((err as Error).message).toMatch(/connection/);
      await raw.unsafe(`SELECT pg_advisory_unlock(${EVENTS_LOCK})`);
      // The put that waited goes through, and the pool serves again.
      expect((await putting).created).toBe(true);
      expect(await repo.findRef('t', putOf(1, 0, 0).artifactId, {}, now)).toBeDefined();
    } finally {
      await raw.end();
      await repo.close();
    }
  });

  it('db copy moves a SQLite file into an empty Postgres: the same tables, event ids going on; a used one is refused', async () => {
    const file = join(scratch, 'copy-source.db');
    const sqlite = createSqliteRepository({ path: file });
    await runWorkload(sqlite, generateWorkload(7, OPS_PER_SEED));
    await sqlite.close();
    // The newest events gone: SQLite's counter is past the last seq kept, and the copy must go on from it.
    const writer = new Database(file);
    writer.prepare('DELETE FROM outbox WHERE seq > (SELECT max(seq) - 3 FROM outbox)').run();
    writer.close();
    const reader = new Database(file, { readonly: true });
    const referenceDump = normalizedDump(await dumpTables(async (sqls) => sqls.map((q) => reader.prepare(q).all())));
    const { seq: lastGiven } = reader.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'outbox'").get() as {
      seq: number;
    };
    reader.close();

    const db = await freshDatabase();
    dbs.push(db);
    const report = await copySqliteToPostgres(file, db.url);
    expect(lastGiven).toBeGreaterThan(Math.max(0, ...referenceDump.outbox!.map((e) => (e as { seq: number }).seq)));
    expect(report.nextEventSeq).toBe(lastGiven + 1);
    expect(report.tables.find((t) => t.name === 'artifact_refs')!.rows).toBe(referenceDump.artifact_refs!.length);
    const raw = postgres(db.url, {
      max: 1,
      onnotice: () => {},
      types: { bigint: { to: 20, from: [20], serialize: String, parse: Number } },
    });
    try {
      const copied = normalizedDump(await dumpTables(pgQuery(raw)));
      expect(copied).toEqual(referenceDump);
    } finally {
      await raw.end();
    }
    // The service goes on there: the next event takes the next id.
    const repo = await createPostgresRepository({ url: db.url });
    try {
      await repo.appendEvent({ tenantId: 't', type: 'resource.updated', subject: 'x', scope: {}, data: {}, at: 1 });
      expect(await repo.lastEventSeq()).toBe(lastGiven + 1);
    } finally {
      await repo.close();
    }
    // A database with rows is not a target.
    await expect(copySqliteToPostgres(file, db.url)).rejects.toBeInstanceOf(CopyRefusedError);
  });

  it('a retention run SIGKILLed midway leaves each reference whole or gone with its one event; the next run finishes', async () => {
    const TOTAL = 6000;
    /** A database holding TOTAL expired references, and the CLI's environment on it. */
    const seeded = async () => {
      const db = await freshDatabase();
      dbs.push(db);
      const repo = await createPostgresRepository({ url: db.url, poolSize: 8 });
      try {
        const now = Date.now();
        for (let i = 0; i < TOTAL; i += 200)
          await Promise.all(
            Array.from({ length: 200 }, (_, j) => repo.commitPut(putOf(i + j, now - 60_000, now - 30_000))),
          );
      } finally {
        await repo.close();
      }
      const env = {
        ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ARTIFACT_STORE_'))),
        ARTIFACT_STORE_DATABASE_URL: db.url,
        ARTIFACT_STORE_DATA_DIR: mkdtempSync(join(scratch, 'retention-kill-')),
      };
      return { url: db.url, env };
    };
    const countRefs = async (raw: postgres.Sql) =>
      ((await raw.unsafe('SELECT count(*)::int AS refs FROM artifact_refs')) as unknown as [{ refs: number }])[0].refs;
    /**
     * The references left and the expiry events, from one snapshot: a batch the killed process had
     * sent may still commit after it died (Postgres runs what it received), so separate reads could
     * straddle it.
     */
    const state = (raw: postgres.Sql) =>
      raw.begin('isolation level repeatable read', async (tx) => {
        const events = (await tx.unsafe(
          "SELECT artifact_id AS id, count(*)::int AS n FROM outbox WHERE type = 'artifact.expired' GROUP BY artifact_id",
        )) as unknown as { id: string; n: number }[];
        const left = new Set(
          ((await tx.unsafe('SELECT artifact_id AS id FROM artifact_refs')) as unknown as { id: string }[]).map(
            (r) => r.id,
          ),
        );
        return { refs: left.size, events, left };
      });
    // Killed as soon as the run has removed anything (watched from here); a run that finished before
    // the kill landed tells nothing, and the attempt is made again on a new database.
    let midway = false;
    for (let attempt = 0; attempt < 4 && !midway; attempt++) {
      const { url, env } = await seeded();
      const raw = postgres(url, { max: 1, onnotice: () => {} });
      try {
        const child = spawnProcess<ChildProcess>(process.execPath, [...CLI_ARGS, 'retention', 'run'], {
          cwd: ROOT,
          env,
          stdio: 'ignore',
        });
        let finished = false;
        child.once('exit', () => {
          finished = true;
        });
        for (const deadline = Date.now() + 60_000; !finished && Date.now() < deadline; ) {
          if ((await countRefs(raw)) < TOTAL) break;
          await new Promise((r) => setTimeout(r, 5));
        }
        await stopProcess(child, { signal: 'SIGKILL' });
        const { refs, events, left } = await state(raw);
        // Whatever the moment: a reference is gone with exactly one event, or there with none.
        expect(events.filter((e) => e.n !== 1)).toEqual([]);
        expect(events.filter((e) => left.has(e.id))).toEqual([]);
        expect(refs + events.length).toBe(TOTAL);
        midway = refs > 0 && refs < TOTAL;
        if (!midway) continue;
        // The next run finishes the work.
        const done = await promisify(execFile)(process.execPath, [...CLI_ARGS, 'retention', 'run'], { cwd: ROOT, env });
        expect(done.stderr).not.toMatch(/error/i);
        const after = await state(raw);
        expect(after.refs).toBe(0);
        expect(after.events).toHaveLength(TOTAL);
        expect(after.events.every((e) => e.n === 1)).toBe(true);
      } finally {
        await raw.end();
      }
    }
    expect(midway, 'no kill landed inside a run').toBe(true);
  }, 180_000);

  it('replicas starting together migrate once; a schema newer than the code stops the start', async () => {
    const db = await freshDatabase();
    dbs.push(db);
    const pools = Array.from({ length: 3 }, () => postgres(db.url, { max: 2, onnotice: () => {} }));
    try {
      const results = await Promise.all(pools.map((sql) => migratePostgres(sql)));
      expect(results.map((r) => r.applied).sort()).toEqual([0, 0, results.reduce((n, r) => n + r.applied, 0)]);
      expect(results.reduce((n, r) => n + r.applied, 0)).toBeGreaterThan(0);
      // A release from the future migrated this database.
      await pools[0]!.unsafe(
        `INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ('from-the-future', ${Date.parse('2100-01-01')})`,
      );
      const err = await createPostgresRepository({ url: db.url }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(SchemaTooNewError);
      expect((err as Error).message).toMatch(/newer than this release/);
    } finally {
      await Promise.all(pools.map((sql) => sql.end()));
    }
  });
});
