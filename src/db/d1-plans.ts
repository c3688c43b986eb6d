import type { CommitPutInput, ScopeFilter } from './repository.js';

// The D1 repository's multi-statement writes, as plain statement lists. D1 has no interactive
// transactions: a batch is the unit of atomicity, and no JavaScript runs between its statements. So
// every decision the SQLite repository takes in JavaScript inside its transaction is taken here in
// SQL, and carried from one statement to the next in the scratch tables put_ctx and evict_plan
// (migration 0007). Pure functions: no driver, so they can be read and tested on their own.

export type Params = Record<string, unknown>;
/** One statement: SQL with `@name` placeholders (turned into `?NNN` when bound) and their values. */
export interface Stmt {
  sql: string;
  params: Params;
}

/** A reference joined with its artifact, in RefRow's shape (meta and source still JSON text). */
export const REF_COLUMNS = `r.ref_id AS refId, r.tenant_id AS tenantId, r.artifact_id AS artifactId, a.namespace AS namespace,
  a.sha256 AS sha256, a.size_bytes AS sizeBytes, r.user_id AS userId, r.session_id AS sessionId, r.trace_id AS traceId,
  r.mime_type AS mimeType, r.filename AS filename, r.meta AS meta, r.source AS source, r.created_at AS createdAt,
  r.last_accessed_at AS lastAccessedAt, r.expires_at AS expiresAt`;
export const REF_JOIN = 'artifact_refs r JOIN artifacts a ON a.tenant_id = r.tenant_id AND a.id = r.artifact_id';

// Event payloads are built in SQL with the same keys in the same order as the SQLite repository's
// JSON.stringify of the row, so both backends write the same outbox text.
const SCOPE_JSON = `json_object('userId', r.user_id, 'sessionId', r.session_id, 'traceId', r.trace_id)`;
/** The stored reference: the artifact's size, as the caller's row has it. */
const STORED_REF_JSON = `json_object('refId', r.ref_id, 'tenantId', r.tenant_id, 'artifactId', r.artifact_id, 'namespace', a.namespace,
  'sha256', a.sha256, 'sizeBytes', a.size_bytes, 'userId', r.user_id, 'sessionId', r.session_id, 'traceId', r.trace_id,
  'mimeType', r.mime_type, 'filename', r.filename, 'meta', json(r.meta), 'source', json(r.source), 'createdAt', r.created_at,
  'lastAccessedAt', r.last_accessed_at, 'expiresAt', r.expires_at)`;
/** A removed reference: the reference's own size, its artifact's facts last ('' if it has none). */
const REMOVED_REF_JSON = `json_object('refId', r.ref_id, 'tenantId', r.tenant_id, 'artifactId', r.artifact_id, 'userId', r.user_id,
  'sessionId', r.session_id, 'traceId', r.trace_id, 'sizeBytes', r.size_bytes, 'mimeType', r.mime_type, 'filename', r.filename,
  'meta', json(r.meta), 'source', json(r.source), 'createdAt', r.created_at, 'lastAccessedAt', r.last_accessed_at,
  'expiresAt', r.expires_at, 'namespace', coalesce(a.namespace, ''), 'sha256', coalesce(a.sha256, ''))`;

type RemovalEvent = 'artifact.evicted' | 'artifact.expired' | 'artifact.deleted';

/**
 * Removes the references listed in evict_plan: their events (from the rows as they are, before they
 * go), the removed rows as EvictedRefs, the rows, artifacts left without a reference, and the plan.
 * `guard` (a condition, or '') holds back every write but the plan's own cleanup.
 */
