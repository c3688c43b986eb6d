/**
 * The metadata schema on Postgres: the tables of ../schema.ts (SQLite and D1), column for column, so
 * the statements both share (the statement repository, ../statements.ts) run on it. Differences:
 * - every integer is a bigint (times are milliseconds since the epoch) read back as a JS number;
 * - text compares byte by byte (COLLATE "C"), as SQLite's does, so keyset paging over names, sha256s
 *   and scope ids walks in the same order whatever collation the database was created with;
 * - artifacts carries `rowid`, which SQLite gives every table and retention's walk over artifacts uses;
 * - JSON columns stay text: the same JSON text goes in and comes out.
 * Migrations: `npm run db:generate` writes them into migrations/postgres from this file.
 */
import { sql } from 'drizzle-orm';
import {
  bigint,
  boolean,
  check,
  customType,
  doublePrecision,
  index,
  pgTable,
  primaryKey,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

/** Text that sorts and compares byte by byte, as SQLite's does. */
const text = customType<{ data: string }>({ dataType: () => 'text COLLATE "C"' });
/** A bigint read as a JS number (every value here is far below 2^53). */
const int = (name: string) => bigint(name, { mode: 'number' });
/** A bigint the database numbers (SQLite's INTEGER PRIMARY KEY AUTOINCREMENT). */
const serial = (name: string) => int(name).generatedByDefaultAsIdentity();

export const blobs = pgTable(
  'blobs',
  {
    sha256: text('sha256').primaryKey(),
    sizeBytes: int('size_bytes').notNull(),
    createdAt: int('created_at').notNull(),
    markedAt: int('doomed_at'),
  },
  (t) => [index('blobs_unfinished').on(t.sha256).where(sql`size_bytes = 0`)],
);

export const artifacts = pgTable(
  'artifacts',
  {
    /** What SQLite calls rowid: the order retention walks artifacts in. */
    rowid: serial('rowid').notNull().unique(),
    tenantId: text('tenant_id').notNull(),
    id: text('id').notNull(),
    namespace: text('namespace').notNull(),
    sha256: text('sha256').notNull(),
    sizeBytes: int('size_bytes').notNull(),
    createdAt: int('created_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.tenantId, t.id] }), index('artifacts_sha256').on(t.sha256)],
);

export const artifactRefs = pgTable(
  'artifact_refs',
  {
    refId: serial('ref_id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    artifactId: text('artifact_id').notNull(),
    userId: text('user_id').notNull().default(''),
    sessionId: text('session_id').notNull().default(''),
    traceId: text('trace_id').notNull().default(''),
    sizeBytes: int('size_bytes').notNull().default(0),
    mimeType: text('mime_type').notNull(),
    filename: text('filename'),
    meta: text('meta'),
    source: text('source'),
    createdAt: int('created_at').notNull(),
    lastAccessedAt: int('last_accessed_at').notNull(),
    expiresAt: int('expires_at').notNull(),
    name: text('name').notNull().default(''),
    version: int('version').notNull().default(-1),
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
    index('artifact_refs_artifact').on(t.tenantId, t.artifactId, t.createdAt, t.refId),
    index('artifact_refs_tenant_created').on(t.tenantId, t.createdAt, t.refId),
    index('artifact_refs_session_created').on(t.tenantId, t.sessionId, t.createdAt),
    index('artifact_refs_trace_created').on(t.tenantId, t.traceId, t.createdAt),
    index('artifact_refs_expires').on(t.expiresAt),
  ],
);

export const names = pgTable(
  'names',
  {
    id: serial('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    app: text('app').notNull(),
    userId: text('user_id').notNull(),
    sessionId: text('session_id').notNull().default(''),
    name: text('name').notNull(),
    nextVersion: int('next_version').notNull().default(0),
    createdAt: int('created_at').notNull(),
  },
  (t) => [uniqueIndex('names_key').on(t.tenantId, t.app, t.userId, t.sessionId, t.name)],
);

export const outbox = pgTable(
  'outbox',
  {
    seq: serial('seq').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    type: text('type').notNull(),
    artifactId: text('artifact_id').notNull(),
    scope: text('scope').notNull(),
    ref: text('ref'),
    data: text('data'),
    createdAt: int('created_at').notNull(),
  },
  (t) => [index('outbox_tenant_seq').on(t.tenantId, t.seq)],
);

export const apiKeys = pgTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    operator: boolean('operator').notNull().default(false),
    secretHash: text('secret_hash').notNull(),
    perms: text('perms').notNull(),
    label: text('label'),
    createdAt: int('created_at').notNull(),
    revokedAt: int('revoked_at'),
  },
  (t) => [index('api_keys_tenant').on(t.tenantId)],
);

export const uploads = pgTable(
  'uploads',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id').notNull(),
    userId: text('user_id').notNull().default(''),
    sessionId: text('session_id').notNull().default(''),
    traceId: text('trace_id').notNull().default(''),
    stagingKey: text('staging_key').notNull(),
    sizeBytes: int('size_bytes').notNull(),
    sha256: text('sha256').notNull(),
    options: text('options').notNull(),
    createdAt: int('created_at').notNull(),
    expiresAt: int('expires_at').notNull(),
    kind: text('kind').notNull().default('put'),
    multipartId: text('multipart_id'),
    partSize: int('part_size'),
    receivedBytes: int('received_bytes').notNull().default(0),
  },
  (t) => [index('uploads_expires').on(t.expiresAt)],
);

export const retentionRuns = pgTable(
  'retention_runs',
  {
    id: serial('id').primaryKey(),
    trigger: text('trigger').notNull(),
    startedAt: int('started_at').notNull(),
    finishedAt: int('finished_at').notNull(),
    report: text('report').notNull(),
  },
  (t) => [index('retention_runs_started').on(t.startedAt)],
);

export const leases = pgTable('leases', {
  name: text('name').primaryKey(),
  holder: text('holder').notNull(),
  expiresAt: int('expires_at').notNull(),
});

export const auditLog = pgTable(
  'audit_log',
  {
    seq: serial('seq').primaryKey(),
    at: int('at').notNull(),
    tenantId: text('tenant_id').notNull().default(''),
    action: text('action').notNull(),
    role: text('role').notNull(),
    actorKind: text('actor_kind').notNull(),
    actorId: text('actor_id').notNull(),
    target: text('target'),
    details: text('details'),
    requestId: text('request_id'),
  },
  (t) => [index('audit_log_tenant_seq').on(t.tenantId, t.seq), index('audit_log_at').on(t.at)],
);

export const blobPins = pgTable(
  'blob_pins',
  {
    id: serial('id').primaryKey(),
    sha256: text('sha256').notNull(),
    until: int('until').notNull(),
  },
  (t) => [index('blob_pins_sha256').on(t.sha256)],
);

// The statement plans' scratch tables (see ../schema.ts). A plan empties them before its transaction
// commits, so no other transaction ever sees a row of them: each one's rows are its own.

export const putCtx = pgTable(
  'put_ctx',
  {
    id: int('id').primaryKey(),
    now: int('now').notNull(),
    expiresAt: int('expires_at').notNull(),
    live: boolean('live').notNull(),
    pinOk: boolean('pin_ok').notNull(),
    collision: boolean('collision').notNull(),
    sessN: int('sess_n').notNull(),
    sessBytes: int('sess_bytes').notNull(),
    traceN: int('trace_n').notNull(),
    traceBytes: int('trace_bytes').notNull(),
    tenantAfter: int('tenant_after'),
    refused: text('refused'),
  },
  (t) => [check('put_ctx_one_row', sql`${t.id} = 1`)],
);

export const evictPlan = pgTable('evict_plan', {
  refId: int('ref_id').primaryKey(),
  pass: int('pass').notNull(),
  sizeBytes: int('size_bytes').notNull(),
  tenantId: text('tenant_id').notNull(),
  artifactId: text('artifact_id').notNull(),
});

/**
 * Request rates shared by every replica: one token bucket per key (a tenant), from which replicas
 * lease tokens in small batches (the rate limiter's `leases`). `granted`: what the last lease took.
 */
export const rateBuckets = pgTable('rate_buckets', {
  key: text('key').primaryKey(),
  tokens: doublePrecision('tokens').notNull(),
  at: int('at').notNull(),
  granted: doublePrecision('granted').notNull(),
});
