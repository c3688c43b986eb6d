import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import type { BlobPutOptions } from '../src/blob/blob-store.js';
import { createFsBlobStore } from '../src/blob/fs.js';
import { nodeSha256 } from '../src/blob/node-hash.js';
import { loadConfig } from '../src/core/config.js';
import { createJsonLogger } from '../src/core/logger.js';
import { errors } from '../src/core/errors.js';
import { createPolicies } from '../src/core/policy.js';
import type { ArtifactScope } from '../src/core/schemas.js';
import { UNFINISHED_BLOB_ROWS_SQL } from '../src/db/blob-sql.js';
import { createSqliteRepository } from '../src/db/sqlite.js';
import { startServer } from '../src/node.js';
import { createArtifactService, type ArtifactService } from '../src/service/artifact-service.js';
import { runRetention } from '../src/service/retention/index.js';
import { fsck } from '../src/service/fsck.js';
import { issueApiKey } from '../src/service/api-keys.js';
import { CLI_ARGS, ROOT } from './helpers/cli-server.js';
import { TEST_POLICY } from './helpers/policy.js';
import { gate, retentionHarness } from './helpers/retention-harness.js';

// How a run paces itself (batch sizes, pause, busy) is timed, so those tests are apart in
// retention-pacing.test.ts, which runs with the machine to itself.
const T0 = Date.parse('2030-01-01T00:00:00.000Z');
const KiB = 1024;
const BASE = TEST_POLICY;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'artifact-retention-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function putMany(
  service: ArtifactService,
  clock: { t: number },
  scope: ArtifactScope,
  n: number,
  ttl?: number,
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    clock.t += 1000;
    ids.push((await service.putBytes(scope, randomBytes(KiB), ttl ? { ttl } : {})).ref.id);
  }
  return ids;
}

describe('retention run', () => {
  it('expires references past their TTL, with artifact.expired, in batches, and is idempotent', async () => {
    const h = await retentionHarness();
    const short = await putMany(h.service, h.clock, { tenantId: 'acme', sessionId: 's1' }, 7, 5);
    const kept = await putMany(h.service, h.clock, { tenantId: 'acme', sessionId: 's1' }, 2);
    h.clock.t += 60_000;
    const report = await h.retention({}, {}, { batchSize: 3 });
    expect(report.expired).toEqual({ refs: 7, bytes: 7 * KiB });
    expect(h.events('artifact.expired').sort()).toEqual(short.sort());
    // The artifacts went with their last reference.
    expect(h.count('SELECT count(*) AS n FROM artifacts')).toBe(2);
    expect(h.count('SELECT count(*) AS n FROM artifact_refs')).toBe(2);
    expect(
      (await h.service.list({ tenantId: 'acme', filter: {} }, { limit: 100 })).items.map((r) => r.id).sort(),
    ).toEqual(kept.sort());

    const again = await h.retention();
    expect(again.expired.refs).toBe(0);
    expect(again.evicted.refs).toBe(0);
    // Both runs are kept as history, newest first.
    const runs = await h.repo.retentionRuns(10);
    expect(runs).toHaveLength(2);
    expect((runs[1]!.report as { expired: { refs: number } }).expired.refs).toBe(7);
  });

  it('an artifact another scope still holds stays when one scope expires', async () => {
    const h = await retentionHarness();
    const bytes = randomBytes(KiB);
    h.clock.t += 1000;
    const { ref } = await h.service.putBytes({ tenantId: 'acme', sessionId: 'brief' }, bytes, { ttl: 5 });
    await h.service.putBytes({ tenantId: 'acme', sessionId: 'long' }, bytes);
    h.clock.t += 60_000;
    expect((await h.retention()).expired.refs).toBe(1);
    expect(h.count('SELECT count(*) AS n FROM artifacts')).toBe(1);
    expect((await h.service.getRef({ tenantId: 'acme', filter: { sessionId: 'long' } }, ref.id))?.id).toBe(ref.id);
  });

  it('brings sessions and traces over lowered limits back within them: lru evicts, reject keeps and reports', async () => {
    const h = await retentionHarness();
    const s1 = await putMany(h.service, h.clock, { tenantId: 'acme', sessionId: 's1' }, 5);
    const t1 = await putMany(h.service, h.clock, { tenantId: 'acme', sessionId: 's2', traceId: 't1' }, 4);
    // Read the oldest of s1: under lru it is then among the most recently used.
    h.clock.t += 1000;
    await new Response(
      (await h.service.getStream({ tenantId: 'acme', filter: { sessionId: 's1' } }, s1[0]!)).body,
    ).arrayBuffer();
    await h.service.flush();

    const kept = await h.retention({
      maxArtifactsPerSession: 100,
      maxArtifactsPerTrace: 100,
      cleanupStrategy: 'reject',
    });
    expect(kept.evicted.refs).toBe(0);
    expect(kept.overLimitKept.scopes).toBe(0);
    const none = await h.retention({ maxArtifactsPerSession: 2, maxArtifactsPerTrace: 3, cleanupStrategy: 'reject' });
    expect(none.evicted.refs).toBe(0);
    // s1 (5 > 2), s2 (4 > 2) and t1 (4 > 3) are over, and kept.
    expect(none.overLimitKept.scopes).toBe(3);
    // Scopes are looked for a window of references at a time: with windows of one reference, each
    // scope is still summed whole and counted once.
    const narrow = await h.retention(
      { maxArtifactsPerSession: 2, maxArtifactsPerTrace: 3, cleanupStrategy: 'reject' },
      {},
      { batchSize: 1 },
    );
    expect(narrow.overLimitKept.scopes).toBe(3);

    const lru = await h.retention({ maxArtifactsPerSession: 2, maxArtifactsPerTrace: 3 });
    expect(lru.evicted.scopes).toBe(2);
    const left = (await h.service.list({ tenantId: 'acme', filter: { sessionId: 's1' } }, { limit: 100 })).items
      .map((r) => r.id)
      .sort();
    expect(left).toEqual([s1[0], s1[4]].sort());
    const s2 = (await h.service.list({ tenantId: 'acme', filter: { sessionId: 's2' } }, { limit: 100 })).items
      .map((r) => r.id)
      .sort();
    expect(s2).toEqual([t1[2], t1[3]].sort());
    expect(h.events('artifact.evicted')).toHaveLength(3 + 2);
    expect((await h.retention({ maxArtifactsPerSession: 2, maxArtifactsPerTrace: 3 })).evicted.refs).toBe(0);
  });

  it("applies each tenant's own limits", async () => {
    const h = await retentionHarness();
    await putMany(h.service, h.clock, { tenantId: 'tight', sessionId: 's' }, 3);
    await putMany(h.service, h.clock, { tenantId: 'roomy', sessionId: 's' }, 3);
    const report = await h.retention({}, { tight: { maxArtifactsPerSession: 1 } });
    expect(report.evicted).toEqual({ refs: 2, bytes: 2 * KiB, scopes: 1 });
    expect((await h.service.list({ tenantId: 'roomy', filter: {} }, { limit: 10 })).items).toHaveLength(3);
  });

  it('drops artifacts that no reference holds', async () => {
    const h = await retentionHarness();
    h.db
      .prepare(
        "INSERT INTO artifacts (tenant_id, id, namespace, sha256, size_bytes, created_at) VALUES ('acme', 'art_000000000000000000000000', 'art', ?, 1, 0)",
      )
      .run('0'.repeat(64));
    expect((await h.retention()).unreferencedArtifacts).toBe(1);
    expect(h.count('SELECT count(*) AS n FROM artifacts')).toBe(0);
  });
});

