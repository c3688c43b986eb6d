/**
 * Seeded random workloads for the D1 ⇔ SQLite differential test (d1-repository.test.ts): the same
 * operations run through both repositories, and every answer and the final tables must match.
 *
 * Runs both in Node and inside workerd (bundled into a test Worker, next to the D1 binding, so a
 * workload of thousands of operations takes one round trip instead of thousands), so it imports
 * nothing but types.
 */
import type { QuotaLimits } from '../src/core/limits.js';
import type { ArtifactRepository, CommitPutInput, EvictedRef, ScopeFilter } from '../src/db/repository.js';

/** One repository call: the method and its arguments, or 'reads': every read method at that time. */
export type Op = [method: string, ...args: unknown[]];

export interface Outcome {
  ok?: unknown;
  error?: { code?: string; message: string; details?: unknown };
}

/** A small deterministic PRNG (mulberry32). */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TENANTS = ['t1', 't2'];
const USERS = ['u1', ''];
const SESSIONS = ['s1', 's2', ''];
const TRACES = ['x1', 'x2', ''];

/**
 * `length` operations over a small world (2 tenants, 8 blobs, a few sessions and traces), dense
 * enough that quotas bite, pins go stale, blobs get collected under puts and ids collide. The ids an
 * operation names (references, pins) are drawn without knowing earlier answers, so the list is fixed
 * by the seed alone.
 */
