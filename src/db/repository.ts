import type { QuotaLimits } from '../core/limits.js';
import type { ListPosition } from '../core/cursor.js';
import type { StoredRef } from '../core/refs.js';
import type { ArtifactScope, ListSort } from '../core/schemas.js';

/** A reference joined with its artifact: everything needed to build an ArtifactRef, and its row id. */
export interface RefRow extends StoredRef {
  refId: number;
}

/**
 * Which references a caller may see inside its tenant. Each part that is set must match; a
 * session-bound token always sets `sessionId`.
 */
export interface ScopeFilter {
  userId?: string;
  sessionId?: string;
  traceId?: string;
}

export interface CommitPutInput {
  scope: ArtifactScope;
  artifactId: string;
  namespace: string;
  sha256: string;
  sizeBytes: number;
  mimeType: string;
  filename?: string;
  meta?: Record<string, unknown>;
  source?: Record<string, unknown>;
  now: number;
  expiresAt: number;
  /**
   * Read again once the write lock is held, when given: `now` and `expiresAt` move forward by the
   * time spent waiting for it.
   */
  clock?: () => number;
  /**
   * The pin the put took (pinBlob) before committing the bytes: the commit removes it, and fails
   * with backend_unavailable if it ran out, since garbage collection may have taken the bytes since.
   */
  pinId?: number;
  /** Limits to enforce in the same transaction; absent = none. */
  quota?: QuotaLimits;
  /**
   * Save a new version of this name (in the app that is `namespace`, at the scope's user and
   * session, no trace): the version number is taken from the name's counter in the same
   * transaction. Limits refuse rather than evict for names.
   */
  name?: string;
}

/** A reference removed to make room, as its `artifact.evicted` event names it. */
export interface EvictedRef {
  refId: number;
  /** The artifact's size: what the eviction freed from the scope's quota. */
  sizeBytes: number;
  tenantId: string;
  artifactId: string;
  userId: string;
  sessionId: string;
  traceId: string;
}

/**
 * One row of the outbox. `ref` is the reference as it was at the change (null for rows written
 * before refs were kept).
 */
export interface OutboxEvent {
  seq: number;
  tenantId: string;
  type: string;
  artifactId: string;
  scope: { userId: string; sessionId: string; traceId: string };
  ref: RefRow | null;
  /** The payload of an event that is not about an artifact (`audit.recorded`: the AuditEntry). */
  data: Record<string, unknown> | null;
  createdAt: number;
}

/** An event that is not about an artifact, as it is appended (`resource.updated`). */
export interface NewOutboxEvent {
  tenantId: string;
  type: string;
  /** What it is about (kept in artifact_id): the resource uri, say. */
  subject: string;
  /** Who may see it: empty parts are tenant-wide. */
  scope: { userId?: string; sessionId?: string; traceId?: string };
  data: Record<string, unknown>;
  at: number;
}

/** Who acted: a tenant's admin, an operator (operator key), the CLI on the host, or a scheduled run. */
export type AuditRole = 'tenant_admin' | 'operator' | 'host' | 'scheduler';

/** One admin or operator action (see the audit_log table). */
export interface AuditEntry {
  seq: number;
  at: number;
  /** The tenant acted on; '' = the whole service (a global retention run, a key of the operator). */
  tenantId: string;
  /** artifact.purge, retention.run, fsck.run, key.create, key.revoke, policy.change. */
  action: string;
  role: AuditRole;
  /** jwt, api_key, cli or scheduler. */
  actorKind: string;
  /** The token's subject (or "-"), the API key id, the host user, the trigger. */
  actorId: string;
  target: string | null;
  details: Record<string, unknown> | null;
  requestId: string | null;
}

export interface AuditFilter {
  /** One tenant's entries ('' = the service-wide ones); unset = all. */
  tenantId?: string;
  action?: string;
  /** At or after this time. */
  since?: number;
  /** Entries older than this seq (keyset paging, newest first). */
  beforeSeq?: number;
  limit: number;
}

