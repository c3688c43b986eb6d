import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { and, desc, eq, gt, gte, inArray, isNull, lt, or, sql, type SQL } from 'drizzle-orm';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { errors } from '../core/errors.js';
import type { ApiKeyRecord, ArtifactRepository, AuditEntry, CommitPutInput, EvictedRef, ListFilter, OutboxEvent, QuotaLimits, RefRow, ScopeFilter, ScopeUsage, UploadRecord } from './repository.js';
import { tallyByTenant, usageSql } from './usage-sql.js';
import { auditParams, INSERT_AUDIT_EVENT_SQL, INSERT_AUDIT_SQL, listAuditSql, toAuditEntry, TRIM_AUDIT_SQL, type RawAuditRow } from './audit-sql.js';
import { artifactTooBigForScope, pinLost, scopeFull, tenantFull } from './put-errors.js';
import { createRecentRefs } from './recent-refs.js';
import * as schema from './schema.js';
import { apiKeys, artifactRefs, artifacts, blobPins, blobs, outbox, retentionRuns, uploads } from './schema.js';

export interface SqliteRepositoryOptions {
  /** A file path, or ':memory:'. */
  path: string;
  /** How long a writer waits for another process's lock before failing (ms). */
  busyTimeoutMs?: number;
}

export const MIGRATIONS_FOLDER = resolve(dirname(fileURLToPath(import.meta.url)), '../../migrations');

const refColumns = {
  refId: artifactRefs.refId,
  tenantId: artifactRefs.tenantId,
  artifactId: artifactRefs.artifactId,
  namespace: artifacts.namespace,
  sha256: artifacts.sha256,
  sizeBytes: artifacts.sizeBytes,
  userId: artifactRefs.userId,
  sessionId: artifactRefs.sessionId,
  traceId: artifactRefs.traceId,
  mimeType: artifactRefs.mimeType,
  filename: artifactRefs.filename,
  meta: artifactRefs.meta,
  source: artifactRefs.source,
  createdAt: artifactRefs.createdAt,
  lastAccessedAt: artifactRefs.lastAccessedAt,
  expiresAt: artifactRefs.expiresAt,
};

/** A reference row as SQLite returns it: meta and source still JSON text. */
type RawRefRow = Omit<RefRow, 'meta' | 'source'> & { meta: string | null; source: string | null };

/**
 * One part of a lookup cache key: length-prefixed, so the parts cannot run into each other whatever
 * characters they hold; an open part is "-". (Artifact ids have a fixed alphabet and come first.)
 */
const keyPart = (value: string | undefined) => (value === undefined ? '-' : `${value.length}:${value}`);

/** A removed reference as DELETE … RETURNING gives it (meta and source as stored JSON text, or parsed). */
type RemovedRow = Omit<RefRow, 'namespace' | 'sha256' | 'meta' | 'source'> & { meta: unknown; source: unknown };

const REMOVED_COLUMNS = `ref_id AS refId, tenant_id AS tenantId, artifact_id AS artifactId, user_id AS userId, session_id AS sessionId,
  trace_id AS traceId, size_bytes AS sizeBytes, mime_type AS mimeType, filename, meta, source, created_at AS createdAt,
  last_accessed_at AS lastAccessedAt, expires_at AS expiresAt`;

/** Named parameters without the unset ones (better-sqlite3 refuses undefined). */
function definedOnly(params: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined));
}

function parseJson(value: unknown): Record<string, unknown> | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? (JSON.parse(value) as Record<string, unknown>) : (value as Record<string, unknown>);
}

function scopeConditions(filter: ScopeFilter): SQL[] {
  const out: SQL[] = [];
  if (filter.userId !== undefined) out.push(eq(artifactRefs.userId, filter.userId));
  if (filter.sessionId !== undefined) out.push(eq(artifactRefs.sessionId, filter.sessionId));
  if (filter.traceId !== undefined) out.push(eq(artifactRefs.traceId, filter.traceId));
  return out;
}

/**
 * Runs the migrations when several processes may open a new file at the same moment (the service,
 * the CLI, a second instance). drizzle decides what to apply before it takes the write lock, so two
 * processes can both try; the loser sees "already exists" or a busy lock, waits, and retries, and by
 * then the migrations table says everything is applied.
 */
