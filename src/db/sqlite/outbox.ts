/** The outbox (events every process writes and readers follow) and the audit trail, on SQLite. */
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
import type { AuditEntry, OutboxEvent, OutboxRepository, RefRow } from '../repository.js';
import type { SqliteContext } from './connection.js';
import { parseJson } from './rows.js';

const EVENT_COLUMNS = `seq, tenant_id AS tenantId, type, artifact_id AS artifactId, scope, ref, data,
  created_at AS createdAt`;

type RawEvent = Omit<OutboxEvent, 'scope' | 'ref' | 'data'> & {
  scope: string;
  ref: string | null;
  data: string | null;
};

/** Named parameters without the unset ones (better-sqlite3 refuses undefined). */
function definedOnly(params: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined));
}

export function sqliteOutbox({ sqlite, writing }: SqliteContext): OutboxRepository {
  const readEventsStmt = sqlite.prepare(
    `SELECT ${EVENT_COLUMNS} FROM outbox WHERE tenant_id = @tenantId AND seq > @afterSeq ORDER BY seq LIMIT @limit`,
  );
  const readAllEventsStmt = sqlite.prepare(
    `SELECT ${EVENT_COLUMNS} FROM outbox WHERE seq > @afterSeq ORDER BY seq LIMIT @limit`,
  );
  const trimEventsStmt = sqlite.prepare(TRIM_EVENTS_SQL);
  const insertAudit = sqlite.prepare(INSERT_AUDIT_SQL);
  const insertAuditEvent = sqlite.prepare(INSERT_AUDIT_EVENT_SQL);
  const trimAuditStmt = sqlite.prepare(TRIM_AUDIT_SQL);
  const insertEvent = sqlite.prepare(INSERT_EVENT_SQL);

  return {
    async readEvents(tenantId, afterSeq, limit) {
      const read =
        tenantId === undefined
          ? readAllEventsStmt.all({ afterSeq, limit })
          : readEventsStmt.all({ tenantId, afterSeq, limit });
      const rows = read as RawEvent[];
      return rows.map((r) => ({
        ...r,
        scope: JSON.parse(r.scope) as OutboxEvent['scope'],
        ref: r.ref === null ? null : (JSON.parse(r.ref) as RefRow),
        data: parseJson(r.data),
      }));
    },

    async lastEventSeq() {
      return (sqlite.prepare('SELECT coalesce(max(seq), 0) AS seq FROM outbox').get() as { seq: number }).seq;
    },

    async trimEvents(before, limit) {
      return writing(() => trimEventsStmt.run({ before, limit }).changes);
    },

    async appendEvent(event) {
      writing(() => insertEvent.run(eventParams(event)));
    },

    async recordAudit(entry) {
      return writing(() =>
        sqlite
          .transaction((): AuditEntry => {
            const { seq } = insertAudit.get(auditParams(entry)) as { seq: number };
            insertAuditEvent.run();
            return { seq, ...entry };
          })
          .immediate(),
      );
    },

    async listAudit(filter) {
      const rows = sqlite.prepare(listAuditSql(filter)).all(definedOnly(filter)) as RawAuditRow[];
      return rows.map(toAuditEntry);
    },

    async trimAudit(before, limit) {
      return trimAuditStmt.run({ before, limit }).changes;
    },
  };
}
