/**
 * Each phase of a retention run alone, against a real SQLite repository and fs blob store: what it
 * did (its part of the report) and what it left (rows, bytes, the rest of the report). Then the
 * step a collection shares with purge (removeMarkedBlobs), and the run as a whole: the order of its
 * table and what it logs. A new phase gets a describe here, next to its neighbours in the table.
 * The runs of whole phases together, with puts going on, are in test/retention.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { BlobStore } from '../src/blob/blob-store.js';
import { createFsBlobStore } from '../src/blob/fs.js';
import { nodeSha256 } from '../src/blob/node-hash.js';
import { createJsonLogger } from '../src/core/logger.js';
import { createPolicies } from '../src/core/policy.js';
import type { ArtifactScope } from '../src/core/schemas.js';
import { createSqliteRepository } from '../src/db/sqlite.js';
import { createArtifactService } from '../src/service/artifact-service.js';
import { removeMarkedBlobs } from '../src/service/blob-removal.js';
import { STALE_COLLECTION_MS } from '../src/service/put-pin.js';
import { collectBlobs } from '../src/service/retention/collect.js';
import { createPhaseContext } from '../src/service/retention/context.js';
import { expireReferences } from '../src/service/retention/expire.js';
import {
  EVENTS_KEPT_MS,
  PHASES,
  type Phase,
  type RetentionDeps,
  type RetentionReport,
  runRetention,
} from '../src/service/retention/index.js';
import { enforceScopeLimits } from '../src/service/retention/quotas.js';
import { emptyReport } from '../src/service/retention/report.js';
import { sweepStaging } from '../src/service/retention/staging.js';
import { trimAudit, trimEvents } from '../src/service/retention/trims.js';
import { removeUnfinishedBlobRows } from '../src/service/retention/unfinished.js';
import { dropUnreferencedArtifacts } from '../src/service/retention/unreferenced.js';
import { discardExpiredUploads } from '../src/service/retention/uploads.js';
import { createTusFileStaging } from '../src/node/tus-file-staging.js';
import { TEST_POLICY } from './helpers/policy.js';

const T0 = Date.parse('2030-01-01T00:00:00.000Z');
const KiB = 1024;
const DAY = 86_400_000;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A repository and fs blob store in a temp dir, a service to put through, and a phase runner. */
async function open() {
  const dir = await mkdtemp(join(tmpdir(), 'artifact-phases-'));
  const dbPath = join(dir, 'artifacts.db');
  const repo = createSqliteRepository({ path: dbPath });
  const blobs = createFsBlobStore({ root: join(dir, 'blobs'), hash: nodeSha256, fsync: false });
  const clock = { t: T0 };
  const service = createArtifactService({
    repo,
    blobs,
    limits: { ...TEST_POLICY, touchFlushMs: 0, gcGraceMs: 60_000 },
    policies: createPolicies(TEST_POLICY),
    now: () => clock.t,
  });
  const db = new Database(dbPath);
  cleanups.push(async () => {
    db.close();
    await service.close();
    await repo.close();
    await rm(dir, { recursive: true, force: true });
  });
  const lines: string[] = [];
  const deps = (extra: Partial<RetentionDeps>): RetentionDeps => ({
    repo,
    blobs,
    policies: createPolicies(TEST_POLICY),
    now: () => clock.t,
    graceMs: 0,
    logger: createJsonLogger('warn', (line) => lines.push(line)),
    ...extra,
  });
  return {
    dir,
    db,
    repo,
    blobs,
    service,
    clock,
    deps,
    /** Runs one phase alone, as the run does, and returns the report it filled in. */
    async runPhase(run: Phase['run'], extra: Partial<RetentionDeps> = {}): Promise<RetentionReport> {
      const report = emptyReport('test', clock.t);
      await run(createPhaseContext(deps(extra), report));
      return report;
    },
    /** `n` puts of 1 KiB into `scope`, a second apart; their ids. */
    async put(scope: ArtifactScope, n: number, ttl?: number): Promise<string[]> {
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        clock.t += 1000;
        ids.push((await service.putBytes(scope, randomBytes(KiB), ttl ? { ttl } : {})).ref.id);
      }
      return ids;
    },
    /** Bytes put and deleted again: a blob row no artifact holds. Its sha256. */
    async orphan(size = KiB): Promise<string> {
      const { ref } = await service.putBytes({ tenantId: 'acme', sessionId: 'gone' }, randomBytes(size));
      await service.delete({ tenantId: 'acme', filter: {} }, ref.id);
      return ref.sha256;
    },
    ids: (tenantId: string) =>
      (db.prepare('SELECT artifact_id AS id FROM artifact_refs WHERE tenant_id = ?').all(tenantId) as { id: string }[])
        .map((r) => r.id)
        .sort(),
    column: (sql: string) => (db.prepare(sql).raw().all() as unknown[][]).map((r) => r[0]),
    count: (sql: string) => (db.prepare(sql).get() as { n: number }).n,
    logged: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

/** The report without `keys`: a phase that fills in only those leaves the rest as the run began it. */
function apartFrom(report: RetentionReport, ...keys: (keyof RetentionReport)[]): Partial<RetentionReport> {
  const rest: Partial<RetentionReport> = { ...report };
  for (const key of keys) delete rest[key];
  return rest;
}

function untouchedApartFrom(report: RetentionReport, ...keys: (keyof RetentionReport)[]): void {
  const fresh = emptyReport(report.trigger, Date.parse(report.startedAt));
  expect(apartFrom(report, ...keys)).toEqual(apartFrom(fresh, ...keys));
}

describe('phase expire', () => {
  it('expires only references past their TTL, a batch at a time, and counts bytes per tenant', async () => {
    const h = await open();
    await h.put({ tenantId: 'acme', sessionId: 's1' }, 3, 5);
    const acmeKept = await h.put({ tenantId: 'acme', sessionId: 's1' }, 2);
    await h.put({ tenantId: 'beta', sessionId: 's1' }, 2, 5);
    h.clock.t += 60_000;
    const report = await h.runPhase(expireReferences, { batchSize: 2 });
    expect(report.expired).toEqual({ refs: 5, bytes: 5 * KiB });
    expect(report.tenants).toEqual({
      acme: { expiredRefs: 3, expiredBytes: 3 * KiB, evictedRefs: 0, evictedBytes: 0 },
      beta: { expiredRefs: 2, expiredBytes: 2 * KiB, evictedRefs: 0, evictedBytes: 0 },
    });
    untouchedApartFrom(report, 'expired', 'tenants');
    expect(h.ids('acme')).toEqual(acmeKept.sort());
    expect(h.ids('beta')).toEqual([]);
    // The artifacts went with their last reference; their bytes wait for the collection.
    expect(h.count('SELECT count(*) AS n FROM artifacts')).toBe(2);
    expect(h.count('SELECT count(*) AS n FROM blobs')).toBe(7);
  });
});

describe('phase quotas', () => {
  it('evicts the least recently used of a scope over its limit, and keeps a scope whose tenant rejects instead', async () => {
    const h = await open();
    const acme = await h.put({ tenantId: 'acme', sessionId: 's1' }, 4);
    const keep = await h.put({ tenantId: 'keep', sessionId: 's1' }, 3);
    const report = await h.runPhase(enforceScopeLimits, {
      policies: createPolicies({ ...TEST_POLICY, maxArtifactsPerSession: 2 }, { keep: { cleanupStrategy: 'reject' } }),
      overriddenTenants: ['keep'],
    });
    expect(report.evicted).toEqual({ refs: 2, bytes: 2 * KiB, scopes: 1 });
    expect(report.overLimitKept).toEqual({ scopes: 1 });
    expect(report.tenants).toEqual({
      acme: { expiredRefs: 0, expiredBytes: 0, evictedRefs: 2, evictedBytes: 2 * KiB },
    });
    untouchedApartFrom(report, 'evicted', 'overLimitKept', 'tenants');
    expect(h.ids('acme')).toEqual(acme.slice(2).sort());
    expect(h.ids('keep')).toEqual(keep.sort());
  });
});

describe('phase artifacts', () => {
  it('drops artifacts no reference holds, and only those', async () => {
    const h = await open();
    const held = await h.put({ tenantId: 'acme', sessionId: 's1' }, 1);
    h.db
      .prepare(
        "INSERT INTO artifacts (tenant_id, id, namespace, sha256, size_bytes, created_at) VALUES ('acme', 'art_000000000000000000000000', 'art', ?, 1, 0)",
      )
      .run('0'.repeat(64));
    const report = await h.runPhase(dropUnreferencedArtifacts, { batchSize: 1 });
    expect(report.unreferencedArtifacts).toBe(1);
    untouchedApartFrom(report, 'unreferencedArtifacts');
    expect(h.column('SELECT id FROM artifacts')).toEqual(held);
  });
});

describe('phase uploads', () => {
  it('discards the staged objects of uploads expired past the grace period, then their rows; keeps and logs one the store would not discard', async () => {
    const h = await open();
    const upload = (id: string, expiresAt: number) =>
      h.repo.createUpload({
        id,
        tenantId: 'acme',
        userId: '',
        sessionId: '',
        traceId: '',
        stagingKey: `staging/${id}`,
        sizeBytes: 10,
        sha256: 'a'.repeat(64),
        options: {},
        createdAt: T0 - DAY,
        expiresAt,
        kind: 'put',
        multipartId: null,
        partSize: null,
        receivedBytes: 0,
      });
    await upload('up_done', T0 - 10_000);
    await upload('up_stuck', T0 - 10_000);
    await upload('up_live', T0 - 1000);
    const discarded: string[] = [];
    // The fs store takes no direct uploads: this one discards staged objects as a bucket's would.
    const unsupported = () => Promise.reject(new Error('not used by this phase'));
    const blobs: BlobStore = {
      ...h.blobs,
      direct: {
        presignGet: unsupported,
        presignUpload: unsupported,
        commitUpload: unsupported,
        async discardUpload(stagingKey: string) {
          discarded.push(stagingKey);
          if (stagingKey === 'staging/up_stuck') throw new Error('staging unreachable');
        },
      },
    };
    const report = await h.runPhase(discardExpiredUploads, { blobs, graceMs: 5000 });
    expect(report.uploads).toEqual({ reaped: 1, stagingFailed: 1 });
    untouchedApartFrom(report, 'uploads');
    expect(discarded.sort()).toEqual(['staging/up_done', 'staging/up_stuck']);
    expect(h.column('SELECT id FROM uploads ORDER BY id')).toEqual(['up_live', 'up_stuck']);
    expect(h.logged()).toEqual([
      expect.objectContaining({
        level: 'warn',
        phase: 'uploads',
        uploadId: 'up_stuck',
        error: 'Error: staging unreachable',
      }),
    ]);
  });
});

describe('phase uploads, tus', () => {
  it("drops an expired tus upload's staged file, then its row; a run without the staging (the CLI) leaves it", async () => {
    const h = await open();
    const folder = await mkdtemp(join(tmpdir(), 'tus-phase-'));
    try {
      const staging = createTusFileStaging({ dir: folder, fsync: false });
      const tus = async (id: string, expiresAt: number, stagingKey = id) => {
        await h.repo.createUpload({
          id,
          tenantId: 'acme',
          userId: '',
          sessionId: '',
          traceId: '',
          stagingKey,
          sizeBytes: 10,
          sha256: '',
          options: {},
          createdAt: T0 - DAY,
          expiresAt,
          kind: 'tus',
          multipartId: null,
          partSize: null,
          receivedBytes: 0,
        });
        if (stagingKey !== '') await staging.create(id);
      };
      await tus('up_old', T0 - 10_000);
      await tus('up_live', T0 - 1000);
      await tus('up_finished', T0 - 10_000, '');
      const withoutStaging = await h.runPhase(discardExpiredUploads, { graceMs: 5000 });
      expect(withoutStaging.uploads).toEqual({ reaped: 1, stagingFailed: 0 });
      expect(h.column('SELECT id FROM uploads ORDER BY id')).toEqual(['up_live', 'up_old']);
      const report = await h.runPhase(discardExpiredUploads, { graceMs: 5000, tusStaging: staging });
      expect(report.uploads).toEqual({ reaped: 1, stagingFailed: 0 });
      expect(h.column('SELECT id FROM uploads ORDER BY id')).toEqual(['up_live']);
      expect((await readdir(folder)).sort()).toEqual(['up_live']);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });
});

describe('phase unfinished', () => {
  it('removes rows of failed puts whose bytes the store does not have; keeps those it has, and logs a failed check', async () => {
    const h = await open();
    const stored = await h.blobs.put(new Blob([randomBytes(100)]).stream());
    const missing = 'b'.repeat(64);
    const unknown = 'c'.repeat(64);
    // Pins of puts that died before storing their bytes (or their metadata), lapsed since.
    for (const sha256 of [stored.sha256, missing, unknown]) await h.repo.pinBlob(sha256, T0 + 1000, T0, T0 - 60_000);
    h.clock.t += 2000;
    const blobs: BlobStore = {
      ...h.blobs,
      async exists(sha256) {
        if (sha256 === unknown) throw new TypeError('fetch failed');
        return h.blobs.exists(sha256);
      },
    };
    const report = await h.runPhase(removeUnfinishedBlobRows, { blobs, batchSize: 1 });
    expect(report.unfinished).toEqual({ rows: 1, checkFailed: 1 });
    untouchedApartFrom(report, 'unfinished');
    expect(h.column('SELECT sha256 FROM blobs ORDER BY sha256')).toEqual([stored.sha256, unknown].sort());
    expect(await h.blobs.exists(stored.sha256)).toBe(true);
    expect(h.logged()).toEqual([
      expect.objectContaining({
        level: 'warn',
        phase: 'unfinished',
        sha256: unknown,
        error: 'TypeError: fetch failed',
      }),
    ]);
  });
});

describe('phase blobs', () => {
  it('collects unheld blobs past the grace period; leaves held, pinned and young ones; counts, logs and unmarks a failed delete', async () => {
    const h = await open();
    h.clock.t += 1000;
    await h.put({ tenantId: 'acme', sessionId: 's1' }, 1);
    const heldSha = h.column('SELECT sha256 FROM artifacts')[0] as string;
    const collectable = await h.orphan(3 * KiB);
    const failing = await h.orphan();
    const pinned = await h.orphan();
    await h.repo.pinBlob(pinned, h.clock.t + DAY, h.clock.t, h.clock.t - 60_000);
    h.clock.t += 120_000;
    const young = await h.orphan();
    const blobs: BlobStore = {
      ...h.blobs,
      async delete(sha256) {
        if (sha256 === failing) throw new Error('disk gone');
        return h.blobs.delete(sha256);
      },
    };
    const report = await h.runPhase(collectBlobs, { blobs, graceMs: 60_000, batchSize: 2 });
    expect(report.blobs).toEqual({ collected: 1, bytes: 3 * KiB, failed: 1 });
    untouchedApartFrom(report, 'blobs');
    expect(h.column('SELECT sha256 FROM blobs ORDER BY sha256')).toEqual([heldSha, failing, pinned, young].sort());
    expect(h.count('SELECT count(*) AS n FROM blobs WHERE doomed_at IS NOT NULL')).toBe(0);
    expect(await h.blobs.exists(collectable)).toBe(false);
    for (const sha256 of [heldSha, failing, pinned, young]) expect(await h.blobs.exists(sha256)).toBe(true);
    expect(h.logged()).toEqual([
      expect.objectContaining({ level: 'warn', phase: 'blobs', sha256: failing, error: 'Error: disk gone' }),
    ]);
  });
});

describe('phase staging', () => {
  it('sweeps staging leftovers older than the grace period, and does nothing on a store without staging', async () => {
    const h = await open();
    const tmp = join(h.dir, 'blobs', 'tmp');
    await mkdir(tmp, { recursive: true });
    await writeFile(join(tmp, 'dead.part'), randomBytes(500));
    await writeFile(join(tmp, 'live.part'), randomBytes(10));
    const hourAgo = new Date(Date.now() - 3_600_000);
    await utimes(join(tmp, 'dead.part'), hourAgo, hourAgo);
    const { sweepStaging: _, ...withoutStaging } = h.blobs;
    const none = await h.runPhase(sweepStaging, { blobs: withoutStaging, graceMs: 60_000 });
    untouchedApartFrom(none);
    expect((await readdir(tmp)).sort()).toEqual(['dead.part', 'live.part']);

    const report = await h.runPhase(sweepStaging, { graceMs: 60_000 });
    expect(report.staging).toEqual({ removed: 1, bytes: 500 });
    untouchedApartFrom(report, 'staging');
    expect(await readdir(tmp)).toEqual(['live.part']);
  });
});

describe('phases events and audit', () => {
  it('trim outbox events older than a day, and audit entries past their keeping time, from the oldest end', async () => {
    const h = await open();
    for (const at of [T0 - EVENTS_KEPT_MS - 3, T0 - EVENTS_KEPT_MS - 2, T0 - EVENTS_KEPT_MS - 1, T0 - 1000]) {
      await h.repo.appendEvent({ tenantId: 'acme', type: 'resource.updated', subject: 'x', scope: {}, data: {}, at });
    }
    const events = await h.runPhase(trimEvents, { batchSize: 2 });
    expect(events.events).toEqual({ trimmed: 3 });
    untouchedApartFrom(events, 'events');
    expect(h.column('SELECT created_at FROM outbox')).toEqual([T0 - 1000]);

    for (const at of [T0 - 91 * DAY, T0 - 30 * DAY]) {
      await h.repo.recordAudit({
        at,
        tenantId: '',
        action: 'retention.run',
        role: 'scheduler',
        actorKind: 'scheduler',
        actorId: 'test',
        target: null,
        details: null,
        requestId: null,
      });
    }
    // 90 days unless told otherwise.
    const audit = await h.runPhase(trimAudit);
    expect(audit.audit).toEqual({ trimmed: 1 });
    untouchedApartFrom(audit, 'audit');
    expect(h.column('SELECT at FROM audit_log')).toEqual([T0 - 30 * DAY]);
    expect((await h.runPhase(trimAudit, { auditKeptMs: 7 * DAY })).audit).toEqual({ trimmed: 1 });
    expect(h.column('SELECT at FROM audit_log')).toEqual([]);
  });
});

describe('removeMarkedBlobs (the collection and purge)', () => {
  it('deletes the marked bytes and drops their rows; a failed delete is returned with its error, logged and unmarked', async () => {
    const h = await open();
    const shas = [await h.orphan(), await h.orphan(2 * KiB), await h.orphan()];
    h.clock.t += 1000;
    const markedAt = h.clock.t;
    const { marked } = await h.repo.markBlobsForCollection(markedAt, markedAt, markedAt - STALE_COLLECTION_MS, '', 10);
    expect(marked.map((b) => b.sha256).sort()).toEqual([...shas].sort());
    const failure = new Error('throttled');
    const lines: string[] = [];
    const removal = await removeMarkedBlobs(
      {
        repo: h.repo,
        blobs: { delete: async (sha256) => (sha256 === shas[1] ? Promise.reject(failure) : h.blobs.delete(sha256)) },
        logger: createJsonLogger('warn', (line) => lines.push(line)),
        logFields: { phase: 'purge' },
      },
      marked,
      markedAt,
    );
    expect(removal.collected.map((b) => b.sha256).sort()).toEqual([shas[0], shas[2]].sort());
    expect(removal.failed).toEqual([{ blob: { sha256: shas[1], sizeBytes: 2 * KiB }, error: failure }]);
    expect(h.column('SELECT sha256 FROM blobs')).toEqual([shas[1]]);
    expect(h.count('SELECT count(*) AS n FROM blobs WHERE doomed_at IS NOT NULL')).toBe(0);
    expect(await h.blobs.exists(shas[1]!)).toBe(true);
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({ level: 'warn', phase: 'purge', sha256: shas[1], error: 'Error: throttled' }),
    ]);
  });

  it('leaves the rows marked when it stops before writing them, and a collection after STALE_COLLECTION_MS finishes them', async () => {
    const h = await open();
    const shas = [await h.orphan(), await h.orphan()];
    h.clock.t += 1000;
    const markedAt = h.clock.t;
    const { marked } = await h.repo.markBlobsForCollection(markedAt, markedAt, markedAt - STALE_COLLECTION_MS, '', 10);
    const stopped = new Error('the process died here');
    await expect(
      removeMarkedBlobs(
        { repo: h.repo, blobs: h.blobs, afterDeletes: () => Promise.reject(stopped) },
        marked,
        markedAt,
      ),
    ).rejects.toBe(stopped);
    expect(h.count(`SELECT count(*) AS n FROM blobs WHERE doomed_at = ${markedAt}`)).toBe(2);
    for (const sha256 of shas) expect(await h.blobs.exists(sha256)).toBe(false);

    // Within STALE_COLLECTION_MS another collection leaves them to the one that marked them.
    h.clock.t += STALE_COLLECTION_MS - 1000;
    expect((await h.runPhase(collectBlobs)).blobs.collected).toBe(0);
    h.clock.t += 2000;
    expect((await h.runPhase(collectBlobs)).blobs).toEqual({ collected: 2, bytes: 2 * KiB, failed: 0 });
    expect(h.count('SELECT count(*) AS n FROM blobs')).toBe(0);
  });
});

