/**
 * A put's metadata commit as one list of statements: the same plan runs as one D1 batch and inside
 * one SQLite transaction, so both backends take the quota decision the same way, in SQL.
 *
 * A D1 batch is atomic but runs no JavaScript between its statements, so every decision is taken in
 * SQL and carried from one statement to the next in the scratch tables put_ctx and evict_plan
 * (migration 0007); every write is conditional on the verdict. Pure functions: no driver, so they
 * can be read and tested on their own.
 */
import { errors } from '../../core/errors.js';
import { evicts } from '../../core/policy.js';
import { pinLost, scopeFull, tenantFull } from '../put-errors.js';
import { type PutLimits, putLimits, tooBigRefusal } from '../put-limits.js';
import type { CommitPutInput } from '../repository.js';
import { removePlanned } from './removal.js';
import {
  recencyOf,
  REF_COLUMNS,
  REF_JOIN,
  SCOPE,
  SCOPE_JSON,
  STORED_REF_JSON,
  type Params,
  type ScopeKind,
  type Stmt,
} from './sql.js';

/** The put's own reference, by its full scope key (an unnamed reference: no name, version -1). */
const KEY = `r.tenant_id = @tenantId AND r.artifact_id = @artifactId
  AND r.user_id = @userId AND r.session_id = @sessionId AND r.trace_id = @traceId AND r.name = '' AND r.version = -1`;
/** The name a named put saves a version of. */
const NAME_ROW = `FROM names WHERE tenant_id = @tenantId AND app = @namespace AND user_id = @userId
  AND session_id = @sessionId AND name = @name`;
/** A named put's own reference: the version its name's counter just gave. */
const NAMED_KEY = `r.tenant_id = @tenantId AND r.artifact_id = @artifactId
  AND r.user_id = @userId AND r.session_id = @sessionId AND r.trace_id = ''
  AND r.name = @name AND r.version = (SELECT next_version - 1 ${NAME_ROW})`;
/** The verdict is yes: every write of the put is conditional on it. */
export const PUT_OK = 'EXISTS (SELECT 1 FROM put_ctx WHERE refused IS NULL)';
const NOW = '(SELECT now FROM put_ctx)';
/**
 * The database's time in ms, never earlier than the caller's @now (a put with a clock, on D1). The
 * Postgres repository rewrites this text into its own.
 */
export const DATABASE_CLOCK = `max(@now, CAST(round(unixepoch('subsec') * 1000) AS INTEGER))`;

/** What the put's verdict statement returns (put_ctx after the verdict). */
export interface PutVerdict {
  now: number;
  live: number;
  sessN: number;
  sessBytes: number;
  traceN: number;
  traceBytes: number;
  tenantAfter: number | null;
  refused: null | 'pin' | 'collision' | 'session_big' | 'session' | 'trace_big' | 'trace' | 'tenant_big' | 'tenant';
}

export interface PutPlan {
  stmts: Stmt[];
  limits: PutLimits;
  /** Indexes of the results to read: the verdict, the stored row, the evicted references (if any were planned). */
  at: { verdict: number; row: number; evicted?: number };
}

/**
 * commitPut as one list of statements: one D1 batch, or one SQLite transaction. In order:
 *  1. put_ctx: the clock, whether this is a live re-put, the pin and collision checks, the session's
 *     and trace's live usage; all read once, under the batch's write lock.
 *  2. evict_plan: what lru / fifo would evict, the session first, then the trace among what is left
 *     (as if the session's eviction ran first). The put's own reference always ranks first,
 *     so it enters as the constant @sizeBytes at position 1 and never as a candidate.
 *  3. The tenant's usage after the put and the planned evictions (the tenant quota refuses, never evicts).
 *  4. The verdict, in this order of checks: pin, collision, then per scope "too big
 *     for the whole scope" and "full under `none`", then the tenant ("too big for the whole quota",
 *     then "over the quota"). Returned to the caller.
 *  5. The writes, each conditional on the verdict being yes (PUT_OK), then the evictions, the
 *     artifact.stored event, the row for the caller, and the scratch rows' removal.
 * A refused put writes nothing outside the scratch tables, and those are empty when the batch ends.
 * (A runner that can stop after the verdict, as SQLite's can, rolls back instead: same result.)
 *
 * `sqlClock`: take the time from the database inside the batch, never earlier than `now` (see
 * createD1Repository's `clock` option); `expiresAt` moves with it.
 */
