/**
 * The artifact service: put / get / delete / list over a BlobStore and an ArtifactRepository. Knows
 * nothing of HTTP. Bytes are hashed while streaming and committed before any metadata row exists,
 * so no row ever points at missing bytes.
 *
 * This module composes the service from its parts, each a module with declared dependencies:
 * put-policy.ts (what a put is held to), puts.ts, reads.ts (the one read path), links.ts,
 * direct-uploads.ts, tus-uploads.ts (resumable uploads through the service), names.ts, sessions.ts,
 * deletes.ts (delete and purge), listing.ts, and the
 * views (views/index.ts, made on first use). Its shapes are in types.ts.
 */
import type { BlobStore } from '../blob/blob-store.js';
import { decodeBase64 } from '../core/base64.js';
import { streamOfBytes } from '../core/bytes.js';
import { silentLogger, type Logger } from '../core/logger.js';
import type { Policy } from '../core/policy.js';
import { TEXT_MIME } from '../core/put-options.js';
import type { ArtifactRepository } from '../db/repository.js';
import { createDeletes } from './deletes.js';
import { createDirectUploads } from './direct-uploads.js';
import { createLinks } from './links.js';
import { createListing } from './listing.js';
import { createNamedVersions } from './names.js';
import { createPutPolicies } from './put-policy.js';
import { createPuts } from './puts.js';
import { createReads } from './reads.js';
import { rowToRef } from '../core/refs.js';
import { createSessionEnding } from './sessions.js';
import type { TusStaging } from './tus-staging.js';
import { createTusUploads } from './tus-uploads.js';
import type { ArtifactService, LinkSettings, PutFaultPoint, ServiceLimits, ServiceObserver } from './types.js';
import { type ArtifactViews, type ArtifactViewsDeps, createArtifactViews } from './views/index.js';
/** The service's shapes live in types.ts; importers of this module see them here too. */
export type * from './types.js';

export { STALE_COLLECTION_MS } from './put-pin.js';

export interface ArtifactServiceDeps {
  repo: ArtifactRepository;
  blobs: BlobStore;
  limits: ServiceLimits;
  /**
   * Each tenant's retention policy (quotas, TTLs, max artifact size), enforced in the put's own
   * transaction. Without it only `limits` apply and scopes have no quotas.
   */
  policies?: (tenantId: string) => Policy;
  links?: LinkSettings;
  /** Milliseconds since the epoch; injectable for tests. */
  now?: () => number;
  /** Where the service logs what it works around (a failed last-access write, a pin it could not release…). */
  logger?: Logger;
  /** Told what moves, for metrics. */
  observer?: ServiceObserver;
  /** The views' sandbox (where PDFs are parsed and JSON queried) and default budget; default inline. */
  views?: Pick<ArtifactViewsDeps, 'sandbox' | 'budget'>;
  /** Fault injection for tests: awaited at named points of a put (crash, pause or fail there). */
  faults?: (point: PutFaultPoint) => Promise<void>;
  /** Where resumable (tus) uploads stage their bytes (Node: files in the data dir); without it, no tus. */
  tusStaging?: TusStaging;
}

export function createArtifactService(deps: ArtifactServiceDeps): ArtifactService {
  const { repo, blobs, limits } = deps;
  const now = deps.now ?? Date.now;
  const logger = deps.logger ?? silentLogger;
  const observer = deps.observer;

  const policies = createPutPolicies({ limits, ...(deps.policies ? { policies: deps.policies } : {}) });
  const puts = createPuts({
    repo,
    blobs,
    policies,
    now,
    graceMs: limits.gcGraceMs ?? 3_600_000,
    logger,
    ...(observer ? { observer } : {}),
    ...(deps.faults ? { faults: deps.faults } : {}),
  });
  const reads = createReads({
    repo,
    blobs,
    now,
    smallBlobCacheBytes: limits.smallBlobCacheBytes ?? 0,
    touchFlushMs: limits.touchFlushMs,
    logger,
    ...(observer ? { observer } : {}),
  });
  const links = createLinks({ blobs, now, ...(deps.links ? { settings: deps.links } : {}) });
  const uploads = createDirectUploads({
    repo,
    blobs,
    policies,
    puts,
    now,
    ...(limits.uploadTtlSeconds ? { uploadTtlSeconds: limits.uploadTtlSeconds } : {}),
    ...(limits.multipartUploadBytes ? { multipartUploadBytes: limits.multipartUploadBytes } : {}),
    ...(limits.uploadPartBytes ? { uploadPartBytes: limits.uploadPartBytes } : {}),
  });
  const tus = deps.tusStaging
    ? createTusUploads({
        repo,
        blobs,
        staging: deps.tusStaging,
        policies,
        puts,
        now,
        logger,
      })
    : undefined;
  const names = createNamedVersions({ repo, now, logger, puts, reads, links });
  const sessions = createSessionEnding({ repo, now });
  const deletes = createDeletes({ repo, blobs, now, logger, reads });
  const list = createListing({ repo, now });

  let views: ArtifactViews | undefined;
  const service: ArtifactService = {
    limits,

    /** Made on first use: most processes never read a view. */
    get views() {
      views ??= createArtifactViews({ service, blobs, ...deps.views, ...(deps.now ? { now: deps.now } : {}) });
      return views;
    },

    putStream: (scope, body, options) => puts.stream(scope, body, options),
    putsInFlight: puts.inFlight,
    putBytes: (scope, bytes, options = {}) => puts.stream(scope, streamOfBytes(bytes), options),
    putText: (scope, text, options = {}) =>
      puts.stream(scope, streamOfBytes(new TextEncoder().encode(text)), { mimeType: TEXT_MIME, ...options }),
    async putBase64(scope, data, options = {}) {
      const decoded = decodeBase64(data);
      return puts.stream(scope, streamOfBytes(decoded.bytes), {
        ...(decoded.mimeType ? { mimeType: decoded.mimeType } : {}),
        ...options,
      });
    },

    getRef: async (access, id) => rowToRef(await reads.find(access, id)),
    exists: reads.exists,
    getEntity: reads.find,
    getBody: reads.download,
    async getStream(access, id, resolveRange) {
      const row = await reads.find(access, id);
      const { range, body } = await reads.body(
        row,
        resolveRange?.({ sizeBytes: row.sizeBytes, sha256: row.sha256 }),
        0,
      );
      return {
        ref: rowToRef(row),
        sizeBytes: row.sizeBytes,
        range,
        body: body instanceof Uint8Array ? streamOfBytes(body) : body,
      };
    },
    async downloadUrl(access, id, options) {
      // A bad lifetime is refused before the lookup, like any other bad option.
      links.ttlOf(options);
      return links.linkOf(access.tenantId, await reads.find(access, id), options);
    },

    ...names,
    ...sessions,
    ...uploads,
    ...(tus ? { tus } : {}),
    delete: deletes.delete,
    purge: deletes.purge,
    list,

    flush: reads.flush,
    async close() {
      await reads.close();
      await views?.close();
    },
  };
  return service;
}
