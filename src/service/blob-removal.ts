/**
 * The last step of taking blobs out of the store, shared by retention's collection and purge: delete
 * the bytes of blobs already marked for collection, then drop their rows (or unmark the ones whose
 * delete failed). Marking is the caller's: it decides which blobs may go.
 */
import type { BlobStore } from '../blob/blob-store.js';
import { type LogFields, type Logger, silentLogger } from '../core/logger.js';
import type { BlobRepository } from '../db/repository.js';
import { errorText } from '../core/logger.js';

/** A blob row marked for collection, as markBlobsForCollection returns it. */
export interface MarkedBlob {
  sha256: string;
  sizeBytes: number;
}

export interface BlobRemovalDeps {
  repo: Pick<BlobRepository, 'dropOrUnmarkBlobs'>;
  blobs: Pick<BlobStore, 'delete'>;
  /** Where a failed delete is reported (warn); silent unless given. */
  logger?: Logger;
  /** Added to each log line (retention's collection gives `{ phase: 'blobs' }`). */
  logFields?: LogFields;
  /** Awaited once every delete has settled, before the rows are written (fault injection points). */
  afterDeletes?: () => Promise<void>;
}

export interface BlobRemoval {
  /** Deleted from the blob store (or already gone), and their rows dropped. */
  collected: MarkedBlob[];
  /** Whose delete threw, with what it threw: the bytes may still be there, and the rows are unmarked. */
  failed: { blob: MarkedBlob; error: unknown }[];
}

/** Blob deletes in flight at once: each is a round trip (an unlink in libuv's pool, a DeleteObject). */
export const BLOB_DELETES_AT_ONCE = 16;

/**
 * Deletes the bytes of `marked`, up to BLOB_DELETES_AT_ONCE at a time, then in one write drops the
 * rows of those deleted and clears the mark of those whose delete threw, so a later run retries them.
 *
 * Expects every blob of `marked` to carry the mark `markedAt`, set by this caller through
 * markBlobsForCollection or markBlobForPurge: the mark is what makes deleting safe. It was set only
 * on a blob no artifact held and no put had pinned, and while it stands a put of the same bytes
 * waits (pinBlob answers 'collecting') instead of counting on bytes that are going.
 *
 * A failed delete never rejects: it is logged (warn, with the sha256 and the error) and returned in
 * `failed`; the caller decides whether that fails its operation (purge rethrows it). The promise
 * rejects only when the rows' write does (or `afterDeletes` does): then the rows stay marked with
 * `markedAt`, and a run more than STALE_COLLECTION_MS later marks them again, deletes whatever
 * bytes are left and drops them; until then puts of those bytes wait, up to 30 s, and may answer
 * 503. A process killed at any point leaves the same state.
 *
 * Concurrency: runs alongside puts (the mark holds them off) and alongside other removals, since
 * the write touches only rows still marked `markedAt` and marking never takes a blob another
 * collection marked less than STALE_COLLECTION_MS ago.
 */
export async function removeMarkedBlobs(
  deps: BlobRemovalDeps,
  marked: readonly MarkedBlob[],
  markedAt: number,
): Promise<BlobRemoval> {
  const logger = deps.logger ?? silentLogger;
  const collected: MarkedBlob[] = [];
  const failed: { blob: MarkedBlob; error: unknown }[] = [];
  // One after another, deletes were most of a collection's time.
  await eachConcurrently(marked, BLOB_DELETES_AT_ONCE, async (blob) => {
    try {
      await deps.blobs.delete(blob.sha256);
      collected.push(blob);
    } catch (error) {
      failed.push({ blob, error });
      logger.warn('blob delete failed; unmarked for a later run', {
        ...deps.logFields,
        sha256: blob.sha256,
        error: errorText(error),
      });
    }
  });
  await deps.afterDeletes?.();
  await deps.repo.dropOrUnmarkBlobs(
    collected.map((b) => b.sha256),
    failed.map((f) => f.blob.sha256),
    markedAt,
  );
  return { collected, failed };
}

/** Runs `task` over `items`, at most `limit` at a time; resolves when all have settled (tasks catch their own errors). */
async function eachConcurrently<T>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) await task(items[i]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
