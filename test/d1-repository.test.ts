/**
 * The D1 repository against a real D1: Miniflare's binding (workerd's SQLite), driven from Node.
 *
 * - Differential: seeded random workloads run through the SQLite repository (the reference) and the
 *   D1 one; every answer (rows, ids, evictions, error codes, messages and details) and the final
 *   tables must be identical. The D1 side runs inside a test Worker next to the binding (one round
 *   trip per workload), bundled for a neutral platform like a real Worker, so it also proves the D1
 *   modules import nothing Node-only.
 * - Direct tests of each method with known answers, including D1's limits (100 bound parameters).
 * - A refused put changes no table, and the scratch tables are empty after every batch.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import Database from 'better-sqlite3';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rejection } from './helpers/artifact-errors.js';
import { createD1Repository, type D1DatabaseLike, type D1QueryableLike } from '../src/db/d1.js';
import { commitPutPlan, PUT_OK } from '../src/db/plans/put.js';
import type { QuotaLimits } from '../src/core/limits.js';
import type { ArtifactRepository, CommitPutInput } from '../src/db/repository.js';
import { createSqliteRepository } from '../src/db/sqlite.js';
import { dumpTables, generateWorkload, runWorkload, type Outcome } from './d1-workload.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** The migrations as `wrangler d1 migrations apply` sees them: top-level .sql files, in order. */
const MIGRATIONS = readdirSync(join(ROOT, 'migrations'))
  .filter((f) => f.endsWith('.sql'))
  .sort()
  .flatMap((f) => readFileSync(join(ROOT, 'migrations', f), 'utf8').split('--> statement-breakpoint'))
  .map((s) => s.trim())
  .filter(Boolean);

const SEEDS = Array.from({ length: 20 }, (_, i) => i + 1);
const OPS_PER_SEED = 150;
const DIRECT_DATABASES = 24;

const WORKER = `
import { createD1Repository } from './src/db/d1.js';
import { dumpTables, runWorkload } from './test/d1-workload.js';
export default {
  async fetch(request, env) {
    const { binding, migrations, ops } = await request.json();
    const db = env[binding];
    await db.batch(migrations.map((sql) => db.prepare(sql)));
    const query = async (sqls) => (await db.batch(sqls.map((sql) => db.prepare(sql)))).map((r) => r.results);
    // The caller's clock, as the SQLite repository reads it (the database's would not repeat).
    const { outcomes, violations } = await runWorkload(createD1Repository({ db, clock: 'caller' }), ops, query);
    return Response.json({ outcomes, violations, dump: await dumpTables(query) });
  },
};`;

let mf: Miniflare;
let nextDatabase = 0;

