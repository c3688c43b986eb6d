import type { UsageOptions } from './repository.js';

/**
 * The live-usage query of `ArtifactRepository.usage`, the same text for SQLite and D1: per tenant,
 * or per session / trace, biggest first. Parameters: @now, @limit and whichever of @tenantId,
 * @sessionId, @traceId the options give.
 */
export function usageSql(kind: 'tenant' | 'session' | 'trace', o: UsageOptions): string {
  const column = kind === 'tenant' ? null : kind === 'session' ? 'session_id' : 'trace_id';
  const where = ['expires_at > @now'];
  if (o.tenantId !== undefined) where.push('tenant_id = @tenantId');
  if (o.sessionId !== undefined) where.push('session_id = @sessionId');
  if (o.traceId !== undefined) where.push('trace_id = @traceId');
  if (column) where.push(`${column} != ''`);
  const group = column ? `tenant_id, ${column}` : 'tenant_id';
  return `SELECT tenant_id AS tenantId, ${column ?? 'tenant_id'} AS value, count(*) AS count, total(size_bytes) AS bytes
    FROM artifact_refs WHERE ${where.join(' AND ')} GROUP BY ${group} ORDER BY bytes DESC, ${group} LIMIT @limit`;
}

/** Removed references tallied per tenant (what a retention run reports to each tenant's admin). */
export function tallyByTenant(
  rows: readonly { tenantId: string; sizeBytes: number }[],
): Record<string, { refs: number; bytes: number }> {
  const out: Record<string, { refs: number; bytes: number }> = {};
  for (const r of rows) {
    let t = out[r.tenantId];
    if (!t) {
      t = { refs: 0, bytes: 0 };
      out[r.tenantId] = t;
    }
    t.refs++;
    t.bytes += r.sizeBytes;
  }
  return out;
}

/**
 * Sessions or traces over a count or byte limit, a window at a time. `windowEnd` finds the scope
 * key @rows references past (@afterTenant, @afterValue) in the scope's index; `page` sums the live
 * references of every scope from there up to and including that key (all of its last scope, so no
 * scope is split), `lastPage` those to the end when there is no such key. Summing every live
 * reference in one statement held a retention run for as long as the table is big.
 */
export function scopesOverSql(column: 'session_id' | 'trace_id'): {
  windowEnd: string;
  page: string;
  lastPage: string;
} {
  const from = `${column} != '' AND (tenant_id, ${column}) > (@afterTenant, @afterValue)`;
  const page = (upTo: string) => `
    SELECT tenant_id AS tenantId, ${column} AS value, count(*) AS count, total(size_bytes) AS bytes
    FROM artifact_refs
    WHERE ${from} ${upTo} AND expires_at > @now
    GROUP BY tenant_id, ${column}
    HAVING count(*) > @minCount OR total(size_bytes) > @minBytes
    ORDER BY tenant_id, ${column}`;
  return {
    windowEnd: `SELECT tenant_id AS tenantId, ${column} AS value FROM artifact_refs WHERE ${from}
      ORDER BY tenant_id, ${column} LIMIT 1 OFFSET @rows - 1`,
    page: page(`AND (tenant_id, ${column}) <= (@endTenant, @endValue)`),
    lastPage: page(''),
  };
}