describe('blob garbage collection', () => {
  it('collects the bytes no artifact holds once the grace period is over, and keeps shared ones', async () => {
    const h = await retentionHarness();
    const shared = randomBytes(KiB);
    h.clock.t += 1000;
    const gone = await h.service.putBytes({ tenantId: 'acme', sessionId: 's1' }, randomBytes(3 * KiB));
    const a = await h.service.putBytes({ tenantId: 'acme', sessionId: 's1' }, shared);
    await h.service.putBytes({ tenantId: 'other', sessionId: 's9' }, shared);
    await h.service.delete({ tenantId: 'acme', filter: {} }, gone.ref.id);
    await h.service.delete({ tenantId: 'acme', filter: {} }, a.ref.id);
    expect(await h.blobFiles()).toBe(2);

    // Within the grace period (60 s here) nothing goes: a put may still be committing those bytes.
    h.clock.t += 30_000;
    expect((await h.retention({}, {}, { graceMs: 60_000 })).blobs.collected).toBe(0);
    h.clock.t += 60_000;
    const report = await h.retention({}, {}, { graceMs: 60_000 });
    // Only the unshared blob: the other tenant still holds the shared bytes.
    expect(report.blobs).toEqual({ collected: 1, bytes: 3 * KiB, failed: 0 });
    expect(await h.blobFiles()).toBe(1);
    expect(h.count('SELECT count(*) AS n FROM blobs')).toBe(1);
    expect((await h.retention({}, {}, { graceMs: 60_000 })).blobs.collected).toBe(0);
  });

  it('a put paused between its blob commit and its DB commit keeps its bytes while GC runs', async () => {
    let pause: ReturnType<typeof gate> | undefined;
    const h = await retentionHarness(async (point) => {
      if (point === 'put:after-blob-commit' && pause) await pause.hold();
    });
    const bytes = randomBytes(2 * KiB);
    h.clock.t += 1000;
    const first = await h.service.putBytes({ tenantId: 'acme', sessionId: 's1' }, bytes);
    await h.service.delete({ tenantId: 'acme', filter: {} }, first.ref.id);
    h.clock.t += 3_600_000;

    // The same bytes again: hashed, pinned and committed, then held before the metadata commit.
    pause = gate();
    const putting = h.service.putBytes({ tenantId: 'acme', sessionId: 's2' }, bytes);
    await pause.reached;
    const report = await h.retention({}, {}, { graceMs: 60_000 });
    expect(report.blobs.collected).toBe(0);
    pause.release();
    const { ref } = await putting;
    const { body } = await h.service.getStream({ tenantId: 'acme', filter: { sessionId: 's2' } }, ref.id);
    expect(Buffer.from(await new Response(body).arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('a put of bytes GC is collecting waits for it to finish, then stores its own copy', async () => {
    const h = await retentionHarness();
    const bytes = randomBytes(2 * KiB);
    h.clock.t += 1000;
    const first = await h.service.putBytes({ tenantId: 'acme', sessionId: 's1' }, bytes);
    await h.service.delete({ tenantId: 'acme', filter: {} }, first.ref.id);
    h.clock.t += 3_600_000;

    const marked = gate();
    const collecting = h.retention(
      {},
      {},
      { graceMs: 60_000, faults: async (point) => (point === 'gc:after-mark' ? marked.hold() : undefined) },
    );
    await marked.reached;
    // GC has marked the blob and not yet deleted it: this put must not rely on the bytes it sees.
    let settled = false;
    const putting = h.service.putBytes({ tenantId: 'acme', sessionId: 's2' }, bytes).finally(() => (settled = true));
    await new Promise((r) => setTimeout(r, 300));
    expect(settled).toBe(false);
    marked.release();
    expect((await collecting).blobs.collected).toBe(1);
    const { ref } = await putting;
    const { body } = await h.service.getStream({ tenantId: 'acme', filter: { sessionId: 's2' } }, ref.id);
    expect(Buffer.from(await new Response(body).arrayBuffer()).equals(bytes)).toBe(true);
    expect(await h.blobFiles()).toBe(1);
  });

  it('sweeps staging leftovers older than the grace period, not a put in progress', async () => {
    const h = await retentionHarness();
    const tmp = join(h.dir, 'blobs', 'tmp');
    await mkdir(tmp, { recursive: true });
    await writeFile(join(tmp, 'dead.part'), randomBytes(500));
    await writeFile(join(tmp, 'live.part'), randomBytes(10));
    const hourAgo = new Date(Date.now() - 3_600_000);
    await utimes(join(tmp, 'dead.part'), hourAgo, hourAgo);
    const report = await h.retention({}, {}, { graceMs: 60_000 });
    expect(report.staging).toEqual({ removed: 1, bytes: 500 });
    expect(await readdir(tmp)).toEqual(['live.part']);
  });
});

describe('a blob store outage', () => {
  it('leaves no row fsck calls a problem once one default retention run has seen the store back', async () => {
    const dir = await tempDir();
    const repo = createSqliteRepository({ path: join(dir, 'artifacts.db') });
    const fs = createFsBlobStore({ root: join(dir, 'blobs'), hash: nodeSha256, fsync: false });
    // The store, down until told otherwise: every call fails as an unreachable backend does. A put
    // that declares its sha256 pins it before the first byte goes out, as the S3 driver's does.
    let down = true;
    const unavailable = () =>
      errors.backendUnavailable('Blob storage failed: the backend is unreachable (ECONNREFUSED). Retry shortly.');
    const blobs: typeof fs = new Proxy(fs, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver) as unknown;
        if (typeof value !== 'function' || key === 'driver') return value;
        const fail = async (args: unknown[]) => {
          const options = args[1] as BlobPutOptions | undefined;
          if (key === 'put' && options?.expectedSha256)
            await options.beforeCommit?.({ sha256: options.expectedSha256 });
          if (key === 'put') await (args[0] as ReadableStream).cancel().catch(() => {});
          throw unavailable();
        };
        return (...args: unknown[]) =>
          down ? fail(args) : (value as (...a: unknown[]) => unknown).apply(target, args);
      },
    });
    const service = createArtifactService({ repo, blobs, limits: { ...BASE, touchFlushMs: 0 } });
    cleanups.push(async () => {
      await service.close();
      await repo.close();
    });
    // Puts that declared their sha256 pin it (and make its row) before the first byte goes out.
    for (let i = 0; i < 5; i++) {
      const bytes = new TextEncoder().encode(`outage ${i}`);
      await expect(
        service.putBytes({ tenantId: 'acme' }, bytes, { sha256: createHash('sha256').update(bytes).digest('hex') }),
      ).rejects.toMatchObject({ code: 'backend_unavailable' });
    }
    await expect(service.putText({ tenantId: 'acme' }, 'no hash declared')).rejects.toMatchObject({
      code: 'backend_unavailable',
    });
    expect((await repo.blobRows('', 100, Date.now())).length).toBe(5);

    down = false;
    const before = await fsck({ repo, blobs, hash: nodeSha256, graceMs: 3_600_000 });
    expect(before.problems.map((p) => p.kind)).toEqual([
      'stale_row',
      'stale_row',
      'stale_row',
      'stale_row',
      'stale_row',
    ]);
    // A default run: the GC grace period of an hour has not passed for these rows.
    const report = await runRetention({ repo, blobs, policies: createPolicies(BASE), graceMs: 3_600_000 }, 'test');
    expect(report.unfinished).toEqual({ rows: 5, checkFailed: 0 });
    const after = await fsck({ repo, blobs, hash: nodeSha256, graceMs: 3_600_000 });
    expect(after).toMatchObject({ problems: [], unresolved: 0 });
    // And the same bytes put again now are stored as usual.
    const bytes = new TextEncoder().encode('outage 0');
    const ok = await service.putBytes({ tenantId: 'acme' }, bytes, {
      sha256: createHash('sha256').update(bytes).digest('hex'),
    });
    expect(ok.created).toBe(true);
  });

  it('a put that fails after pinning, with the store answering, removes its own row at once', async () => {
    const dir = await tempDir();
    const repo = createSqliteRepository({ path: join(dir, 'artifacts.db') });
    const fs = createFsBlobStore({ root: join(dir, 'blobs'), hash: nodeSha256, fsync: false });
    // Uploads fail after the pin (a throttled multipart upload, say); everything else answers.
    const blobs: typeof fs = {
      ...fs,
      async put(body, options) {
        if (options?.expectedSha256) await options.beforeCommit?.({ sha256: options.expectedSha256 });
        await body.cancel().catch(() => {});
        throw errors.backendUnavailable('Blob storage is throttling (SlowDown). Retry shortly.');
      },
    };
    const service = createArtifactService({ repo, blobs, limits: { ...BASE, touchFlushMs: 0 } });
    cleanups.push(async () => {
      await service.close();
      await repo.close();
    });
    const bytes = new TextEncoder().encode('throttled');
    await expect(
      service.putBytes({ tenantId: 'acme' }, bytes, { sha256: createHash('sha256').update(bytes).digest('hex') }),
    ).rejects.toMatchObject({ code: 'backend_unavailable' });
    expect(await repo.blobRows('', 100, Date.now())).toEqual([]);
    expect((await fsck({ repo, blobs: fs, hash: nodeSha256, graceMs: 0 })).problems).toEqual([]);
  });
});

describe('retention and the event loop', () => {
  it('gives the event loop a turn after every transaction (repository calls on SQLite finish synchronously)', async () => {
    const h = await retentionHarness();
    await putMany(h.service, h.clock, { tenantId: 'acme', sessionId: 's1' }, 12, 5);
    h.clock.t += 60_000;
    let turns = 0;
    let running = true;
    const ticker = (async () => {
      while (running) {
        turns++;
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const seen: { phase: string; turns: number }[] = [];
    const report = await h.retention({}, {}, { batchSize: 2, onProgress: (phase) => seen.push({ phase, turns }) });
    running = false;
    await ticker;
    expect(report.expired.refs).toBe(12);
    expect(report.blobs.collected).toBe(12);
    const expire = seen.filter((p) => p.phase === 'expire');
    const blobs = seen.filter((p) => p.phase === 'blobs');
    expect(expire).toHaveLength(7);
    // Six windows of two blob rows, and a seventh that finds the table's end.
    expect(blobs).toHaveLength(7);
    // Other work ran between each transaction and the next.
    for (const phase of [expire, blobs]) {
      for (let i = 1; i < phase.length; i++) expect(phase[i]!.turns).toBeGreaterThan(phase[i - 1]!.turns);
    }
  });

  it('deletes a batch of blobs several at a time, at most 16, and still counts each failure', async () => {
    const h = await retentionHarness();
    await putMany(h.service, h.clock, { tenantId: 'acme', sessionId: 's1' }, 40, 5);
    h.clock.t += 60_000;
    let inFlight = 0;
    let most = 0;
    let calls = 0;
    const counting = Object.create(h.blobs) as typeof h.blobs;
    counting.delete = async (sha256) => {
      const failing = ++calls % 10 === 0;
      most = Math.max(most, ++inFlight);
      await new Promise((resolve) => setTimeout(resolve, 2));
      inFlight--;
      if (failing) throw new Error('backend down');
      return h.blobs.delete(sha256);
    };
    const report = await runRetention(
      { repo: h.repo, blobs: counting, policies: createPolicies(BASE), now: () => h.clock.t, graceMs: 0 },
      'test',
    );
    expect(most).toBe(16);
    expect(report.blobs).toMatchObject({ collected: 36, failed: 4 });
    // The failed ones are unmarked and kept for the next run; the rest are gone.
    expect(h.count('SELECT count(*) AS n FROM blobs')).toBe(4);
    expect(h.count('SELECT count(*) AS n FROM blobs WHERE doomed_at IS NOT NULL')).toBe(0);
    expect(await h.blobFiles()).toBe(4);
  });

  it('finds unfinished blob rows through an index of those rows alone, and trims events and audit from the front', async () => {
    const h = await retentionHarness();
    // Every stored put's row leaves the partial index; the statement searches it, never the table.
    await putMany(h.service, h.clock, { tenantId: 'acme', sessionId: 's1' }, 3);
    const plan = (
      h.db.prepare(`EXPLAIN QUERY PLAN ${UNFINISHED_BLOB_ROWS_SQL}`).all({ now: T0, after: '', limit: 10 }) as {
        detail: string;
      }[]
    ).map((r) => r.detail);
    expect(plan[0]).toBe('SEARCH b USING INDEX blobs_unfinished (sha256>?)');
    expect(plan.filter((d) => d.startsWith('SCAN'))).toEqual([]);
    const indexed = () => h.count('SELECT count(*) AS n FROM blobs INDEXED BY blobs_unfinished WHERE size_bytes = 0');
    expect(indexed()).toBe(0);
    expect(h.count('SELECT count(*) AS n FROM blobs')).toBe(3);
    // A pin whose put never stored the bytes: the one row in the index, found once its pin lapsed.
    const sha = 'ab'.repeat(32);
    await h.repo.pinBlob(sha, h.clock.t + 1000, h.clock.t, h.clock.t - 60_000);
    expect(indexed()).toBe(1);
    expect(await h.repo.unfinishedBlobRows(h.clock.t + 2000, '', 10)).toEqual([sha]);

    // Events: of the `limit` oldest, those older than the cut. One out of time order (created at 4,
    // behind one at 10) waits until those before it have gone.
    const firstSeq = (await h.repo.lastEventSeq()) + 1;
    for (const at of [1, 2, 3, 10, 4, 11]) {
      await h.repo.appendEvent({ tenantId: 'acme', type: 'resource.updated', subject: 'x', scope: {}, data: {}, at });
    }
    await h.db.prepare('DELETE FROM outbox WHERE seq < ?').run(firstSeq);
    expect(await h.repo.trimEvents(5, 2)).toBe(2);
    expect(await h.repo.trimEvents(5, 2)).toBe(1);
    const left = () =>
      (h.db.prepare('SELECT created_at AS at FROM outbox ORDER BY seq').all() as { at: number }[]).map((r) => r.at);
    expect(left()).toEqual([10, 4, 11]);
    expect(await h.repo.trimEvents(12, 2)).toBe(2);
    expect(left()).toEqual([11]);

    // The audit trail the same way.
    h.db.prepare('DELETE FROM audit_log').run();
    for (const at of [1, 10, 2]) {
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
    expect(await h.repo.trimAudit(5, 2)).toBe(1);
    expect((h.db.prepare('SELECT at FROM audit_log ORDER BY seq').all() as { at: number }[]).map((r) => r.at)).toEqual([
      10, 2,
    ]);
  });
});

describe('retention triggers', () => {
  it('POST /v1/admin/retention runs it for operators and is 403 for tenants, their admins included; the schedule runs it too; each run is audited', {
    timeout: 30_000,
  }, async () => {
    const dataDir = await tempDir();
    const server = await startServer(
      loadConfig({}, { port: 0, dataDir, env: 'test', logLevel: 'silent', retentionIntervalSeconds: 1 }),
    );
    cleanups.push(() => server.close());
    const { id: operatorId, key: operator } = await issueApiKey(server.repo, { operator: true });
    const tenantAdmin = await server.mintToken({ tenant: 'acme', perms: ['read', 'write', 'admin'] });
    const writer = await server.mintToken({ tenant: 'acme', perms: ['read', 'write'] });
    const put = await fetch(`${server.url}/v1/artifacts?ttl=1`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${writer}`, 'Content-Type': 'text/plain' },
      body: 'brief',
    });
    expect(put.status).toBe(201);

    for (const token of [writer, tenantAdmin]) {
      const denied = await fetch(`${server.url}/v1/admin/retention`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}` },
      });
      expect(denied.status).toBe(403);
      expect(((await denied.json()) as { code: string }).code).toBe('forbidden');
    }

    await new Promise((r) => setTimeout(r, 1100));
    const res = await fetch(`${server.url}/v1/admin/retention`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${operator}`, 'X-Request-Id': 'run-by-oncall' },
    });
    expect(res.status).toBe(200);
    const report = (await res.json()) as { trigger: string; expired: { refs: number }; blobs: { collected: number } };
    expect(report.trigger).toBe('http');
    const [audited] = await server.repo
      .listAudit({ action: 'retention.run', limit: 100 })
      .then((all) => all.filter((e) => e.role === 'operator'));
    expect(audited).toMatchObject({
      tenantId: '',
      role: 'operator',
      actorKind: 'api_key',
      actorId: operatorId,
      requestId: 'run-by-oncall',
      details: { trigger: 'http' },
    });
    // The schedule may have expired it first; between the two runs it went exactly once.
    const runs = await server.repo.retentionRuns(100);
    expect(runs.reduce((sum, r) => sum + (r.report as { expired: { refs: number } }).expired.refs, 0)).toBe(1);

    // The in-process schedule (every second here) records its own runs.
    const deadline = Date.now() + 10_000;
    while (!(await server.repo.retentionRuns(100)).some((r) => r.trigger === 'schedule') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    expect((await server.repo.retentionRuns(100)).some((r) => r.trigger === 'schedule')).toBe(true);
    expect(
      (await server.repo.listAudit({ action: 'retention.run', limit: 100 })).some(
        (e) => e.role === 'scheduler' && e.actorId === 'schedule',
      ),
    ).toBe(true);
  });

  it('runs every 10 minutes by default; 0 turns it off', () => {
    expect(loadConfig({}).retentionIntervalSeconds).toBe(600);
    expect(loadConfig({ ARTIFACT_STORE_RETENTION_INTERVAL_SECONDS: '0' }).retentionIntervalSeconds).toBe(0);
  });

  it('the retention lease: taken when free, renewed by its holder, refused to others until it lapses or is given up', async () => {
    const repo = createSqliteRepository({ path: join(await tempDir(), 'artifacts.db') });
    cleanups.push(() => repo.close());
    expect(await repo.claimLease('retention', 'a', 2000, 1000)).toBe(true);
    expect(await repo.claimLease('retention', 'b', 2500, 1500)).toBe(false);
    expect(await repo.claimLease('retention', 'a', 3000, 1900)).toBe(true); // renewed until 3000
    expect(await repo.claimLease('retention', 'b', 3500, 2500)).toBe(false);
    expect(await repo.claimLease('retention', 'b', 4000, 3000)).toBe(true); // lapsed
    await repo.releaseLease('retention', 'a'); // not a's any more: nothing happens
    expect(await repo.claimLease('retention', 'a', 4500, 3100)).toBe(false);
    await repo.releaseLease('retention', 'b');
    expect(await repo.claimLease('retention', 'a', 4500, 3100)).toBe(true);
  });

  it('two services on one database: one runs the schedule, the other takes over when it stops', {
    timeout: 60_000,
  }, async () => {
    const dataDir = await tempDir();
    const start = async () => {
      const runs: string[] = [];
      const logger = createJsonLogger('info', (line) => {
        const { msg, trigger } = JSON.parse(line) as { msg: string; trigger?: string };
        if (msg === 'retention run' && trigger === 'schedule') runs.push(line);
      });
      const config = loadConfig({}, { port: 0, dataDir, env: 'test', retentionIntervalSeconds: 1 });
      return { server: await startServer(config, { logger }), runs };
    };
    const first = await start();
    const second = await start();
    cleanups.push(() => second.server.close());
    const waitFor = async (done: () => boolean) => {
      while (!done()) await new Promise((r) => setTimeout(r, 100));
    };
    await waitFor(() => first.runs.length + second.runs.length >= 4);
    const [leader, other] = first.runs.length > 0 ? [first, second] : [second, first];
    expect(other.runs).toEqual([]);
    expect(leader.runs.length).toBeGreaterThanOrEqual(4);

    // Closing gives the lease up: the other one's next tick takes it.
    await leader.server.close();
    const before = leader.runs.length;
    await waitFor(() => other.runs.length >= 2);
    expect(leader.runs.length).toBe(before);
    const scheduled = (await other.server.repo.retentionRuns(100)).filter((r) => r.trigger === 'schedule');
    expect(scheduled.length).toBe(before + other.runs.length);
  });

  it('artifact-store retention run: the CLI prints the report (and JSON with --json)', {
    timeout: 60_000,
  }, async () => {
    const dataDir = await tempDir();
    const repo = createSqliteRepository({ path: join(dataDir, 'artifacts.db') });
    const blobs = createFsBlobStore({ root: join(dataDir, 'blobs'), hash: nodeSha256, fsync: false });
    const past = Date.now() - 3_600_000;
    const service = createArtifactService({ repo, blobs, limits: { ...BASE, touchFlushMs: 0 }, now: () => past });
    for (let i = 0; i < 3; i++) await service.putText({ tenantId: 'acme' }, `old ${i}`, { ttl: 60 });
    await service.close();
    await repo.close();

    const env = {
      ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ARTIFACT_STORE_'))),
    };
    const run = promisify(execFile);
    const json = await run(process.execPath, [...CLI_ARGS, 'retention', 'run', '--data-dir', dataDir, '--json'], {
      cwd: ROOT,
      env,
    });
    expect((JSON.parse(json.stdout) as { expired: { refs: number } }).expired.refs).toBe(3);
    const text = await run(process.execPath, [...CLI_ARGS, 'retention', 'run', '--data-dir', dataDir], {
      cwd: ROOT,
      env,
    });
    expect(text.stdout).toMatch(/expired references\s+0 \(0 bytes\)/);
    expect(text.stdout).toMatch(/retention run \d{4}-/);
  });
});

describe('usage', () => {
  it("GET /v1/usage: a tenant token sees its sessions and traces against the limits, a session token its session, a tenant's admin its tenant, operators every tenant", {
    timeout: 30_000,
  }, async () => {
    const dataDir = await tempDir();
    const server = await startServer(
      loadConfig(
        { ARTIFACT_STORE_MAX_ARTIFACTS_PER_SESSION: '10' },
        { port: 0, dataDir, env: 'test', logLevel: 'silent' },
      ),
    );
    cleanups.push(() => server.close());
    const put = async (tenant: string, session: string, trace: string | undefined, bytes: number) => {
      const token = await server.mintToken({
        tenant,
        sub: 'u',
        session,
        ...(trace ? { trace } : {}),
        perms: ['write'],
      });
      const res = await fetch(`${server.url}/v1/artifacts`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/octet-stream' },
        body: new Uint8Array(randomBytes(bytes)),
      });
      expect(res.status).toBe(201);
    };
    await put('acme', 's1', 't1', 3000);
    await put('acme', 's1', undefined, 1000);
    await put('acme', 's2', 't1', 500);
    await put('other', 'x', undefined, 9000);
    const { key: operator } = await issueApiKey(server.repo, { operator: true });
    const get = async (claims: Parameters<RunningServerLike['mintToken']>[0] | string, query = '') => {
      const token = typeof claims === 'string' ? claims : await server.mintToken(claims);
      const res = await fetch(`${server.url}/v1/usage${query}`, { headers: { Authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      return (await res.json()) as {
        tenants: { tenantId: string; bytes: number }[];
        sessions: { sessionId: string; bytes: number; count: number; limitCount: number }[];
        traces: { traceId: string; bytes: number }[];
        retentionRuns: unknown[];
      };
    };
    const tenant = await get({ tenant: 'acme', perms: ['read'] });
    expect(tenant.tenants).toEqual([{ tenantId: 'acme', bytes: 4500, count: 3, limitBytes: null }]);
    expect(tenant.sessions.map((s) => [s.sessionId, s.bytes, s.count, s.limitCount])).toEqual([
      ['s1', 4000, 2, 10],
      ['s2', 500, 1, 10],
    ]);
    expect(tenant.traces.map((t) => [t.traceId, t.bytes])).toEqual([['t1', 3500]]);
    expect(tenant.retentionRuns).toEqual([]);
    const session = await get({ tenant: 'acme', session: 's2', perms: ['read'] });
    expect(session.sessions.map((s) => s.sessionId)).toEqual(['s2']);
    expect(session.tenants).toEqual([{ tenantId: 'acme', bytes: 500, count: 1, limitBytes: null }]);
    // A tenant's admin: its own tenant and nothing of another's, even when it names one.
    const tenantAdmin = await get({ tenant: 'acme', perms: ['read', 'admin'] });
    expect(tenantAdmin.tenants.map((t) => t.tenantId)).toEqual(['acme']);
    expect(tenantAdmin.sessions.map((s) => s.sessionId)).toEqual(['s1', 's2']);
    expect(JSON.stringify(tenantAdmin)).not.toMatch(/other|9000/);
    const named = await fetch(`${server.url}/v1/usage?tenant=other`, {
      headers: { Authorization: `Bearer ${await server.mintToken({ tenant: 'acme', perms: ['read', 'admin'] })}` },
    });
    expect(named.status).toBe(403);
    // The operator: every tenant, biggest first; top bounds each list; ?tenant= narrows.
    const all = await get(operator, '?top=1');
    expect(all.tenants.map((t) => [t.tenantId, t.bytes])).toEqual([['other', 9000]]);
    expect(all.sessions.map((s) => s.sessionId)).toEqual(['x']);
    expect((await get(operator)).tenants.map((t) => t.tenantId)).toEqual(['other', 'acme']);
    expect((await get(operator, '?tenant=acme')).tenants.map((t) => t.tenantId)).toEqual(['acme']);
    const bad = await fetch(`${server.url}/v1/usage?top=0`, {
      headers: { Authorization: `Bearer ${await server.mintToken({ tenant: 'acme', perms: ['read'] })}` },
    });
    expect(bad.status).toBe(400);
  });

  it('artifact-store usage prints the same figures', { timeout: 60_000 }, async () => {
    const dataDir = await tempDir();
    const repo = createSqliteRepository({ path: join(dataDir, 'artifacts.db') });
    const blobs = createFsBlobStore({ root: join(dataDir, 'blobs'), hash: nodeSha256, fsync: false });
    const service = createArtifactService({ repo, blobs, limits: { ...BASE, touchFlushMs: 0 } });
    await service.putBytes({ tenantId: 'acme', sessionId: 's1' }, randomBytes(524_288));
    await service.close();
    await repo.close();
    const env = {
      ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ARTIFACT_STORE_'))),
    };
    const { stdout } = await promisify(execFile)(process.execPath, [...CLI_ARGS, 'usage', '--data-dir', dataDir], {
      cwd: ROOT,
      env,
    });
    expect(stdout).toMatch(/acme\s+512 KiB\s+1\s+—/);
    expect(stdout).toMatch(/acme \/ s1\s+512 KiB\s+0%\s+1\s+0%/);
  });
});

type RunningServerLike = Awaited<ReturnType<typeof startServer>>;

describe('fsck', () => {
  it('finds missing, corrupt, orphan and mismatched bytes; --repair fixes only what nothing needs', async () => {
    const h = await retentionHarness();
    const blobPath = (sha: string) => join(h.dir, 'blobs', 'sha256', sha.slice(0, 2), sha.slice(2, 4), sha);
    h.clock.t = Date.now();
    const fine = await h.service.putBytes({ tenantId: 'acme' }, randomBytes(KiB));
    const lost = await h.service.putBytes({ tenantId: 'acme' }, randomBytes(KiB));
    const rotten = await h.service.putBytes({ tenantId: 'acme' }, randomBytes(KiB));
    const clean = await fsck({ repo: h.repo, blobs: h.blobs, hash: nodeSha256, verify: true, graceMs: 60_000 });
    expect(clean).toEqual({ checkedRows: 3, checkedBlobs: 3, problems: [], unresolved: 0 });

    await rm(blobPath(lost.ref.sha256));
    await writeFile(blobPath(rotten.ref.sha256), randomBytes(KiB));
    const orphanBytes = randomBytes(300);
    const orphan = createHash('sha256').update(orphanBytes).digest('hex');
    await mkdir(join(blobPath(orphan), '..'), { recursive: true });
    await writeFile(blobPath(orphan), orphanBytes);
    const young = randomBytes(200);
    const youngSha = createHash('sha256').update(young).digest('hex');
    await mkdir(join(blobPath(youngSha), '..'), { recursive: true });
    await writeFile(blobPath(youngSha), young);
    const hourAgo = new Date(Date.now() - 3_600_000);
    await utimes(blobPath(orphan), hourAgo, hourAgo);
    // A row nothing holds, whose bytes are gone, and which no put has pinned.
    h.db.prepare('INSERT INTO blobs (sha256, size_bytes, created_at) VALUES (?, 5, 0)').run('f'.repeat(64));

    const found = await fsck({ repo: h.repo, blobs: h.blobs, hash: nodeSha256, verify: true, graceMs: 60_000 });
    const kinds = found.problems.map((p) => `${p.kind}:${p.sha256}`).sort();
    expect(kinds).toEqual(
      [
        `missing_bytes:${lost.ref.sha256}`,
        `corrupt_bytes:${rotten.ref.sha256}`,
        `orphan_bytes:${orphan}`,
        `orphan_bytes:${youngSha}`,
        `stale_row:${'f'.repeat(64)}`,
      ].sort(),
    );
    expect(found.problems.find((p) => p.kind === 'missing_bytes')).toMatchObject({
      artifacts: [{ tenantId: 'acme', id: lost.ref.id }],
    });
    expect(found.unresolved).toBe(5);

    const repaired = await fsck({
      repo: h.repo,
      blobs: h.blobs,
      hash: nodeSha256,
      verify: true,
      repair: true,
      graceMs: 60_000,
    });
    // The old orphan and the stale row go; the young orphan (a put may be mid-way) and the held problems stay.
    expect(
      repaired.problems
        .filter((p) => 'repaired' in p && p.repaired)
        .map((p) => p.sha256)
        .sort(),
    ).toEqual([orphan, 'f'.repeat(64)].sort());
    expect(repaired.unresolved).toBe(3);
    expect(await h.blobs.exists(orphan)).toBe(false);
    expect(await h.blobs.exists(youngSha)).toBe(true);
    expect(await h.blobs.exists(fine.ref.sha256)).toBe(true);
  });

  it('artifact-store fsck exits 0 on a clean store and 1 with problems', { timeout: 60_000 }, async () => {
    const dataDir = await tempDir();
    const repo = createSqliteRepository({ path: join(dataDir, 'artifacts.db') });
    const blobs = createFsBlobStore({ root: join(dataDir, 'blobs'), hash: nodeSha256, fsync: false });
    const service = createArtifactService({ repo, blobs, limits: { ...BASE, touchFlushMs: 0 } });
    const { ref } = await service.putText({ tenantId: 'acme' }, 'checked');
    await service.close();
    await repo.close();
    const env = {
      ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ARTIFACT_STORE_'))),
    };
    const tsx = join(ROOT, 'node_modules/.bin/tsx');
    const ok = await promisify(execFile)(tsx, ['src/cli/main.ts', 'fsck', '--verify', '--data-dir', dataDir], {
      cwd: ROOT,
      env,
    });
    expect(ok.stdout).toMatch(/1 blob rows, 1 stored blobs checked; 0 problems/);
    await rm(join(dataDir, 'blobs', 'sha256', ref.sha256.slice(0, 2), ref.sha256.slice(2, 4), ref.sha256));
    const bad = await promisify(execFile)(tsx, ['src/cli/main.ts', 'fsck', '--data-dir', dataDir], {
      cwd: ROOT,
      env,
    }).then(
      () => null,
      (err: { code: number; stdout: string }) => err,
    );
    expect(bad?.code).toBe(1);
    expect(bad?.stdout).toContain(`missing_bytes ${ref.sha256} (held by acme/${ref.id})`);
  });
});

describe('purge', () => {
  it('DELETE /v1/admin/artifacts/{id} removes every reference in the tenant and the bytes, unless another tenant holds them, and tells a tenant nothing of other tenants', {
    timeout: 30_000,
  }, async () => {
    const dataDir = await tempDir();
    const server = await startServer(loadConfig({}, { port: 0, dataDir, env: 'test', logLevel: 'silent' }));
    cleanups.push(() => server.close());
    const tok = (claims: Parameters<RunningServerLike['mintToken']>[0]) => server.mintToken(claims);
    const admin = await tok({ tenant: 'acme', perms: ['read', 'write', 'admin'] });
    const put = async (token: string, body: Uint8Array) => {
      const res = await fetch(`${server.url}/v1/artifacts`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/octet-stream' },
        body: body as Uint8Array<ArrayBuffer>,
      });
      expect(res.status).toBe(201);
      return (await res.json()) as { id: string; sha256: string };
    };
    const mineOnly = new Uint8Array(randomBytes(2000));
    const shared = new Uint8Array(randomBytes(2000));
    const s1 = await tok({ tenant: 'acme', session: 's1', perms: ['read', 'write'] });
    const s2 = await tok({ tenant: 'acme', session: 's2', perms: ['read', 'write'] });
    const a = await put(s1, mineOnly);
    await put(s2, mineOnly);
    const b = await put(s1, shared);
    const otherTenant = await tok({ tenant: 'other', perms: ['read', 'write'] });
    await put(otherTenant, shared);
    const link = (await (
      await fetch(`${server.url}/v1/artifacts/${a.id}/url`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${s1}`, 'Content-Type': 'application/json' },
        body: '{}',
      })
    ).json()) as { url: string };
    expect((await fetch(link.url)).status).toBe(200);

    const denied = await fetch(`${server.url}/v1/admin/artifacts/${a.id}`, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${s1}` },
    });
    expect(denied.status).toBe(403);

    const purged = await fetch(`${server.url}/v1/admin/artifacts/${a.id}`, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${admin}` },
    });
    expect(purged.status).toBe(200);
    expect(await purged.json()).toEqual({ id: a.id, refs: 2 });
    // The proxy link stops at once, for every session of the tenant, and the bytes are gone.
    expect((await fetch(link.url)).status).toBe(404);
    for (const t of [s1, s2])
      expect(
        (await fetch(`${server.url}/v1/artifacts/${a.id}`, { headers: { Authorization: `Bearer ${t}` } })).status,
      ).toBe(404);
    const blobPath = (sha: string) => join(dataDir, 'blobs', 'sha256', sha.slice(0, 2), sha.slice(2, 4), sha);
    await expect(readdir(join(blobPath(a.sha256), '..'))).resolves.not.toContain(a.sha256);

    // Bytes another tenant holds stay for it, and the tenant's answer has the same shape as before:
    // whether someone else holds the same bytes is not the tenant's to know.
    const kept = await fetch(`${server.url}/v1/admin/artifacts/${b.id}`, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${admin}` },
    });
    expect(await kept.json()).toEqual({ id: b.id, refs: 1 });
    const theirs = await fetch(`${server.url}/v1/artifacts/${b.id}`, {
      headers: { Authorization: `Bearer ${otherTenant}` },
    });
    expect(Buffer.from(await theirs.arrayBuffer()).equals(Buffer.from(shared))).toBe(true);

    expect(
      (
        await fetch(`${server.url}/v1/admin/artifacts/${a.id}`, {
          method: 'DELETE',
          headers: { Authorization: `Bearer ${admin}` },
        })
      ).status,
    ).toBe(404);
    // Another tenant is out of reach, whatever a tenant token names.
    const elsewhere = await fetch(`${server.url}/v1/admin/artifacts/${b.id}?tenant=other`, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${admin}` },
    });
    expect(elsewhere.status).toBe(403);

    // The operator names the tenant, and is told what happened to the bytes.
    const { key: operator } = await issueApiKey(server.repo, { operator: true });
    const unnamed = await fetch(`${server.url}/v1/admin/artifacts/${b.id}`, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${operator}` },
    });
    expect(unnamed.status).toBe(400);
    const byOperator = await fetch(`${server.url}/v1/admin/artifacts/${b.id}?tenant=other`, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${operator}`, 'X-Request-Id': 'purge-42' },
    });
    expect(await byOperator.json()).toEqual({ id: b.id, refs: 1, bytesDeleted: true });

    // Every purge is in the audit trail; acme's admin reads acme's part of it, the operator all of it.
    const audit = async (token: string, query = '') =>
      (await (
        await fetch(`${server.url}/v1/admin/audit${query}`, { headers: { Authorization: `Bearer ${token}` } })
      ).json()) as { entries: Record<string, unknown>[] };
    const acme = (await audit(admin, '?action=artifact.purge')).entries;
    expect(acme.map((e) => [e.tenantId, e.target, e.role, e.details])).toEqual([
      ['acme', b.id, 'tenant_admin', { refs: 1 }],
      ['acme', a.id, 'tenant_admin', { refs: 2 }],
    ]);
    const everything = (await audit(operator, '?action=artifact.purge')).entries;
    expect(everything[0]).toMatchObject({
      tenantId: 'other',
      target: b.id,
      role: 'operator',
      actorKind: 'api_key',
      requestId: 'purge-42',
    });
    expect(everything).toHaveLength(3);
    expect((await fetch(`${server.url}/v1/admin/audit`, { headers: { Authorization: `Bearer ${s1}` } })).status).toBe(
      403,
    );
  });
});

