/**
 * SQL text the statement plans share (and the D1 repository's reads): statements as values, the
 * reference join, event payloads built in SQL, and scope conditions.
 */
import type { QuotaLimits } from '../../core/limits.js';
import type { ScopeFilter } from '../repository.js';

export type Params = Record<string, unknown>;
/** One statement: SQL with `@name` placeholders and their values (one object may serve many statements). */
export interface Stmt {
  sql: string;
  params: Params;
}

/** A reference joined with its artifact, in RefRow's shape (meta and source still JSON text). */
export const REF_COLUMNS = `r.ref_id AS refId, r.tenant_id AS tenantId, r.artifact_id AS artifactId,
  a.namespace AS namespace, a.sha256 AS sha256, a.size_bytes AS sizeBytes,
  r.user_id AS userId, r.session_id AS sessionId, r.trace_id AS traceId,
  r.mime_type AS mimeType, r.filename AS filename, r.meta AS meta, r.source AS source,
  r.created_at AS createdAt, r.last_accessed_at AS lastAccessedAt, r.expires_at AS expiresAt,
  r.name AS name, r.version AS version`;
export const REF_JOIN = 'artifact_refs r JOIN artifacts a ON a.tenant_id = r.tenant_id AND a.id = r.artifact_id';

// Event payloads are built in SQL with the same keys in the same order as a JSON.stringify of the
// row, so every write path produces the same outbox text.
export const SCOPE_JSON = `json_object('userId', r.user_id, 'sessionId', r.session_id, 'traceId', r.trace_id)`;
/** The stored reference: the artifact's size, as the caller's row has it. */
export const STORED_REF_JSON = `json_object('refId', r.ref_id, 'tenantId', r.tenant_id, 'artifactId', r.artifact_id,
  'namespace', a.namespace, 'sha256', a.sha256, 'sizeBytes', a.size_bytes,
  'userId', r.user_id, 'sessionId', r.session_id, 'traceId', r.trace_id,
  'mimeType', r.mime_type, 'filename', r.filename, 'meta', json(r.meta), 'source', json(r.source),
  'createdAt', r.created_at, 'lastAccessedAt', r.last_accessed_at, 'expiresAt', r.expires_at,
  'name', r.name, 'version', r.version)`;
/** A removed reference: the reference's own size, its artifact's facts last ('' if it has none). */
export const REMOVED_REF_JSON = `json_object('refId', r.ref_id, 'tenantId', r.tenant_id, 'artifactId', r.artifact_id,
  'userId', r.user_id, 'sessionId', r.session_id, 'traceId', r.trace_id, 'sizeBytes', r.size_bytes,
  'mimeType', r.mime_type, 'filename', r.filename, 'meta', json(r.meta), 'source', json(r.source),
  'createdAt', r.created_at, 'lastAccessedAt', r.last_accessed_at, 'expiresAt', r.expires_at,
  'name', r.name, 'version', r.version,
  'namespace', coalesce(a.namespace, ''), 'sha256', coalesce(a.sha256, ''))`;

export type ScopeKind = 'session' | 'trace';
/**
 * Per scope kind: its column and parameter, its limits' parameter infix, its eviction pass in a put,
 * its put_ctx columns.
 */
export const SCOPE = {
  session: { column: 'session_id', param: 'sessionId', limit: 'Session', pass: 1, n: 'sess_n', bytes: 'sess_bytes' },
  trace: { column: 'trace_id', param: 'traceId', limit: 'Trace', pass: 2, n: 'trace_n', bytes: 'trace_bytes' },
} as const;
/** The column eviction ranks by: last access (lru) or creation (fifo). */
export const recencyOf = (strategy: 'lru' | 'fifo') => (strategy === 'fifo' ? 'created_at' : 'last_accessed_at');

/**
 * One scope's limits under a quota, for bringing it back within them: undefined when nothing is to
 * be evicted there (a strategy that evicts nothing, or no limit at all).
 */
export function scopeEviction(
  kind: ScopeKind,
  quota: QuotaLimits,
): { strategy: 'lru' | 'fifo'; maxBytes: number; maxCount: number } | undefined {
  const { strategy } = quota;
  if (strategy !== 'lru' && strategy !== 'fifo') return undefined;
  const [maxBytes, maxCount] =
    kind === 'session'
      ? [quota.maxSessionBytes ?? 0, quota.maxSessionCount ?? 0]
      : [quota.maxTraceBytes ?? 0, quota.maxTraceCount ?? 0];
  return maxBytes === 0 && maxCount === 0 ? undefined : { strategy, maxBytes, maxCount };
}

/** The scope parts a filter sets, as conditions on `alias`'s columns (params userId, sessionId, traceId). */
export function scopeWhere(filter: ScopeFilter, alias: string): string {
  const p = alias ? `${alias}.` : '';
  return [
    filter.userId !== undefined ? `AND ${p}user_id = @userId` : '',
    filter.sessionId !== undefined ? `AND ${p}session_id = @sessionId` : '',
    filter.traceId !== undefined ? `AND ${p}trace_id = @traceId` : '',
  ].join(' ');
}

/**
 * Takes a lease that is free, lapsed or already the holder's (@name, @holder, @until, @now): one row
 * changes when the holder has it afterwards.
 */
export const CLAIM_LEASE = `INSERT INTO leases (name, holder, expires_at) VALUES (@name, @holder, @until)
  ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
  WHERE leases.expires_at <= @now OR leases.holder = excluded.holder`;

/** Gives up a lease the holder has (@name, @holder). */
export const RELEASE_LEASE = 'DELETE FROM leases WHERE name = @name AND holder = @holder';