function removePlanned(type: RemovalEvent, now: string, guard: string, params: Params): { stmts: Stmt[]; removedAt: number } {
  const where = guard ? `WHERE ${guard}` : '';
  const and = guard ? `AND ${guard}` : '';
  const sqls = [
    `INSERT INTO outbox (tenant_id, type, artifact_id, scope, ref, created_at)
     SELECT r.tenant_id, '${type}', r.artifact_id, ${SCOPE_JSON}, ${REMOVED_REF_JSON}, ${now}
     FROM evict_plan p JOIN artifact_refs r ON r.ref_id = p.ref_id LEFT JOIN artifacts a ON a.tenant_id = r.tenant_id AND a.id = r.artifact_id
     ${where} ORDER BY p.pass, p.ref_id`,
    `SELECT r.ref_id AS refId, r.size_bytes AS sizeBytes, r.tenant_id AS tenantId, r.artifact_id AS artifactId,
            r.user_id AS userId, r.session_id AS sessionId, r.trace_id AS traceId
     FROM evict_plan p JOIN artifact_refs r ON r.ref_id = p.ref_id ${where} ORDER BY p.pass, p.ref_id`,
    `DELETE FROM artifact_refs WHERE ref_id IN (SELECT ref_id FROM evict_plan) ${and}`,
    `DELETE FROM artifacts WHERE (tenant_id, id) IN (SELECT tenant_id, artifact_id FROM evict_plan)
       AND NOT EXISTS (SELECT 1 FROM artifact_refs r WHERE r.tenant_id = artifacts.tenant_id AND r.artifact_id = artifacts.id) ${and}`,
    'DELETE FROM evict_plan',
  ];
  return { stmts: sqls.map((sql) => ({ sql, params })), removedAt: 1 };
}

export interface RemovalPlan {
  stmts: Stmt[];
  /** Index of the result that lists the removed references (EvictedRef rows). */
  removedAt: number;
}

function removal(select: string, type: RemovalEvent, params: Params): RemovalPlan {
  const tail = removePlanned(type, '@now', '', params);
  return {
    stmts: [{ sql: `INSERT INTO evict_plan (ref_id, pass, size_bytes, tenant_id, artifact_id) ${select}`, params }, ...tail.stmts],
    removedAt: 1 + tail.removedAt,
  };
}

/** expireRefs: up to `limit` references expired at `now`, soonest-expired first. */
export function expirePlan(now: number, limit: number): RemovalPlan {
  return removal(
    'SELECT ref_id, 0, size_bytes, tenant_id, artifact_id FROM artifact_refs WHERE expires_at <= @now ORDER BY expires_at LIMIT @limit',
    'artifact.expired',
    { now, limit },
  );
}

type ScopeKind = 'session' | 'trace';
/** Per scope kind: its column and parameter, its limits' parameter infix, its eviction pass in a put, its put_ctx columns. */
const SCOPE = {
  session: { column: 'session_id', param: 'sessionId', limit: 'Session', pass: 1, n: 'sess_n', bytes: 'sess_bytes' },
  trace: { column: 'trace_id', param: 'traceId', limit: 'Trace', pass: 2, n: 'trace_n', bytes: 'trace_bytes' },
} as const;
const recencyOf = (strategy: 'lru' | 'fifo' | 'none') => (strategy === 'fifo' ? 'created_at' : 'last_accessed_at');

/**
 * enforceScope: rank the scope's live references, most recently accessed (lru) or created (fifo)
 * first, keep the longest run that fits both limits, remove the rest.
 */
export function enforcePlan(tenantId: string, kind: ScopeKind, value: string, strategy: 'lru' | 'fifo', maxBytes: number, maxCount: number, now: number): RemovalPlan {
  return removal(
    `SELECT ref_id, 0, size_bytes, tenant_id, artifact_id FROM (
       SELECT ref_id, size_bytes, tenant_id, artifact_id, sum(size_bytes) OVER w AS running, row_number() OVER w AS position
       FROM artifact_refs WHERE tenant_id = @tenantId AND ${SCOPE[kind].column} = @value AND expires_at > @now
       WINDOW w AS (ORDER BY ${recencyOf(strategy)} DESC, ref_id DESC ROWS UNBOUNDED PRECEDING))
     WHERE (@maxBytes > 0 AND running > @maxBytes) OR (@maxCount > 0 AND position > @maxCount)`,
    'artifact.evicted',
    { tenantId, value, now, maxBytes, maxCount },
  );
}