export function commitPutPlan(input: CommitPutInput, now: number, expiresAt: number, sqlClock: boolean): PutPlan {
  const limits = putLimits(input);
  const named = Boolean(input.name);
  const key = named ? NAMED_KEY : KEY;
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
    name: input.name ?? '',
  };
  const stmts: Stmt[] = [];
  const add = (sql: string) => stmts.push({ sql, params }) - 1;

  const clock = sqlClock ? DATABASE_CLOCK : '@now';
  /** The live count or bytes of the put's session or trace, when it has a limit (0 otherwise). */
  const usage = (kind: ScopeKind, what: 'count(*)' | 'total(size_bytes)') => {
    const { column, param } = SCOPE[kind];
    if (!limits[kind].limited) return '0';
    return `(SELECT ${what} FROM artifact_refs
      WHERE tenant_id = @tenantId AND ${column} = @${param} AND expires_at > t.now)`;
  };
  add(`WITH t AS (SELECT ${clock} AS now)
    INSERT INTO put_ctx (id, now, expires_at, live, pin_ok, collision, sess_n, sess_bytes, trace_n, trace_bytes)
    SELECT 1, t.now, @expiresAt + (t.now - @now),
      ${named ? 'FALSE' : `EXISTS (SELECT 1 FROM artifact_refs r WHERE ${KEY} AND r.expires_at > t.now)`},
      @pinId IS NULL OR EXISTS (SELECT 1 FROM blob_pins WHERE id = @pinId AND sha256 = @sha256 AND until >= t.now),
      EXISTS (SELECT 1 FROM artifacts WHERE tenant_id = @tenantId AND id = @artifactId AND sha256 != @sha256),
      ${usage('session', 'count(*)')}, ${usage('session', 'total(size_bytes)')},
      ${usage('trace', 'count(*)')}, ${usage('trace', 'total(size_bytes)')}
    FROM t`);

  const evicting = evicts(strategy) ? strategy : undefined;
  const planned = evicting ? (['session', 'trace'] as const).filter((kind) => limits[kind].limited) : [];
  for (const kind of planned) {
    const { column, param, limit, pass } = SCOPE[kind];
    add(`INSERT INTO evict_plan (ref_id, pass, size_bytes, tenant_id, artifact_id)
      SELECT ref_id, ${pass}, size_bytes, tenant_id, artifact_id FROM (
        SELECT r.ref_id, r.size_bytes, r.tenant_id, r.artifact_id,
               @sizeBytes + sum(r.size_bytes) OVER w AS running, 1 + row_number() OVER w AS position
        FROM artifact_refs r
        WHERE r.tenant_id = @tenantId AND r.${column} = @${param} AND r.expires_at > ${NOW} AND r.name = ''
          AND NOT (${KEY}) AND r.ref_id NOT IN (SELECT ref_id FROM evict_plan)
        WINDOW w AS (ORDER BY r.${recencyOf(evicting!)} DESC, r.ref_id DESC ROWS UNBOUNDED PRECEDING)) AS ranked
      WHERE (@max${limit}Bytes > 0 AND running > @max${limit}Bytes)
         OR (@max${limit}Count > 0 AND position > @max${limit}Count)`);
  }

  if (limits.maxTenantBytes > 0) {
    add(`UPDATE put_ctx SET tenant_after =
        (SELECT total(size_bytes) FROM artifact_refs WHERE tenant_id = @tenantId AND expires_at > put_ctx.now)
        + CASE WHEN live THEN 0 ELSE @sizeBytes END
        ${planned.length > 0 ? '- (SELECT total(size_bytes) FROM evict_plan)' : ''}`);
  }

  /** The scope's checks: too big for it whatever the strategy; full, under `reject`, for a new reference. */
  const scopeChecks = (kind: ScopeKind) => {
    const { n, bytes, limit, column, param } = SCOPE[kind];
    if (limits[kind].tooBig) return `WHEN TRUE THEN '${kind}_big'`;
    if (!limits[kind].limited) return '';
    if (strategy === 'reject')
      return `WHEN NOT live AND ((@max${limit}Bytes > 0 AND ${bytes} + @sizeBytes > @max${limit}Bytes)
      OR (@max${limit}Count > 0 AND ${n} + 1 > @max${limit}Count)) THEN '${kind}'`;
    if (!planned.includes(kind)) return '';
    // Evicting makes room, except where named versions fill the scope: they are never evicted.
    const gone = (what: string) => `(SELECT ${what} FROM evict_plan p JOIN artifact_refs r ON r.ref_id = p.ref_id
      WHERE r.${column} = @${param})`;
    return `WHEN NOT live AND ((@max${limit}Bytes > 0 AND ${bytes} - ${gone('total(r.size_bytes)')} + @sizeBytes > @max${limit}Bytes)
      OR (@max${limit}Count > 0 AND ${n} - ${gone('count(*)')} + 1 > @max${limit}Count)) THEN '${kind}'`;
  };
  const verdict = add(`UPDATE put_ctx SET refused = CASE
      WHEN NOT pin_ok THEN 'pin'
      WHEN collision THEN 'collision'
      ${scopeChecks('session')}
      ${scopeChecks('trace')}
      ${limits.tenantTooBig ? `WHEN TRUE THEN 'tenant_big'` : ''}
      ${limits.maxTenantBytes > 0 ? `WHEN NOT live AND tenant_after > @maxTenantBytes THEN 'tenant'` : ''}
    END
    RETURNING now, live, sess_n AS sessN, sess_bytes AS sessBytes, trace_n AS traceN, trace_bytes AS traceBytes,
      tenant_after AS tenantAfter, refused`);

  if (input.pinId !== undefined) add(`DELETE FROM blob_pins WHERE id = @pinId AND ${PUT_OK}`);
  // The blob row usually exists already: the put pinned it (size unknown then) before committing the bytes.
  add(`INSERT INTO blobs (sha256, size_bytes, created_at)
    SELECT @sha256, @sizeBytes, now FROM put_ctx WHERE refused IS NULL
    ON CONFLICT (sha256) DO UPDATE SET size_bytes = excluded.size_bytes`);
  add(`INSERT INTO artifacts (tenant_id, id, namespace, sha256, size_bytes, created_at)
    SELECT @tenantId, @artifactId, @namespace, @sha256, @sizeBytes, now FROM put_ctx WHERE refused IS NULL
    ON CONFLICT (tenant_id, id) DO NOTHING`);
  if (named) {
    // The name's counter gives the version, inside this batch: concurrent saves get 0, 1, 2… exactly.
    add(`INSERT INTO names (tenant_id, app, user_id, session_id, name, next_version, created_at)
      SELECT @tenantId, @namespace, @userId, @sessionId, @name, 1, now FROM put_ctx WHERE refused IS NULL
      ON CONFLICT (tenant_id, app, user_id, session_id, name) DO UPDATE SET next_version = names.next_version + 1`);
    add(`INSERT INTO artifact_refs (tenant_id, artifact_id, user_id, session_id, trace_id, size_bytes, mime_type,
        filename, meta, source, created_at, last_accessed_at, expires_at, name, version)
      SELECT @tenantId, @artifactId, @userId, @sessionId, '', @sizeBytes, @mimeType, @filename,
        @meta, @source, now, now, expires_at, @name, (SELECT next_version - 1 ${NAME_ROW})
      FROM put_ctx WHERE refused IS NULL`);
  }
  // UPDATE, then INSERT where there is none: an upsert's DO UPDATE would consume an AUTOINCREMENT
  // value, and a re-put would make the next reference id skip one. A reference past its expiry
  // that retention has not reaped yet counts as new (fresh createdAt).
  if (!named)
    add(`UPDATE artifact_refs AS r
    SET size_bytes = @sizeBytes, mime_type = @mimeType, filename = @filename, meta = @meta, source = @source,
      last_accessed_at = ${NOW}, expires_at = (SELECT expires_at FROM put_ctx),
      created_at = CASE WHEN r.expires_at > ${NOW} THEN r.created_at ELSE ${NOW} END
    WHERE ${KEY} AND ${PUT_OK}`);
  if (!named)
    add(`INSERT INTO artifact_refs (tenant_id, artifact_id, user_id, session_id, trace_id, size_bytes, mime_type,
      filename, meta, source, created_at, last_accessed_at, expires_at)
    SELECT @tenantId, @artifactId, @userId, @sessionId, @traceId, @sizeBytes, @mimeType, @filename,
      @meta, @source, now, now, expires_at
    FROM put_ctx WHERE refused IS NULL AND NOT EXISTS (SELECT 1 FROM artifact_refs r WHERE ${KEY})`);

  let evicted: number | undefined;
  if (planned.length > 0) {
    const tail = removePlanned('artifact.evicted', NOW, PUT_OK, params);
    evicted = stmts.length + tail.removedAt;
    stmts.push(...tail.stmts);
  }
  add(`INSERT INTO outbox (tenant_id, type, artifact_id, scope, ref, created_at)
    SELECT r.tenant_id, 'artifact.stored', r.artifact_id, ${SCOPE_JSON}, ${STORED_REF_JSON}, ${NOW}
    FROM ${REF_JOIN} WHERE ${key} AND ${PUT_OK}`);
  const row = add(`SELECT ${REF_COLUMNS} FROM ${REF_JOIN} WHERE ${key} AND ${PUT_OK}`);
  add('DELETE FROM put_ctx');
  return { stmts, limits, at: evicted === undefined ? { verdict, row } : { verdict, row, evicted } };
}

/**
 * The error a refused put ends with, from its verdict (undefined: accepted). The same codes,
 * messages and details whichever backend ran the plan.
 */
export function putRefusal(input: CommitPutInput, limits: PutLimits, v: PutVerdict): Error | undefined {
  const size = input.sizeBytes;
  const { session, trace, maxTenantBytes } = limits;
  switch (v.refused) {
    case null:
      return undefined;
    case 'pin':
      return pinLost();
    case 'collision':
      return errors.hashCollision(input.artifactId);
    case 'session_big':
    case 'trace_big':
    case 'tenant_big':
      return tooBigRefusal(input, limits, v.refused);
    case 'session': {
      const usage = { n: v.sessN + 1, bytes: v.sessBytes + size };
      return scopeFull('session', session.value, usage, size, session.maxBytes, session.maxCount);
    }
    case 'trace': {
      const usage = { n: v.traceN + 1, bytes: v.traceBytes + size };
      return scopeFull('trace', trace.value, usage, size, trace.maxBytes, trace.maxCount);
    }
    case 'tenant':
      return tenantFull(input.scope.tenantId, v.tenantAfter ?? 0, size, maxTenantBytes);
    default:
      return new Error(`Unknown put verdict ${JSON.stringify(v.refused)}`);
  }
}