/** Live usage of one session or trace. */
export interface ScopeUsage {
  tenantId: string;
  value: string;
  count: number;
  bytes: number;
}

export interface ListFilter extends ScopeFilter {
  namespace?: string;
  mimePrefix?: string;
  createdAfter?: number;
  createdBefore?: number;
  /** A substring of the id, the filename or the name (ASCII letters in either case). */
  search?: string;
  /** The order (default newest first). */
  sort?: ListSort;
  /** Position after which to continue (exclusive), from a previous page of the same order. */
  after?: ListPosition;
  limit: number;
  now: number;
}

/** How an upload's bytes arrive: one presigned PUT, S3 multipart parts, or tus through the service. */
export type UploadKind = 'put' | 'multipart' | 'tus';

/** An upload in flight (see the uploads table). */
export interface UploadRecord {
  id: string;
  tenantId: string;
  userId: string;
  sessionId: string;
  traceId: string;
  stagingKey: string;
  sizeBytes: number;
  sha256: string;
  /** The put options of the artifact to be (mime type, filename, namespace, meta, source, ttl). */
  options: Record<string, unknown>;
  createdAt: number;
  expiresAt: number;
  kind: UploadKind;
  /** The S3 multipart upload's UploadId (multipart only). */
  multipartId: string | null;
  /** Every part's size but the last's (multipart only). */
  partSize: number | null;
  /** Bytes acknowledged so far (tus only: its Upload-Offset). */
  receivedBytes: number;
}

export interface ApiKeyRecord {
  id: string;
  /** '' for an operator key. */
  tenantId: string;
  /** An operator key: service-wide powers, no tenant, no artifacts. */
  operator: boolean;
  perms: string[];
  label: string | null;
  createdAt: number;
  revokedAt: number | null;
}

/** Narrows `ReferenceRepository.usage`: within a tenant, session or trace; at most `limit` rows. */
export interface UsageOptions {
  tenantId?: string;
  sessionId?: string;
  traceId?: string;
  limit: number;
}

/** What ending a session removed: references, the bytes they held, the named versions among them. */
export interface SessionTally {
  refs: number;
  bytes: number;
  versions: number;
}

/** Totals for metrics: live references and their bytes; blobs and theirs. */
export interface StoredTotals {
  refs: number;
  refBytes: number;
  blobs: number;
  blobBytes: number;
}

/** References removed by a retention step, and the bytes they held. */
export interface RemovedTally {
  refs: number;
  bytes: number;
}

/** One retention run's report, as kept. */
export interface RetentionRun {
  id: number;
  trigger: string;
  startedAt: number;
  finishedAt: number;
  report: Record<string, unknown>;
}

/** A blob row as fsck sees it: how many artifacts hold it, and whether a live pin protects it. */
export interface BlobRow {
  sha256: string;
  sizeBytes: number;
  pinned: boolean;
  artifacts: number;
}

/**
 * References: the put that records them (enforcing quotas), lookups, listings and live usage.
 * Every read filters by tenant, scope and expiry in one query: out of scope and missing are the
 * same empty answer.
 */