export function generateWorkload(seed: number, length: number): Op[] {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const int = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
  const hex = (n: number) => Array.from({ length: n }, () => '0123456789abcdef'[int(0, 15)]).join('');
  const strategy = (['lru', 'fifo', 'reject', 'never'] as const)[seed % 4]!;
  const quota: QuotaLimits = {
    strategy,
    maxSessionBytes: pick([0, 30, 45, 60, 100]),
    maxSessionCount: pick([0, 2, 3, 5]),
    maxTraceBytes: pick([0, 25, 40, 50, 80]),
    maxTraceCount: pick([0, 2, 4]),
    maxTenantBytes: pick([0, 80, 120, 200]),
  };
  const blobs = Array.from({ length: 8 }, () => ({ sha: hex(64), size: int(5, 39) }));
  const idOf = (sha: string) => `ns_${sha.slice(0, 24)}`;
  const ops: Op[] = [];
  let now = 1_000_000;
  let puts = 0;
  const pinned: string[] = [];
  let freshPin = false;
  const markTimes: number[] = [];
  const uploads: string[] = [];
  const keys: string[] = [];
  const filters: ScopeFilter[] = [{}, { sessionId: 's1' }, { userId: 'u1', traceId: 'x1' }, { sessionId: '' }];

  for (let step = 0; step < length; step++) {
    now += int(0, 50);
    const k = r();
    if (k < 0.5) {
      // The newest pin with its own blob, when no put has used it yet (a put's own pin, valid unless it
      // ran out or was collected); now and then an old, used or unknown one.
      let pinId: number | undefined;
      if (freshPin && r() < 0.8) {
        pinId = pinned.length;
        freshPin = false;
      } else if (pinned.length > 0 && r() < 0.1) pinId = int(1, pinned.length + 1);
      const b = pinId === pinned.length ? blobs.find((x) => x.sha === pinned.at(-1))! : pick(blobs);
      const other = blobs[(blobs.indexOf(b) + 1) % blobs.length]!;
      const collide = r() < 0.04; // the id of one blob, the bytes of another
      // Now and then a named version (no trace: names have none), which ending a session removes too.
      const name = r() < 0.15 ? pick(['n1', 'n2']) : undefined;
      const input: Omit<CommitPutInput, 'clock'> = {
        scope: {
          tenantId: pick(TENANTS),
          userId: pick(USERS),
          sessionId: pick(SESSIONS),
          traceId: name ? '' : pick(TRACES),
        },
        ...(name ? { name } : {}),
        artifactId: idOf(b.sha),
        namespace: 'ns',
        sha256: collide ? other.sha : b.sha,
        sizeBytes: collide ? other.size : b.size,
        mimeType: pick(['text/plain', 'image/png', 'application/json']),
        ...(r() < 0.5 ? { filename: pick(['a.txt', 'Übersicht "Q3".pdf', 'rate_100%.CSV']) } : {}),
        ...(r() < 0.4 ? { meta: { step, tags: ['x', 'ü'], nested: { n: r() < 0.5 ? null : 1.5 } } } : {}),
        ...(r() < 0.2 ? { source: { tool: 'tableau.download_workbook' } } : {}),
        now,
        expiresAt: now + pick([30, 300, 3000]),
        ...(r() < 0.9 ? { quota } : {}),
        ...(pinId !== undefined ? { pinId } : {}),
      };
      // A clock read after the lock that has moved on: `now` and `expiresAt` move with it.
      if (r() < 0.2) (input as { clockAt?: number }).clockAt = now + int(0, 30);
      puts++;
      ops.push(['commitPut', input]);
    } else if (k < 0.57) {
      // Sometimes more ids than D1 takes as bound parameters (100).
      const n = r() < 0.2 ? 150 : int(1, 4);
      ops.push(['touch', Array.from({ length: n }, () => int(1, puts + 2)), now]);
    } else if (k < 0.63) {
      const b = pick(blobs);
      pinned.push(b.sha);
      freshPin = true;
      ops.push(['pinBlob', b.sha, now + pick([5, 500, 2000]), now, now - pick([20, 100, 1000])]);
    } else if (k < 0.66) {
      markTimes.push(now);
      ops.push(['markBlobForPurge', pick(blobs).sha, now]);
    } else if (k < 0.69) {
      markTimes.push(now);
      ops.push([
        'markBlobsForCollection',
        now,
        now - pick([0, 100]),
        now - pick([50, 500]),
        pick(['', blobs[0]!.sha]),
        pick([2, 50]),
      ]);
    } else if (k < 0.72 && markTimes.length > 0) {
      const shas = blobs.map((b) => b.sha);
      ops.push(['dropOrUnmarkBlobs', shas.filter(() => r() < 0.3), shas.filter(() => r() < 0.2), pick(markTimes)]);
    } else if (k < 0.75) {
      ops.push(['expireRefs', now, pick([1, 2, 50])]);
    } else if (k < 0.79) {
      const kind = pick(['session', 'trace'] as const);
      const q: QuotaLimits = {
        strategy: pick(['lru', 'fifo', 'reject', 'never'] as const),
        maxSessionBytes: pick([0, 30]),
        maxSessionCount: pick([0, 1, 2]),
        maxTraceBytes: pick([0, 20, 60]),
        maxTraceCount: pick([0, 1]),
      };
      ops.push([
        'enforceScope',
        pick(TENANTS),
        kind,
        kind === 'session' ? pick(['s1', 's2']) : pick(['x1', 'x2']),
        q,
        now,
      ]);
    } else if (k < 0.81) {
      ops.push(['deleteRefs', pick(TENANTS), idOf(pick(blobs).sha), pick(filters), now]);
    } else if (k < 0.83) {
      // Batches of one or two, so most ends take several transactions.
      const filter = pick([{}, {}, { userId: 'u1' }, { userId: '' }, { traceId: 'x1' }]);
      ops.push(['endSession', pick(TENANTS), pick(['s1', 's2']), filter, now, pick([1, 2, 500])]);
    } else if (k < 0.85) {
      pick([
        () => ops.push(['releasePin', int(1, pinned.length + 1)]),
        () => ops.push(['dropExpiredPins', now]),
        () => ops.push(['deleteIdleBlobRow', pick(blobs).sha, now]),
        () => ops.push(['dropUnreferencedArtifacts', pick([0, 1]), pick([1, 10])]),
        () => ops.push(['trimEvents', now - pick([100, 1000]), pick([1, 5])]),
      ])();
    } else if (k < 0.88) {
      pick([
        () => {
          const id = `up${step}`;
          uploads.push(id);
          ops.push([
            'createUpload',
            {
              id,
              tenantId: pick(TENANTS),
              userId: pick(USERS),
              sessionId: pick(SESSIONS),
              traceId: '',
              stagingKey: `staging/${id}`,
              sizeBytes: int(1, 99),
              sha256: pick(blobs).sha,
              options: { mimeType: 'text/plain', meta: { step } },
              createdAt: now,
              expiresAt: now + pick([10, 1000]),
              kind: pick(['put', 'multipart', 'tus']),
              multipartId: pick([null, `mp${step}`]),
              partSize: pick([null, 5 << 20]),
              receivedBytes: int(0, 99),
            },
          ]);
        },
        () =>
          uploads.length > 0 &&
          ops.push(['advanceUpload', pick(uploads), pick([0, 5, 50]), int(0, 99), now + pick([10, 1000])]),
        () => uploads.length > 0 && ops.push(['deleteUpload', pick(uploads)]),
        () => {
          const id = `k${step}`;
          keys.push(id);
          const operator = pick([false, false, true]);
          ops.push([
            'createApiKey',
            {
              id,
              tenantId: operator ? '' : pick(TENANTS),
              operator,
              secretHash: hex(16),
              perms: pick([['read'], ['read', 'write', 'admin']]),
              label: pick([null, 'ci']),
              createdAt: now,
            },
          ]);
        },
        () =>
          ops.push([
            'recordAudit',
            {
              at: now,
              tenantId: pick(['', ...TENANTS]),
              action: pick(['artifact.purge', 'retention.run', 'key.create']),
              role: pick(['tenant_admin', 'operator', 'host']),
              actorKind: pick(['jwt', 'api_key', 'cli']),
              actorId: `a${step}`,
              target: pick([null, `ns_${hex(24)}`]),
              details: pick([null, { refs: step, nested: { ok: true } }]),
              requestId: pick([null, `req-${step}`]),
            },
          ]),
        () => ops.push(['trimAudit', now - pick([0, 1000]), pick([1, 100])]),
        () => keys.length > 0 && ops.push(['revokeApiKey', pick(keys), now]),
        () =>
          ops.push([
            'recordRetentionRun',
            {
              trigger: pick(['cron', 'cli']),
              startedAt: now - 5,
              finishedAt: now,
              report: { expired: { refs: step } },
            },
          ]),
      ])();
    } else if (k < 0.885) {
      ops.push(['reads', now, blobs.map((b) => b.sha), uploads.slice(-3), keys.slice(-3)]);
    } else {
      now += pick([100, 2000]); // let things expire
    }
  }
  ops.push(['reads', now, blobs.map((b) => b.sha), uploads, keys]);
  return ops;
}

