/** Phase `blobs`: garbage collection of the bytes no artifact holds. */
import { removeMarkedBlobs } from '../blob-removal.js';
import { STALE_COLLECTION_MS } from '../put-pin.js';
import type { PhaseContext } from './context.js';

/**
 * Collects blobs no artifact holds, unpinned and created more than the grace period ago, a window
 * of blob rows at a time: marks those of the window, deletes their bytes, then drops the rows still
 * marked (removeMarkedBlobs). A put of the same bytes that comes in meanwhile sees the mark and
 * waits for the collection to finish before committing its own copy. A failed delete is counted
 * (and logged by the removal), and the blob is left for the next run.
 */
export async function collectBlobs({ deps, now, sizer, pace, logger, report }: PhaseContext): Promise<void> {
  await deps.repo.dropExpiredPins(now());
  const batch = sizer();
  for (let after: string | null = ''; after !== null; ) {
    const markedAt = now();
    const size = batch.size;
    let began = performance.now();
    const { marked, next } = await deps.repo.markBlobsForCollection(
      markedAt,
      markedAt - deps.graceMs,
      markedAt - STALE_COLLECTION_MS,
      after,
      size,
    );
    after = next;
    // The batch is sized by its writes (marking, then the rows' write), not by the deletes between.
    let writing = performance.now() - began;
    if (marked.length === 0) {
      batch.took(writing, size);
      await pace.after('blobs', report.blobs.collected, writing);
      continue;
    }
    await deps.faults?.('gc:after-mark');
    const { collected, failed } = await removeMarkedBlobs(
      {
        repo: deps.repo,
        blobs: deps.blobs,
        logger,
        logFields: { phase: 'blobs' },
        afterDeletes: async () => {
          await deps.faults?.('gc:after-delete');
          began = performance.now();
        },
      },
      marked,
      markedAt,
    );
    writing = Math.max(writing, performance.now() - began);
    report.blobs.collected += collected.length;
    report.blobs.bytes += collected.reduce((sum, b) => sum + b.sizeBytes, 0);
    report.blobs.failed += failed.length;
    batch.took(writing, size);
    await pace.after('blobs', report.blobs.collected, writing);
  }
}
