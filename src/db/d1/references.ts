/**
 * References on D1: the put (the shared statement plan, as one batch), lookups, listing, deletion
 * and live usage.
 */
import { commitPutPlan, putRefusal, type PutVerdict } from '../plans/put.js';
import { listStatement } from '../plans/list.js';
import { deletePlan } from '../plans/removal.js';
import { endSessionInBatches } from '../plans/sessions.js';
import { REF_COLUMNS, REF_JOIN, scopeWhere } from '../plans/sql.js';
import type { EvictedRef, ReferenceRepository, ScopeUsage } from '../repository.js';
import { usageSql } from '../usage-sql.js';
import type { StatementContext } from './binding.js';
import { toRefRow, type RawRefRow } from './rows.js';

export function d1References({ all, run, batch, sqlClock }: StatementContext): ReferenceRepository {
  return {
    async commitPut(input) {
      // The caller's clock is read before the batch (nothing can run inside it); with the database
      // clock, the batch then moves `now` forward to when it actually runs.
      const now = input.clock ? Math.max(input.now, input.clock()) : input.now;
      const plan = commitPutPlan(
        input,
        now,
        input.expiresAt + (now - input.now),
        sqlClock && input.clock !== undefined,
      );
      const results = await batch(plan.stmts);
      const verdict = results[plan.at.verdict]![0] as PutVerdict;
      const refusal = putRefusal(input, plan.limits, verdict);
      if (refusal) throw refusal;
      const row = results[plan.at.row]![0] as RawRefRow | undefined;
      if (!row) throw new Error('The put was accepted but its reference is missing');
      const evicted = plan.at.evicted === undefined ? [] : (results[plan.at.evicted] as EvictedRef[]);
      return { row: toRefRow(row), created: !verdict.live, evicted };
    },

    async findRef(tenantId, artifactId, filter, now) {
      const [raw] = await all<RawRefRow>(
        `SELECT ${REF_COLUMNS} FROM ${REF_JOIN}
         WHERE r.tenant_id = @tenantId AND r.artifact_id = @artifactId AND r.expires_at > @now ${scopeWhere(filter, 'r')}
         ORDER BY r.created_at DESC, r.ref_id DESC LIMIT 1`,
        { tenantId, artifactId, now, ...filter },
      );
      return raw ? toRefRow(raw) : undefined;
    },

    async touch(refIds, at) {
      if (refIds.length === 0) return;
      const sql = `UPDATE artifact_refs SET last_accessed_at = @at
        WHERE ref_id IN (SELECT CAST(value AS INTEGER) FROM json_each(@ids)) AND last_accessed_at < @at`;
      await run(sql, { at, ids: JSON.stringify(refIds) });
    },

    async deleteRefs(tenantId, artifactId, filter, now) {
      const plan = deletePlan(tenantId, artifactId, filter, now);
      return (await batch(plan.stmts))[plan.removedAt]!.length;
    },

    async endSession(tenantId, sessionId, filter, now, batchSize) {
      return endSessionInBatches(batch, tenantId, sessionId, filter, now, batchSize);
    },

    async list(tenantId, f) {
      const { sql, params } = listStatement(tenantId, f);
      return (await all<RawRefRow>(sql, params)).map(toRefRow);
    },

    async usage(kind, now, o) {
      const params = { now, limit: o.limit, tenantId: o.tenantId, sessionId: o.sessionId, traceId: o.traceId };
      return all<ScopeUsage>(usageSql(kind, o), params);
    },

    async storedTotals(now) {
      // One statement, so both totals come from one snapshot.
      const [t] = await all<{ refs: number; refBytes: number; blobs: number; blobBytes: number }>(
        `SELECT (SELECT count(*) FROM artifact_refs WHERE expires_at > @now) AS refs,
                (SELECT total(size_bytes) FROM artifact_refs WHERE expires_at > @now) AS refBytes,
                (SELECT count(*) FROM blobs) AS blobs, (SELECT total(size_bytes) FROM blobs) AS blobBytes`,
        { now },
      );
      return t!;
    },
  };
}