describe('backup and restore', () => {
  it('artifact-store backup while the service runs, then a restore into a fresh data dir serves the same artifacts and passes fsck', {
    timeout: 90_000,
  }, async () => {
    const dataDir = await tempDir();
    const server = await startServer(loadConfig({}, { port: 0, dataDir, env: 'development', logLevel: 'silent' }));
    let running = true;
    cleanups.push(async () => {
      if (running) await server.close();
    });
    const token = server.token;
    const put = async (body: Uint8Array, name: string) => {
      const res = await fetch(`${server.url}/v1/artifacts`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${token}`,
          'Content-Type': 'application/octet-stream',
          'X-Artifact-Filename': name,
          'X-Artifact-Session': 's1',
        },
        body: body as Uint8Array<ArrayBuffer>,
      });
      expect(res.status).toBe(201);
      return (await res.json()) as { id: string };
    };
    const a = new Uint8Array(randomBytes(5000));
    const b = new Uint8Array(randomBytes(70_000));
    const refA = await put(a, 'a.bin');
    const refB = await put(b, 'b.bin');

    // Online: the service keeps running (and writing) during the backup.
    const backupDir = join(await tempDir(), 'backup');
    const env = {
      ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ARTIFACT_STORE_'))),
    };
    const tsx = join(ROOT, 'node_modules/.bin/tsx');
    const [out] = await Promise.all([
      promisify(execFile)(tsx, ['src/cli/main.ts', 'backup', backupDir, '--data-dir', dataDir], { cwd: ROOT, env }),
      put(new Uint8Array(randomBytes(100)), 'during.bin'),
    ]);
    expect(out.stdout).toMatch(/manifest .*\((2|3) blobs/);
    const manifest = (await readFile(join(backupDir, 'blobs.manifest.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { sha256: string });
    expect(manifest.length).toBeGreaterThanOrEqual(2);
    await server.close();
    running = false;

    // Restore, as the README says: the database and the blob folder into a new data dir.
    const restored = await tempDir();
    await cp(join(backupDir, 'artifacts.db'), join(restored, 'artifacts.db'));
    await cp(join(backupDir, 'blobs'), join(restored, 'blobs'), { recursive: true });
    await cp(join(dataDir, 'dev-jwt-secret'), join(restored, 'dev-jwt-secret'));
    const again = await startServer(
      loadConfig({}, { port: 0, dataDir: restored, env: 'development', logLevel: 'silent' }),
    );
    cleanups.push(() => again.close());
    for (const [ref, bytes] of [
      [refA, a],
      [refB, b],
    ] as const) {
      const res = await fetch(`${again.url}/v1/artifacts/${ref.id}`, {
        headers: { Authorization: `Bearer ${again.token}` },
      });
      expect(res.status).toBe(200);
      expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true);
    }
    const check = await fsck({
      repo: again.repo,
      blobs: createFsBlobStore({ root: join(restored, 'blobs') }),
      hash: nodeSha256,
      verify: true,
      graceMs: 60_000,
    });
    expect(check.problems).toEqual([]);
  });
});
