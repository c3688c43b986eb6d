import type { BlobStore } from '../blob/blob-store.js';
import { evicts, type Policy } from '../core/policy.js';
import type { ArtifactRepository } from '../db/repository.js';
import { quotaLimitsOf, scopeLimitsOf } from '../core/limits.js';
import { STALE_COLLECTION_MS } from './put-pin.js';
import { AUDIT_KEPT_DAYS, recordAction, scheduledActor, type AuditActor } from './audit.js';

export interface RetentionDeps {
  repo: ArtifactRepository;
  blobs: BlobStore;
  /** Each tenant's policy; tenants with overrides are listed so the scan knows the smallest limits. */
  policies: (tenantId: string) => Policy;
  /** Tenants whose policy differs from the base (the keys of ARTIFACT_STORE_TENANT_POLICIES). */
  overriddenTenants?: string[];
  now?: () => number;
  /** Unfinished direct uploads are reaped this long after they expired. */
  graceMs: number;
  /**
   * Rows per transaction, fixed. Unset, batches start at 500 and follow how long each transaction
   * of expiry and blob collection takes: doubled while one takes under half of batchTargetMs,
   * halved when one takes longer, up to 10,000 rows. Big batches write far fewer pages (an index
   * page holds many of a batch's rows), and the target keeps the write lock short: on SQLite a
   * transaction also holds the service's event loop.
   */
  batchSize?: number;
  /** The longest an unfixed batch's transaction should take (default BATCH_TARGET_MS, 50 ms). */
  batchTargetMs?: number;
  /**
   * After each transaction, wait this many times as long as it took before the next (default 0:
   * only a turn of the event loop). A process that also serves requests runs with 1: on SQLite a
   * transaction holds the event loop, and a put needs several turns of it (its file's writes, its
   * commit), so a run that took every turn would leave puts a fraction of the loop.
   */
  pause?: number;
  /**
   * Work in the same process that the run makes way for (puts in flight, in `serve`). While it
   * says true, the turn after a transaction lasts longer, until it says false or up to YIELD_LIMIT
   * times the transaction's time (at least YIELD_MIN_MS): a put needs several turns of the event
   * loop (its file's writes and fsyncs, its commit), and one that met a transaction would otherwise
   * meet the next one too. The limit keeps the run going under constant writes.
   */
  busy?: () => boolean;
  /** Called as the run moves on, for progress bars. */
  onProgress?: (phase: RetentionPhase, done: number) => void;
  /** Audit entries are kept this long (default 90 days); the run trims only older ones. */
  auditKeptMs?: number;
  /** Fault injection for tests: awaited at named points (crash, pause or fail there). */
  faults?: (point: 'gc:after-mark' | 'gc:after-delete') => Promise<void>;
}

/** With `busy`: the longest extra wait after a transaction, in multiples of its time, and at least this many ms. */
const YIELD_LIMIT = 3;
const YIELD_MIN_MS = 10;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export type RetentionPhase = 'expire' | 'quotas' | 'artifacts' | 'uploads' | 'blobs' | 'staging';

/** What one run did, per category. Counts are references unless named otherwise. */
export interface RetentionReport {
  trigger: string;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  expired: { refs: number; bytes: number };
  /** Bytes are the references' sizes (freed from their scopes' quotas; the blobs go by GC). */
  evicted: { refs: number; bytes: number; scopes: number };
  /** Scopes over their limit whose strategy is none: left as they are (puts into them are refused). */
  overLimitKept: { scopes: number };
  unreferencedArtifacts: number;
  uploads: { reaped: number; stagingFailed: number };
  /** Blob rows of puts that never stored their bytes (a blob store outage mid-put): removed once the store confirms the bytes are not there. */
  unfinished: { rows: number; checkFailed: number };
  /** Bytes no artifact holds, unpinned and older than the grace period, deleted from the blob store. */
  blobs: { collected: number; bytes: number; failed: number };
  /** Staging leftovers (puts that died mid-stream) older than the grace period. */
  staging: { removed: number; bytes: number };
  /** Outbox events older than a day (a dropped event stream can resume within that day). */
  events: { trimmed: number };
  /** Audit entries past their keeping time. */
  audit: { trimmed: number };
  /** What the run freed in each tenant (references expired and evicted, and their bytes): what a tenant's admin sees. */
  tenants: Record<string, TenantRetention>;
}

