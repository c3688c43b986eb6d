/**
 * Listings of references, as every store answers them: the query read and checked, and a page cut
 * from rows read one past its limit, with the cursor that resumes after its last row.
 */
import { decodeCursor, encodeCursor } from './cursor.js';
import { errors } from './errors.js';
import { type ArtifactRef, type ListPage, type ListQuery, ListQuerySchema } from './schemas.js';

/** A list query as checked, with its limit (default 100), dates and cursor read. */
export interface ReadListQuery {
  query: ListQuery;
  limit: number;
  createdAfter?: number;
  createdBefore?: number;
  after?: { createdAt: number; refId: number };
}

/** Reads a list query; bad_request naming the first field that is wrong. */
export function readListQuery(raw: ListQuery): ReadListQuery {
  const parsed = ListQuerySchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw errors.badRequest(`Invalid list filter ${issue.path.join('.')}: ${issue.message}.`);
  }
  const q = parsed.data;
  return {
    query: q,
    limit: q.limit ?? 100,
    ...(q.createdAfter ? { createdAfter: Date.parse(q.createdAfter) } : {}),
    ...(q.createdBefore ? { createdBefore: Date.parse(q.createdBefore) } : {}),
    ...(q.cursor ? { after: decodeCursor(q.cursor) } : {}),
  };
}

/** One page from rows read newest first, one past `limit`: a cursor after the last row when there are more. */
export function listPageOf<R extends { createdAt: number; refId: number }>(
  rows: R[],
  limit: number,
  toRef: (row: R) => ArtifactRef,
): ListPage {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return rows.length > limit && last
    ? { items: page.map(toRef), nextCursor: encodeCursor(last) }
    : { items: page.map(toRef) };
}
