import { sql } from 'drizzle-orm';
import { check, index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

// Times are integer milliseconds since the epoch; the wire shows ISO 8601.
// Absent scope parts are stored as '' (not NULL) so the uniqueness of a reference's scope holds.

/** Immutable bytes by full sha256, stored once whoever uploads them. */
export const blobs = sqliteTable(
  'blobs',
  {
    sha256: text('sha256').primaryKey(),
    /** 0 until a put has stored the bytes (the row is written with the put's pin, before the bytes). */
    sizeBytes: integer('size_bytes').notNull(),
    createdAt: integer('created_at').notNull(),
    /**
     * Set by garbage collection (or purge) while it deletes the bytes: a put waits for it to finish.
     * The column keeps its first name, doomed_at.
     */
    markedAt: integer('doomed_at'),
  },
  // Rows whose put has not stored the bytes (yet): retention looks for unfinished ones among these
  // only, not through every blob row.
  (t) => [index('blobs_unfinished').on(t.sha256).where(sql`size_bytes = 0`)],
);

/** Per tenant: content facts only. */
export const artifacts = sqliteTable(
  'artifacts',
  {
    tenantId: text('tenant_id').notNull(),
    id: text('id').notNull(),
    namespace: text('namespace').notNull(),
    sha256: text('sha256').notNull(),
    sizeBytes: integer('size_bytes').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.id] }), index('artifacts_sha256').on(t.sha256)],
);

/** One scope's hold on an artifact, with everything that putter said about it. */
export const artifactRefs = sqliteTable(
  'artifact_refs',
  {
    refId: integer('ref_id').primaryKey({ autoIncrement: true }),
    tenantId: text('tenant_id').notNull(),
    artifactId: text('artifact_id').notNull(),
    userId: text('user_id').notNull().default(''),
    sessionId: text('session_id').notNull().default(''),
    traceId: text('trace_id').notNull().default(''),
    /** The artifact's size, kept on each reference so quotas sum one table (sizes never change). */
    sizeBytes: integer('size_bytes').notNull().default(0),
    mimeType: text('mime_type').notNull(),
    filename: text('filename'),
    meta: text('meta', { mode: 'json' }).$type<Record<string, unknown>>(),
    source: text('source', { mode: 'json' }).$type<Record<string, unknown>>(),
    createdAt: integer('created_at').notNull(),
    lastAccessedAt: integer('last_accessed_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
    /**
     * The name this reference is a version of ('' for a reference by content alone): a name of the
     * names table, in the app that is its artifact's namespace, at the same user and session.
     */
    name: text('name').notNull().default(''),
    /** Its version number under that name (0, 1, 2…), or -1. */
    version: integer('version').notNull().default(-1),
  },
  (t) => [
    uniqueIndex('artifact_refs_scope').on(
      t.tenantId,
      t.artifactId,
      t.userId,
      t.sessionId,
      t.traceId,
      t.name,
      t.version,
    ),
    index('artifact_refs_name').on(t.tenantId, t.userId, t.sessionId, t.name, t.version),
    // Lookup of one id (every GET): equality on (tenant, id), newest reference first, no sort.
    index('artifact_refs_artifact').on(t.tenantId, t.artifactId, t.createdAt, t.refId),
    index('artifact_refs_tenant_created').on(t.tenantId, t.createdAt, t.refId),
    index('artifact_refs_session_created').on(t.tenantId, t.sessionId, t.createdAt),
    index('artifact_refs_trace_created').on(t.tenantId, t.traceId, t.createdAt),
    index('artifact_refs_expires').on(t.expiresAt),
  ],
);

/**
 * Named artifacts: a name in a scope (tenant, app, user, and a session or '' for user-wide) whose
 * versions are references (artifact_refs.name and .version, their artifact's namespace being the app). The row keeps the next version number, so a number
 * is never given twice while the name exists, whatever happened to the versions; deleting the name
 * deletes the row, and a new save starts again at 0.
 */
export const names = sqliteTable(
  'names',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    tenantId: text('tenant_id').notNull(),
    app: text('app').notNull(),
    userId: text('user_id').notNull(),
    sessionId: text('session_id').notNull().default(''),
    name: text('name').notNull(),
    nextVersion: integer('next_version').notNull().default(0),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [uniqueIndex('names_key').on(t.tenantId, t.app, t.userId, t.sessionId, t.name)],
);

/** Events, appended in the same transaction as the change, tailed by SSE / MCP subscribers. */
export const outbox = sqliteTable(
  'outbox',
  {
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    tenantId: text('tenant_id').notNull(),
    type: text('type').notNull(),
    artifactId: text('artifact_id').notNull(),
    scope: text('scope', { mode: 'json' }).$type<Record<string, string>>().notNull(),
    /** The reference as it was at the change (a RefRow), so subscribers get the ArtifactRef even after it is gone. */
    ref: text('ref', { mode: 'json' }).$type<Record<string, unknown>>(),
    /** What an event other than an artifact's carries: the audit entry of `audit.recorded`. */
    data: text('data', { mode: 'json' }).$type<Record<string, unknown>>(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [index('outbox_tenant_seq').on(t.tenantId, t.seq)],
);

/**
 * API keys: only a sha256 of the secret is kept. An operator key (made on the host with
 * `artifact-store keys create --operator`) belongs to no tenant: its tenant_id is ''.
 */
export const apiKeys = sqliteTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    operator: integer('operator', { mode: 'boolean' }).notNull().default(false),
    secretHash: text('secret_hash').notNull(),
    perms: text('perms', { mode: 'json' }).$type<string[]>().notNull(),
    label: text('label'),
    createdAt: integer('created_at').notNull(),
    revokedAt: integer('revoked_at'),
  },
  (t) => [index('api_keys_tenant').on(t.tenantId)],
);

/**
 * Uploads in flight: a direct upload (`put`: one PUT straight to the blob store's staging key;
 * `multipart`: parts PUT straight to an S3 multipart upload at the staging key) or a resumable upload
 * through the service (`tus`: bytes appended to a staging file). Holds what the put will say (scope
 * and options) and what the bytes must be (size, and the sha256 when declared; '' for a tus upload
 * that declared none).
 */
export const uploads = sqliteTable(
  'uploads',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    userId: text('user_id').notNull().default(''),
    sessionId: text('session_id').notNull().default(''),
    traceId: text('trace_id').notNull().default(''),
    stagingKey: text('staging_key').notNull(),
    sizeBytes: integer('size_bytes').notNull(),
    sha256: text('sha256').notNull(),
    options: text('options', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
    kind: text('kind').$type<'put' | 'multipart' | 'tus'>().notNull().default('put'),
    /** The S3 multipart upload's UploadId (multipart only). */
    multipartId: text('multipart_id'),
    /** Every part's size but the last's (multipart only). */
    partSize: integer('part_size'),
    /** Bytes acknowledged so far (tus only: the Upload-Offset). */
    receivedBytes: integer('received_bytes').notNull().default(0),
  },
  (t) => [index('uploads_expires').on(t.expiresAt)],
);

/** Every retention run's report, newest last: the history behind usage charts. */
export const retentionRuns = sqliteTable(
  'retention_runs',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    trigger: text('trigger').notNull(),
    startedAt: integer('started_at').notNull(),
    finishedAt: integer('finished_at').notNull(),
    report: text('report', { mode: 'json' }).$type<Record<string, unknown>>().notNull(),
  },
  (t) => [index('retention_runs_started').on(t.startedAt)],
);

