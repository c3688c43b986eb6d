/** Phases `events` and `audit`: the outbox and the audit trail, trimmed from their oldest end. */
import { AUDIT_KEPT_DAYS } from '../audit.js';
import type { PhaseContext } from './context.js';

/** How long events stay in the outbox: the window in which Last-Event-ID can resume a stream. */
export const EVENTS_KEPT_MS = 24 * 3_600_000;

/** Drops outbox events older than EVENTS_KEPT_MS. */
export async function trimEvents({ deps, now, batch, pace, report }: PhaseContext): Promise<void> {
  for (;;) {
    const trimmed = await deps.repo.trimEvents(now() - EVENTS_KEPT_MS, batch);
    report.events.trimmed += trimmed;
    await pace.turn();
    if (trimmed < batch) break;
  }
}

/** Drops audit entries past their keeping time (deps.auditKeptMs, default 90 days), never earlier. */
export async function trimAudit({ deps, now, batch, pace, report }: PhaseContext): Promise<void> {
  const before = now() - (deps.auditKeptMs ?? AUDIT_KEPT_DAYS * 86_400_000);
  for (;;) {
    const trimmed = await deps.repo.trimAudit(before, batch);
    report.audit.trimmed += trimmed;
    await pace.turn();
    if (trimmed < batch) break;
  }
}
