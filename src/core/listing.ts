/**
 * Listings of references, as every store answers them: the query read and checked, the order and
 * search every store applies alike, and a page cut from rows read one past its limit, with the cursor
 * that resumes after its last row.
 */
import { decodeCursor, encodeCursor, type ListPosition } from './cursor.js';
import { errors } from './errors.js';
import { type ArtifactRef, type ListPage, type ListQuery, ListQuerySchema, type ListSort } from './schemas.js';

/** A list query as checked, with its limit (default 100), order, dates and cursor read. */
export interface ReadListQuery {
  query: ListQuery;
  limit: number;
  sort: ListSort;
  createdAfter?: number;
  createdBefore?: number;
  after?: ListPosition;
}

/** Reads a list query; bad_request naming the first field that is wrong. */
export function readListQuery(raw: ListQuery): ReadListQuery {
  const parsed = ListQuerySchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw errors.badRequest(`Invalid list filter ${issue.path.join('.')}: ${issue.message}.`);
  }
  const q = parsed.data;
  const sort = q.sort ?? 'newest';
  const after = q.cursor ? decodeCursor(q.cursor) : undefined;
  if (after && after.sort !== sort)
    throw errors.badRequest(
      `Invalid cursor: it continues a listing sorted by ${after.sort}, and this one is sorted by ${sort}. ` +
        'Send the same sort as the page the cursor came from, or omit the cursor to start over.',
    );
  return {
    query: q,
    limit: q.limit ?? 100,
    sort,
    ...(q.createdAfter ? { createdAfter: Date.parse(q.createdAfter) } : {}),
    ...(q.createdBefore ? { createdBefore: Date.parse(q.createdBefore) } : {}),
    ...(after ? { after } : {}),
  };
}

/** What a listing orders and searches by, of a reference row. */
export interface ListedRow {
  artifactId: string;
  filename: string | null;
  name?: string;
  sizeBytes: number;
  createdAt: number;
  refId: number;
}

/** The `name` order's key: the filename, else the name of a named version, else the id. */
export const labelOf = (row: Pick<ListedRow, 'artifactId' | 'filename' | 'name'>): string =>
  row.filename || row.name || row.artifactId;

/** The position of a row in a listing of that order. */
export function positionOf(row: ListedRow, sort: ListSort): ListPosition {
  const at = { createdAt: row.createdAt, refId: row.refId };
  if (sort === 'largest' || sort === 'smallest') return { sort, sizeBytes: row.sizeBytes, ...at };
  if (sort === 'name') return { sort, key: labelOf(row), ...at };
  return { sort, ...at };
}

/** ASCII letters in lower case, nothing else changed (what SQLite's lower() does). */
export const asciiLower = (s: string) => s.replace(/[A-Z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 32));

/** A search as a LIKE pattern: `%`, `_` and `\` escaped with `\`, so they match themselves. */
export const likePattern = (search: string) => `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Whether a row matches a search as the databases match it (ASCII letters in either case). */
export function matchesSearch(row: Pick<ListedRow, 'artifactId' | 'filename' | 'name'>, search: string): boolean {
  const s = asciiLower(search);
  return [row.artifactId, row.filename ?? '', row.name ?? ''].some((v) => asciiLower(v).includes(s));
}

/** UTF-8 byte order (the databases' binary collation): code point order, read without copying. */
function compareText(a: string, b: string): number {
  if (a === b) return 0;
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(j)!;
    if (x !== y) return x - y;
    i += x > 0xffff ? 2 : 1;
    j += y > 0xffff ? 2 : 1;
  }
  return a.length - i - (b.length - j);
}

/** The order of a listing, as a comparator of rows (negative: `a` comes first). */
export function compareListed(sort: ListSort): (a: ListedRow, b: ListedRow) => number {
  const byTime = (a: ListedRow, b: ListedRow) => a.createdAt - b.createdAt || a.refId - b.refId;
  switch (sort) {
    case 'newest':
      return (a, b) => byTime(b, a);
    case 'oldest':
      return byTime;
    case 'largest':
      return (a, b) => b.sizeBytes - a.sizeBytes || byTime(b, a);
    case 'smallest':
      return (a, b) => a.sizeBytes - b.sizeBytes || byTime(a, b);
    case 'name':
      return (a, b) => compareText(labelOf(a), labelOf(b)) || byTime(a, b);
  }
}

/** Whether a row comes after a position, in the position's order. */
export function isAfter(row: ListedRow, after: ListPosition): boolean {
  const compare = compareListed(after.sort);
  const at: ListedRow = {
    artifactId: after.sort === 'name' ? after.key : '',
    filename: after.sort === 'name' ? after.key : null,
    sizeBytes: 'sizeBytes' in after ? after.sizeBytes : 0,
    createdAt: after.createdAt,
    refId: after.refId,
  };
  return compare(row, at) > 0;
}

/** One page from rows read in the listing's order, one past `limit`: a cursor after the last row when there are more. */
export function listPageOf<R extends ListedRow>(
  rows: R[],
  limit: number,
  toRef: (row: R) => ArtifactRef,
  sort: ListSort = 'newest',
): ListPage {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return rows.length > limit && last
    ? { items: page.map(toRef), nextCursor: encodeCursor(positionOf(last, sort)) }
    : { items: page.map(toRef) };
}
