/**
 * Retention on D1: expiry, bringing sessions and traces within their quotas, orphaned artifacts, and
 * the reports of past runs. Each multi-statement write is one batch (see plans/removal.ts).
 */
import { ARTIFACT_WINDOW_SQL, DROP_UNREFERENCED_WINDOW_SQL } from '../blob-sql.js';
import { enforcePlan, expirePlan } from '../plans/removal.js';
import { CLAIM_LEASE, RELEASE_LEASE, SCOPE, scopeEviction } from '../plans/sql.js';
import type { EvictedRef, RetentionRepository, ScopeUsage } from '../repository.js';
import { tallyByTenant } from '../usage-sql.js';
import type { D1Context } from './binding.js';

export function d1Retention({ all, run, batch }: D1Context): RetentionRepository {
  return {
    async expireRefs(now, limit) {
      const plan = expirePlan(now, limit);
      const gone = (await batch(plan.stmts))[plan.removedAt] as EvictedRef[];
      return { refs: gone.length, bytes: gone.reduce((sum, r) => sum + r.sizeBytes, 0), byTenant: tallyByTenant(gone) };
    },

    async scopesOver(kind, now, minCount, minBytes, after, limit) {
      const { column } = SCOPE[kind];
      return all<ScopeUsage>(
        `SELECT tenant_id AS tenantId, ${column} AS value, count(*) AS count, total(size_bytes) AS bytes
         FROM artifact_refs
         WHERE ${column} != '' AND expires_at > @now
           AND (tenant_id > @afterTenant OR (tenant_id = @afterTenant AND ${column} > @afterValue))
         GROUP BY tenant_id, ${column}
         HAVING count(*) > @minCount OR total(size_bytes) > @minBytes
         ORDER BY tenant_id, ${column}
         LIMIT @limit`,
        { now, minCount, minBytes, afterTenant: after?.tenantId ?? '', afterValue: after?.value ?? '', limit },
      );
    },

    async enforceScope(tenantId, kind, value, quota, now) {
      const eviction = scopeEviction(kind, quota);
      if (!eviction) return [];
      const { strategy, maxBytes, maxCount } = eviction;
      const plan = enforcePlan(tenantId, kind, value, strategy, maxBytes, maxCount, now);
      return (await batch(plan.stmts))[plan.removedAt] as EvictedRef[];
    },

    async dropUnreferencedArtifacts(after, limit) {
      const params = { after, limit };
      const [window, dropped] = (await batch([
        { sql: ARTIFACT_WINDOW_SQL, params },
        { sql: `${DROP_UNREFERENCED_WINDOW_SQL} RETURNING rowid`, params },
      ])) as [{ n: number; last: number | null }[], unknown[]];
      return { dropped: dropped.length, next: window[0]!.n < limit ? null : window[0]!.last };
    },

    async recordRetentionRun(r) {
      const sql = `INSERT INTO retention_runs (trigger, started_at, finished_at, report)
        VALUES (@trigger, @startedAt, @finishedAt, @report)`;
      await run(sql, {
        trigger: r.trigger,
        startedAt: r.startedAt,
        finishedAt: r.finishedAt,
        report: JSON.stringify(r.report),
      });
    },

    async retentionRuns(limit) {
      const rows = await all<{ id: number; trigger: string; startedAt: number; finishedAt: number; report: string }>(
        `SELECT id, trigger, started_at AS startedAt, finished_at AS finishedAt, report
         FROM retention_runs ORDER BY started_at DESC, id DESC LIMIT @limit`,
        { limit },
      );
      return rows.map((r) => ({ ...r, report: JSON.parse(r.report) as Record<string, unknown> }));
    },

    async claimLease(name, holder, until, now) {
      return (await run(CLAIM_LEASE, { name, holder, until, now })) > 0;
    },

    async releaseLease(name, holder) {
      await run(RELEASE_LEASE, { name, holder });
    },
  };
}