beforeAll(async () => {
  const bundle = await build({
    stdin: { contents: WORKER, resolveDir: ROOT, sourcefile: 'd1-differential-worker.js', loader: 'js' },
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  mf = new Miniflare({
    modules: true,
    script: bundle.outputFiles[0]!.text,
    compatibilityDate: '2026-04-01',
    d1Databases: [...SEEDS.map((s) => `W${s}`), ...Array.from({ length: DIRECT_DATABASES }, (_, i) => `DB${i}`)],
  });
  await mf.ready;
}, 120_000);

afterAll(async () => {
  await mf?.dispose();
});

/** An empty, migrated D1 database of its own. */
async function freshD1(): Promise<D1DatabaseLike> {
  if (nextDatabase >= DIRECT_DATABASES) throw new Error('Raise DIRECT_DATABASES');
  const db = (await mf.getD1Database(`DB${nextDatabase++}`)) as unknown as D1DatabaseLike;
  await db.batch(MIGRATIONS.map((sql) => db.prepare(sql)));
  return db;
}

/** Raw reads on a D1 database, in one batch (one snapshot). */
const queryOf = (db: D1QueryableLike) => async (sqls: string[]) =>
  (await db.batch(sqls.map((sql) => db.prepare(sql)))).map((r) => r.results ?? []);
const rowsOf = async <T = Record<string, unknown>>(db: D1QueryableLike, sql: string): Promise<T[]> =>
  ((await db.prepare(sql).all()).results ?? []) as T[];

describe('D1 ⇔ SQLite differential', () => {
  // tmpfs when there is one: the SQLite repository fsyncs every commit, which is not what is under test.
  const scratch = (() => {
    try {
      readdirSync('/dev/shm');
      return '/dev/shm';
    } catch {
      return tmpdir();
    }
  })();

  it.concurrent.each(SEEDS)('seed %i: same answers, same tables', async (seed) => {
    const ops = generateWorkload(seed, OPS_PER_SEED);
    const d1 = mf
      .dispatchFetch('http://w/run', {
        method: 'POST',
        body: JSON.stringify({ binding: `W${seed}`, migrations: MIGRATIONS, ops }),
      })
      .then(
        async (res) =>
          (await res.json()) as { outcomes: Outcome[]; violations: string[]; dump: Record<string, unknown[]> },
      );

    const dir = mkdtempSync(join(scratch, 'd1-differential-'));
    try {
      const file = join(dir, 'artifacts.db');
      const repo = createSqliteRepository({ path: file });
      const reference = await runWorkload(repo, ops);
      await repo.close();
      const raw = new Database(file, { readonly: true });
      const referenceDump = await dumpTables(async (sqls) => sqls.map((sql) => raw.prepare(sql).all()));
      raw.close();

      const got = await d1;
      expect(got.violations).toEqual([]);
      const first = ops.findIndex((_, i) => !isDeepStrictEqual(got.outcomes[i], reference.outcomes[i]));
      if (first >= 0)
        expect({ op: ops[first], index: first, outcome: got.outcomes[first] }).toEqual({
          op: ops[first],
          index: first,
          outcome: reference.outcomes[first],
        });
      expect(got.dump).toEqual(referenceDump);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

const T0 = Date.parse('2030-01-01T00:00:00.000Z');
const sha = (c: string) => c.repeat(64);
const idOf = (c: string) => `ns_${sha(c).slice(0, 24)}`;

/** A put of blob `c` (its sha256 is c × 64) of `size` bytes into acme / session s1, at T0 + `at`. */
function putOf(c: string, size: number, at: number, extra: Partial<CommitPutInput> = {}): CommitPutInput {
  return {
    scope: { tenantId: 'acme', sessionId: 's1' },
    artifactId: idOf(c),
    namespace: 'ns',
    sha256: sha(c),
    sizeBytes: size,
    mimeType: 'text/plain',
    now: T0 + at,
    expiresAt: T0 + at + 60_000,
    ...extra,
  };
}

async function openD1(
  options: { consistency?: 'first-primary'; clock?: 'database' | 'caller' } = {},
): Promise<{ db: D1DatabaseLike; repo: ArtifactRepository }> {
  const db = await freshD1();
  return { db, repo: createD1Repository({ db, ...options }) };
}

describe('D1 repository', () => {
  it('D1 refuses more than 100 bound parameters (what touch, knownBlobs and dropOrUnmarkBlobs must avoid)', async () => {
    const { db } = await openD1();
    const ids = Array.from({ length: 101 }, (_, i) => i);
    await expect(
      db
        .prepare(`SELECT 1 WHERE 1 IN (${ids.map(() => '?').join(', ')})`)
        .bind(...ids)
        .all(),
    ).rejects.toThrow(/too many SQL variables/);
  });

  it('commitPut stores, re-puts and evicts (lru) with events, and artifacts go with their last reference', async () => {
    const { db, repo } = await openD1();
    const quota: QuotaLimits = { strategy: 'lru', maxSessionCount: 2 };
    const a = await repo.commitPut(putOf('a', 10, 0, { quota, meta: { n: 1 }, filename: 'a.txt' }));
    expect(a).toEqual({
      row: {
        refId: 1,
        tenantId: 'acme',
        artifactId: idOf('a'),
        namespace: 'ns',
        sha256: sha('a'),
        sizeBytes: 10,
        userId: '',
        sessionId: 's1',
        traceId: '',
        mimeType: 'text/plain',
        filename: 'a.txt',
        meta: { n: 1 },
        source: null,
        createdAt: T0,
        lastAccessedAt: T0,
        expiresAt: T0 + 60_000,
        name: '',
        version: -1,
      },
      created: true,
      evicted: [],
    });
    await repo.commitPut(putOf('b', 20, 1, { quota }));
    const c = await repo.commitPut(putOf('c', 30, 2, { quota }));
    expect(c.created).toBe(true);
    expect(c.evicted).toEqual([
      { refId: 1, sizeBytes: 10, tenantId: 'acme', artifactId: idOf('a'), userId: '', sessionId: 's1', traceId: '' },
    ]);
    expect(await repo.findRef('acme', idOf('a'), {}, T0 + 2)).toBeUndefined();
    expect(await rowsOf(db, 'SELECT id FROM artifacts ORDER BY id')).toEqual([{ id: idOf('b') }, { id: idOf('c') }]);

    // A re-put refreshes the expiry, keeps createdAt and the id, and is not new.
    const again = await repo.commitPut(putOf('b', 20, 3, { quota }));
    expect(again).toMatchObject({
      created: false,
      evicted: [],
      row: { refId: 2, createdAt: T0 + 1, lastAccessedAt: T0 + 3, expiresAt: T0 + 3 + 60_000 },
    });
    expect(await repo.storedTotals(T0 + 3)).toEqual({ refs: 2, refBytes: 50, blobs: 3, blobBytes: 60 });

    const events = await repo.readEvents('acme', 0, 100);
    expect(events.map((e) => [e.seq, e.type, e.artifactId, e.createdAt])).toEqual([
      [1, 'artifact.stored', idOf('a'), T0],
      [2, 'artifact.stored', idOf('b'), T0 + 1],
      [3, 'artifact.evicted', idOf('a'), T0 + 2],
      [4, 'artifact.stored', idOf('c'), T0 + 2],
      [5, 'artifact.stored', idOf('b'), T0 + 3],
    ]);
    expect(events[2]!.ref).toEqual({ ...a.row, sizeBytes: 10 });
    expect(events[2]!.scope).toEqual({ userId: '', sessionId: 's1', traceId: '' });
    expect(await repo.readEvents('other', 0, 100)).toEqual([]);
    expect(await repo.lastEventSeq()).toBe(5);
    expect(await repo.trimEvents(T0 + 2, 10)).toBe(2);
    expect((await repo.readEvents('acme', 0, 100)).map((e) => e.seq)).toEqual([3, 4, 5]);
  });

  it('a refused put changes no table, whatever refuses it, and burns no id', async () => {
    const { db, repo } = await openD1();
    const lru: QuotaLimits = { strategy: 'lru', maxSessionCount: 2, maxTenantBytes: 100 };
    await repo.commitPut(putOf('a', 40, 0, { quota: lru }));
    await repo.commitPut(putOf('b', 40, 1, { quota: lru }));
    const pin = await repo.pinBlob(sha('c'), T0 + 10_000, T0 + 2, T0 - 1000);
    expect(pin).toBe(1);
    // A session-less reference in trace x1 (35 bytes): the tenant now holds 115.
    await repo.commitPut(putOf('e', 35, 2, { scope: { tenantId: 'acme', traceId: 'x1' } }));
    const none: QuotaLimits = { strategy: 'reject', maxSessionCount: 2, maxTraceBytes: 50 };
    const refusals: [string, CommitPutInput, string, Record<string, unknown> | undefined][] = [
      // lru plans to evict a (40) for c (65): the tenant would hold 115 - 40 + 65 = 140 > 100, so
      // nothing happens at all, the eviction included.
      [
        'tenant after planned evictions',
        putOf('c', 65, 3, { quota: lru, pinId: 1 }),
        'quota_exceeded',
        {
          scope: 'tenant',
          tenantId: 'acme',
          limit: 'maxTenantBytes',
          limitValue: 100,
          usageBytes: 75,
          neededBytes: 65,
        },
      ],
      ['lost pin', putOf('c', 5, 3, { pinId: 99 }), 'backend_unavailable', undefined],
      ['pin of other bytes', putOf('d', 5, 3, { pinId: 1 }), 'backend_unavailable', undefined],
      ['collision', { ...putOf('d', 5, 3), artifactId: idOf('a') }, 'hash_collision', undefined],
      [
        'too big for the session',
        putOf('c', 60, 3, { quota: { strategy: 'lru', maxSessionBytes: 50 } }),
        'quota_exceeded',
        { scope: 'session', id: 's1', limit: 'maxSessionBytes', limitValue: 50, neededBytes: 60 },
      ],
      [
        'session full (none)',
        putOf('c', 5, 3, { quota: none }),
        'quota_exceeded',
        {
          scope: 'session',
          id: 's1',
          limit: 'maxArtifactsPerSession',
          limitValue: 2,
          usageBytes: 80,
          usageCount: 2,
          neededBytes: 5,
        },
      ],
      [
        'trace full (none)',
        putOf('c', 20, 3, { quota: none, scope: { tenantId: 'acme', traceId: 'x1' } }),
        'quota_exceeded',
        {
          scope: 'trace',
          id: 'x1',
          limit: 'maxTraceBytes',
          limitValue: 50,
          usageBytes: 35,
          usageCount: 1,
          neededBytes: 20,
        },
      ],
    ];

    for (const [what, input, code, details] of refusals) {
      const before = await dumpTables(queryOf(db));
      const err = await rejection(repo.commitPut(input));
      expect({ what, code: err.code, details: err.details }).toEqual({ what, code, details });
      const after = await dumpTables(queryOf(db));
      expect(after, what).toEqual(before);
      expect([after.put_ctx, after.evict_plan], what).toEqual([[], []]);
    }
    // The pin survived every refusal; the next put uses it and takes the next reference id.
    const ok = await repo.commitPut(putOf('c', 5, 4, { pinId: 1 }));
    expect(ok.row.refId).toBe(4);
    expect(await rowsOf(db, 'SELECT * FROM blob_pins')).toEqual([]);
    expect((await rowsOf<{ seq: number }>(db, 'SELECT seq FROM outbox')).map((r) => r.seq)).toEqual([1, 2, 3, 4]);
  });

  it('touch takes more ids than D1 binds parameters, and never moves a time back', async () => {
    const { repo } = await openD1();
    for (const c of ['a', 'b', 'c']) await repo.commitPut(putOf(c, 1, 0));
    const ids = Array.from({ length: 150 }, (_, i) => 150 - i); // 1..3 among them
    await repo.touch(ids, T0 + 500);
    await repo.touch([2], T0 + 100);
    await repo.touch([], T0 + 900);
    const rows = await repo.list('acme', { now: T0, limit: 10 });
    expect(rows.map((r) => [r.refId, r.lastAccessedAt]).sort()).toEqual([
      [1, T0 + 500],
      [2, T0 + 500],
      [3, T0 + 500],
    ]);
  });

  it('knownBlobs and dropOrUnmarkBlobs take any number of sha256s; markBlobsForCollection marks and deleteIdleBlobRow drops', async () => {
    const { db, repo } = await openD1();
    const shas = Array.from({ length: 150 }, (_, i) => i.toString(16).padStart(64, '0'));
    await db.batch(
      shas.map((s) => db.prepare('INSERT INTO blobs (sha256, size_bytes, created_at) VALUES (?1, 7, ?2)').bind(s, T0)),
    );
    const asked = [...shas, ...Array.from({ length: 50 }, (_, i) => `f${i}`.padEnd(64, 'f'))];
    expect([...(await repo.knownBlobs(asked))].sort()).toEqual(shas);
    expect(await repo.knownBlobs([])).toEqual(new Set());

    // A window of 100 rows, then the rest: the cursor says where the next one starts, null at the end.
    const first = await repo.markBlobsForCollection(T0 + 10, T0 + 1, T0 - 1000, '', 100);
    expect(first.next).toBe(shas[99]);
    const rest = await repo.markBlobsForCollection(T0 + 10, T0 + 1, T0 - 1000, first.next!, 100);
    expect(rest.next).toBeNull();
    const marked = [...first.marked, ...rest.marked];
    expect(marked.map((d) => d.sha256).sort()).toEqual(shas);
    expect(marked[0]!.sizeBytes).toBe(7);
    await repo.dropOrUnmarkBlobs(shas.slice(0, 120), shas.slice(120), T0 + 999); // another run's mark: nothing happens
    expect((await repo.storedTotals(T0)).blobs).toBe(150);
    await repo.dropOrUnmarkBlobs(shas.slice(0, 120), shas.slice(120), T0 + 10);
    expect(await rowsOf(db, 'SELECT count(*) AS n, count(doomed_at) AS marked FROM blobs')).toEqual([
      { n: 30, marked: 0 },
    ]);

    expect(await repo.deleteIdleBlobRow(shas[120]!, T0)).toBe(true);
    expect(await repo.deleteIdleBlobRow(shas[120]!, T0)).toBe(false);
    expect((await repo.blobRows('', 2, T0)).map((b) => b.sha256)).toEqual(shas.slice(121, 123));
  });

  it('pinBlob answers collecting while a collection runs, and a put consumes its pin', async () => {
    const { db, repo } = await openD1();
    const b = sha('b');
    expect(await repo.pinBlob(b, T0 + 1000, T0, T0 - 100)).toBe(1);
    expect(await repo.blobRows('', 10, T0)).toEqual([{ sha256: b, sizeBytes: 0, pinned: true, artifacts: 0 }]);
    expect(await repo.markBlobForPurge(b, T0 + 10)).toBe(false); // pinned
    await repo.releasePin(1);
    expect(await repo.markBlobForPurge(b, T0 + 10)).toBe(true);
    expect(await repo.pinBlob(b, T0 + 1000, T0 + 20, T0)).toBe('collecting');
    expect(await rowsOf(db, 'SELECT id FROM blob_pins')).toEqual([]);
    // A mark older than staleBefore is a dead collection: the pin clears it.
    const pin = await repo.pinBlob(b, T0 + 1000, T0 + 20, T0 + 15);
    expect(pin).toBe(2);
    expect(await rowsOf(db, 'SELECT doomed_at FROM blobs')).toEqual([{ doomed_at: null }]);

    const put = await repo.commitPut(putOf('b', 9, 30, { pinId: 2 }));
    expect(put.row.sizeBytes).toBe(9);
    expect(await rowsOf(db, 'SELECT sha256, size_bytes FROM blobs')).toEqual([{ sha256: b, size_bytes: 9 }]);
    expect((await rejection(repo.commitPut(putOf('b', 9, 31, { pinId: 2 })))).code).toBe('backend_unavailable');
    expect(await repo.artifactsOfBlob(b, 10)).toEqual([{ tenantId: 'acme', id: idOf('b') }]);
    expect(await repo.deleteIdleBlobRow(b, T0 + 40)).toBe(false);

    await repo.pinBlob(b, T0 + 50, T0 + 40, T0);
    await repo.pinBlob(b, T0 + 5000, T0 + 40, T0);
    expect(await repo.dropExpiredPins(T0 + 60)).toBe(1);
    expect(await rowsOf(db, 'SELECT id FROM blob_pins')).toEqual([{ id: 4 }]);
  });

  it('expireRefs, enforceScope and deleteRefs remove references with their events', async () => {
    const { db, repo } = await openD1();
    await repo.commitPut(putOf('a', 10, 0, { expiresAt: T0 + 100 }));
    await repo.commitPut(putOf('b', 20, 1));
    await repo.commitPut(putOf('c', 30, 2, { scope: { tenantId: 'acme', sessionId: 's2', traceId: 'x1' } }));
    await repo.commitPut(putOf('d', 40, 3, { scope: { tenantId: 'acme', sessionId: 's2', traceId: 'x1' } }));

    expect(await repo.expireRefs(T0 + 99, 10)).toEqual({ refs: 0, bytes: 0, byTenant: {} });
    expect(await repo.expireRefs(T0 + 100, 10)).toEqual({
      refs: 1,
      bytes: 10,
      byTenant: { acme: { refs: 1, bytes: 10 } },
    });
    expect(
      await repo.enforceScope('acme', 'session', 's2', { strategy: 'reject', maxSessionCount: 1 }, T0 + 101),
    ).toEqual([]);
    expect(await repo.enforceScope('acme', 'trace', 'x1', { strategy: 'fifo', maxSessionCount: 1 }, T0 + 101)).toEqual(
      [],
    ); // no trace limit
    const evicted = await repo.enforceScope(
      'acme',
      'session',
      's2',
      { strategy: 'fifo', maxSessionCount: 1 },
      T0 + 101,
    );
    expect(evicted).toEqual([
      { refId: 3, sizeBytes: 30, tenantId: 'acme', artifactId: idOf('c'), userId: '', sessionId: 's2', traceId: 'x1' },
    ]);
    expect(await repo.deleteRefs('acme', idOf('b'), { sessionId: 's2' }, T0 + 102)).toBe(0);
    expect(await repo.deleteRefs('acme', idOf('b'), { sessionId: 's1' }, T0 + 102)).toBe(1);

    const events = await repo.readEvents('acme', 4, 100);
    expect(events.map((e) => [e.type, e.artifactId, e.createdAt, e.ref?.refId])).toEqual([
      ['artifact.expired', idOf('a'), T0 + 100, 1],
      ['artifact.evicted', idOf('c'), T0 + 101, 3],
      ['artifact.deleted', idOf('b'), T0 + 102, 2],
    ]);
    expect(events[2]!.ref).toMatchObject({ namespace: 'ns', sha256: sha('b'), sizeBytes: 20, sessionId: 's1' });
    expect(await rowsOf(db, 'SELECT id FROM artifacts')).toEqual([{ id: idOf('d') }]);
    expect(await repo.dropUnreferencedArtifacts(0, 10)).toEqual({ dropped: 0, next: null });
    await db
      .prepare(
        "INSERT INTO artifacts (tenant_id, id, namespace, sha256, size_bytes, created_at) VALUES ('acme', 'ns_orphan', 'ns', 'x', 1, 0)",
      )
      .run();
    // A window of one row (d, held), then the orphan.
    const window = await repo.dropUnreferencedArtifacts(0, 1);
    expect(window).toEqual({ dropped: 0, next: expect.any(Number) });
    expect(await repo.dropUnreferencedArtifacts(window.next!, 1)).toEqual({ dropped: 1, next: expect.any(Number) });
    expect(await rowsOf(db, 'SELECT id FROM artifacts')).toEqual([{ id: idOf('d') }]);
  });

  it('endSession removes a session in batches with its events and names, as SQLite does; other scopes stay', async () => {
    const { db } = await openD1();
    let batches = 0;
    // The binding, counting the batches (transactions) the repository sends.
    const counting: D1DatabaseLike = {
      prepare: (sql) => db.prepare(sql),
      batch: (stmts) => {
        batches++;
        return db.batch(stmts);
      },
    };
    const dir = mkdtempSync(join(tmpdir(), 'd1-end-session-'));
    const file = join(dir, 'artifacts.db');
    const repos = { sqlite: createSqliteRepository({ path: file }), d1: createD1Repository({ db: counting }) };
    const named = (c: string, size: number, at: number, sessionId?: string) =>
      putOf(c, size, at, {
        scope: { tenantId: 'acme', userId: 'u1', ...(sessionId ? { sessionId } : {}) },
        name: 'notes',
        expiresAt: T0 + at + 600_000,
      });
    try {
      const answers: Record<string, unknown[]> = { sqlite: [], d1: [] };
      for (const [which, repo] of Object.entries(repos)) {
        // Session s1 of acme: three live references (one in a trace, one of user u2), one expired
        // before the end, and two versions of a name (the same bytes twice).
        await repo.commitPut(putOf('a', 10, 0));
        await repo.commitPut(putOf('b', 20, 1, { scope: { tenantId: 'acme', sessionId: 's1', traceId: 'x1' } }));
        await repo.commitPut(putOf('c', 30, 2, { scope: { tenantId: 'acme', userId: 'u2', sessionId: 's1' } }));
        await repo.commitPut(putOf('d', 40, 3, { expiresAt: T0 + 10 }));
        await repo.commitPut(named('e', 5, 4, 's1'));
        await repo.commitPut(named('e', 5, 5, 's1'));
        // What stays: session s2, the user-wide name, another tenant's s1.
        await repo.commitPut(putOf('a', 10, 6, { scope: { tenantId: 'acme', sessionId: 's2' } }));
        await repo.commitPut(named('f', 6, 7));
        await repo.commitPut(putOf('a', 10, 8, { scope: { tenantId: 'beta', sessionId: 's1' } }));
        batches = 0;
        answers[which]!.push(await repo.endSession('acme', 's1', {}, T0 + 100, 2));
        if (which === 'd1') expect(batches).toBe(3); // 2 + 2 + 1 references, one transaction each
        answers[which]!.push(await repo.endSession('acme', 's1', {}, T0 + 101));
        answers[which]!.push(await repo.endSession('acme', '', {}, T0 + 101).catch((e: Error) => e.message));
        answers[which]!.push((await repo.commitPut(named('e', 5, 102, 's1'))).row.version);
        answers[which]!.push(await repo.readEvents('acme', 0, 100));
      }
      expect(answers.d1).toEqual(answers.sqlite);
      const [ended, again, empty, version, events] = answers.d1 as [unknown, unknown, string, number, any[]];
      expect(ended).toEqual({ refs: 5, bytes: 10 + 20 + 30 + 5 + 5, versions: 2 });
      expect(again).toEqual({ refs: 0, bytes: 0, versions: 0 });
      expect(empty).toMatch(/needs a session id/);
      expect(version).toBe(0); // the name went with its versions: its counter starts again
      const deleted = events.filter((e) => e.type === 'artifact.deleted');
      expect(deleted.map((e) => [e.artifactId, e.ref.sessionId, e.ref.name, e.ref.version])).toEqual([
        [idOf('a'), 's1', '', -1],
        [idOf('b'), 's1', '', -1],
        [idOf('c'), 's1', '', -1],
        [idOf('e'), 's1', 'notes', 0],
        [idOf('e'), 's1', 'notes', 1],
      ]);

      const raw = new Database(file, { readonly: true });
      const sqliteTables = await dumpTables(async (sqls) => sqls.map((sql) => raw.prepare(sql).all()));
      raw.close();
      const tables = await dumpTables(queryOf(db));
      expect(tables).toEqual(sqliteTables);
      expect(tables.evict_plan).toEqual([]);
      const left = (tables.artifact_refs as any[]).map((r) => [r.tenant_id, r.session_id, r.artifact_id, r.name]);
      expect(left).toEqual([
        ['acme', 's1', idOf('d'), ''], // expired: retention's to remove
        ['acme', 's2', idOf('a'), ''],
        ['acme', '', idOf('f'), 'notes'],
        ['beta', 's1', idOf('a'), ''],
        ['acme', 's1', idOf('e'), 'notes'],
      ]);
      expect((tables.names as any[]).map((n) => [n.session_id, n.name, n.next_version])).toEqual([
        ['', 'notes', 1],
        ['s1', 'notes', 1],
      ]);
    } finally {
      await repos.sqlite.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('list, usage, scopesOver and storedTotals see live references only', async () => {
    const { repo } = await openD1();
    await repo.commitPut(putOf('a', 10, 0, { mimeType: 'image/png', expiresAt: T0 + 50 }));
    await repo.commitPut(
      putOf('b', 20, 1, { scope: { tenantId: 'acme', userId: 'u1', sessionId: 's1', traceId: 'x1' } }),
    );
    await repo.commitPut(putOf('c', 30, 2, { scope: { tenantId: 'acme', sessionId: 's2', traceId: 'x1' } }));
    await repo.commitPut(putOf('a', 10, 3, { scope: { tenantId: 'beta', sessionId: 's1' } }));
    const now = T0 + 60;

    expect((await repo.list('acme', { now, limit: 10 })).map((r) => r.artifactId)).toEqual([idOf('c'), idOf('b')]);
    expect(
      (await repo.list('acme', { now: T0 + 10, limit: 10, mimePrefix: 'image/' })).map((r) => r.artifactId),
    ).toEqual([idOf('a')]);
    expect((await repo.list('acme', { now, limit: 10, userId: 'u1' })).map((r) => r.artifactId)).toEqual([idOf('b')]);
    expect(
      (await repo.list('acme', { now, limit: 10, after: { sort: 'newest', createdAt: T0 + 2, refId: 3 } })).map(
        (r) => r.artifactId,
      ),
    ).toEqual([idOf('b')]);
    expect(
      (await repo.list('acme', { now, limit: 10, createdAfter: T0 + 2, namespace: 'ns' })).map((r) => r.artifactId),
    ).toEqual([idOf('c')]);
    expect(await repo.findRef('acme', idOf('b'), { traceId: 'x1', userId: 'u1' }, now)).toMatchObject({
      refId: 2,
      meta: null,
    });
    expect(await repo.findRef('acme', idOf('b'), { traceId: 'x2' }, now)).toBeUndefined();

    expect(await repo.usage('tenant', now, { limit: 10 })).toEqual([
      { tenantId: 'acme', value: 'acme', count: 2, bytes: 50 },
      { tenantId: 'beta', value: 'beta', count: 1, bytes: 10 },
    ]);
    expect(await repo.usage('session', now, { tenantId: 'acme', limit: 10 })).toEqual([
      { tenantId: 'acme', value: 's2', count: 1, bytes: 30 },
      { tenantId: 'acme', value: 's1', count: 1, bytes: 20 },
    ]);
    expect(await repo.usage('trace', now, { tenantId: 'acme', traceId: 'x1', limit: 10 })).toEqual([
      { tenantId: 'acme', value: 'x1', count: 2, bytes: 50 },
    ]);
    expect(await repo.scopesOver('trace', now, 1, 1000, undefined, 10)).toEqual({
      scopes: [{ tenantId: 'acme', value: 'x1', count: 2, bytes: 50 }],
      next: null,
    });
    expect(await repo.scopesOver('session', now, 0, 0, { tenantId: 'acme', value: 's1' }, 10)).toEqual({
      scopes: [
        { tenantId: 'acme', value: 's2', count: 1, bytes: 30 },
        { tenantId: 'beta', value: 's1', count: 1, bytes: 10 },
      ],
      next: null,
    });
    // A window of one reference: one scope, and where the next window starts.
    expect(await repo.scopesOver('session', now, 0, 0, { tenantId: 'acme', value: 's1' }, 1)).toEqual({
      scopes: [{ tenantId: 'acme', value: 's2', count: 1, bytes: 30 }],
      next: { tenantId: 'acme', value: 's2' },
    });
    expect(await repo.storedTotals(now)).toEqual({ refs: 3, refBytes: 60, blobs: 3, blobBytes: 60 });
  });

  it('the retention lease: taken when free or lapsed, renewed by its holder, given up', async () => {
    const { repo } = await openD1();
    expect(await repo.claimLease('retention', 'a', T0 + 2000, T0)).toBe(true);
    expect(await repo.claimLease('retention', 'b', T0 + 2500, T0 + 500)).toBe(false);
    expect(await repo.claimLease('retention', 'a', T0 + 3000, T0 + 900)).toBe(true);
    expect(await repo.claimLease('retention', 'b', T0 + 3500, T0 + 2500)).toBe(false);
    expect(await repo.claimLease('retention', 'b', T0 + 4000, T0 + 3000)).toBe(true);
    await repo.releaseLease('retention', 'a');
    expect(await repo.claimLease('retention', 'a', T0 + 4500, T0 + 3100)).toBe(false);
    await repo.releaseLease('retention', 'b');
    expect(await repo.claimLease('retention', 'a', T0 + 4500, T0 + 3100)).toBe(true);
  });

  it('API keys, uploads and retention runs', async () => {
    const { repo } = await openD1();
    await repo.createApiKey({
      id: 'k1',
      tenantId: 'acme',
      operator: false,
      secretHash: 'h1',
      perms: ['read', 'write'],
      label: 'ci',
      createdAt: T0,
    });
    await repo.createApiKey({
      id: 'k2',
      tenantId: 'beta',
      operator: true,
      secretHash: 'h2',
      perms: ['admin'],
      label: null,
      createdAt: T0 + 1,
    });
    expect(await repo.findApiKey('k1')).toEqual({
      id: 'k1',
      tenantId: 'acme',
      operator: false,
      secretHash: 'h1',
      perms: ['read', 'write'],
      label: 'ci',
      createdAt: T0,
      revokedAt: null,
    });
    expect(await repo.revokeApiKey('k1', T0 + 5)).toBe(true);
    expect(await repo.revokeApiKey('k1', T0 + 6)).toBe(false);
    expect(await repo.findApiKey('k1')).toBeUndefined();
    expect(await repo.listApiKeys('acme')).toEqual([
      {
        id: 'k1',
        tenantId: 'acme',
        operator: false,
        perms: ['read', 'write'],
        label: 'ci',
        createdAt: T0,
        revokedAt: T0 + 5,
      },
    ]);
    expect((await repo.listApiKeys()).map((k) => k.id)).toEqual(['k1', 'k2']);

    const upload = {
      id: 'up1',
      tenantId: 'acme',
      userId: 'u1',
      sessionId: 's1',
      traceId: '',
      stagingKey: 'staging/up1',
      sizeBytes: 5,
      sha256: sha('a'),
      options: { mimeType: 'text/plain', meta: { a: 1 } },
      createdAt: T0,
      expiresAt: T0 + 100,
      kind: 'put' as const,
      multipartId: null,
      partSize: null,
      receivedBytes: 0,
    };
    await repo.createUpload(upload);
    await repo.createUpload({ ...upload, id: 'up2', expiresAt: T0 + 50 });
    expect(await repo.findUpload('acme', 'up1')).toEqual(upload);
    const tus = { ...upload, id: 'up3', kind: 'tus' as const, sha256: '', expiresAt: T0 + 200 };
    await repo.createUpload(tus);
    // The offset moves only from where it stands: a second request with the same start loses.
    expect(await repo.advanceUpload('up3', 0, 3, T0 + 300)).toBe(true);
    expect(await repo.advanceUpload('up3', 0, 4, T0 + 300)).toBe(false);
    expect(await repo.findUpload('acme', 'up3')).toEqual({ ...tus, receivedBytes: 3, expiresAt: T0 + 300 });
    expect(await repo.advanceUpload('gone', 0, 1, T0)).toBe(false);
    await repo.deleteUpload('up3');
    const multipart = { ...upload, id: 'up4', kind: 'multipart' as const, multipartId: 'mp-1', partSize: 8 << 20 };
    await repo.createUpload(multipart);
    expect(await repo.findUpload('acme', 'up4')).toEqual(multipart);
    await repo.deleteUpload('up4');
    expect(await repo.findUpload('beta', 'up1')).toBeUndefined();
    expect((await repo.expiredUploads(T0 + 101, 10)).map((u) => u.id)).toEqual(['up2', 'up1']);
    expect((await repo.expiredUploads(T0 + 100, 1)).map((u) => u.id)).toEqual(['up2']);
    await repo.deleteUpload('up1');
    expect(await repo.findUpload('acme', 'up1')).toBeUndefined();

    for (const [i, trigger] of ['cron', 'cli', 'cron'].entries())
      await repo.recordRetentionRun({ trigger, startedAt: T0 + i, finishedAt: T0 + i + 1, report: { run: i } });
    expect(await repo.retentionRuns(2)).toEqual([
      { id: 3, trigger: 'cron', startedAt: T0 + 2, finishedAt: T0 + 3, report: { run: 2 } },
      { id: 2, trigger: 'cli', startedAt: T0 + 1, finishedAt: T0 + 2, report: { run: 1 } },
    ]);
    await repo.ping();
    await repo.close();
    expect(repo.backupTo).toBeUndefined();
  });

  it("a put with a clock takes the database's time (never earlier than its own); with clock: 'caller', the caller's", async () => {
    const { repo } = await openD1();
    const wallBefore = Date.now();
    const old = await repo.commitPut({ ...putOf('a', 1, 0), now: 1_000, expiresAt: 61_000, clock: () => 1_000 });
    expect(old.row.createdAt).toBeGreaterThanOrEqual(wallBefore - 5);
    expect(old.row.createdAt).toBeLessThanOrEqual(Date.now() + 5);
    expect(old.row.expiresAt - old.row.createdAt).toBe(60_000);
    // A caller ahead of the database keeps its own time; without a clock, `now` is taken as given.
    expect((await repo.commitPut({ ...putOf('b', 1, 0), clock: () => T0 })).row.createdAt).toBe(T0);
    expect((await repo.commitPut({ ...putOf('c', 1, 0), now: 1_000, expiresAt: 2_000 })).row).toMatchObject({
      createdAt: 1_000,
      expiresAt: 2_000,
    });

    const caller = createD1Repository({ db: await freshD1(), clock: 'caller' });
    expect(
      (await caller.commitPut({ ...putOf('a', 1, 0), now: 1_000, expiresAt: 2_000, clock: () => 5_000 })).row,
    ).toMatchObject({ createdAt: 5_000, expiresAt: 6_000 });
  });

  it("consistency: 'first-primary' runs every query in one D1 session, so a put is found right after", async () => {
    const db = await freshD1();
    const calls = { db: 0, session: 0, sessions: [] as (string | undefined)[] };
    const counted = (target: D1QueryableLike, key: 'db' | 'session'): D1QueryableLike => ({
      prepare: (sql) => {
        calls[key]++;
        return target.prepare(sql);
      },
      batch: (stmts) => target.batch(stmts),
    });
    const spy: D1DatabaseLike = {
      ...counted(db, 'db'),
      withSession: (constraint) => {
        calls.sessions.push(constraint);
        return counted(db.withSession!(constraint), 'session');
      },
    };
    const repo = createD1Repository({ db: spy, consistency: 'first-primary' });
    await repo.commitPut(putOf('a', 1, 0));
    expect(await repo.findRef('acme', idOf('a'), {}, T0)).toMatchObject({ refId: 1 });
    await repo.ping();
    expect(calls.sessions).toEqual(['first-primary']);
    expect(calls.db).toBe(0);
    expect(calls.session).toBeGreaterThan(10);

    // Without the Sessions API (or without the option) the binding is used as it is.
    const plain = createD1Repository({ db: counted(db, 'db'), consistency: 'first-primary' });
    expect(await plain.findRef('acme', idOf('a'), {}, T0)).toMatchObject({ refId: 1 });
    expect(calls.db).toBe(1);
  });
});

describe('the put plan', () => {
  it('holds every write outside the scratch tables back until the verdict is yes, within D1 limits', () => {
    const input = putOf('a', 10, 0, {
      scope: { tenantId: 'acme', userId: 'u1', sessionId: 's1', traceId: 'x1' },
      pinId: 3,
      quota: {
        strategy: 'lru',
        maxSessionBytes: 100,
        maxSessionCount: 3,
        maxTraceBytes: 100,
        maxTraceCount: 3,
        maxTenantBytes: 1000,
      },
    });
    const plan = commitPutPlan(input, T0, T0 + 60_000, true);
    const writes = plan.stmts.filter((s) =>
      /^\s*(WITH[\s\S]*?\)\s*)?(INSERT INTO|UPDATE|DELETE FROM)\s+(\w+)/
        .exec(s.sql)?.[3]
        ?.match(/^(?!put_ctx$|evict_plan$)/),
    );
    expect(writes.length).toBe(9);
    for (const w of writes)
      expect(w.sql.includes(PUT_OK) || w.sql.includes('FROM put_ctx WHERE refused IS NULL'), w.sql).toBe(true);
    for (const s of plan.stmts) expect(new Set(s.sql.match(/@\w+/g) ?? []).size).toBeLessThanOrEqual(100);
    expect(plan.stmts.at(-1)!.sql).toBe('DELETE FROM put_ctx');
  });
});
