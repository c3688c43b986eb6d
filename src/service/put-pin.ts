/**
 * A put's pin on its blob: taken once the put knows its hash, before the bytes are committed, and
 * removed by the metadata commit (or released after a failure). Garbage collection and purge skip
 * pinned blobs, so they never take bytes a put is committing.
 */
import type { BlobStore } from '../blob/blob-store.js';
import { errors } from '../core/errors.js';
import type { ArtifactRepository } from '../db/repository.js';

/** A collection marked longer ago than this died with its process: puts stop waiting for it. */
export const STALE_COLLECTION_MS = 10 * 60_000;
/** How long a put waits for a collection of the same bytes to finish before answering 503. */
const PIN_WAIT_MS = 30_000;

export interface PutPinDeps {
  repo: ArtifactRepository;
  blobs: BlobStore;
  now: () => number;
  /** How long the pin holds: the put must commit its metadata within this time. */
  graceMs: number;
}

export interface PutPin {
  /** The pin's id once taken (commitPut removes it with the metadata). */
  readonly id: number | undefined;
  take(blob: { sha256: string }): Promise<void>;
  release(): Promise<void>;
}

/**
 * One put's pin: keeps garbage collection and purge off its blob from before the bytes are
 * committed until the metadata is (commitPut removes it), or until `release` after a failure.
 */
export function createPutPin({ repo, blobs, now, graceMs }: PutPinDeps): PutPin {
  let id: number | undefined;
  let pinned: string | undefined;
  return {
    get id() {
      return id;
    },
    async take({ sha256 }: { sha256: string }): Promise<void> {
      for (let waited = 0; ; waited += 100) {
        const t = now();
        const got = await repo.pinBlob(sha256, t + graceMs, t, t - STALE_COLLECTION_MS);
        if (got !== 'collecting') {
          id = got;
          pinned = sha256;
          return;
        }
        if (waited >= PIN_WAIT_MS)
          throw errors.backendUnavailable(
            'These bytes are being garbage-collected right now. Retry in a few seconds.',
            { retryAfter: 5 },
          );
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    /**
     * After a failed put: the pin goes, and so does the blob row the pin made when the bytes never
     * reached the store (nothing else holds it). With the store down the row stays, and the next
     * retention run removes it once the store answers.
     */
    async release(): Promise<void> {
      if (id === undefined) return;
      await repo.releasePin(id).catch(() => {});
      const sha256 = pinned!;
      const stored = await blobs.exists(sha256).catch(() => true);
      if (!stored) await repo.deleteIdleBlobRow(sha256, now()).catch(() => {});
    },
  };
}
