/** Phase `unfinished`: blob rows of puts that pinned their bytes and failed before storing them. */
import { errorText } from '../../core/logger.js';
import type { PhaseContext } from './context.js';

/**
 * Removes the rows of puts that failed between pinning and storing their bytes (a blob store that
 * was down): no artifact holds them and no pin protects them, so once the store says the bytes are
 * not there, nothing needs the row. Bytes that are there stay for the collection. A failed check
 * keeps the row for the next run, and is counted and logged.
 */
export async function removeUnfinishedBlobRows({
  deps,
  now,
  batch,
  pace,
  logger,
  report,
}: PhaseContext): Promise<void> {
  for (let after = ''; ; ) {
    const rows = await deps.repo.unfinishedBlobRows(now(), after, batch);
    for (const sha256 of rows) {
      let stored: boolean;
      try {
        stored = await deps.blobs.exists(sha256);
      } catch (err) {
        report.unfinished.checkFailed++;
        logger.warn('blob existence check failed; row kept for the next run', {
          phase: 'unfinished',
          sha256,
          error: errorText(err),
        });
        continue;
      }
      if (!stored && (await deps.repo.deleteIdleBlobRow(sha256, now()))) report.unfinished.rows++;
    }
    await pace.turn();
    if (rows.length < batch) break;
    after = rows.at(-1)!;
  }
}