/**
 * Named leases between processes that share the database: the holder of `retention` runs the
 * scheduled retention; the others skip their turn until it lapses.
 */
export const leases = sqliteTable('leases', {
  name: text('name').primaryKey(),
  holder: text('holder').notNull(),
  expiresAt: integer('expires_at').notNull(),
});

/**
 * Every admin and operator action: who, when, what, on which tenant ('' = the whole service), and
 * the request it came in. Kept for ARTIFACT_STORE_AUDIT_RETENTION_DAYS; nothing else trims it.
 */
export const auditLog = sqliteTable(
  'audit_log',
  {
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    at: integer('at').notNull(),
    tenantId: text('tenant_id').notNull().default(''),
    action: text('action').notNull(),
    /** 'tenant_admin' | 'operator' | 'host' (the CLI on the host) | 'scheduler'. */
    role: text('role').notNull(),
    /** jwt, api_key, cli or scheduler. */
    actorKind: text('actor_kind').notNull(),
    /** The token's subject, the API key's id, the host user. */
    actorId: text('actor_id').notNull(),
    target: text('target'),
    details: text('details', { mode: 'json' }).$type<Record<string, unknown>>(),
    requestId: text('request_id'),
  },
  (t) => [index('audit_log_tenant_seq').on(t.tenantId, t.seq), index('audit_log_at').on(t.at)],
);

/**
 * One per put between knowing its hash and committing its metadata: garbage collection and purge
 * leave a pinned blob alone. The put's metadata commit removes its pin; a crashed put's pin expires.
 */
export const blobPins = sqliteTable(
  'blob_pins',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    sha256: text('sha256').notNull(),
    until: integer('until').notNull(),
  },
  (t) => [index('blob_pins_sha256').on(t.sha256)],
);

// Scratch tables of the statement plans (src/db/plans/). D1 has no interactive transactions and no
// TEMP tables: a put runs as one batch of statements (on SQLite, the same statements in one
// transaction), and these carry what one statement computed to the later ones. Each plan empties them
// before it ends (a refused put on SQLite rolls back), so outside a put they are always empty.

/** The put in progress: the verdict's inputs, then the verdict. */
export const putCtx = sqliteTable(
  'put_ctx',
  {
    /** Always 1: a row left behind would make the next put fail loudly rather than read stale numbers. */
    id: integer('id').primaryKey(),
    now: integer('now').notNull(),
    expiresAt: integer('expires_at').notNull(),
    /** The scope already held a live reference to the artifact (a re-put). */
    live: integer('live').notNull(),
    pinOk: integer('pin_ok').notNull(),
    collision: integer('collision').notNull(),
    sessN: integer('sess_n').notNull(),
    sessBytes: integer('sess_bytes').notNull(),
    traceN: integer('trace_n').notNull(),
    traceBytes: integer('trace_bytes').notNull(),
    /** The tenant's live bytes after the put and its planned evictions. */
    tenantAfter: integer('tenant_after'),
    /** Why the put is refused (pin, collision, session, trace, tenant, …); null = it goes ahead. */
    refused: text('refused'),
  },
  (t) => [check('put_ctx_one_row', sql`${t.id} = 1`)],
);

/** References a batch is about to remove (evictions, expiry, deletes), with what their events need. */
export const evictPlan = sqliteTable('evict_plan', {
  refId: integer('ref_id').primaryKey(),
  /** 1 = the session's evictions, 2 = the trace's; removals outside a put use 0. */
  pass: integer('pass').notNull(),
  sizeBytes: integer('size_bytes').notNull(),
  tenantId: text('tenant_id').notNull(),
  artifactId: text('artifact_id').notNull(),
});
