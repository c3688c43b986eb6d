import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { and, desc, eq, gt, gte, inArray, isNull, lt, or, sql, type SQL } from 'drizzle-orm';
import { drizzle, type BetterSQLite3Database } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { errors } from '../core/errors.js';
import type { ApiKeyRecord, ArtifactRepository, CommitPutInput, ListFilter, RefRow, ScopeFilter } from './repository.js';
import { createRecentRefs } from './recent-refs.js';
import * as schema from './schema.js';
import { apiKeys, artifactRefs, artifacts, blobs, outbox, uploads } from './schema.js';

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

  return {
    async commitPut(input: CommitPutInput) {
      const { scope, now } = input;
      const key = { userId: scope.userId ?? '', sessionId: scope.sessionId ?? '', traceId: scope.traceId ?? '' };
      return writing(() => db.transaction(
        (tx) => {
          tx.insert(blobs).values({ sha256: input.sha256, sizeBytes: input.sizeBytes, createdAt: now }).onConflictDoNothing().run();
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
          if (prior) {
            tx.update(artifactRefs)
              .set({ ...described, lastAccessedAt: now, expiresAt: input.expiresAt, ...(live ? {} : { createdAt: now }) })
              .where(eq(artifactRefs.refId, prior.refId))
              .run();
          } else {
            tx.insert(artifactRefs)
              .values({ tenantId: scope.tenantId, artifactId: input.artifactId, ...key, ...described, createdAt: now, lastAccessedAt: now, expiresAt: input.expiresAt })
              .run();
          }
          tx.insert(outbox).values({ tenantId: scope.tenantId, type: 'artifact.stored', artifactId: input.artifactId, scope: key, createdAt: now }).run();
          const row = selectRef(scope.tenantId, input.artifactId, key) as RefRow;
          return { row, created: !live };
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
          const gone = tx.delete(artifactRefs).where(where).returning({ userId: artifactRefs.userId, sessionId: artifactRefs.sessionId, traceId: artifactRefs.traceId }).all();
          if (gone.length === 0) return 0;
          const left = tx
            .select({ n: sql<number>`count(*)` })
            .from(artifactRefs)
            .where(and(eq(artifactRefs.tenantId, tenantId), eq(artifactRefs.artifactId, artifactId)))
            .get();
          if ((left?.n ?? 0) === 0) tx.delete(artifacts).where(and(eq(artifacts.tenantId, tenantId), eq(artifacts.id, artifactId))).run();
          for (const scope of gone) tx.insert(outbox).values({ tenantId, type: 'artifact.deleted', artifactId, scope, createdAt: now }).run();
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
        .select({ id: apiKeys.id, tenantId: apiKeys.tenantId, perms: apiKeys.perms, label: apiKeys.label, createdAt: apiKeys.createdAt, revokedAt: apiKeys.revokedAt })
        .from(apiKeys)
        .where(tenantId ? eq(apiKeys.tenantId, tenantId) : undefined)
        .all();
      return rows as ApiKeyRecord[];
    },

    async ping() {
      sqlite.prepare('select 1').get();
    },

    async close() {
      if (sqlite.open) sqlite.close();
    },
  };
}