export interface ReferenceRepository {
  /**
   * Records a committed blob, the tenant's artifact and the scope's reference, enforces `quota`
   * (evicting with `artifact.evicted`, or throwing quota_exceeded) and appends `artifact.stored`,
   * atomically. Throws hash_collision when the id names other bytes.
   * `created` is false when this scope already held the artifact (its expiry is refreshed).
   */
  commitPut(input: CommitPutInput): Promise<{ row: RefRow; created: boolean; evicted: EvictedRef[] }>;
  /** The newest live reference to `artifactId` visible through `filter`. */
  findRef(tenantId: string, artifactId: string, filter: ScopeFilter, now: number): Promise<RefRow | undefined>;
  /** Sets last-accessed on these references (batched by the caller). */
  touch(refIds: readonly number[], at: number): Promise<void>;
  /**
   * Removes the references visible through `filter`, drops the artifact with its last reference and
   * appends `artifact.deleted`, atomically. Returns how many references went.
   */
  deleteRefs(tenantId: string, artifactId: string, filter: ScopeFilter, now: number): Promise<number>;
  /**
   * Ends a session (`sessionId` not empty): removes its live references visible through `filter`
   * (whose sessionId is ignored), and every version, live or not, of its names with the names'
   * counters, so a later save of such a name starts at 0 again; each reference with
   * `artifact.deleted`, each artifact with its last reference. User-wide names have no session and
   * stay. Runs as transactions of at most `batchSize` references (default 500), so memory and lock
   * time stay bounded however much the session holds; references stored after it began stay.
   */
  endSession(
    tenantId: string,
    sessionId: string,
    filter: ScopeFilter,
    now: number,
    batchSize?: number,
  ): Promise<SessionTally>;
  /**
   * In the filter's order (see core/listing.ts), stable under concurrent inserts: every order ends
   * in (createdAt, refId), newest first by default.
   */
  list(tenantId: string, filter: ListFilter): Promise<RefRow[]>;
  /**
   * Live usage, biggest first: per tenant, or per session / trace (within `tenantId` when given).
   * `value` is the tenant, session or trace id.
   */
  usage(kind: 'tenant' | 'session' | 'trace', now: number, options: UsageOptions): Promise<ScopeUsage[]>;
  /** Totals for metrics: live references and their bytes; blobs and theirs. */
  storedTotals(now: number): Promise<StoredTotals>;
}

/** Uploads in flight. */
export interface UploadRepository {
  createUpload(upload: UploadRecord): Promise<void>;
  /** An upload of this tenant, expired or not. */
  findUpload(tenantId: string, id: string): Promise<UploadRecord | undefined>;
  /**
   * Moves a tus upload's acknowledged offset from `from` to `to` (and its expiry), only if it still
   * reads `from`: false when another request moved it first or the upload is gone.
   */
  advanceUpload(id: string, from: number, to: number, expiresAt: number): Promise<boolean>;
  deleteUpload(id: string): Promise<void>;
  /** Up to `limit` direct uploads that expired before `before`. */
  expiredUploads(before: number, limit: number): Promise<UploadRecord[]>;
}

/** API keys: stored with their secret's hash, never the secret. */
export interface ApiKeyRepository {
  createApiKey(record: Omit<ApiKeyRecord, 'revokedAt'> & { secretHash: string }): Promise<void>;
  /** A live (not revoked) key by id, with its secret hash. */
  findApiKey(id: string): Promise<(ApiKeyRecord & { secretHash: string }) | undefined>;
  revokeApiKey(id: string, at: number): Promise<boolean>;
  listApiKeys(tenantId?: string): Promise<ApiKeyRecord[]>;
}

/**
 * Retention. Each call is one bounded transaction, so a run over any number of rows holds the write
 * lock briefly and works in bounded memory.
 */
