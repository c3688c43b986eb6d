/**
 * Removing artifacts: a caller's delete (its visible references; the artifact goes with its last
 * reference, its bytes with retention's collection), and an admin's purge (every reference of the
 * tenant at once, and the bytes now unless another tenant holds them or a put is committing them).
 */
import type { BlobStore } from '../blob/blob-store.js';
import { errors } from '../core/errors.js';
import { isArtifactId } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
import type { ArtifactRepository } from '../db/repository.js';
import { errorText } from '../core/logger.js';
import { removeMarkedBlobs } from './blob-removal.js';
import type { Reads } from './reads.js';
import type { Access } from './types.js';

export interface DeletesDeps {
  repo: ArtifactRepository;
  blobs: BlobStore;
  now: () => number;
  logger: Logger;
  /** Cached bytes of a purged blob are dropped with it. */
  reads: Pick<Reads, 'forget'>;
}

/** What a purge removed. */
export interface PurgeResult {
  refs: number;
  bytesDeleted: boolean;
  /** With a CDN in front: whether its cached copies were invalidated. */
  cdnInvalidated?: boolean;
}

export interface Deletes {
  /** Removes the caller's visible references; the artifact goes with its last reference. */
  delete(access: Access, id: string): Promise<boolean>;
  /**
   * Admin purge: every reference of the tenant to `id` goes at once (artifact.deleted each), and the
   * bytes too unless another tenant holds them or a put is committing them. Proxy links stop at
   * once; direct links die with the object.
   */
  purge(tenantId: string, id: string): Promise<PurgeResult>;
}

export function createDeletes({ repo, blobs, now, logger, reads }: DeletesDeps): Deletes {
  return {
    async delete(access, id) {
      if (!isArtifactId(id)) return false;
      return (await repo.deleteRefs(access.tenantId, id, access.filter, now())) > 0;
    },

    async purge(tenantId, id) {
      const found = isArtifactId(id) ? await repo.findRef(tenantId, id, {}, now()) : undefined;
      if (!found) throw errors.notFound(id);
      const refs = await repo.deleteRefs(tenantId, id, {}, now());
      reads.forget(found.sha256);
      // Marked only when no other tenant's artifact holds the bytes and no put has pinned them; then
      // removed as retention's collection removes blobs (blob-removal.ts).
      const markedAt = now();
      if (!(await repo.markBlobForPurge(found.sha256, markedAt))) return { refs, bytesDeleted: false };
      const blob = { sha256: found.sha256, sizeBytes: found.sizeBytes };
      const { failed } = await removeMarkedBlobs(
        { repo, blobs, logger, logFields: { action: 'purge' } },
        [blob],
        markedAt,
      );
      if (failed[0]) throw failed[0].error;
      if (!blobs.cdn) return { refs, bytesDeleted: true };
      // The bytes are gone either way; a failed invalidation leaves cached copies until their TTL.
      const cdnInvalidated = await blobs.cdn.invalidate(found.sha256).then(
        () => true,
        (err: unknown) => {
          logger.warn('purge: CDN copies not invalidated; they stay until their TTL', {
            sha256: found.sha256,
            error: errorText(err),
          });
          return false;
        },
      );
      return { refs, bytesDeleted: true, cdnInvalidated };
    },
  };
}
