/** Phase `expire`: references past their TTL, oldest expiry first, a batch per transaction. */
import type { PhaseContext } from './context.js';
import { tenantTally } from './report.js';

/**
 * Expires every reference whose TTL has passed (`artifact.expired` each; an artifact goes with its
 * last reference), counting references and bytes in all and per tenant.
 */
export async function expireReferences({ deps, now, sizer, pace, report }: PhaseContext): Promise<void> {
  const batch = sizer();
  for (;;) {
    const size = batch.size;
    const began = performance.now();
    const { refs, bytes, byTenant } = await deps.repo.expireRefs(now(), size);
    const held = performance.now() - began;
    batch.took(held, refs);
    report.expired.refs += refs;
    report.expired.bytes += bytes;
    for (const [id, t] of Object.entries(byTenant)) {
      const tally = tenantTally(report, id);
      tally.expiredRefs += t.refs;
      tally.expiredBytes += t.bytes;
    }
    await pace.after('expire', report.expired.refs, held);
    if (refs < size) break;
  }
}