/** deleteRefs: the live references to one artifact visible through `filter`. */
export function deletePlan(tenantId: string, artifactId: string, filter: ScopeFilter, now: number): RemovalPlan {
  return removal(
    `SELECT ref_id, 0, size_bytes, tenant_id, artifact_id FROM artifact_refs
     WHERE tenant_id = @tenantId AND artifact_id = @artifactId AND expires_at > @now ${scopeWhere(filter, '')}`,
    'artifact.deleted',
    { tenantId, artifactId, now, userId: filter.userId, sessionId: filter.sessionId, traceId: filter.traceId },
  );
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
 * pinBlob: clear a stale doom mark (or create the row) and add the pin, both only when no collection
 * of the blob is under way. No row back from the second statement means 'collecting'.
 * (An upsert's DO UPDATE would consume an AUTOINCREMENT value, but blobs has none.)
 */
export function pinPlan(sha256: string, until: number, now: number, staleBefore: number): Stmt[] {
  const params = { sha256, until, now, staleBefore };
  const idle = 'NOT EXISTS (SELECT 1 FROM blobs WHERE sha256 = @sha256 AND doomed_at >= @staleBefore)';
  return [
    `INSERT INTO blobs (sha256, size_bytes, created_at, doomed_at) SELECT @sha256, 0, @now, NULL WHERE ${idle}
     ON CONFLICT (sha256) DO UPDATE SET doomed_at = NULL`,
    `INSERT INTO blob_pins (sha256, until) SELECT @sha256, @until WHERE ${idle} RETURNING id`,
  ].map((sql) => ({ sql, params }));
}

// ---- commitPut ----------------------------------------------------------------------------------

/** The put's own reference, by its full scope key. */
const KEY = 'r.tenant_id = @tenantId AND r.artifact_id = @artifactId AND r.user_id = @userId AND r.session_id = @sessionId AND r.trace_id = @traceId';
/** The verdict is yes: every write of the put is conditional on it. */
export const PUT_OK = 'EXISTS (SELECT 1 FROM put_ctx WHERE refused IS NULL)';
const NOW = '(SELECT now FROM put_ctx)';

/** What the put's verdict statement returns (put_ctx after the verdict). */
export interface PutVerdict {
  now: number;
  live: number;
  sessN: number;
  sessBytes: number;
  traceN: number;
  traceBytes: number;
  tenantAfter: number | null;
  refused: null | 'pin' | 'collision' | 'session_big' | 'session' | 'trace_big' | 'trace' | 'tenant';
}

/** The limits that apply to one put, as the SQLite repository applies them (a 0 is no limit). */
export interface PutLimits {
  strategy: 'lru' | 'fifo' | 'none';
  session: { value: string; maxBytes: number; maxCount: number; limited: boolean; tooBig: boolean };
  trace: { value: string; maxBytes: number; maxCount: number; limited: boolean; tooBig: boolean };
  maxTenantBytes: number;
}

export function putLimits(input: CommitPutInput): PutLimits {
  const q = input.quota;
  const scope = (value: string, maxBytes = 0, maxCount = 0) => {
    // A scope part that is absent, or has no limit, is not checked at all.
    const limited = q !== undefined && value !== '' && (maxBytes > 0 || maxCount > 0);
    return {
      value,
      maxBytes: limited ? maxBytes : 0,
      maxCount: limited ? maxCount : 0,
      limited,
      tooBig: limited && maxBytes > 0 && input.sizeBytes > maxBytes,
    };
  };
  return {
    strategy: q?.strategy ?? 'none',
    session: scope(input.scope.sessionId ?? '', q?.maxSessionBytes, q?.maxSessionCount),
    trace: scope(input.scope.traceId ?? '', q?.maxTraceBytes, q?.maxTraceCount),
    maxTenantBytes: q?.maxTenantBytes ?? 0,
  };
}

export interface PutPlan {
  stmts: Stmt[];
  limits: PutLimits;
  /** Indexes of the results to read: the verdict, the stored row, the evicted references (if any were planned). */
  at: { verdict: number; row: number; evicted?: number };
}

/**
 * commitPut as one batch. The statements, in order:
 *  1. put_ctx: the clock, whether this is a live re-put, the pin and collision checks, the session's
 *     and trace's live usage; all read once, under the batch's write lock.
 *  2. evict_plan: what lru / fifo would evict, the session first, then the trace among what is left
 *     (the SQLite repository's two sequential DELETEs). The put's own reference always ranks first,
 *     so it enters as the constant @sizeBytes at position 1 and never as a candidate.
 *  3. The tenant's usage after the put and the planned evictions (the tenant quota refuses, never evicts).
 *  4. The verdict, in the SQLite repository's order of checks: pin, collision, then per scope "too big
 *     for the whole scope" and "full under `none`", then the tenant. Returned to the caller.
 *  5. The writes, each conditional on the verdict being yes (PUT_OK), then the evictions, the
 *     artifact.stored event, the row for the caller, and the scratch rows' removal.
 * A refused put writes nothing outside the scratch tables, and those are empty when the batch ends.
 *
 * `sqlClock`: take the time from the database inside the batch, never earlier than `now` (see
 * createD1Repository's `clock` option); `expiresAt` moves with it.
 */
export function commitPutPlan(input: CommitPutInput, now: number, expiresAt: number, sqlClock: boolean): PutPlan {
  const limits = putLimits(input);
  const { session, trace, strategy } = limits;
  const meta = input.meta == null ? null : JSON.stringify(input.meta);
  const source = input.source == null ? null : JSON.stringify(input.source);
  const params: Params = {
    tenantId: input.scope.tenantId,
    artifactId: input.artifactId,
    userId: input.scope.userId ?? '',
    sessionId: session.value,
    traceId: trace.value,
    namespace: input.namespace,
    sha256: input.sha256,
    sizeBytes: input.sizeBytes,
    mimeType: input.mimeType,
    filename: input.filename ?? null,
    meta,
    source,
    now,
    expiresAt,
    pinId: input.pinId ?? null,
    maxSessionBytes: session.maxBytes,
    maxSessionCount: session.maxCount,
    maxTraceBytes: trace.maxBytes,
    maxTraceCount: trace.maxCount,
    maxTenantBytes: limits.maxTenantBytes,
  };
  const stmts: Stmt[] = [];
  const add = (sql: string) => stmts.push({ sql, params }) - 1;

  const clock = sqlClock ? `max(@now, CAST(round(unixepoch('subsec') * 1000) AS INTEGER))` : '@now';
  /** The live count or bytes of the put's session or trace, when it has a limit (0 otherwise). */
  const usage = (kind: ScopeKind, what: 'count(*)' | 'total(size_bytes)') =>
    limits[kind].limited ? `(SELECT ${what} FROM artifact_refs WHERE tenant_id = @tenantId AND ${SCOPE[kind].column} = @${SCOPE[kind].param} AND expires_at > t.now)` : '0';
  add(`WITH t AS (SELECT ${clock} AS now)
    INSERT INTO put_ctx (id, now, expires_at, live, pin_ok, collision, sess_n, sess_bytes, trace_n, trace_bytes)
    SELECT 1, t.now, @expiresAt + (t.now - @now),
      EXISTS (SELECT 1 FROM artifact_refs r WHERE ${KEY} AND r.expires_at > t.now),
      @pinId IS NULL OR EXISTS (SELECT 1 FROM blob_pins WHERE id = @pinId AND sha256 = @sha256 AND until >= t.now),
      EXISTS (SELECT 1 FROM artifacts WHERE tenant_id = @tenantId AND id = @artifactId AND sha256 != @sha256),
      ${usage('session', 'count(*)')}, ${usage('session', 'total(size_bytes)')}, ${usage('trace', 'count(*)')}, ${usage('trace', 'total(size_bytes)')}
    FROM t`);

  const planned = (['session', 'trace'] as const).filter((kind) => strategy !== 'none' && limits[kind].limited);
  for (const kind of planned) {
    const { column, param, limit, pass } = SCOPE[kind];
    add(`INSERT INTO evict_plan (ref_id, pass, size_bytes, tenant_id, artifact_id)
      SELECT ref_id, ${pass}, size_bytes, tenant_id, artifact_id FROM (
        SELECT r.ref_id, r.size_bytes, r.tenant_id, r.artifact_id,
               @sizeBytes + sum(r.size_bytes) OVER w AS running, 1 + row_number() OVER w AS position
        FROM artifact_refs r
        WHERE r.tenant_id = @tenantId AND r.${column} = @${param} AND r.expires_at > ${NOW}
          AND NOT (${KEY}) AND r.ref_id NOT IN (SELECT ref_id FROM evict_plan)
        WINDOW w AS (ORDER BY r.${recencyOf(strategy)} DESC, r.ref_id DESC ROWS UNBOUNDED PRECEDING))
      WHERE (@max${limit}Bytes > 0 AND running > @max${limit}Bytes) OR (@max${limit}Count > 0 AND position > @max${limit}Count)`);
  }

  if (limits.maxTenantBytes > 0) {
    add(`UPDATE put_ctx SET tenant_after =
        (SELECT total(size_bytes) FROM artifact_refs WHERE tenant_id = @tenantId AND expires_at > put_ctx.now)
        + CASE WHEN live THEN 0 ELSE @sizeBytes END
        ${planned.length > 0 ? '- (SELECT total(size_bytes) FROM evict_plan)' : ''}`);
  }

  /** The scope's checks: too big for it whatever the strategy; full, under `none`, for a new reference. */
  const scopeChecks = (kind: ScopeKind) => {
    const { n, bytes, limit } = SCOPE[kind];
    if (limits[kind].tooBig) return `WHEN 1 THEN '${kind}_big'`;
    if (strategy !== 'none' || !limits[kind].limited) return '';
    return `WHEN NOT live AND ((@max${limit}Bytes > 0 AND ${bytes} + @sizeBytes > @max${limit}Bytes) OR (@max${limit}Count > 0 AND ${n} + 1 > @max${limit}Count)) THEN '${kind}'`;
  };
  const verdict = add(`UPDATE put_ctx SET refused = CASE
      WHEN NOT pin_ok THEN 'pin'
      WHEN collision THEN 'collision'
      ${scopeChecks('session')}
      ${scopeChecks('trace')}
      ${limits.maxTenantBytes > 0 ? `WHEN NOT live AND tenant_after > @maxTenantBytes THEN 'tenant'` : ''}
    END
    RETURNING now, live, sess_n AS sessN, sess_bytes AS sessBytes, trace_n AS traceN, trace_bytes AS traceBytes, tenant_after AS tenantAfter, refused`);

  if (input.pinId !== undefined) add(`DELETE FROM blob_pins WHERE id = @pinId AND ${PUT_OK}`);
  // The blob row usually exists already: the put pinned it (size unknown then) before committing the bytes.
  add(`INSERT INTO blobs (sha256, size_bytes, created_at) SELECT @sha256, @sizeBytes, now FROM put_ctx WHERE refused IS NULL
    ON CONFLICT (sha256) DO UPDATE SET size_bytes = excluded.size_bytes`);
  add(`INSERT INTO artifacts (tenant_id, id, namespace, sha256, size_bytes, created_at)
    SELECT @tenantId, @artifactId, @namespace, @sha256, @sizeBytes, now FROM put_ctx WHERE refused IS NULL
    ON CONFLICT (tenant_id, id) DO NOTHING`);
  // UPDATE, then INSERT where there is none: an upsert's DO UPDATE would consume an AUTOINCREMENT
  // value, and reference ids would drift from the SQLite repository's. A reference past its expiry
  // that retention has not reaped yet counts as new (fresh createdAt).
  add(`UPDATE artifact_refs AS r SET size_bytes = @sizeBytes, mime_type = @mimeType, filename = @filename, meta = @meta, source = @source,
      last_accessed_at = ${NOW}, expires_at = (SELECT expires_at FROM put_ctx),
      created_at = CASE WHEN r.expires_at > ${NOW} THEN r.created_at ELSE ${NOW} END
    WHERE ${KEY} AND ${PUT_OK}`);
  add(`INSERT INTO artifact_refs (tenant_id, artifact_id, user_id, session_id, trace_id, size_bytes, mime_type, filename, meta, source, created_at, last_accessed_at, expires_at)
    SELECT @tenantId, @artifactId, @userId, @sessionId, @traceId, @sizeBytes, @mimeType, @filename, @meta, @source, now, now, expires_at
    FROM put_ctx WHERE refused IS NULL AND NOT EXISTS (SELECT 1 FROM artifact_refs r WHERE ${KEY})`);

  let evicted: number | undefined;
  if (planned.length > 0) {
    const tail = removePlanned('artifact.evicted', NOW, PUT_OK, params);
    evicted = stmts.length + tail.removedAt;
    stmts.push(...tail.stmts);
  }
  add(`INSERT INTO outbox (tenant_id, type, artifact_id, scope, ref, created_at)
    SELECT r.tenant_id, 'artifact.stored', r.artifact_id, ${SCOPE_JSON}, ${STORED_REF_JSON}, ${NOW}
    FROM ${REF_JOIN} WHERE ${KEY} AND ${PUT_OK}`);
  const row = add(`SELECT ${REF_COLUMNS} FROM ${REF_JOIN} WHERE ${KEY} AND ${PUT_OK}`);
  add('DELETE FROM put_ctx');
  return { stmts, limits, at: evicted === undefined ? { verdict, row } : { verdict, row, evicted } };
}
