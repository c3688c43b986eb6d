/**
 * The put's metadata commit on SQLite: blob row, artifact, reference, the quota decision and the
 * `artifact.stored` event, in one immediate transaction, deciding in JavaScript as it goes.
 */
import type Database from 'better-sqlite3';
import { and, eq } from 'drizzle-orm';
import { errors } from '../../core/errors.js';
import { artifactTooBigForScope, pinLost, scopeFull, tenantFull } from '../put-errors.js';
import type { CommitPutInput, EvictedRef, QuotaLimits, RefRow, ReferenceRepository } from '../repository.js';
import { artifactRefs, artifacts, blobPins, blobs } from '../schema.js';
import type { SqliteContext } from './connection.js';
import { SCOPE_COLUMNS, type ScopeKind } from './removal.js';
import { refColumns, type RemovedRow } from './rows.js';

type ScopeKey = { userId: string; sessionId: string; traceId: string };

export function createCommitPut({ sqlite, db, writing, removal }: SqliteContext): ReferenceRepository['commitPut'] {
  // Quotas. Only live references count.
  const usageStatements = Object.fromEntries(
    (Object.keys(SCOPE_COLUMNS) as ScopeKind[]).map((kind) => [
      kind,
      sqlite.prepare(
        `SELECT count(*) AS n, total(size_bytes) AS bytes FROM artifact_refs
         WHERE tenant_id = @tenantId AND ${SCOPE_COLUMNS[kind]} = @value AND expires_at > @now`,
      ),
    ]),
  ) as Record<ScopeKind, Database.Statement>;
  const tenantUsage = sqlite.prepare('SELECT total(size_bytes) AS bytes FROM artifact_refs WHERE tenant_id = @tenantId AND expires_at > @now');

  /**
   * Brings the session and trace of a put within their limits, and checks the tenant quota. Runs
   * inside the put's transaction, after its reference is written (`keep` is its id).
   */
  function enforceQuota(q: QuotaLimits, tenantId: string, scope: ScopeKey, keep: number, keepBytes: number, added: boolean, now: number): EvictedRef[] {
    const evicted: RemovedRow[] = [];
    const scopes: [ScopeKind, string, number, number][] = [
      ['session', scope.sessionId, q.maxSessionBytes ?? 0, q.maxSessionCount ?? 0],
      ['trace', scope.traceId, q.maxTraceBytes ?? 0, q.maxTraceCount ?? 0],
    ];
    for (const [kind, value, maxBytes, maxCount] of scopes) {
      if (value === '' || (maxBytes === 0 && maxCount === 0)) continue;
      if (maxBytes > 0 && keepBytes > maxBytes) throw artifactTooBigForScope(kind, value, keepBytes, maxBytes);
      const usage = usageStatements[kind].get({ tenantId, value, now }) as { n: number; bytes: number };
      const over = (maxBytes > 0 && usage.bytes > maxBytes) || (maxCount > 0 && usage.n > maxCount);
      if (!over) continue;
      if (q.strategy === 'none') {
        // A re-put adds nothing: it is not refused for a scope that was already over (limits lowered).
        if (added) throw scopeFull(kind, value, usage, keepBytes, maxBytes, maxCount);
        continue;
      }
      const params = { tenantId, value, now, keep, maxBytes, maxCount };
      evicted.push(...(removal.evictStatement(kind, q.strategy).all(params) as RemovedRow[]));
    }
    if (q.maxTenantBytes) {
      const { bytes } = tenantUsage.get({ tenantId, now }) as { bytes: number };
      if (added && bytes > q.maxTenantBytes) {
        throw tenantFull(tenantId, bytes, keepBytes, q.maxTenantBytes);
      }
    }
    removal.recordRemoved(evicted, 'artifact.evicted', now);
    return evicted;
  }

  const selectRef = (tenantId: string, artifactId: string, scope: ScopeKey) =>
    db
      .select(refColumns)
      .from(artifactRefs)
      .innerJoin(artifacts, and(eq(artifacts.tenantId, artifactRefs.tenantId), eq(artifacts.id, artifactRefs.artifactId)))
      .where(
        and(
          eq(artifactRefs.tenantId, tenantId),
          eq(artifactRefs.artifactId, artifactId),
          eq(artifactRefs.userId, scope.userId),
          eq(artifactRefs.sessionId, scope.sessionId),
          eq(artifactRefs.traceId, scope.traceId),
        ),
      )
      .get();

  return async function commitPut(given: CommitPutInput) {
    const { scope } = given;
    const key = { userId: scope.userId ?? '', sessionId: scope.sessionId ?? '', traceId: scope.traceId ?? '' };
    return writing(() => db.transaction(
      (tx) => {
        // Read the clock once the write lock is held: times then follow commit order, also across
        // processes, which is the order LRU and FIFO eviction rank by.
        const now = given.clock ? Math.max(given.now, given.clock()) : given.now;
        const input = { ...given, now, expiresAt: given.expiresAt + (now - given.now) };
        if (input.pinId !== undefined) {
          const pin = tx.delete(blobPins).where(eq(blobPins.id, input.pinId)).returning({ sha256: blobPins.sha256, until: blobPins.until }).get();
          if (!pin || pin.sha256 !== input.sha256 || pin.until < now) {
            throw pinLost();
          }
        }
        // The row usually exists already: the put pinned it (size unknown then) before committing the bytes.
        tx.insert(blobs)
          .values({ sha256: input.sha256, sizeBytes: input.sizeBytes, createdAt: now })
          .onConflictDoUpdate({ target: blobs.sha256, set: { sizeBytes: input.sizeBytes } })
          .run();
        const existing = tx
          .select({ sha256: artifacts.sha256 })
          .from(artifacts)
          .where(and(eq(artifacts.tenantId, scope.tenantId), eq(artifacts.id, input.artifactId)))
          .get();
        if (existing && existing.sha256 !== input.sha256) throw errors.hashCollision(input.artifactId);
        if (!existing) {
          tx.insert(artifacts)
            .values({ tenantId: scope.tenantId, id: input.artifactId, namespace: input.namespace, sha256: input.sha256, sizeBytes: input.sizeBytes, createdAt: now })
            .run();
        }
        const prior = tx
          .select({ refId: artifactRefs.refId, expiresAt: artifactRefs.expiresAt })
          .from(artifactRefs)
          .where(
            and(
              eq(artifactRefs.tenantId, scope.tenantId),
              eq(artifactRefs.artifactId, input.artifactId),
              eq(artifactRefs.userId, key.userId),
              eq(artifactRefs.sessionId, key.sessionId),
              eq(artifactRefs.traceId, key.traceId),
            ),
          )
          .get();
        const described = {
          mimeType: input.mimeType,
          filename: input.filename ?? null,
          meta: input.meta ?? null,
          source: input.source ?? null,
        };
        // A reference past its expiry that retention has not reaped yet counts as new.
        const live = prior !== undefined && prior.expiresAt > now;
        let refId: number;
        if (prior) {
          tx.update(artifactRefs)
            .set({ ...described, sizeBytes: input.sizeBytes, lastAccessedAt: now, expiresAt: input.expiresAt, ...(live ? {} : { createdAt: now }) })
            .where(eq(artifactRefs.refId, prior.refId))
            .run();
          refId = prior.refId;
        } else {
          refId = tx
            .insert(artifactRefs)
            .values({
              tenantId: scope.tenantId,
              artifactId: input.artifactId,
              ...key,
              ...described,
              sizeBytes: input.sizeBytes,
              createdAt: now,
              lastAccessedAt: now,
              expiresAt: input.expiresAt,
            })
            .returning({ refId: artifactRefs.refId })
            .get().refId;
        }
        const evicted = input.quota ? enforceQuota(input.quota, scope.tenantId, key, refId, input.sizeBytes, !live, now) : [];
        const row = selectRef(scope.tenantId, input.artifactId, key) as RefRow;
        removal.appendRefEvent('artifact.stored', row, now);
        return { row, created: !live, evicted };
      },
      { behavior: 'immediate' },
    ));
  };
}
