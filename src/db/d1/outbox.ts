/** The outbox (events every process writes and readers follow) and the audit trail, on D1. */
import {
  auditParams,
  eventParams,
  INSERT_AUDIT_EVENT_SQL,
  INSERT_EVENT_SQL,
  INSERT_AUDIT_SQL,
  listAuditSql,
  toAuditEntry,
  TRIM_AUDIT_SQL,
  TRIM_EVENTS_SQL,
  type RawAuditRow,
} from '../audit-sql.js';
import type { OutboxEvent, OutboxRepository, RefRow } from '../repository.js';
import type { StatementContext } from './binding.js';
import { parseJson } from './rows.js';

type RawEvent = Omit<OutboxEvent, 'scope' | 'ref' | 'data'> & {
  scope: string;
  ref: string | null;
  data: string | null;
};

export function d1Outbox({ all, run, batch }: StatementContext): OutboxRepository {
  return {
    async readEvents(tenantId, afterSeq, limit) {
      const rows = await all<RawEvent>(
        `SELECT seq, tenant_id AS tenantId, type, artifact_id AS artifactId, scope, ref, data, created_at AS createdAt
         FROM outbox WHERE ${tenantId === undefined ? '' : 'tenant_id = @tenantId AND'} seq > @afterSeq
         ORDER BY seq LIMIT @limit`,
        tenantId === undefined ? { afterSeq, limit } : { tenantId, afterSeq, limit },
      );
      return rows.map((r) => ({
        ...r,
        scope: JSON.parse(r.scope) as OutboxEvent['scope'],
        ref: parseJson<RefRow>(r.ref),
        data: parseJson<Record<string, unknown>>(r.data),
      }));
    },

    async lastEventSeq() {
      return (await all<{ seq: number }>('SELECT coalesce(max(seq), 0) AS seq FROM outbox'))[0]!.seq;
    },

    async trimEvents(before, limit) {
      return run(TRIM_EVENTS_SQL, { before, limit });
    },

    async appendEvent(event) {
      await run(INSERT_EVENT_SQL, eventParams(event));
    },

    async recordAudit(entry) {
      const [inserted] = await batch([
        { sql: INSERT_AUDIT_SQL, params: auditParams(entry) },
        { sql: INSERT_AUDIT_EVENT_SQL, params: {} },
      ]);
      return { seq: (inserted![0] as { seq: number }).seq, ...entry };
    },

    async listAudit(filter) {
      const { tenantId, action, since, beforeSeq, limit } = filter;
      const given = Object.entries({ tenantId, action, since, beforeSeq, limit }).filter(([, v]) => v !== undefined);
      const params = Object.fromEntries(given);
      return (await all<RawAuditRow>(listAuditSql(filter), params)).map(toAuditEntry);
    },

    async trimAudit(before, limit) {
      return run(TRIM_AUDIT_SQL, { before, limit });
    },
  };
}