export interface TenantRetention {
  expiredRefs: number;
  expiredBytes: number;
  evictedRefs: number;
  evictedBytes: number;
}

/** How long events stay in the outbox: the window in which Last-Event-ID can resume a stream. */
export const EVENTS_KEPT_MS = 24 * 3_600_000;

/**
 * One retention run: expire references past their TTL, bring sessions and traces that are over
 * their limits (limits lowered since) back within them, drop artifacts no reference holds, reap
 * direct uploads that were never completed, collect blobs no artifact holds and sweep staging. Idempotent, and safe while traffic flows: every step is
 * a bounded transaction of its own, and each re-checks its condition inside it.
 */
export async function runRetention(
  deps: RetentionDeps,
  trigger = 'cli',
  actor: AuditActor = scheduledActor(trigger),
): Promise<RetentionReport> {
  const now = deps.now ?? Date.now;
  const batch = Math.max(1, deps.batchSize ?? 500);
  const target = deps.batchTargetMs ?? BATCH_TARGET_MS;
  const expireBatch = batchSizer(deps.batchSize, target);
  const blobBatch = batchSizer(deps.batchSize, target);
  const onProgress = deps.onProgress ?? (() => {});
  // After each transaction: report, then give the event loop a turn. Repository calls on SQLite
  // finish synchronously, so without the turn a whole phase would hold the service's requests.
  // With `pause`, the turn lasts that many times as long as the transaction held the loop.
  const progress = async (phase: RetentionPhase, done: number, heldMs = 0) => {
    onProgress(phase, done);
    const wait = heldMs * (deps.pause ?? 0);
    if (wait >= 1) await sleep(wait);
    if (deps.busy?.()) {
      const until = performance.now() + Math.max(YIELD_MIN_MS, heldMs * YIELD_LIMIT);
      while (deps.busy() && performance.now() < until) await sleep(1);
    }
    // On setImmediate, also after a pause: a checkpoint queued on a timer (db/sqlite/connection.ts)
    // and this batch then run in separate phases of the loop, with requests' I/O between them.
    await nextTurn();
  };
  const started = now();
  const report: RetentionReport = {
    trigger,
    startedAt: new Date(started).toISOString(),
    finishedAt: '',
    durationMs: 0,
    expired: { refs: 0, bytes: 0 },
    evicted: { refs: 0, bytes: 0, scopes: 0 },
    overLimitKept: { scopes: 0 },
    unreferencedArtifacts: 0,
    uploads: { reaped: 0, stagingFailed: 0 },
    unfinished: { rows: 0, checkFailed: 0 },
    blobs: { collected: 0, bytes: 0, failed: 0 },
    staging: { removed: 0, bytes: 0 },
    events: { trimmed: 0 },
    audit: { trimmed: 0 },
    tenants: {},
  };
  const tenant = (id: string) =>
    (report.tenants[id] ??= { expiredRefs: 0, expiredBytes: 0, evictedRefs: 0, evictedBytes: 0 });

  // 1. Expired references, oldest expiry first, a batch per transaction.
  for (;;) {
    const size = expireBatch.size;
    const began = performance.now();
    const { refs, bytes, byTenant } = await deps.repo.expireRefs(now(), size);
    const held = performance.now() - began;
    expireBatch.took(held, refs);
    report.expired.refs += refs;
    report.expired.bytes += bytes;
    for (const [id, t] of Object.entries(byTenant)) {
      tenant(id).expiredRefs += t.refs;
      tenant(id).expiredBytes += t.bytes;
    }
    await progress('expire', report.expired.refs, held);
    if (refs < size) break;
  }

  // 2. Scopes over their limits. The scan asks for anything over the smallest limit any tenant has,
  // then checks each scope against its own tenant's policy.
  const tenantPolicies = [deps.policies(''), ...(deps.overriddenTenants ?? []).map((t) => deps.policies(t))];
  for (const kind of ['session', 'trace'] as const) {
    const minCount = Math.min(...tenantPolicies.map((p) => scopeLimitsOf(p, kind).maxCount));
    const minBytes = Math.min(...tenantPolicies.map((p) => scopeLimitsOf(p, kind).maxBytes));
    for (let after: { tenantId: string; value: string } | null | undefined; after !== null; ) {
      const began = performance.now();
      const { scopes, next } = await deps.repo.scopesOver(kind, now(), minCount, minBytes, after, batch);
      after = next;
      await progress('quotas', report.evicted.refs, performance.now() - began);
      for (const scope of scopes) {
        const policy = deps.policies(scope.tenantId);
        const { maxCount, maxBytes } = scopeLimitsOf(policy, kind);
        if (scope.count <= maxCount && scope.bytes <= maxBytes) continue;
        if (!evicts(policy.cleanupStrategy)) {
          report.overLimitKept.scopes++;
          continue;
        }
        const began = performance.now();
        const evicted = await deps.repo.enforceScope(scope.tenantId, kind, scope.value, quotaLimitsOf(policy), now());
        const held = performance.now() - began;
        if (evicted.length > 0) report.evicted.scopes++;
        report.evicted.refs += evicted.length;
        report.evicted.bytes += evicted.reduce((sum, r) => sum + r.sizeBytes, 0);
        for (const r of evicted) {
          tenant(r.tenantId).evictedRefs++;
          tenant(r.tenantId).evictedBytes += r.sizeBytes;
        }
        await progress('quotas', report.evicted.refs, held);
      }
    }
  }

  // 3. Artifacts without references (normally none: they go with their last reference), a window
  // of artifact rows per transaction.
  for (let after: number | null = 0; after !== null; ) {
    const began = performance.now();
    const { dropped, next } = await deps.repo.dropUnreferencedArtifacts(after, batch);
    report.unreferencedArtifacts += dropped;
    await progress('artifacts', report.unreferencedArtifacts, performance.now() - began);
    after = next;
  }

  // 4. Direct uploads never completed: the staged object first, then the row, so a crash in
  // between leaves a row the next run reaps again.
  const seen = new Set<string>();
  for (;;) {
    const page = (await deps.repo.expiredUploads(now() - deps.graceMs, batch)).filter((u) => !seen.has(u.id));
    for (const up of page) {
      seen.add(up.id);
      try {
        await deps.blobs.discardUpload?.(up.stagingKey);
      } catch {
        // The blob store is down: keep the row, the next run tries again.
        report.uploads.stagingFailed++;
        continue;
      }
      await deps.repo.deleteUpload(up.id);
      report.uploads.reaped++;
      await progress('uploads', report.uploads.reaped);
    }
    if (page.length === 0) break;
  }

  // 5. Rows of puts that pinned their bytes and failed before storing them (a blob store that was
  // down): no artifact holds them and no pin protects them, so once the store says the bytes are not
  // there, nothing needs the row. Bytes that are there stay for the collection below.
  for (let after = ''; ; ) {
    const rows = await deps.repo.unfinishedBlobRows(now(), after, batch);
    for (const sha256 of rows) {
      let stored: boolean;
      try {
        stored = await deps.blobs.exists(sha256);
      } catch {
        report.unfinished.checkFailed++;
        continue;
      }
      if (!stored && (await deps.repo.deleteIdleBlobRow(sha256, now()))) report.unfinished.rows++;
    }
    await nextTurn();
    if (rows.length < batch) break;
    after = rows.at(-1)!;
  }

  // 6. Blobs no artifact holds, a window of blob rows at a time. Mark those of the window (skipping
  // blobs a put has pinned), delete their bytes, then drop the rows still marked. A put of the same
  // bytes that comes in meanwhile sees the mark and waits for the collection to finish before
  // committing its own copy.
  await deps.repo.dropExpiredPins(now());
  for (let after: string | null = ''; after !== null; ) {
    const markedAt = now();
    const size = blobBatch.size;
    let began = performance.now();
    const { marked, next } = await deps.repo.markBlobsForCollection(
      markedAt,
      markedAt - deps.graceMs,
      markedAt - STALE_COLLECTION_MS,
      after,
      size,
    );
    after = next;
    let writing = performance.now() - began;
    if (marked.length === 0) {
      blobBatch.took(writing, size);
      await progress('blobs', report.blobs.collected, writing);
      continue;
    }
    await deps.faults?.('gc:after-mark');
    const collected: string[] = [];
    const failed: string[] = [];
    // Several deletes at a time: each is a round trip (an unlink in libuv's pool, a DeleteObject),
    // and one after another they were most of the collection's time.
    await eachConcurrently(marked, BLOB_DELETES_AT_ONCE, async (b) => {
      try {
        await deps.blobs.delete(b.sha256);
        collected.push(b.sha256);
        report.blobs.collected++;
        report.blobs.bytes += b.sizeBytes;
      } catch {
        // Unmarked again: the next run retries.
        failed.push(b.sha256);
        report.blobs.failed++;
      }
    });
    await deps.faults?.('gc:after-delete');
    began = performance.now();
    await deps.repo.dropOrUnmarkBlobs(collected, failed, markedAt);
    writing = Math.max(writing, performance.now() - began);
    blobBatch.took(writing, size);
    await progress('blobs', report.blobs.collected, writing);
  }

  // 7. Staging leftovers: puts that died mid-stream, objects of uploads whose rows are gone.
  // Against the wall clock: file and object timestamps are wall-clock times, whatever `now` is.
  if (deps.blobs.sweepStaging) {
    report.staging = await deps.blobs.sweepStaging(Date.now() - deps.graceMs);
    await progress('staging', report.staging.removed);
  }

  // 8. Old events.
  for (;;) {
    const trimmed = await deps.repo.trimEvents(now() - EVENTS_KEPT_MS, batch);
    report.events.trimmed += trimmed;
    await nextTurn();
    if (trimmed < batch) break;
  }

  // 9. Audit entries past their keeping time, never earlier.
  const auditBefore = now() - (deps.auditKeptMs ?? AUDIT_KEPT_DAYS * 86_400_000);
  for (;;) {
    const trimmed = await deps.repo.trimAudit(auditBefore, batch);
    report.audit.trimmed += trimmed;
    await nextTurn();
    if (trimmed < batch) break;
  }

  const finished = now();
  report.finishedAt = new Date(finished).toISOString();
  report.durationMs = finished - started;
  await deps.repo.recordRetentionRun({
    trigger,
    startedAt: started,
    finishedAt: finished,
    report: report as unknown as Record<string, unknown>,
  });
  const { tenants: _perTenant, ...summary } = report;
  await recordAction(
    deps.repo,
    actor,
    'retention.run',
    { details: { ...summary, tenants: Object.keys(report.tenants).length } },
    finished,
  );
  return report;
}