export interface RetentionRepository {
  /**
   * Removes up to `limit` references expired at `now`, with `artifact.expired`; artifacts go with
   * their last reference.
   */
  expireRefs(now: number, limit: number): Promise<RemovedTally & { byTenant: Record<string, RemovedTally> }>;
  /**
   * Sessions or traces whose live references exceed `minCount` or `minBytes`, among the next window
   * of scopes after `after` (keyset): about `rows` references, and every one of the window's last
   * scope. `next`: where the following window starts, or null when this one reached the end.
   */
  scopesOver(
    kind: 'session' | 'trace',
    now: number,
    minCount: number,
    minBytes: number,
    after: { tenantId: string; value: string } | undefined,
    rows: number,
  ): Promise<{ scopes: ScopeUsage[]; next: { tenantId: string; value: string } | null }>;
  /** Brings one session or trace within `quota` (lru / fifo; `none` evicts nothing), with `artifact.evicted`. */
  enforceScope(
    tenantId: string,
    kind: 'session' | 'trace',
    value: string,
    quota: QuotaLimits,
    now: number,
  ): Promise<EvictedRef[]>;
  /**
   * Drops the artifacts that no reference holds (normally none: they go with their last reference)
   * among the `limit` after rowid `after`. `next`: where the following window starts, or null at the end.
   */
  dropUnreferencedArtifacts(after: number, limit: number): Promise<{ dropped: number; next: number | null }>;
  /** Keeps a retention run's report. */
  recordRetentionRun(run: Omit<RetentionRun, 'id'>): Promise<void>;
  /** The newest `limit` retention runs, newest first. */
  retentionRuns(limit: number): Promise<RetentionRun[]>;
  /**
   * Takes or renews the lease `name` for `holder` until `until`: true when `holder` now holds it
   * (it was free, lapsed at `now`, or already its own).
   */
  claimLease(name: string, holder: string, until: number, now: number): Promise<boolean>;
  /** Gives the lease up if `holder` holds it, so another process may take it at once. */
  releaseLease(name: string, holder: string): Promise<void>;
}

/** Blob rows: the pins puts take, garbage collection of bytes nothing holds, and fsck. */
export interface BlobRepository {
  /**
   * Pins a blob for one put, before its bytes are committed: garbage collection and purge leave it
   * alone while the pin lives (until `until`, or until the put's commitPut removes it). Returns the
   * pin's id, or 'collecting' when a collection of it is under way (started after `staleBefore`):
   * wait and retry.
   */
  pinBlob(sha256: string, until: number, now: number, staleBefore: number): Promise<number | 'collecting'>;
  /** Removes a pin (a put that failed after pinning). */
  releasePin(pinId: number): Promise<void>;
  /** Removes pins that ran out (puts that died after pinning); returns how many. */
  dropExpiredPins(now: number): Promise<number>;
  /**
   * Of the `limit` blob rows after sha256 `after`, marks for collection those no artifact holds and
   * no put pinned past `now`, created before `createdBefore`, or marked by a run that started before
   * `staleBefore` and never finished. Marked with `now`. `next`: where the following window starts,
   * or null when this one reached the last row.
   */
  markBlobsForCollection(
    now: number,
    createdBefore: number,
    staleBefore: number,
    after: string,
    limit: number,
  ): Promise<{ marked: { sha256: string; sizeBytes: number }[]; next: string | null }>;
  /**
   * Ends a collection marked at `markedAt`, in one transaction: drops the rows of the `collected`
   * blobs (their bytes are deleted) and clears the mark of the `failed` ones (their bytes are still
   * there, for a later run). Rows no longer marked with `markedAt` are left as they are.
   */
  dropOrUnmarkBlobs(collected: string[], failed: string[], markedAt: number): Promise<void>;
  /**
   * Marks one blob for collection with `now`, if no artifact holds it, no put has pinned it and no
   * collection has marked it already (purge); false when it did not.
   */
  markBlobForPurge(sha256: string, now: number): Promise<boolean>;
  // fsck
  /** Blob rows after `after` (by sha256), with how many artifacts hold each. */
  blobRows(after: string, limit: number, now: number): Promise<BlobRow[]>;
  /** Which of these sha256s have a blob row. */
  knownBlobs(sha256s: string[]): Promise<Set<string>>;
  /** Artifacts (tenant, id) that hold these bytes, up to `limit`. */
  artifactsOfBlob(sha256: string, limit: number): Promise<{ tenantId: string; id: string }[]>;
  /**
   * Blob rows of puts that pinned their bytes and never committed metadata (size still 0), which no
   * artifact holds and no live pin protects, after `after` (by sha256): a put that failed, e.g. with
   * the blob store down. Their bytes may or may not exist; the caller looks.
   */
  unfinishedBlobRows(now: number, after: string, limit: number): Promise<string[]>;
  /** Deletes a blob row that no artifact holds and no put has pinned past `now`; false otherwise. */
  deleteIdleBlobRow(sha256: string, now: number): Promise<boolean>;
}