const evictedOnly = (e: EvictedRef): EvictedRef => ({
  refId: e.refId,
  sizeBytes: e.sizeBytes,
  tenantId: e.tenantId,
  artifactId: e.artifactId,
  userId: e.userId,
  sessionId: e.sessionId,
  traceId: e.traceId,
});

/** Every read method, over every combination the small world has. */
async function reads(
  repo: ArtifactRepository,
  now: number,
  shas: string[],
  uploads: string[],
  keys: string[],
): Promise<unknown> {
  const out: Record<string, unknown> = {};
  for (const t of TENANTS) {
    for (const sha of shas) {
      const id = `ns_${sha.slice(0, 24)}`;
      out[`findRef ${t} ${id}`] = await Promise.all(
        [{}, { sessionId: 's1' }, { userId: 'u1', sessionId: '', traceId: 'x2' }].map((f) =>
          repo.findRef(t, id, f, now),
        ),
      );
    }
    out[`list ${t}`] = await Promise.all([
      repo.list(t, { now, limit: 1000 }),
      repo.list(t, { now, limit: 3, sessionId: 's2', mimePrefix: 'text/' }),
      repo.list(t, { now, limit: 5, namespace: 'ns', createdAfter: now - 500, createdBefore: now - 10 }),
      repo.list(t, { now, limit: 5, after: { sort: 'newest', createdAt: now - 200, refId: 5 }, userId: 'u1' }),
      // Every order, a search (either case, LIKE's own characters as themselves), and resuming each order.
      ...(['oldest', 'largest', 'smallest', 'name'] as const).map((sort) => repo.list(t, { now, limit: 1000, sort })),
      repo.list(t, { now, limit: 1000, search: 'A' }),
      repo.list(t, { now, limit: 1000, search: '%', sort: 'name' }),
      repo.list(t, { now, limit: 1000, search: '_' }),
      repo.list(t, { now, limit: 5, sort: 'oldest', after: { sort: 'oldest', createdAt: now - 200, refId: 5 } }),
      repo.list(t, {
        now,
        limit: 5,
        sort: 'largest',
        after: { sort: 'largest', sizeBytes: 4, createdAt: now, refId: 9 },
      }),
      repo.list(t, {
        now,
        limit: 5,
        sort: 'smallest',
        after: { sort: 'smallest', sizeBytes: 4, createdAt: 0, refId: 0 },
      }),
      repo.list(t, { now, limit: 5, sort: 'name', after: { sort: 'name', key: 'm', createdAt: 0, refId: 0 } }),
    ]);
    out[`events ${t}`] = await repo.readEvents(t, 2, 1000);
    out[`uploads ${t}`] = await Promise.all(uploads.map((id) => repo.findUpload(t, id)));
    out[`keys ${t}`] = await repo.listApiKeys(t);
    out[`audit ${t}`] = await repo.listAudit({ tenantId: t, limit: 1000 });
  }
  out.allEvents = await repo.readEvents(undefined, 0, 1000);
  out.audit = await Promise.all([
    repo.listAudit({ limit: 1000 }),
    repo.listAudit({ tenantId: '', action: 'retention.run', limit: 3 }),
    repo.listAudit({ since: now - 500, beforeSeq: 5, limit: 10 }),
  ]);
  out.usage = await Promise.all([
    repo.usage('tenant', now, { limit: 10 }),
    repo.usage('session', now, { limit: 10 }),
    repo.usage('trace', now, { tenantId: 't1', limit: 2 }),
    repo.usage('session', now, { tenantId: 't2', sessionId: 's1', limit: 10 }),
  ]);
  out.scopesOver = await Promise.all([
    repo.scopesOver('session', now, 0, 0, undefined, 10),
    repo.scopesOver('session', now, 0, 0, undefined, 1),
    repo.scopesOver('trace', now, 1, 30, { tenantId: 't1', value: 'x1' }, 10),
    repo.scopesOver('trace', now, 0, 0, undefined, 2),
  ]);
  out.storedTotals = await repo.storedTotals(now);
  out.blobRows = await repo.blobRows('', 100, now);
  out.unfinishedBlobRows = await Promise.all([
    repo.unfinishedBlobRows(now, '', 100),
    repo.unfinishedBlobRows(now, '8', 2),
  ]);
  out.knownBlobs = [...(await repo.knownBlobs([...shas, 'f'.repeat(64)]))].sort();
  out.artifactsOfBlob = await Promise.all(shas.map((s) => repo.artifactsOfBlob(s, 10)));
  out.lastEventSeq = await repo.lastEventSeq();
  out.expiredUploads = await repo.expiredUploads(now, 100);
  out.keys = await Promise.all(keys.map((id) => repo.findApiKey(id)));
  out.allKeys = await repo.listApiKeys();
  out.retentionRuns = await repo.retentionRuns(3);
  return out;
}