function migrateShared(db: BetterSQLite3Database<typeof schema>): void {
  for (let attempt = 1; ; attempt++) {
    try {
      migrate(db, { migrationsFolder: MIGRATIONS_FOLDER });
      return;
    } catch (err) {
      const text = `${String(err)} ${String((err as { cause?: unknown }).cause ?? '')}`;
      if (attempt >= 10 || !/already exists|SQLITE_BUSY|database is locked/i.test(text)) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50 * attempt);
    }
  }
}

/**
 * The embedded metadata store: better-sqlite3 in WAL mode with a busy timeout, so the service, the
 * CLI and a second instance can share one file. Writes take the lock up front (BEGIN IMMEDIATE) so
 * two processes never deadlock upgrading a read lock.
 */
export function createSqliteRepository(options: SqliteRepositoryOptions): ArtifactRepository {
  if (options.path !== ':memory:') mkdirSync(dirname(resolve(options.path)), { recursive: true });
  const sqlite = new Database(options.path);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`busy_timeout = ${Math.trunc(options.busyTimeoutMs ?? 5000)}`);
  // FULL: a put that answered 201 survives a power loss too (WAL is fsynced at each commit).
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  const db: BetterSQLite3Database<typeof schema> = drizzle(sqlite, { schema });
  migrateShared(db);

  // The hot path (every GET), as plain prepared statements, one per filter shape: drizzle's
  // prepared queries cost ~30 µs a call here against ~7 µs for better-sqlite3 directly.
  const findStatements = new Map<string, Database.Statement>();
  const recentRefs = createRecentRefs<RawRefRow>(sqlite, 10_000);
  /** Runs a write on this connection, then drops cached lookups it may have changed. */
  const writing = <T>(write: () => T): T => {
    try {
      return write();
    } finally {
      recentRefs.clear();
    }
  };
  function prepareFind(filter: ScopeFilter): Database.Statement {
    const extra = [
      filter.userId !== undefined ? 'AND r.user_id = @userId' : '',
      filter.sessionId !== undefined ? 'AND r.session_id = @sessionId' : '',
      filter.traceId !== undefined ? 'AND r.trace_id = @traceId' : '',
    ].join(' ');
    return sqlite.prepare(`
      SELECT r.ref_id AS refId, r.tenant_id AS tenantId, r.artifact_id AS artifactId, a.namespace AS namespace,
             a.sha256 AS sha256, a.size_bytes AS sizeBytes, r.user_id AS userId, r.session_id AS sessionId,
             r.trace_id AS traceId, r.mime_type AS mimeType, r.filename AS filename, r.meta AS meta,
             r.source AS source, r.created_at AS createdAt, r.last_accessed_at AS lastAccessedAt, r.expires_at AS expiresAt
      FROM artifact_refs r JOIN artifacts a ON a.tenant_id = r.tenant_id AND a.id = r.artifact_id
      WHERE r.tenant_id = @tenantId AND r.artifact_id = @artifactId AND r.expires_at > @now ${extra}
      ORDER BY r.created_at DESC, r.ref_id DESC
      LIMIT 1`);
  }

  const selectRef = (tenantId: string, artifactId: string, scope: { userId: string; sessionId: string; traceId: string }) =>
    db
      .select(refColumns)
      .from(artifactRefs)
      .innerJoin(artifacts, and(eq(artifacts.tenantId, artifactRefs.tenantId), eq(artifacts.id, artifactRefs.artifactId)))
      .where(
        and(
          eq(artifactRefs.tenantId, tenantId),
          eq(artifactRefs.artifactId, artifactId),
          eq(artifactRefs.userId, scope.userId),
          eq(artifactRefs.sessionId, scope.sessionId),
          eq(artifactRefs.traceId, scope.traceId),
        ),
      )
      .get();

  // Quotas. Only live references count. Eviction is one statement per scope: rank the scope's live
  // references (the put's own first, then most recently accessed, or most recently created, first),
  // keep the longest run that fits both limits, delete the rest. One statement, so it also fits a D1
  // batch, where there are no interactive transactions.
  const SCOPE_COLUMNS = { session: 'session_id', trace: 'trace_id' } as const;
  type ScopeKind = keyof typeof SCOPE_COLUMNS;
  const usageStatements = Object.fromEntries(
    (Object.keys(SCOPE_COLUMNS) as ScopeKind[]).map((kind) => [
      kind,
      sqlite.prepare(`SELECT count(*) AS n, total(size_bytes) AS bytes FROM artifact_refs WHERE tenant_id = @tenantId AND ${SCOPE_COLUMNS[kind]} = @value AND expires_at > @now`),
    ]),
  ) as Record<ScopeKind, Database.Statement>;
  const tenantUsage = sqlite.prepare('SELECT total(size_bytes) AS bytes FROM artifact_refs WHERE tenant_id = @tenantId AND expires_at > @now');
  const evictStatements = new Map<string, Database.Statement>();
  function evictStatement(kind: ScopeKind, strategy: 'lru' | 'fifo'): Database.Statement {
    const key = `${kind}:${strategy}`;
    let stmt = evictStatements.get(key);
    if (!stmt) {
      const recency = strategy === 'lru' ? 'last_accessed_at' : 'created_at';
      stmt = sqlite.prepare(`
        DELETE FROM artifact_refs WHERE ref_id IN (
          SELECT ref_id FROM (
            SELECT ref_id, sum(size_bytes) OVER w AS running, row_number() OVER w AS position
            FROM artifact_refs
            WHERE tenant_id = @tenantId AND ${SCOPE_COLUMNS[kind]} = @value AND expires_at > @now
            WINDOW w AS (ORDER BY ref_id = @keep DESC, ${recency} DESC, ref_id DESC ROWS UNBOUNDED PRECEDING)
          )
          WHERE (@maxBytes > 0 AND running > @maxBytes) OR (@maxCount > 0 AND position > @maxCount)
        )
        RETURNING ${REMOVED_COLUMNS}`);
      evictStatements.set(key, stmt);
    }
    return stmt;
  }
  const dropOrphanArtifact = sqlite.prepare(
    'DELETE FROM artifacts WHERE tenant_id = @tenantId AND id = @artifactId AND NOT EXISTS (SELECT 1 FROM artifact_refs r WHERE r.tenant_id = @tenantId AND r.artifact_id = @artifactId)',
  );
  const appendEvent = sqlite.prepare('INSERT INTO outbox (tenant_id, type, artifact_id, scope, ref, created_at) VALUES (@tenantId, @type, @artifactId, @scope, @ref, @now)');

  const artifactFacts = sqlite.prepare('SELECT namespace, sha256 FROM artifacts WHERE tenant_id = @tenantId AND id = @artifactId');

  /** Appends one event with the reference as it is (or was) in its payload. */
  function appendRefEvent(type: string, row: RefRow, now: number): void {
    appendEvent.run({
      tenantId: row.tenantId,
      type,
      artifactId: row.artifactId,
      scope: JSON.stringify({ userId: row.userId, sessionId: row.sessionId, traceId: row.traceId }),
      ref: JSON.stringify(row),
      now,
    });
  }

  /** Events for removed references; then each artifact goes with its last reference. */
  function recordRemoved(removed: RemovedRow[], type: 'artifact.evicted' | 'artifact.expired' | 'artifact.deleted', now: number): void {
    for (const r of removed) {
      const facts = artifactFacts.get({ tenantId: r.tenantId, artifactId: r.artifactId }) as { namespace: string; sha256: string } | undefined;
      appendRefEvent(type, { ...r, namespace: facts?.namespace ?? '', sha256: facts?.sha256 ?? '', meta: parseJson(r.meta), source: parseJson(r.source) }, now);
    }
    for (const r of removed) dropOrphanArtifact.run({ tenantId: r.tenantId, artifactId: r.artifactId });
  }

  /**
   * Brings the session and trace of a put within their limits, and checks the tenant quota. Runs
   * inside the put's transaction, after its reference is written (`keep` is its id).
   */
  function enforceQuota(q: QuotaLimits, tenantId: string, scope: { sessionId: string; traceId: string }, keep: number, keepBytes: number, added: boolean, now: number): EvictedRef[] {
    const evicted: RemovedRow[] = [];
    const scopes: [ScopeKind, string, number, number][] = [
      ['session', scope.sessionId, q.maxSessionBytes ?? 0, q.maxSessionCount ?? 0],
      ['trace', scope.traceId, q.maxTraceBytes ?? 0, q.maxTraceCount ?? 0],
    ];
    for (const [kind, value, maxBytes, maxCount] of scopes) {
      if (value === '' || (maxBytes === 0 && maxCount === 0)) continue;
      if (maxBytes > 0 && keepBytes > maxBytes) throw artifactTooBigForScope(kind, value, keepBytes, maxBytes);
      const usage = usageStatements[kind].get({ tenantId, value, now }) as { n: number; bytes: number };
      const over = (maxBytes > 0 && usage.bytes > maxBytes) || (maxCount > 0 && usage.n > maxCount);
      if (!over) continue;
      if (q.strategy === 'none') {
        // A re-put adds nothing: it is not refused for a scope that was already over (limits lowered).
        if (added) throw scopeFull(kind, value, usage, keepBytes, maxBytes, maxCount);
        continue;
      }
      evicted.push(...(evictStatement(kind, q.strategy).all({ tenantId, value, now, keep, maxBytes, maxCount }) as RemovedRow[]));
    }
    if (q.maxTenantBytes) {
      const { bytes } = tenantUsage.get({ tenantId, now }) as { bytes: number };
      if (added && bytes > q.maxTenantBytes) {
        throw tenantFull(tenantId, bytes, keepBytes, q.maxTenantBytes);
      }
    }
    recordRemoved(evicted, 'artifact.evicted', now);
    return evicted;
  }

  const expireBatch = sqlite.prepare(`
    DELETE FROM artifact_refs WHERE ref_id IN (SELECT ref_id FROM artifact_refs WHERE expires_at <= @now ORDER BY expires_at LIMIT @limit)
    RETURNING ${REMOVED_COLUMNS}`);
  const scopesOverStatements = Object.fromEntries(
    (Object.keys(SCOPE_COLUMNS) as ScopeKind[]).map((kind) => [
      kind,
      sqlite.prepare(`
        SELECT tenant_id AS tenantId, ${SCOPE_COLUMNS[kind]} AS value, count(*) AS count, total(size_bytes) AS bytes
        FROM artifact_refs
        WHERE ${SCOPE_COLUMNS[kind]} != '' AND expires_at > @now AND (tenant_id > @afterTenant OR (tenant_id = @afterTenant AND ${SCOPE_COLUMNS[kind]} > @afterValue))
        GROUP BY tenant_id, ${SCOPE_COLUMNS[kind]}
        HAVING count(*) > @minCount OR total(size_bytes) > @minBytes
        ORDER BY tenant_id, ${SCOPE_COLUMNS[kind]}
        LIMIT @limit`),
    ]),
  ) as Record<ScopeKind, Database.Statement>;
  // Blob garbage collection against puts committing the same bytes (see pinBlob / doomBlobs).
  const selectBlob = sqlite.prepare('SELECT doomed_at AS doomedAt FROM blobs WHERE sha256 = @sha256');
  const upsertBlobRow = sqlite.prepare(`
    INSERT INTO blobs (sha256, size_bytes, created_at, doomed_at) VALUES (@sha256, 0, @now, NULL)
    ON CONFLICT (sha256) DO UPDATE SET doomed_at = NULL`);
  const insertPin = sqlite.prepare('INSERT INTO blob_pins (sha256, until) VALUES (@sha256, @until)');
  // No live pin: no put is between knowing these bytes' hash and committing its metadata.
  const UNPINNED = 'NOT EXISTS (SELECT 1 FROM blob_pins p WHERE p.sha256 = b.sha256 AND p.until >= @now)';
  const doomBatch = sqlite.prepare(`
    UPDATE blobs SET doomed_at = @now WHERE sha256 IN (
      SELECT b.sha256 FROM blobs b
      WHERE b.sha256 > @after
        AND ((b.doomed_at IS NULL AND ${UNPINNED} AND b.created_at < @createdBefore) OR b.doomed_at < @staleBefore)
        AND NOT EXISTS (SELECT 1 FROM artifacts a WHERE a.sha256 = b.sha256)
      ORDER BY b.sha256 LIMIT @limit)
    RETURNING sha256, size_bytes AS sizeBytes`);
  const unfinishedRows = sqlite.prepare(
    `SELECT b.sha256 FROM blobs AS b WHERE b.sha256 > @after AND b.size_bytes = 0 AND b.doomed_at IS NULL AND ${UNPINNED}
          AND NOT EXISTS (SELECT 1 FROM artifacts a WHERE a.sha256 = b.sha256) ORDER BY b.sha256 LIMIT @limit`,
  );
  const forgetBlob = sqlite.prepare('DELETE FROM blobs WHERE sha256 = @sha256 AND doomed_at = @doomedAt');
  const undoomBlob = sqlite.prepare('UPDATE blobs SET doomed_at = NULL WHERE sha256 = @sha256 AND doomed_at = @doomedAt');
  const readEventsStmt = sqlite.prepare(
    'SELECT seq, tenant_id AS tenantId, type, artifact_id AS artifactId, scope, ref, data, created_at AS createdAt FROM outbox WHERE tenant_id = @tenantId AND seq > @afterSeq ORDER BY seq LIMIT @limit',
  );
  const readAllEventsStmt = sqlite.prepare(
    'SELECT seq, tenant_id AS tenantId, type, artifact_id AS artifactId, scope, ref, data, created_at AS createdAt FROM outbox WHERE seq > @afterSeq ORDER BY seq LIMIT @limit',
  );
  const insertAudit = sqlite.prepare(INSERT_AUDIT_SQL);
  const insertAuditEvent = sqlite.prepare(INSERT_AUDIT_EVENT_SQL);
  const trimAuditStmt = sqlite.prepare(TRIM_AUDIT_SQL);
  const trimEventsStmt = sqlite.prepare('DELETE FROM outbox WHERE seq IN (SELECT seq FROM outbox WHERE created_at < @before ORDER BY seq LIMIT @limit)');
  const unreferencedArtifacts = sqlite.prepare(`
    DELETE FROM artifacts WHERE rowid IN (
      SELECT a.rowid FROM artifacts a WHERE NOT EXISTS (SELECT 1 FROM artifact_refs r WHERE r.tenant_id = a.tenant_id AND r.artifact_id = a.id) LIMIT @limit)`);

  return {
    async commitPut(given: CommitPutInput) {
      const { scope } = given;
      const key = { userId: scope.userId ?? '', sessionId: scope.sessionId ?? '', traceId: scope.traceId ?? '' };
      return writing(() => db.transaction(
        (tx) => {
          // Read the clock once the write lock is held: times then follow commit order, also across
          // processes, which is the order LRU and FIFO eviction rank by.
          const now = given.clock ? Math.max(given.now, given.clock()) : given.now;
          const input = { ...given, now, expiresAt: given.expiresAt + (now - given.now) };
          if (input.pinId !== undefined) {
            const pin = tx.delete(blobPins).where(eq(blobPins.id, input.pinId)).returning({ sha256: blobPins.sha256, until: blobPins.until }).get();
            if (!pin || pin.sha256 !== input.sha256 || pin.until < now) {
              throw pinLost();
            }
          }
          // The row usually exists already: the put pinned it (size unknown then) before committing the bytes.
          tx.insert(blobs).values({ sha256: input.sha256, sizeBytes: input.sizeBytes, createdAt: now }).onConflictDoUpdate({ target: blobs.sha256, set: { sizeBytes: input.sizeBytes } }).run();
          const existing = tx
            .select({ sha256: artifacts.sha256 })
            .from(artifacts)
            .where(and(eq(artifacts.tenantId, scope.tenantId), eq(artifacts.id, input.artifactId)))
            .get();
          if (existing && existing.sha256 !== input.sha256) throw errors.hashCollision(input.artifactId);
          if (!existing) {
            tx.insert(artifacts)
              .values({ tenantId: scope.tenantId, id: input.artifactId, namespace: input.namespace, sha256: input.sha256, sizeBytes: input.sizeBytes, createdAt: now })
              .run();
          }
          const prior = tx
            .select({ refId: artifactRefs.refId, expiresAt: artifactRefs.expiresAt })
            .from(artifactRefs)
            .where(
              and(
                eq(artifactRefs.tenantId, scope.tenantId),
                eq(artifactRefs.artifactId, input.artifactId),
                eq(artifactRefs.userId, key.userId),
                eq(artifactRefs.sessionId, key.sessionId),
                eq(artifactRefs.traceId, key.traceId),
              ),
            )
            .get();
          const described = {
            mimeType: input.mimeType,
            filename: input.filename ?? null,
            meta: input.meta ?? null,
            source: input.source ?? null,
          };
          // A reference past its expiry that retention has not reaped yet counts as new.
          const live = prior !== undefined && prior.expiresAt > now;
          let refId: number;
          if (prior) {
            tx.update(artifactRefs)
              .set({ ...described, sizeBytes: input.sizeBytes, lastAccessedAt: now, expiresAt: input.expiresAt, ...(live ? {} : { createdAt: now }) })
              .where(eq(artifactRefs.refId, prior.refId))
              .run();
            refId = prior.refId;
          } else {
            refId = tx
              .insert(artifactRefs)
              .values({ tenantId: scope.tenantId, artifactId: input.artifactId, ...key, ...described, sizeBytes: input.sizeBytes, createdAt: now, lastAccessedAt: now, expiresAt: input.expiresAt })
              .returning({ refId: artifactRefs.refId })
              .get().refId;
          }
          const evicted = input.quota ? enforceQuota(input.quota, scope.tenantId, key, refId, input.sizeBytes, !live, now) : [];
          const row = selectRef(scope.tenantId, input.artifactId, key) as RefRow;
          appendRefEvent('artifact.stored', row, now);
          return { row, created: !live, evicted };
        },
        { behavior: 'immediate' },
      ));
    },

    async findRef(tenantId, artifactId, filter, now) {
      const key = `${artifactId}${keyPart(tenantId)}${keyPart(filter.userId)}${keyPart(filter.sessionId)}${keyPart(filter.traceId)}`;
      let raw = recentRefs.get(key);
      if (!raw || raw.expiresAt <= now) {
        const shape = `${filter.userId !== undefined ? 'u' : ''}${filter.sessionId !== undefined ? 's' : ''}${filter.traceId !== undefined ? 't' : ''}`;
        let stmt = findStatements.get(shape);
        if (!stmt) {
          stmt = prepareFind(filter);
          findStatements.set(shape, stmt);
        }
        raw = stmt.get({ tenantId, artifactId, now, ...filter }) as RawRefRow | undefined;
        if (!raw) return undefined;
        recentRefs.set(key, raw);
      }
      // Parsed per call: callers get their own meta objects, never the cached one.
      return { ...raw, meta: raw.meta === null ? null : JSON.parse(raw.meta), source: raw.source === null ? null : JSON.parse(raw.source) };
    },

    async touch(refIds, at) {
      if (refIds.length === 0) return;
      writing(() => {
        for (let i = 0; i < refIds.length; i += 500) {
          db.update(artifactRefs)
            .set({ lastAccessedAt: at })
            .where(and(inArray(artifactRefs.refId, refIds.slice(i, i + 500)), lt(artifactRefs.lastAccessedAt, at)))
            .run();
        }
      });
    },

    async deleteRefs(tenantId, artifactId, filter, now) {
      return writing(() => db.transaction(
        (tx) => {
          const where = and(eq(artifactRefs.tenantId, tenantId), eq(artifactRefs.artifactId, artifactId), gt(artifactRefs.expiresAt, now), ...scopeConditions(filter));
          const gone = tx.delete(artifactRefs).where(where).returning().all();
          recordRemoved(gone.map((g) => ({ ...g, meta: g.meta ?? null, source: g.source ?? null })), 'artifact.deleted', now);
          return gone.length;
        },
        { behavior: 'immediate' },
      ));
    },

    async list(tenantId, filter: ListFilter) {
      const conds: (SQL | undefined)[] = [eq(artifactRefs.tenantId, tenantId), gt(artifactRefs.expiresAt, filter.now), ...scopeConditions(filter)];
      if (filter.namespace !== undefined) conds.push(eq(artifacts.namespace, filter.namespace));
      if (filter.mimePrefix !== undefined) conds.push(sql`substr(${artifactRefs.mimeType}, 1, ${filter.mimePrefix.length}) = ${filter.mimePrefix}`);
      if (filter.createdAfter !== undefined) conds.push(gte(artifactRefs.createdAt, filter.createdAfter));
      if (filter.createdBefore !== undefined) conds.push(lt(artifactRefs.createdAt, filter.createdBefore));
      if (filter.after) {
        conds.push(or(lt(artifactRefs.createdAt, filter.after.createdAt), and(eq(artifactRefs.createdAt, filter.after.createdAt), lt(artifactRefs.refId, filter.after.refId))));
      }
      return db
        .select(refColumns)
        .from(artifactRefs)
        .innerJoin(artifacts, and(eq(artifacts.tenantId, artifactRefs.tenantId), eq(artifacts.id, artifactRefs.artifactId)))
        .where(and(...conds))
        .orderBy(desc(artifactRefs.createdAt), desc(artifactRefs.refId))
        .limit(filter.limit)
        .all() as RefRow[];
    },

    async createApiKey(record) {
      db.insert(apiKeys).values({ ...record, revokedAt: null }).run();
    },

    async createUpload(upload) {
      db.insert(uploads).values(upload).run();
    },

    async findUpload(tenantId, id) {
      return db.select().from(uploads).where(and(eq(uploads.tenantId, tenantId), eq(uploads.id, id))).get() ?? undefined;
    },

    async deleteUpload(id) {
      db.delete(uploads).where(eq(uploads.id, id)).run();
    },

    async findApiKey(id) {
      const row = db.select().from(apiKeys).where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt))).get();
      return row ?? undefined;
    },

    async revokeApiKey(id, at) {
      const r = db.update(apiKeys).set({ revokedAt: at }).where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt))).run();
      return r.changes > 0;
    },

    async listApiKeys(tenantId) {
      const rows = db
        .select({ id: apiKeys.id, tenantId: apiKeys.tenantId, operator: apiKeys.operator, perms: apiKeys.perms, label: apiKeys.label, createdAt: apiKeys.createdAt, revokedAt: apiKeys.revokedAt })
        .from(apiKeys)
        .where(tenantId ? eq(apiKeys.tenantId, tenantId) : undefined)
        .all();
      return rows as ApiKeyRecord[];
    },

    async expireRefs(now, limit) {
      return writing(() =>
        sqlite.transaction(() => {
          const gone = expireBatch.all({ now, limit }) as RemovedRow[];
          recordRemoved(gone, 'artifact.expired', now);
          return { refs: gone.length, bytes: gone.reduce((sum, r) => sum + r.sizeBytes, 0), byTenant: tallyByTenant(gone) };
        }).immediate(),
      );
    },

    async scopesOver(kind, now, minCount, minBytes, after, limit) {
      return scopesOverStatements[kind].all({ now, minCount, minBytes, afterTenant: after?.tenantId ?? '', afterValue: after?.value ?? '', limit }) as ScopeUsage[];
    },

    async enforceScope(tenantId, kind, value, quota, now) {
      if (quota.strategy === 'none') return [];
      const [maxBytes, maxCount] = kind === 'session' ? [quota.maxSessionBytes ?? 0, quota.maxSessionCount ?? 0] : [quota.maxTraceBytes ?? 0, quota.maxTraceCount ?? 0];
      if (maxBytes === 0 && maxCount === 0) return [];
      const strategy = quota.strategy;
      return writing(() =>
        sqlite.transaction(() => {
          const evicted = evictStatement(kind, strategy).all({ tenantId, value, now, keep: -1, maxBytes, maxCount }) as RemovedRow[];
          recordRemoved(evicted, 'artifact.evicted', now);
          return evicted;
        }).immediate(),
      );
    },

    async dropUnreferencedArtifacts(limit) {
      return writing(() => unreferencedArtifacts.run({ limit }).changes);
    },

    async expiredUploads(before, limit) {
      return db.select().from(uploads).where(lt(uploads.expiresAt, before)).orderBy(uploads.expiresAt).limit(limit).all() as UploadRecord[];
    },

    async pinBlob(sha256, until, now, staleBefore) {
      return writing(() =>
        sqlite.transaction((): number | 'collecting' => {
          const row = selectBlob.get({ sha256 }) as { doomedAt: number | null } | undefined;
          if (row?.doomedAt != null && row.doomedAt >= staleBefore) return 'collecting' as const;
          upsertBlobRow.run({ sha256, now });
          return Number(insertPin.run({ sha256, until }).lastInsertRowid);
        }).immediate(),
      );
    },

    async releasePin(pinId) {
      writing(() => db.delete(blobPins).where(eq(blobPins.id, pinId)).run());
    },

    async dropExpiredPins(now) {
      return writing(() => db.delete(blobPins).where(lt(blobPins.until, now)).run().changes);
    },

    async doomBlobs(now, createdBefore, staleBefore, after, limit) {
      return writing(() => doomBatch.all({ now, createdBefore, staleBefore, after, limit }) as { sha256: string; sizeBytes: number }[]);
    },

    async forgetBlobs(collected, failed, doomedAt) {
      writing(() =>
        sqlite.transaction(() => {
          for (const sha256 of collected) forgetBlob.run({ sha256, doomedAt });
          for (const sha256 of failed) undoomBlob.run({ sha256, doomedAt });
        }).immediate(),
      );
    },

    async readEvents(tenantId, afterSeq, limit) {
      const rows = (tenantId === undefined ? readAllEventsStmt.all({ afterSeq, limit }) : readEventsStmt.all({ tenantId, afterSeq, limit })) as (Omit<OutboxEvent, 'scope' | 'ref' | 'data'> & { scope: string; ref: string | null; data: string | null })[];
      return rows.map((r) => ({ ...r, scope: JSON.parse(r.scope) as OutboxEvent['scope'], ref: r.ref === null ? null : (JSON.parse(r.ref) as RefRow), data: parseJson(r.data) }));
    },

    async recordAudit(entry) {
      return writing(() =>
        sqlite.transaction((): AuditEntry => {
          const { seq } = insertAudit.get(auditParams(entry)) as { seq: number };
          insertAuditEvent.run();
          return { seq, ...entry };
        }).immediate(),
      );
    },

    async listAudit(filter) {
      const rows = sqlite.prepare(listAuditSql(filter)).all(definedOnly(filter)) as RawAuditRow[];
      return rows.map(toAuditEntry);
    },

    async trimAudit(before, limit) {
      return trimAuditStmt.run({ before, limit }).changes;
    },

    async lastEventSeq() {
      return (sqlite.prepare('SELECT coalesce(max(seq), 0) AS seq FROM outbox').get() as { seq: number }).seq;
    },

    async trimEvents(before, limit) {
      return writing(() => trimEventsStmt.run({ before, limit }).changes);
    },

    async usage(kind, now, o) {
      const sqlText = usageSql(kind, o);
      const params: Record<string, string | number> = { now, limit: o.limit };
      for (const k of ['tenantId', 'sessionId', 'traceId'] as const) if (o[k] !== undefined) params[k] = o[k];
      return sqlite.prepare(sqlText).all(params) as ScopeUsage[];
    },

    async doomBlobNow(sha256, now) {
      return writing(
        () =>
          sqlite
            .prepare(
              `UPDATE blobs AS b SET doomed_at = @now WHERE b.sha256 = @sha256 AND b.doomed_at IS NULL AND ${UNPINNED} AND NOT EXISTS (SELECT 1 FROM artifacts a WHERE a.sha256 = @sha256)`,
            )
            .run({ sha256, now }).changes > 0,
      );
    },

    async storedTotals(now) {
      const r = sqlite.prepare('SELECT count(*) AS refs, total(size_bytes) AS refBytes FROM artifact_refs WHERE expires_at > ?').get(now) as { refs: number; refBytes: number };
      const b = sqlite.prepare('SELECT count(*) AS blobs, total(size_bytes) AS blobBytes FROM blobs').get() as { blobs: number; blobBytes: number };
      return { ...r, ...b };
    },

    async blobRows(after, limit, now) {
      const rows = sqlite
        .prepare(
          `SELECT b.sha256, b.size_bytes AS sizeBytes, NOT ${UNPINNED} AS pinned, (SELECT count(*) FROM artifacts a WHERE a.sha256 = b.sha256) AS artifacts
           FROM blobs b WHERE b.sha256 > @after ORDER BY b.sha256 LIMIT @limit`,
        )
        .all({ after, limit, now }) as { sha256: string; sizeBytes: number; pinned: number; artifacts: number }[];
      return rows.map((r) => ({ ...r, pinned: r.pinned === 1 }));
    },

    async knownBlobs(sha256s) {
      const known = new Set<string>();
      const stmt = sqlite.prepare('SELECT 1 FROM blobs WHERE sha256 = ?').pluck();
      for (const sha of sha256s) if (stmt.get(sha) !== undefined) known.add(sha);
      return known;
    },

    async artifactsOfBlob(sha256, limit) {
      return sqlite.prepare('SELECT tenant_id AS tenantId, id FROM artifacts WHERE sha256 = ? ORDER BY tenant_id, id LIMIT ?').all(sha256, limit) as { tenantId: string; id: string }[];
    },

    async unfinishedBlobRows(now, after, limit) {
      return (unfinishedRows.all({ now, after, limit }) as { sha256: string }[]).map((r) => r.sha256);
    },

    async deleteIdleBlobRow(sha256, now) {
      return writing(
        () =>
          sqlite
            .prepare(`DELETE FROM blobs AS b WHERE b.sha256 = @sha256 AND ${UNPINNED} AND NOT EXISTS (SELECT 1 FROM artifacts a WHERE a.sha256 = @sha256)`)
            .run({ sha256, now }).changes > 0,
      );
    },

    async recordRetentionRun(run) {
      db.insert(retentionRuns).values(run).run();
    },

    async retentionRuns(limit) {
      return db.select().from(retentionRuns).orderBy(desc(retentionRuns.startedAt), desc(retentionRuns.id)).limit(limit).all();
    },

    async backupTo(path) {
      await sqlite.backup(path);
    },

    async ping() {
      sqlite.prepare('select 1').get();
    },

    async close() {
      if (sqlite.open) sqlite.close();
    },
  };
}