/** The outbox of events (which every process writes to) and the audit trail that feeds it. */
export interface OutboxRepository {
  /**
   * Events of a tenant after `afterSeq`, oldest first (the outbox, which every process writes to);
   * `undefined`: every tenant's (operators).
   */
  readEvents(tenantId: string | undefined, afterSeq: number, limit: number): Promise<OutboxEvent[]>;
  /** The newest event's seq (0 when there is none). */
  lastEventSeq(): Promise<number>;
  /**
   * Resolves when a transaction (of any process on this database) appended events after the call,
   * or when the database's notifications may have been missed (a reconnection): readers of the
   * outbox then read it when woken instead of polling. Absent where the database has no
   * notifications (SQLite, D1): readers poll.
   */
  waitForEvents?(): Promise<void>;
  /**
   * Drops, of the `limit` oldest events, those older than `before`, and returns how many. Fewer than
   * `limit` means the front of the outbox is reached; resuming from before then starts at the oldest kept.
   */
  trimEvents(before: number, limit: number): Promise<number>;
  /** Appends an event that is not about an artifact. */
  appendEvent(event: NewOutboxEvent): Promise<void>;
  /** Records an admin or operator action and appends its `audit.recorded` event, atomically. */
  recordAudit(entry: Omit<AuditEntry, 'seq'>): Promise<AuditEntry>;
  /** Audit entries, newest first. */
  listAudit(filter: AuditFilter): Promise<AuditEntry[]>;
  /** Drops, of the `limit` oldest audit entries, those older than `before` (as trimEvents). */
  trimAudit(before: number, limit: number): Promise<number>;
}

/**
 * Metadata persistence: every concern above, on one database. Async so that both SQLite (one
 * transaction) and D1 (one batch) fit.
 */
export type { NameKey, NameScope } from '../core/schemas.js';
import type { NameKey, NameScope } from '../core/schemas.js';

/** A name in a listing: its live versions. */
export interface NameSummary {
  name: string;
  latestVersion: number;
  versions: number;
  /** When its newest version was saved (ms). */
  updatedAt: number;
}

/** Named versions (the versions themselves are written by commitPut with `name`). */
export interface NameRepository {
  /** The live version asked for, or the latest live one. */
  findVersion(key: NameKey, version: number | undefined, now: number): Promise<RefRow | undefined>;
  /** Every live version, oldest first. */
  listVersions(key: NameKey, now: number): Promise<RefRow[]>;
  /** Names with a live version, by name, after `after` ('' = from the start). */
  listNames(scope: NameScope, after: string, limit: number, now: number): Promise<NameSummary[]>;
  /**
   * Removes every version (with events) and the name itself; with `version`, that version alone (the
   * name stays). `existed`: whether there was such a name.
   */
  deleteName(key: NameKey, now: number, version?: number): Promise<{ existed: boolean; removed: EvictedRef[] }>;
}

/**
 * Token buckets every process on the database shares (Postgres): a process leases a few tokens at a
 * time and spends them locally, so a request rate holds across replicas at one round trip per lease.
 */
export interface RateBucketRepository {
  /**
   * Refills the bucket `key` (`ratePerSecond`, up to `burst`) to the database's clock, then takes up
   * to `want` whole tokens from it: `granted` (0 when it has less than one) and what it has left.
   */
  leaseRateTokens?(
    key: string,
    ratePerSecond: number,
    burst: number,
    want: number,
  ): Promise<{ granted: number; tokens: number }>;
}

export interface ArtifactRepository
  extends ReferenceRepository,
    RateBucketRepository,
    NameRepository,
    UploadRepository,
    ApiKeyRepository,
    RetentionRepository,
    BlobRepository,
    OutboxRepository {
  /** A consistent copy of the whole database, taken while it is in use (SQLite online backup). */
  backupTo?(path: string): Promise<void>;
  /** Cheap liveness probe for /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
