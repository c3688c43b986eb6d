/** Listing a caller's references: newest first, filtered, a page at a time behind an opaque cursor. */
import { decodeCursor, encodeCursor } from '../core/cursor.js';
import { errors } from '../core/errors.js';
import { ListQuerySchema, type ListPage, type ListQuery } from '../core/schemas.js';
import { narrowFilter } from '../core/scope.js';
import type { ArtifactRepository } from '../db/repository.js';
import { rowToRef } from './refs.js';
import type { Access } from './types.js';

export interface ListingDeps {
  repo: ArtifactRepository;
  now: () => number;
}

/** A page of the references the caller sees, narrowed by the query (bad_request for a bad filter). */
export function createListing({ repo, now }: ListingDeps): (access: Access, query?: ListQuery) => Promise<ListPage> {
  return async function list(access, rawQuery = {}) {
    const parsed = ListQuerySchema.safeParse(rawQuery);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw errors.badRequest(`Invalid list filter ${issue.path.join('.')}: ${issue.message}.`);
    }
    const q = parsed.data;
    const filter = narrowFilter(access.filter, q);
    const limit = q.limit ?? 100;
    const rows = await repo.list(access.tenantId, {
      userId: filter.userId,
      sessionId: filter.sessionId,
      traceId: filter.traceId,
      namespace: q.namespace,
      mimePrefix: q.mimePrefix,
      createdAfter: q.createdAfter ? Date.parse(q.createdAfter) : undefined,
      createdBefore: q.createdBefore ? Date.parse(q.createdBefore) : undefined,
      after: q.cursor ? decodeCursor(q.cursor) : undefined,
      limit: limit + 1,
      now: now(),
    });
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return rows.length > limit && last
      ? { items: page.map(rowToRef), nextCursor: encodeCursor(last) }
      : { items: page.map(rowToRef) };
  };
}
