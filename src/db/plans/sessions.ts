/**
 * Ending a session, the same SQL for SQLite and D1: batches of at most `limit` references, each one
 * transaction (a D1 batch; on SQLite the same statements in one immediate transaction). A batch lists
 * the session's references in evict_plan, tallies them, removes them with the shared tail of
 * removal.ts (an artifact.deleted each), then drops the session's names that no version holds any
 * more, so a later save of such a name starts at 0 as after deleteName.
 */
import type { ScopeFilter, SessionTally } from '../repository.js';
import { removePlanned } from './removal.js';
import { scopeWhere, type Stmt } from './sql.js';

/** References one batch removes when the caller gives no size: enough to be quick, small enough to hold. */
export const SESSION_BATCH = 500;

export interface SessionEndPlan {
  stmts: Stmt[];
  /** The result whose one row is `{ upTo }`: the newest ref_id the whole end covers. */
  upToAt: number;
  /** The result whose one row is this batch's SessionTally. */
  tallyAt: number;
}

/**
 * One batch. `upTo` bounds the whole end to the references that existed when it began (the first
 * batch reads it), so a session written to while it ends still ends. Named versions go whether
 * live or not (as deleteName removes them), the session's other references while live (retention
 * expires the rest). With a trace in the filter no name is touched: names have no trace.
 */
export function endSessionPlan(
  tenantId: string,
  sessionId: string,
  filter: ScopeFilter,
  now: number,
  upTo: number | undefined,
  limit: number,
): SessionEndPlan {
  if (sessionId === '') throw new Error('endSession needs a session id: user-wide names have none');
  // Only the values set: better-sqlite3 refuses undefined ones.
  const params = {
    tenantId,
    sessionId,
    now,
    limit,
    ...(filter.userId === undefined ? {} : { userId: filter.userId }),
    ...(filter.traceId === undefined ? {} : { traceId: filter.traceId }),
    ...(upTo === undefined ? {} : { upTo }),
  };
  const bound = upTo === undefined ? '(SELECT coalesce(max(ref_id), 0) FROM artifact_refs)' : '@upTo';
  const scope = scopeWhere({ userId: filter.userId, traceId: filter.traceId }, '');
  const stmts: Stmt[] = [
    { sql: `SELECT ${bound} AS upTo`, params },
    {
      sql: `INSERT INTO evict_plan (ref_id, pass, size_bytes, tenant_id, artifact_id)
        SELECT ref_id, 0, size_bytes, tenant_id, artifact_id FROM artifact_refs
        WHERE tenant_id = @tenantId AND session_id = @sessionId AND ref_id <= ${bound}
          AND (expires_at > @now OR name != '') ${scope}
        ORDER BY ref_id LIMIT @limit`,
      params,
    },
    {
      sql: `SELECT count(*) AS refs, coalesce(sum(r.size_bytes), 0) AS bytes,
          coalesce(sum(CASE WHEN r.name != '' THEN 1 ELSE 0 END), 0) AS versions
        FROM evict_plan p JOIN artifact_refs r ON r.ref_id = p.ref_id`,
      params,
    },
    ...removePlanned('artifact.deleted', '@now', '', params).stmts,
  ];
  if (filter.traceId === undefined)
    stmts.push({
      sql: `DELETE FROM names WHERE tenant_id = @tenantId AND session_id = @sessionId
          ${filter.userId === undefined ? '' : 'AND user_id = @userId'}
          AND NOT EXISTS (SELECT 1 FROM artifact_refs r JOIN artifacts a ON a.tenant_id = r.tenant_id AND a.id = r.artifact_id
            WHERE r.tenant_id = names.tenant_id AND r.user_id = names.user_id AND r.session_id = names.session_id
              AND r.trace_id = '' AND r.name = names.name AND a.namespace = names.app)`,
      params,
    });
  return { stmts, upToAt: 0, tallyAt: 2 };
}

/**
 * Runs the batches through `run` (one transaction each, every statement's rows back) until one
 * removes fewer than `limit`, and adds up what they removed.
 */
export async function endSessionInBatches(
  run: (stmts: Stmt[]) => Promise<unknown[][]>,
  tenantId: string,
  sessionId: string,
  filter: ScopeFilter,
  now: number,
  limit = SESSION_BATCH,
): Promise<SessionTally> {
  if (!Number.isSafeInteger(limit) || limit < 1)
    throw new Error(`endSession batch size ${limit}: a whole number from 1`);
  const total: SessionTally = { refs: 0, bytes: 0, versions: 0 };
  let upTo: number | undefined;
  for (;;) {
    const plan = endSessionPlan(tenantId, sessionId, filter, now, upTo, limit);
    const results = await run(plan.stmts);
    upTo = (results[plan.upToAt]![0] as { upTo: number }).upTo;
    const batch = results[plan.tallyAt]![0] as SessionTally;
    total.refs += batch.refs;
    total.bytes += batch.bytes;
    total.versions += batch.versions;
    if (batch.refs < limit) return total;
  }
}