/** Resolves on the event loop's next turn (setImmediate on Node; a zero timeout where there is none). */
function nextTurn(): Promise<void> {
  return new Promise((resolve) =>
    typeof setImmediate === 'function' ? setImmediate(resolve) : setTimeout(resolve, 0),
  );
}

/** Blob deletes in flight at once during the collection. */
const BLOB_DELETES_AT_ONCE = 16;

/** Runs `task` over `items`, at most `limit` at a time; resolves when all have settled (tasks catch their own errors). */
async function eachConcurrently<T>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) await task(items[i]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** The longest a retention transaction should hold the write lock (and, on SQLite, the event loop). */
export const BATCH_TARGET_MS = 50;
const MIN_BATCH = 100;
const MAX_BATCH = 10_000;

/** A fixed batch size, or one that follows the time of each full batch (see RetentionDeps.batchSize). */
function batchSizer(
  fixed: number | undefined,
  targetMs: number,
): { readonly size: number; took(ms: number, rows: number): void } {
  let size = Math.max(1, fixed ?? 500);
  return {
    get size() {
      return size;
    },
    took(ms, rows) {
      // A short batch (the last one) says little about the next.
      if (fixed !== undefined || rows < size) return;
      if (ms < targetMs / 2) size = Math.min(MAX_BATCH, size * 2);
      else if (ms > targetMs) size = Math.max(MIN_BATCH, Math.floor(size / 2));
    },
  };
}