/** A put's `clockAt` (JSON carries no functions) as the clock it stands for. */
function withClock({ clockAt, ...input }: CommitPutInput & { clockAt?: number }): CommitPutInput {
  return clockAt === undefined ? input : { ...input, clock: () => clockAt };
}

/** The operations that run as batches over the scratch tables. */
const SCRATCH_USERS = new Set(['commitPut', 'deleteRefs', 'expireRefs', 'enforceScope', 'endSession']);

const jsonSafe = (v: unknown): unknown => JSON.parse(JSON.stringify(v ?? null)) as unknown;

/**
 * Runs `ops` on `repo`. With `query` (raw SQL on the same database), it also checks after every
 * operation that runs as a batch over the scratch tables that they are empty again, and that a
 * refused put changed no table at all.
 */
export async function runWorkload(
  repo: ArtifactRepository,
  ops: Op[],
  query?: Query,
): Promise<{ outcomes: Outcome[]; violations: string[] }> {
  const outcomes: Outcome[] = [];
  const violations: string[] = [];
  const call = repo as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  // Tables as they were before the current operation, when known (dumped after the previous one).
  let before: string | undefined;
  for (const [i, [method, ...args]] of ops.entries()) {
    if (query && method === 'commitPut' && before === undefined) before = JSON.stringify(await dumpTables(query));
    let outcome: Outcome;
    try {
      let ok: unknown;
      if (method === 'reads') ok = await reads(repo, ...(args as [number, string[], string[], string[]]));
      else if (method === 'commitPut')
        ok = await repo.commitPut(withClock(args[0] as CommitPutInput & { clockAt?: number }));
      else ok = await call[method]!(...args);
      if (method === 'commitPut') {
        const put = ok as Awaited<ReturnType<ArtifactRepository['commitPut']>>;
        ok = { ...put, evicted: put.evicted.map(evictedOnly) };
      }
      if (method === 'enforceScope') ok = (ok as EvictedRef[]).map(evictedOnly);
      outcome = { ok: jsonSafe(ok) };
    } catch (err) {
      const e = err as { code?: string; message: string; details?: unknown };
      outcome = { error: jsonSafe({ code: e.code, message: e.message, details: e.details }) as Outcome['error'] };
    }
    outcomes.push(outcome);
    if (query && SCRATCH_USERS.has(method)) {
      const after = await dumpTables(query);
      if (after.put_ctx!.length > 0 || after.evict_plan!.length > 0)
        violations.push(
          `op ${i} (${method}) left scratch rows: ${JSON.stringify({ put_ctx: after.put_ctx, evict_plan: after.evict_plan })}`,
        );
      const text = JSON.stringify(after);
      if (method === 'commitPut' && outcome.error && text !== before) {
        const was = JSON.parse(before!) as Record<string, unknown[]>;
        const changed = Object.keys(after).filter((t) => JSON.stringify(after[t]) !== JSON.stringify(was[t]));
        violations.push(
          `op ${i}: a refused put (${outcome.error.code}) changed ${changed.map((t) => `${t}: ${JSON.stringify(was[t])} → ${JSON.stringify(after[t])}`).join('; ')}`,
        );
      }
      before = text;
    } else {
      before = undefined;
    }
  }
  return { outcomes, violations };
}

/**
 * Every table the schema has, in storage order, plus the AUTOINCREMENT counters. A counter at 0
 * means the same as none (the next id is 1 either way): an INSERT … SELECT that inserts nothing, as a
 * refused put's do, still creates it.
 */
export async function dumpTables(query: Query): Promise<Record<string, unknown[]>> {
  const tables = [
    'api_keys',
    'artifact_refs',
    'artifacts',
    'audit_log',
    'blob_pins',
    'blobs',
    'evict_plan',
    'names',
    'outbox',
    'put_ctx',
    'retention_runs',
    'uploads',
  ];
  const rows = await query([
    ...tables.map((t) => `SELECT * FROM ${t} ORDER BY rowid`),
    `SELECT name, seq FROM sqlite_sequence WHERE name != '__drizzle_migrations' AND seq != 0 ORDER BY name`,
  ]);
  return Object.fromEntries([...tables, 'sqlite_sequence'].map((t, i) => [t, rows[i]!]));
}

/** Runs read-only statements in one snapshot (a D1 batch), one result list each. */
export type Query = (sqls: string[]) => Promise<unknown[][]>;