describe('the run', () => {
  it('runs the phases in the order of its table', () => {
    expect(PHASES.map((p) => p.name)).toEqual([
      'expire',
      'quotas',
      'artifacts',
      'uploads',
      'unfinished',
      'blobs',
      'staging',
      'events',
      'audit',
    ]);
  });

  it('logs a failed blob delete with the sha256 and its cause, and goes on', async () => {
    const h = await open();
    h.clock.t += 1000;
    const sha256 = await h.orphan();
    h.clock.t += 1000;
    const blobs: BlobStore = { ...h.blobs, delete: () => Promise.reject(new RangeError('bucket is read-only')) };
    const report = await runRetention(h.deps({ blobs }), 'test');
    expect(report.blobs).toEqual({ collected: 0, bytes: 0, failed: 1 });
    expect(report.finishedAt).not.toBe('');
    expect(h.logged()).toEqual([
      expect.objectContaining({ level: 'warn', phase: 'blobs', sha256, error: 'RangeError: bucket is read-only' }),
    ]);
    expect(await h.repo.retentionRuns(10)).toHaveLength(1);
  });

  it('stops at a phase that throws, logs which and why, and rethrows; no run is recorded', async () => {
    const h = await open();
    const failure = new Error('staging listing refused');
    const blobs: BlobStore = { ...h.blobs, sweepStaging: () => Promise.reject(failure) };
    await expect(runRetention(h.deps({ blobs }), 'test')).rejects.toBe(failure);
    expect(h.logged()).toEqual([
      expect.objectContaining({ level: 'warn', phase: 'staging', error: 'Error: staging listing refused' }),
    ]);
    expect(await h.repo.retentionRuns(10)).toEqual([]);
  });
});
