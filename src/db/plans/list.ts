/**
 * The listing statement, one text for SQLite, D1 and Postgres (whose dialect rewrites `COLLATE
 * BINARY`): the filters, a search over id, filename and name, and each order with the condition that
 * resumes after a cursor's position. The orders are core/listing.ts's compareListed, in SQL.
 */
import { likePattern } from '../../core/listing.js';
import type { ListSort } from '../../core/schemas.js';
import type { ListFilter } from '../repository.js';
import { REF_COLUMNS, REF_JOIN, type Stmt, scopeWhere } from './sql.js';

/** The `name` order's key, compared byte by byte (UTF-8) on every database. */
const LABEL = `coalesce(nullif(r.filename, ''), nullif(r.name, ''), r.artifact_id) COLLATE BINARY`;

/** Each order's ORDER BY, and the condition for rows after @afterCreatedAt, @afterRefId (and @afterSize, @afterKey). */
const ORDERS: Record<ListSort, { order: string; after: string }> = {
  newest: {
    order: 'r.created_at DESC, r.ref_id DESC',
    after: '(r.created_at < @afterCreatedAt OR (r.created_at = @afterCreatedAt AND r.ref_id < @afterRefId))',
  },
  oldest: {
    order: 'r.created_at, r.ref_id',
    after: '(r.created_at > @afterCreatedAt OR (r.created_at = @afterCreatedAt AND r.ref_id > @afterRefId))',
  },
  largest: {
    order: 'r.size_bytes DESC, r.created_at DESC, r.ref_id DESC',
    after: `(r.size_bytes < @afterSize OR (r.size_bytes = @afterSize AND (r.created_at < @afterCreatedAt
      OR (r.created_at = @afterCreatedAt AND r.ref_id < @afterRefId))))`,
  },
  smallest: {
    order: 'r.size_bytes, r.created_at, r.ref_id',
    after: `(r.size_bytes > @afterSize OR (r.size_bytes = @afterSize AND (r.created_at > @afterCreatedAt
      OR (r.created_at = @afterCreatedAt AND r.ref_id > @afterRefId))))`,
  },
  name: {
    order: `${LABEL}, r.created_at, r.ref_id`,
    after: `(${LABEL} > @afterKey OR (${LABEL} = @afterKey AND (r.created_at > @afterCreatedAt
      OR (r.created_at = @afterCreatedAt AND r.ref_id > @afterRefId))))`,
  },
};

/** One page of a listing (read `filter.limit` rows; the caller asks one past its page). */
export function listStatement(tenantId: string, f: ListFilter): Stmt {
  const where = [`r.tenant_id = @tenantId AND r.expires_at > @now ${scopeWhere(f, 'r')}`];
  if (f.namespace !== undefined) where.push('a.namespace = @namespace');
  if (f.mimePrefix !== undefined) where.push('substr(r.mime_type, 1, @mimeLength) = @mimePrefix');
  if (f.createdAfter !== undefined) where.push('r.created_at >= @createdAfter');
  if (f.createdBefore !== undefined) where.push('r.created_at < @createdBefore');
  // lower() on both sides: the database folds the search as it folds the columns.
  if (f.search !== undefined)
    where.push(`(lower(r.artifact_id) LIKE lower(@pattern) ESCAPE '\\'
      OR lower(coalesce(r.filename, '')) LIKE lower(@pattern) ESCAPE '\\'
      OR lower(r.name) LIKE lower(@pattern) ESCAPE '\\')`);
  const sort = f.sort ?? 'newest';
  if (f.after) where.push(ORDERS[sort].after);
  const params: Record<string, unknown> = { tenantId, now: f.now, limit: f.limit };
  const set = (name: string, value: unknown) => {
    if (value !== undefined) params[name] = value;
  };
  set('userId', f.userId);
  set('sessionId', f.sessionId);
  set('traceId', f.traceId);
  set('namespace', f.namespace);
  set('mimePrefix', f.mimePrefix);
  set('mimeLength', f.mimePrefix?.length);
  set('createdAfter', f.createdAfter);
  set('createdBefore', f.createdBefore);
  set('pattern', f.search === undefined ? undefined : likePattern(f.search));
  if (f.after) {
    params.afterCreatedAt = f.after.createdAt;
    params.afterRefId = f.after.refId;
    if (f.after.sort === 'largest' || f.after.sort === 'smallest') params.afterSize = f.after.sizeBytes;
    if (f.after.sort === 'name') params.afterKey = f.after.key;
  }
  return {
    sql: `SELECT ${REF_COLUMNS} FROM ${REF_JOIN} WHERE ${where.join(' AND ')} ORDER BY ${ORDERS[sort].order} LIMIT @limit`,
    params,
  };
}
