import { errors } from '../core/errors.js';
import { commitPutPlan, deletePlan, enforcePlan, expirePlan, pinPlan, REF_COLUMNS, REF_JOIN, scopeWhere, type Params, type PutVerdict, type Stmt } from './d1-plans.js';
import { tallyByTenant, usageSql } from './usage-sql.js';
import { auditParams, INSERT_AUDIT_EVENT_SQL, INSERT_AUDIT_SQL, listAuditSql, toAuditEntry, TRIM_AUDIT_SQL, type RawAuditRow } from './audit-sql.js';
import { artifactTooBigForScope, pinLost, scopeFull, tenantFull } from './put-errors.js';
import type { ApiKeyRecord, ArtifactRepository, EvictedRef, OutboxEvent, RefRow, ScopeUsage, UploadRecord } from './repository.js';

/**
 * The part of Cloudflare's D1 binding this repository uses (`D1Database` of
 * @cloudflare/workers-types), so it compiles without the Workers types and runs against Miniflare's
 * binding from Node in tests.
 */
export interface D1ResultLike<T = Record<string, unknown>> {
  results?: T[];
  meta: { changes?: number; last_row_id?: number };
}
export interface D1PreparedStatementLike {
  bind(...values: unknown[]): D1PreparedStatementLike;
  all<T = Record<string, unknown>>(): Promise<D1ResultLike<T>>;
  run<T = Record<string, unknown>>(): Promise<D1ResultLike<T>>;
  first<T = Record<string, unknown>>(): Promise<T | null>;
}
/** What D1 and a D1 session have in common. */
export interface D1QueryableLike {
  prepare(sql: string): D1PreparedStatementLike;
  batch<T = Record<string, unknown>>(statements: D1PreparedStatementLike[]): Promise<D1ResultLike<T>[]>;
}
export interface D1DatabaseLike extends D1QueryableLike {
  withSession?(constraintOrBookmark?: string): D1QueryableLike;
}

export interface D1RepositoryOptions {
  db: D1DatabaseLike;
  /**
   * Read replication. Absent: every query goes to `db` as given, and D1 serves queries made outside
   * a session from the primary, so every read sees every committed write.
   * 'first-primary': the repository runs all its queries in one D1 session (`db.withSession`) whose
   * first query goes to the primary; later reads may be served by replicas, but only by ones that
   * have caught up with everything the session has written or read. A put followed by a get through
   * the same repository then always finds the put. The session's position only moves forward, so
   * create the repository per request (or per client session), not once per isolate. Ignored when the
   * binding has no Sessions API (then everything goes to the primary anyway).
   */
  consistency?: 'first-primary';
  /**
   * Where a put that passes `clock` (see CommitPutInput) takes its time from. 'database' (default):
   * inside the put's batch, from the database's clock, never earlier than the caller's. In a Worker
   * `Date.now()` does not move during a request, so only the database can say when the batch
   * actually ran, and times then follow commit order, which lru and fifo eviction rank by. 'caller':
   * from `clock()` just before the batch (tests that drive time by hand).
   */
  clock?: 'database' | 'caller';
}

/** `@name` placeholders as D1's `?NNN`, numbered by first appearance (compiled once per SQL text). */
const compiled = new Map<string, { sql: string; names: string[] }>();
function compile(sql: string): { sql: string; names: string[] } {
  let c = compiled.get(sql);
  if (!c) {
    const names: string[] = [];
    const text = sql.replace(/@([A-Za-z_][A-Za-z0-9_]*)/g, (_, name: string) => {
      let i = names.indexOf(name);
      if (i < 0) i = names.push(name) - 1;
      return `?${i + 1}`;
    });
    c = { sql: text, names };
    compiled.set(sql, c);
  }
  return c;
}

/** A JSON column's text as its value. */
function parseJson<T = Record<string, unknown>>(value: unknown): T | null {
  return value === null || value === undefined ? null : (JSON.parse(value as string) as T);
}

