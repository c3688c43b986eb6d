/**
 * Removal of references as statement plans (deleteRefs, expireRefs, enforceScope, and a put's
 * evictions): the references to remove are first listed in the scratch table evict_plan, then one
 * shared tail writes their events and removes them, and each artifact with its last reference.
 */
import type { ScopeFilter } from '../repository.js';
import {
  recencyOf,
  REMOVED_REF_JSON,
  SCOPE,
  SCOPE_JSON,
  scopeWhere,
  type Params,
  type ScopeKind,
  type Stmt,
} from './sql.js';

type RemovalEvent = 'artifact.evicted' | 'artifact.expired' | 'artifact.deleted';

export interface RemovalPlan {
  stmts: Stmt[];
  /** Index of the result that lists the removed references (EvictedRef rows). */
  removedAt: number;
}

/**
 * Removes the references listed in evict_plan: their events (from the rows as they are, before they
 * go), the removed rows as EvictedRefs, the rows, artifacts left without a reference, and the plan.
 * `now` is the events' time (SQL); `guard` (a condition, or '') holds back every write but the
 * plan's own cleanup.
 */
export function removePlanned(type: RemovalEvent, now: string, guard: string, params: Params): RemovalPlan {
  const where = guard ? `WHERE ${guard}` : '';
  const and = guard ? `AND ${guard}` : '';
  const sqls = [
    `INSERT INTO outbox (tenant_id, type, artifact_id, scope, ref, created_at)
     SELECT r.tenant_id, '${type}', r.artifact_id, ${SCOPE_JSON}, ${REMOVED_REF_JSON}, ${now}
     FROM evict_plan p JOIN artifact_refs r ON r.ref_id = p.ref_id
       LEFT JOIN artifacts a ON a.tenant_id = r.tenant_id AND a.id = r.artifact_id
     ${where} ORDER BY p.pass, p.ref_id`,
    `SELECT r.ref_id AS refId, r.size_bytes AS sizeBytes, r.tenant_id AS tenantId, r.artifact_id AS artifactId,
            r.user_id AS userId, r.session_id AS sessionId, r.trace_id AS traceId
     FROM evict_plan p JOIN artifact_refs r ON r.ref_id = p.ref_id ${where} ORDER BY p.pass, p.ref_id`,
    `DELETE FROM artifact_refs WHERE ref_id IN (SELECT ref_id FROM evict_plan) ${and}`,
    `DELETE FROM artifacts WHERE (tenant_id, id) IN (SELECT tenant_id, artifact_id FROM evict_plan)
       AND NOT EXISTS (SELECT 1 FROM artifact_refs r
                       WHERE r.tenant_id = artifacts.tenant_id AND r.artifact_id = artifacts.id)
       ${and}`,
    'DELETE FROM evict_plan',
  ];
  return { stmts: sqls.map((sql) => ({ sql, params })), removedAt: 1 };
}

function removal(select: string, type: RemovalEvent, params: Params): RemovalPlan {
  const tail = removePlanned(type, '@now', '', params);
  return {
    stmts: [
      { sql: `INSERT INTO evict_plan (ref_id, pass, size_bytes, tenant_id, artifact_id) ${select}`, params },
      ...tail.stmts,
    ],
    removedAt: 1 + tail.removedAt,
  };
}

/** expireRefs: up to `limit` references expired at `now`, soonest-expired first. */
export function expirePlan(now: number, limit: number): RemovalPlan {
  return removal(
    `SELECT ref_id, 0, size_bytes, tenant_id, artifact_id FROM artifact_refs
     WHERE expires_at <= @now ORDER BY expires_at LIMIT @limit`,
    'artifact.expired',
    { now, limit },
  );
}

/**
 * enforceScope: rank the scope's live references, most recently accessed (lru) or created (fifo)
 * first, keep the longest run that fits both limits, remove the rest. Named versions are never
 * evicted (their puts refuse instead), so they are not ranked.
 */
export function enforcePlan(
  tenantId: string,
  kind: ScopeKind,
  value: string,
  strategy: 'lru' | 'fifo',
  maxBytes: number,
  maxCount: number,
  now: number,
): RemovalPlan {
  return removal(
    `SELECT ref_id, 0, size_bytes, tenant_id, artifact_id FROM (
       SELECT ref_id, size_bytes, tenant_id, artifact_id,
              sum(size_bytes) OVER w AS running, row_number() OVER w AS position
       FROM artifact_refs WHERE tenant_id = @tenantId AND ${SCOPE[kind].column} = @value AND expires_at > @now
         AND name = ''
       WINDOW w AS (ORDER BY ${recencyOf(strategy)} DESC, ref_id DESC ROWS UNBOUNDED PRECEDING)) AS ranked
     WHERE (@maxBytes > 0 AND running > @maxBytes) OR (@maxCount > 0 AND position > @maxCount)`,
    'artifact.evicted',
    { tenantId, value, now, maxBytes, maxCount },
  );
}

/** deleteRefs: the live references to one artifact visible through `filter`. */
export function deletePlan(tenantId: string, artifactId: string, filter: ScopeFilter, now: number): RemovalPlan {
  return removal(
    `SELECT ref_id, 0, size_bytes, tenant_id, artifact_id FROM artifact_refs
     WHERE tenant_id = @tenantId AND artifact_id = @artifactId AND expires_at > @now ${scopeWhere(filter, '')}`,
    'artifact.deleted',
    { tenantId, artifactId, now, userId: filter.userId, sessionId: filter.sessionId, traceId: filter.traceId },
  );
}
