/**
 * A put's pin on its blob: taken once the put knows its hash, before the bytes are committed, and
 * removed by the metadata commit (or released after a failure). Garbage collection and purge skip
 * pinned blobs, so they never take bytes a put is committing.
 */
import type { BlobStore } from '../blob/blob-store.js';
import { errors } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { ArtifactRepository } from '../db/repository.js';
import { errorText } from '../core/logger.js';

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
  /** Where a release that could not clean up is logged (retention finishes what it left). */
  logger: Logger;
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
export function createPutPin({ repo, blobs, now, graceMs, logger }: PutPinDeps): PutPin {
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
     * reached the store (nothing else holds it). With the store or the database down, what could not
     * be removed stays and is logged: the pin runs out after the grace period, and the next retention
     * run removes the row once the store answers. Never throws: the put's own failure is what the
     * caller gets.
     */
    async release(): Promise<void> {
      if (id === undefined) return;
      const sha256 = pinned!;
      const left = (what: string) => (err: unknown) =>
        logger.warn(`put pin: ${what}`, { sha256, pinId: id, error: errorText(err) });
      await repo.releasePin(id).catch(left('pin not released; it runs out after the grace period'));
      const stored = await blobs.exists(sha256).catch((err: unknown) => {
        left('blob not checked; retention removes its row once the store answers')(err);
        return true;
      });
      if (!stored)
        await repo.deleteIdleBlobRow(sha256, now()).catch(left('blob row not removed; retention removes it'));
    },
  };
}
