/**
 * Retention on D1: expiry, bringing sessions and traces within their quotas, orphaned artifacts, and
 * the reports of past runs. Each multi-statement write is one batch (see plans/removal.ts).
 */
import { ARTIFACT_WINDOW_SQL, DROP_UNREFERENCED_WINDOW_SQL, windowNext } from '../blob-sql.js';
import { enforcePlan, expirePlan } from '../plans/removal.js';
import { CLAIM_LEASE, RELEASE_LEASE, SCOPE, scopeEviction } from '../plans/sql.js';
import type { EvictedRef, RetentionRepository, ScopeUsage } from '../repository.js';
import { scopesOverSql, tallyByTenant } from '../usage-sql.js';
import type { StatementContext } from './binding.js';

export function d1Retention({ all, run, batch }: StatementContext): RetentionRepository {
  return {
    async expireRefs(now, limit) {
      const plan = expirePlan(now, limit);
      const gone = (await batch(plan.stmts))[plan.removedAt] as EvictedRef[];
      return { refs: gone.length, bytes: gone.reduce((sum, r) => sum + r.sizeBytes, 0), byTenant: tallyByTenant(gone) };
    },

    async scopesOver(kind, now, minCount, minBytes, after, rows) {
      const sql = scopesOverSql(SCOPE[kind].column as 'session_id' | 'trace_id');
      const from = { afterTenant: after?.tenantId ?? '', afterValue: after?.value ?? '' };
      const [end] = await all<{ tenantId: string; value: string }>(sql.windowEnd, { ...from, rows });
      const params = { ...from, now, minCount, minBytes };
      const scopes = end
        ? await all<ScopeUsage>(sql.page, { ...params, endTenant: end.tenantId, endValue: end.value })
        : await all<ScopeUsage>(sql.lastPage, params);
      return { scopes, next: end ?? null };
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
      return { dropped: dropped.length, next: windowNext(window[0]!, limit) };
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
