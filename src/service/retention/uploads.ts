/** Phase `uploads`: direct and resumable (tus) uploads that were never completed, or finished long ago. */
import { errorText } from '../../core/logger.js';
import { discardStaged } from '../direct-uploads.js';
import type { PhaseContext } from './context.js';

/**
 * Removes each upload that expired more than the grace period ago: its staged object, parts or file first,
 * then its row, so a crash in between leaves a row the next run finds again. When the blob store
 * cannot discard the object, the row stays for the next run, and the failure is counted and logged.
 */
export async function discardExpiredUploads({ deps, now, batch, pace, logger, report }: PhaseContext): Promise<void> {
  // Rows whose staged object could not be discarded come back in the next page: skip them.
  const seen = new Set<string>();
  for (;;) {
    const page = (await deps.repo.expiredUploads(now() - deps.graceMs, batch)).filter((u) => !seen.has(u.id));
    for (const up of page) {
      seen.add(up.id);
      // A tus upload's bytes are staged by the service that took them: a run without its staging
      // leaves the upload to that service's own run (a finished one has nothing staged).
      if (up.kind === 'tus' && up.stagingKey !== '' && !deps.tusStaging) continue;
      try {
        if (up.kind === 'tus') await deps.tusStaging?.discard(up.id);
        else await discardStaged(deps.blobs, up);
      } catch (err) {
        report.uploads.stagingFailed++;
        logger.warn('staged upload not discarded; kept for the next run', {
          phase: 'uploads',
          uploadId: up.id,
          error: errorText(err),
        });
        continue;
      }
      await deps.repo.deleteUpload(up.id);
      report.uploads.reaped++;
      await pace.after('uploads', report.uploads.reaped);
    }
    if (page.length === 0) break;
  }
}
