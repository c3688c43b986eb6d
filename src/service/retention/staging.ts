/** Phase `staging`: leftovers in the blob store's staging area. */
import type { PhaseContext } from './context.js';

/**
 * Sweeps staging leftovers older than the grace period: temp files of puts that died mid-stream,
 * staged objects of uploads whose rows are gone (on S3, also unfinished multipart uploads). Against
 * the wall clock: file and object timestamps are wall-clock times, whatever the run's clock is.
 * Drivers without a staging area have nothing to sweep.
 */
export async function sweepStaging({ deps, pace, report }: PhaseContext): Promise<void> {
  if (!deps.blobs.sweepStaging) return;
  report.staging = await deps.blobs.sweepStaging(Date.now() - deps.graceMs);
  await pace.after('staging', report.staging.removed);
}
