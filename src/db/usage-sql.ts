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
