import type { AuditEntry, AuditFilter, NewOutboxEvent } from './repository.js';

/**
 * The audit trail's statements, the same text for SQLite and D1. An entry and its `audit.recorded`
 * outbox row are written together (one transaction on SQLite, one batch on D1).
 */
export const INSERT_AUDIT_SQL = `INSERT INTO audit_log (at, tenant_id, action, role, actor_kind, actor_id, target, details, request_id)
  VALUES (@at, @tenantId, @action, @role, @actorKind, @actorId, @target, @details, @requestId)
  RETURNING seq`;

/** The outbox row of the entry just inserted (its seq read back inside the same transaction). */
export const INSERT_AUDIT_EVENT_SQL = `INSERT INTO outbox (tenant_id, type, artifact_id, scope, ref, data, created_at)
  SELECT tenant_id, 'audit.recorded', coalesce(target, ''), '{"userId":"","sessionId":"","traceId":""}', NULL,
    json_object('seq', seq, 'at', at, 'tenantId', tenant_id, 'action', action, 'role', role, 'actorKind', actor_kind,
      'actorId', actor_id, 'target', target, 'details', json(details), 'requestId', request_id), at
  FROM audit_log WHERE seq = (SELECT max(seq) FROM audit_log)`;

/** An event about something other than an artifact (`resource.updated`): its payload is in `data`. */
export const INSERT_EVENT_SQL = `INSERT INTO outbox (tenant_id, type, artifact_id, scope, ref, data, created_at)
  VALUES (@tenantId, @type, @subject, @scope, NULL, @data, @at)`;

/**
 * Drops old events from the front of the outbox: of the `@limit` oldest rows by seq, those created
 * before `@before`. Each call reads at most `@limit` rows. Asking the whole table for rows older
 * than a time (there is no index on it) read every event kept, in one statement, on every retention
 * run. Events are appended in time order; one out of order (another instance's clock) is dropped
 * once those before it have gone.
 */
export const TRIM_EVENTS_SQL = `DELETE FROM outbox WHERE seq IN (
  SELECT seq FROM (SELECT seq, created_at FROM outbox ORDER BY seq LIMIT @limit) AS oldest WHERE created_at < @before)`;

/** The parameters of INSERT_EVENT_SQL. */
export function eventParams(e: NewOutboxEvent): Record<string, string | number> {
  return {
    tenantId: e.tenantId,
    type: e.type,
    subject: e.subject,
    scope: JSON.stringify({
      userId: e.scope.userId ?? '',
      sessionId: e.scope.sessionId ?? '',
      traceId: e.scope.traceId ?? '',
    }),
    data: JSON.stringify(e.data),
    at: e.at,
  };
}

/** Drops old entries from the front of the trail, reading at most `@limit` rows, as TRIM_EVENTS_SQL. */
export const TRIM_AUDIT_SQL = `DELETE FROM audit_log WHERE seq IN (
  SELECT seq FROM (SELECT seq, at FROM audit_log ORDER BY seq LIMIT @limit) AS oldest WHERE at < @before)`;

const AUDIT_COLUMNS = `seq, at, tenant_id AS tenantId, action, role, actor_kind AS actorKind, actor_id AS actorId, target, details, request_id AS requestId`;

/** Newest first, narrowed by whichever of @tenantId, @action, @since, @beforeSeq the filter gives. */
export function listAuditSql(f: AuditFilter): string {
  const where = ['1 = 1'];
  if (f.tenantId !== undefined) where.push('tenant_id = @tenantId');
  if (f.action !== undefined) where.push('action = @action');
  if (f.since !== undefined) where.push('at >= @since');
  if (f.beforeSeq !== undefined) where.push('seq < @beforeSeq');
  return `SELECT ${AUDIT_COLUMNS} FROM audit_log WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT @limit`;
}

export type RawAuditRow = Omit<AuditEntry, 'details'> & { details: string | null };

export function toAuditEntry(r: RawAuditRow): AuditEntry {
  return { ...r, details: r.details === null ? null : (JSON.parse(r.details) as Record<string, unknown>) };
}

/** The parameters of INSERT_AUDIT_SQL. */
export function auditParams(e: Omit<AuditEntry, 'seq'>): Record<string, string | number | null> {
  return {
    at: e.at,
    tenantId: e.tenantId,
    action: e.action,
    role: e.role,
    actorKind: e.actorKind,
    actorId: e.actorId,
    target: e.target,
    details: e.details === null ? null : JSON.stringify(e.details),
    requestId: e.requestId,
  };
}
