/** Listing a caller's references: filtered, searched, in one of the orders, a page at a time behind an opaque cursor. */
import { listPageOf, readListQuery } from '../core/listing.js';
import type { ListPage, ListQuery } from '../core/schemas.js';
import { narrowFilter } from '../core/scope.js';
import type { ArtifactRepository } from '../db/repository.js';
import { rowToRef } from '../core/refs.js';
import type { Access } from './types.js';

export interface ListingDeps {
  repo: ArtifactRepository;
  now: () => number;
}

/** A page of the references the caller sees, narrowed by the query (bad_request for a bad filter). */
export function createListing({ repo, now }: ListingDeps): (access: Access, query?: ListQuery) => Promise<ListPage> {
  return async function list(access, rawQuery = {}) {
    const { query: q, limit, sort, createdAfter, createdBefore, after } = readListQuery(rawQuery);
    const filter = narrowFilter(access.filter, q);
    const rows = await repo.list(access.tenantId, {
      userId: filter.userId,
      sessionId: filter.sessionId,
      traceId: filter.traceId,
      namespace: q.namespace,
      mimePrefix: q.mimePrefix,
      createdAfter,
      createdBefore,
      search: q.q,
      sort,
      after,
      limit: limit + 1,
      now: now(),
    });
    return listPageOf(rows, limit, rowToRef, sort);
  };
}