type RawRefRow = Omit<RefRow, 'meta' | 'source'> & { meta: string | null; source: string | null };
const toRefRow = (raw: RawRefRow): RefRow => ({ ...raw, meta: parseJson(raw.meta), source: parseJson(raw.source) });

type RawUpload = Omit<UploadRecord, 'options'> & { options: string };
const UPLOAD_COLUMNS = `id, tenant_id AS tenantId, user_id AS userId, session_id AS sessionId, trace_id AS traceId, staging_key AS stagingKey,
  size_bytes AS sizeBytes, sha256, options, created_at AS createdAt, expires_at AS expiresAt`;
const toUpload = (raw: RawUpload): UploadRecord => ({ ...raw, options: JSON.parse(raw.options) as Record<string, unknown> });

type RawApiKey = Omit<ApiKeyRecord, 'perms'> & { perms: string };
const API_KEY_COLUMNS = 'id, tenant_id AS tenantId, operator, perms, label, created_at AS createdAt, revoked_at AS revokedAt';

const SCOPE_COLUMN = { session: 'session_id', trace: 'trace_id' } as const;
/** No live pin: no put is between knowing these bytes' hash and committing its metadata. */
const UNPINNED = 'NOT EXISTS (SELECT 1 FROM blob_pins p WHERE p.sha256 = b.sha256 AND p.until >= @now)';

/**
 * The metadata store on Cloudflare D1, answering exactly as the SQLite repository does (same rows,
 * ids, events, errors and details; a differential test holds the two together).
 *
 * D1 has no interactive transactions, so each multi-statement write is one batch (one transaction):
 * commitPut, deleteRefs, expireRefs, enforceScope, pinBlob and forgetBlobs. See d1-plans.ts for how a
 * put decides inside its batch. Lists of ids travel as one JSON parameter (json_each), since D1 takes
 * at most 100 bound parameters per statement. The schema comes from the same migrations, applied with
 * `wrangler d1 migrations apply`; nothing migrates at runtime. No online backup: D1 has Time Travel.
 */
