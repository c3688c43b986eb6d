/**
 * The retention run: its phases in order (PHASES), and runRetention, which walks them and keeps the
 * report. Each phase is a module of this folder, tested alone in test/retention-phases.test.ts.
 */
import { type AuditActor, recordAction, scheduledActor } from '../audit.js';
import { errorText } from '../../core/logger.js';
import { createPhaseContext, type Phase, type RetentionDeps } from './context.js';
import { collectBlobs } from './collect.js';
import { expireReferences } from './expire.js';
import { enforceScopeLimits } from './quotas.js';
import { emptyReport, type RetentionReport } from './report.js';
import { sweepStaging } from './staging.js';
import { trimAudit, trimEvents } from './trims.js';
import { removeUnfinishedBlobRows } from './unfinished.js';
import { dropUnreferencedArtifacts } from './unreferenced.js';
import { discardExpiredUploads } from './uploads.js';

export { BATCH_TARGET_MS } from './batch-sizer.js';
export type { Phase, PhaseContext, PhaseName, RetentionDeps } from './context.js';
export type { RetentionPhase } from './pacing.js';
export type { RetentionReport, TenantRetention } from './report.js';
export { EVENTS_KEPT_MS } from './trims.js';

/**
 * The phases of a run, in the order they run. Each is a bounded transaction at a time (or a call to
 * the blob store) that re-checks its condition inside, so the order is about what one run finishes:
 * references go before the artifacts they held, and artifacts before the blobs those held, so a
 * single run collects the bytes of what it expired.
 */
export const PHASES: readonly Phase[] = [
  { name: 'expire', run: expireReferences },
  { name: 'quotas', run: enforceScopeLimits },
  { name: 'artifacts', run: dropUnreferencedArtifacts },
  { name: 'uploads', run: discardExpiredUploads },
  { name: 'unfinished', run: removeUnfinishedBlobRows },
  { name: 'blobs', run: collectBlobs },
  { name: 'staging', run: sweepStaging },
  { name: 'events', run: trimEvents },
  { name: 'audit', run: trimAudit },
];

/**
 * One retention run: every phase of PHASES, then the report kept in the database and in the audit
 * trail. Idempotent, and safe while traffic flows. A phase that throws ends the run (logged with its
 * phase, then rethrown); failures a phase can go past are counted in the report and logged.
 */
export async function runRetention(
  deps: RetentionDeps,
  trigger = 'cli',
  actor: AuditActor = scheduledActor(trigger),
): Promise<RetentionReport> {
  const now = deps.now ?? Date.now;
  const started = now();
  const report = emptyReport(trigger, started);
  const ctx = createPhaseContext(deps, report);
  for (const phase of PHASES) {
    try {
      await phase.run(ctx);
    } catch (err) {
      ctx.logger.warn('retention phase failed; run stopped', { phase: phase.name, error: errorText(err) });
      throw err;
    }
  }

  const finished = now();
  report.finishedAt = new Date(finished).toISOString();
  report.durationMs = finished - started;
  await deps.repo.recordRetentionRun({
    trigger,
    startedAt: started,
    finishedAt: finished,
    report: report as unknown as Record<string, unknown>,
  });
  const { tenants: _perTenant, ...summary } = report;
  await recordAction(
    deps.repo,
    actor,
    'retention.run',
    { details: { ...summary, tenants: Object.keys(report.tenants).length } },
    finished,
  );
  return report;
}