export function createD1Repository(options: D1RepositoryOptions): ArtifactRepository {
  const { db } = options;
  const conn: D1QueryableLike = options.consistency === 'first-primary' && typeof db.withSession === 'function' ? db.withSession('first-primary') : db;
  const sqlClock = (options.clock ?? 'database') === 'database';

  const prepare = (s: Stmt): D1PreparedStatementLike => {
    const c = compile(s.sql);
    const values = c.names.map((name) => {
      if (!(name in s.params)) throw new Error(`No value for @${name}`);
      const v = s.params[name];
      return v === undefined ? null : typeof v === 'boolean' ? Number(v) : v;
    });
    const stmt = conn.prepare(c.sql);
    return values.length > 0 ? stmt.bind(...values) : stmt;
  };
  const all = async <T>(sql: string, params: Params = {}): Promise<T[]> => (await prepare({ sql, params }).all<T>()).results ?? [];
  const run = async (sql: string, params: Params = {}): Promise<number> => (await prepare({ sql, params }).run()).meta.changes ?? 0;
  const batch = async (stmts: Stmt[]): Promise<unknown[][]> => (await conn.batch(stmts.map(prepare))).map((r) => r.results ?? []);

  return {
    async commitPut(input) {
      // The caller's clock is read before the batch (nothing can run inside it); with the database
      // clock, the batch then moves `now` forward to when it actually runs.
      const now = input.clock ? Math.max(input.now, input.clock()) : input.now;
      const plan = commitPutPlan(input, now, input.expiresAt + (now - input.now), sqlClock && input.clock !== undefined);
      const results = await batch(plan.stmts);
      const v = results[plan.at.verdict]![0] as PutVerdict;
      const size = input.sizeBytes;
      const { session, trace, maxTenantBytes } = plan.limits;
      switch (v.refused) {
        case null:
          break;
        case 'pin':
          throw pinLost();
        case 'collision':
          throw errors.hashCollision(input.artifactId);
        case 'session_big':
          throw artifactTooBigForScope('session', session.value, size, session.maxBytes);
        case 'trace_big':
          throw artifactTooBigForScope('trace', trace.value, size, trace.maxBytes);
        case 'session':
          throw scopeFull('session', session.value, { n: v.sessN + 1, bytes: v.sessBytes + size }, size, session.maxBytes, session.maxCount);
        case 'trace':
          throw scopeFull('trace', trace.value, { n: v.traceN + 1, bytes: v.traceBytes + size }, size, trace.maxBytes, trace.maxCount);
        case 'tenant':
          throw tenantFull(input.scope.tenantId, v.tenantAfter ?? 0, size, maxTenantBytes);
        default:
          throw new Error(`Unknown put verdict ${JSON.stringify(v.refused)}`);
      }
      const row = results[plan.at.row]![0] as RawRefRow | undefined;
      if (!row) throw new Error('The put was accepted but its reference is missing');
      const evicted = plan.at.evicted === undefined ? [] : (results[plan.at.evicted] as EvictedRef[]);
      return { row: toRefRow(row), created: !v.live, evicted };
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
      await run('UPDATE artifact_refs SET last_accessed_at = @at WHERE ref_id IN (SELECT value FROM json_each(@ids)) AND last_accessed_at < @at', {
        at,
        ids: JSON.stringify(refIds),
      });
    },

    async deleteRefs(tenantId, artifactId, filter, now) {
      const plan = deletePlan(tenantId, artifactId, filter, now);
      return (await batch(plan.stmts))[plan.removedAt]!.length;
    },

    async list(tenantId, f) {
      const where = [`r.tenant_id = @tenantId AND r.expires_at > @now ${scopeWhere(f, 'r')}`];
      if (f.namespace !== undefined) where.push('a.namespace = @namespace');
      if (f.mimePrefix !== undefined) where.push('substr(r.mime_type, 1, @mimeLength) = @mimePrefix');
      if (f.createdAfter !== undefined) where.push('r.created_at >= @createdAfter');
      if (f.createdBefore !== undefined) where.push('r.created_at < @createdBefore');
      if (f.after) where.push('(r.created_at < @afterCreatedAt OR (r.created_at = @afterCreatedAt AND r.ref_id < @afterRefId))');
      const rows = await all<RawRefRow>(`SELECT ${REF_COLUMNS} FROM ${REF_JOIN} WHERE ${where.join(' AND ')} ORDER BY r.created_at DESC, r.ref_id DESC LIMIT @limit`, {
        tenantId,
        now: f.now,
        userId: f.userId,
        sessionId: f.sessionId,
        traceId: f.traceId,
        namespace: f.namespace,
        mimePrefix: f.mimePrefix,
        mimeLength: f.mimePrefix?.length,
        createdAfter: f.createdAfter,
        createdBefore: f.createdBefore,
        afterCreatedAt: f.after?.createdAt,
        afterRefId: f.after?.refId,
        limit: f.limit,
      });
      return rows.map(toRefRow);
    },

    async createApiKey(k) {
      await run('INSERT INTO api_keys (id, tenant_id, operator, secret_hash, perms, label, created_at, revoked_at) VALUES (@id, @tenantId, @operator, @secretHash, @perms, @label, @createdAt, NULL)', {
        id: k.id,
        tenantId: k.tenantId,
        operator: k.operator,
        secretHash: k.secretHash,
        perms: JSON.stringify(k.perms),
        label: k.label,
        createdAt: k.createdAt,
      });
    },

    async createUpload(u) {
      await run(
        `INSERT INTO uploads (id, tenant_id, user_id, session_id, trace_id, staging_key, size_bytes, sha256, options, created_at, expires_at)
         VALUES (@id, @tenantId, @userId, @sessionId, @traceId, @stagingKey, @sizeBytes, @sha256, @options, @createdAt, @expiresAt)`,
        { ...u, options: JSON.stringify(u.options) },
      );
    },

    async findUpload(tenantId, id) {
      const [raw] = await all<RawUpload>(`SELECT ${UPLOAD_COLUMNS} FROM uploads WHERE tenant_id = @tenantId AND id = @id`, { tenantId, id });
      return raw ? toUpload(raw) : undefined;
    },

    async deleteUpload(id) {
      await run('DELETE FROM uploads WHERE id = @id', { id });
    },

    async findApiKey(id) {
      const [raw] = await all<RawApiKey & { secretHash: string }>(`SELECT ${API_KEY_COLUMNS}, secret_hash AS secretHash FROM api_keys WHERE id = @id AND revoked_at IS NULL`, { id });
      return raw ? { ...raw, operator: Boolean(raw.operator), perms: JSON.parse(raw.perms) as string[] } : undefined;
    },

    async revokeApiKey(id, at) {
      return (await run('UPDATE api_keys SET revoked_at = @at WHERE id = @id AND revoked_at IS NULL', { id, at })) > 0;
    },

    async listApiKeys(tenantId) {
      const rows = await all<RawApiKey>(`SELECT ${API_KEY_COLUMNS} FROM api_keys ${tenantId ? 'WHERE tenant_id = @tenantId' : ''}`, { tenantId });
      return rows.map((r) => ({ ...r, operator: Boolean(r.operator), perms: JSON.parse(r.perms) as string[] }));
    },

    async expireRefs(now, limit) {
      const plan = expirePlan(now, limit);
      const gone = (await batch(plan.stmts))[plan.removedAt] as EvictedRef[];
      return { refs: gone.length, bytes: gone.reduce((sum, r) => sum + r.sizeBytes, 0), byTenant: tallyByTenant(gone) };
    },

    async scopesOver(kind, now, minCount, minBytes, after, limit) {
      const column = SCOPE_COLUMN[kind];
      return all<ScopeUsage>(
        `SELECT tenant_id AS tenantId, ${column} AS value, count(*) AS count, total(size_bytes) AS bytes
         FROM artifact_refs
         WHERE ${column} != '' AND expires_at > @now AND (tenant_id > @afterTenant OR (tenant_id = @afterTenant AND ${column} > @afterValue))
         GROUP BY tenant_id, ${column}
         HAVING count(*) > @minCount OR total(size_bytes) > @minBytes
         ORDER BY tenant_id, ${column}
         LIMIT @limit`,
        { now, minCount, minBytes, afterTenant: after?.tenantId ?? '', afterValue: after?.value ?? '', limit },
      );
    },

    async enforceScope(tenantId, kind, value, quota, now) {
      if (quota.strategy === 'none') return [];
      const [maxBytes, maxCount] = kind === 'session' ? [quota.maxSessionBytes ?? 0, quota.maxSessionCount ?? 0] : [quota.maxTraceBytes ?? 0, quota.maxTraceCount ?? 0];
      if (maxBytes === 0 && maxCount === 0) return [];
      const plan = enforcePlan(tenantId, kind, value, quota.strategy, maxBytes, maxCount, now);
      return (await batch(plan.stmts))[plan.removedAt] as EvictedRef[];
    },

    async dropUnreferencedArtifacts(limit) {
      return run(
        `DELETE FROM artifacts WHERE rowid IN (
           SELECT a.rowid FROM artifacts a WHERE NOT EXISTS (SELECT 1 FROM artifact_refs r WHERE r.tenant_id = a.tenant_id AND r.artifact_id = a.id) LIMIT @limit)`,
        { limit },
      );
    },

    async expiredUploads(before, limit) {
      return (await all<RawUpload>(`SELECT ${UPLOAD_COLUMNS} FROM uploads WHERE expires_at < @before ORDER BY expires_at LIMIT @limit`, { before, limit })).map(toUpload);
    },

    async pinBlob(sha256, until, now, staleBefore) {
      const [, pinned] = await batch(pinPlan(sha256, until, now, staleBefore));
      const row = pinned![0] as { id: number } | undefined;
      return row ? row.id : 'collecting';
    },

    async releasePin(pinId) {
      await run('DELETE FROM blob_pins WHERE id = @pinId', { pinId });
    },

    async dropExpiredPins(now) {
      return run('DELETE FROM blob_pins WHERE until < @now', { now });
    },

    async doomBlobs(now, createdBefore, staleBefore, after, limit) {
      return all<{ sha256: string; sizeBytes: number }>(
        `UPDATE blobs SET doomed_at = @now WHERE sha256 IN (
           SELECT b.sha256 FROM blobs b
           WHERE b.sha256 > @after
             AND ((b.doomed_at IS NULL AND ${UNPINNED} AND b.created_at < @createdBefore) OR b.doomed_at < @staleBefore)
             AND NOT EXISTS (SELECT 1 FROM artifacts a WHERE a.sha256 = b.sha256)
           ORDER BY b.sha256 LIMIT @limit)
         RETURNING sha256, size_bytes AS sizeBytes`,
        { now, createdBefore, staleBefore, after, limit },
      );
    },

    async forgetBlobs(collected, failed, doomedAt) {
      if (collected.length === 0 && failed.length === 0) return;
      const params = { doomedAt, collected: JSON.stringify(collected), failed: JSON.stringify(failed) };
      await batch([
        { sql: 'DELETE FROM blobs WHERE doomed_at = @doomedAt AND sha256 IN (SELECT value FROM json_each(@collected))', params },
        { sql: 'UPDATE blobs SET doomed_at = NULL WHERE doomed_at = @doomedAt AND sha256 IN (SELECT value FROM json_each(@failed))', params },
      ]);
    },

    async readEvents(tenantId, afterSeq, limit) {
      const rows = await all<Omit<OutboxEvent, 'scope' | 'ref' | 'data'> & { scope: string; ref: string | null; data: string | null }>(
        `SELECT seq, tenant_id AS tenantId, type, artifact_id AS artifactId, scope, ref, data, created_at AS createdAt FROM outbox WHERE ${tenantId === undefined ? '' : 'tenant_id = @tenantId AND'} seq > @afterSeq ORDER BY seq LIMIT @limit`,
        tenantId === undefined ? { afterSeq, limit } : { tenantId, afterSeq, limit },
      );
      return rows.map((r) => ({ ...r, scope: JSON.parse(r.scope) as OutboxEvent['scope'], ref: parseJson<RefRow>(r.ref), data: parseJson<Record<string, unknown>>(r.data) }));
    },

    async recordAudit(entry) {
      const [inserted] = await batch([{ sql: INSERT_AUDIT_SQL, params: auditParams(entry) }, { sql: INSERT_AUDIT_EVENT_SQL, params: {} }]);
      return { seq: (inserted![0] as { seq: number }).seq, ...entry };
    },

    async listAudit(filter) {
      const { tenantId, action, since, beforeSeq, limit } = filter;
      const params = Object.fromEntries(Object.entries({ tenantId, action, since, beforeSeq, limit }).filter(([, v]) => v !== undefined));
      return (await all<RawAuditRow>(listAuditSql(filter), params)).map(toAuditEntry);
    },

    async trimAudit(before, limit) {
      return run(TRIM_AUDIT_SQL, { before, limit });
    },

    async lastEventSeq() {
      return (await all<{ seq: number }>('SELECT coalesce(max(seq), 0) AS seq FROM outbox'))[0]!.seq;
    },

    async trimEvents(before, limit) {
      return run('DELETE FROM outbox WHERE seq IN (SELECT seq FROM outbox WHERE created_at < @before ORDER BY seq LIMIT @limit)', { before, limit });
    },

    async usage(kind, now, o) {
      return all<ScopeUsage>(
        usageSql(kind, o),
        { now, limit: o.limit, tenantId: o.tenantId, sessionId: o.sessionId, traceId: o.traceId },
      );
    },

    async doomBlobNow(sha256, now) {
      const changes = await run(
        `UPDATE blobs AS b SET doomed_at = @now WHERE b.sha256 = @sha256 AND b.doomed_at IS NULL AND ${UNPINNED} AND NOT EXISTS (SELECT 1 FROM artifacts a WHERE a.sha256 = @sha256)`,
        { sha256, now },
      );
      return changes > 0;
    },

    async storedTotals(now) {
      // One statement, so both totals come from one snapshot.
      const [t] = await all<{ refs: number; refBytes: number; blobs: number; blobBytes: number }>(
        `SELECT (SELECT count(*) FROM artifact_refs WHERE expires_at > @now) AS refs, (SELECT total(size_bytes) FROM artifact_refs WHERE expires_at > @now) AS refBytes,
                (SELECT count(*) FROM blobs) AS blobs, (SELECT total(size_bytes) FROM blobs) AS blobBytes`,
        { now },
      );
      return t!;
    },

    async blobRows(after, limit, now) {
      const rows = await all<{ sha256: string; sizeBytes: number; pinned: number; artifacts: number }>(
        `SELECT b.sha256, b.size_bytes AS sizeBytes, NOT ${UNPINNED} AS pinned, (SELECT count(*) FROM artifacts a WHERE a.sha256 = b.sha256) AS artifacts
         FROM blobs b WHERE b.sha256 > @after ORDER BY b.sha256 LIMIT @limit`,
        { after, limit, now },
      );
      return rows.map((r) => ({ ...r, pinned: r.pinned === 1 }));
    },

    async knownBlobs(sha256s) {
      if (sha256s.length === 0) return new Set();
      const rows = await all<{ sha256: string }>('SELECT sha256 FROM blobs WHERE sha256 IN (SELECT value FROM json_each(@shas))', { shas: JSON.stringify(sha256s) });
      return new Set(rows.map((r) => r.sha256));
    },

    async artifactsOfBlob(sha256, limit) {
      return all<{ tenantId: string; id: string }>('SELECT tenant_id AS tenantId, id FROM artifacts WHERE sha256 = @sha256 ORDER BY tenant_id, id LIMIT @limit', { sha256, limit });
    },

    async unfinishedBlobRows(now, after, limit) {
      const rows = await all<{ sha256: string }>(
        `SELECT b.sha256 FROM blobs AS b WHERE b.sha256 > @after AND b.size_bytes = 0 AND b.doomed_at IS NULL AND ${UNPINNED}
          AND NOT EXISTS (SELECT 1 FROM artifacts a WHERE a.sha256 = b.sha256) ORDER BY b.sha256 LIMIT @limit`,
        { now, after, limit },
      );
      return rows.map((r) => r.sha256);
    },

    async deleteIdleBlobRow(sha256, now) {
      const changes = await run(`DELETE FROM blobs AS b WHERE b.sha256 = @sha256 AND ${UNPINNED} AND NOT EXISTS (SELECT 1 FROM artifacts a WHERE a.sha256 = @sha256)`, { sha256, now });
      return changes > 0;
    },

    async recordRetentionRun(r) {
      await run('INSERT INTO retention_runs (trigger, started_at, finished_at, report) VALUES (@trigger, @startedAt, @finishedAt, @report)', {
        trigger: r.trigger,
        startedAt: r.startedAt,
        finishedAt: r.finishedAt,
        report: JSON.stringify(r.report),
      });
    },

    async retentionRuns(limit) {
      const rows = await all<{ id: number; trigger: string; startedAt: number; finishedAt: number; report: string }>(
        'SELECT id, trigger, started_at AS startedAt, finished_at AS finishedAt, report FROM retention_runs ORDER BY started_at DESC, id DESC LIMIT @limit',
        { limit },
      );
      return rows.map((r) => ({ ...r, report: JSON.parse(r.report) as Record<string, unknown> }));
    },

    async ping() {
      await conn.prepare('SELECT 1').first();
    },

    // The binding belongs to the Worker's environment: nothing to close.
    async close() {},
  };
}
