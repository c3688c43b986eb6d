/** Phase `quotas`: sessions and traces over their limits (limits lowered since their puts). */
import { quotaLimitsOf, scopeLimitsOf } from '../../core/limits.js';
import { evicts } from '../../core/policy.js';
import type { PhaseContext } from './context.js';
import { tenantTally } from './report.js';

/**
 * Brings each session and trace over its limits back within them by its tenant's strategy
 * (`artifact.evicted`), or leaves it and counts it when the strategy evicts nothing. The scan asks
 * for anything over the smallest limit any tenant has, then checks each scope against its own
 * tenant's policy.
 */
export async function enforceScopeLimits({ deps, now, batch, pace, report }: PhaseContext): Promise<void> {
  const tenantPolicies = [deps.policies(''), ...(deps.overriddenTenants ?? []).map((t) => deps.policies(t))];
  for (const kind of ['session', 'trace'] as const) {
    const minCount = Math.min(...tenantPolicies.map((p) => scopeLimitsOf(p, kind).maxCount));
    const minBytes = Math.min(...tenantPolicies.map((p) => scopeLimitsOf(p, kind).maxBytes));
    for (let after: { tenantId: string; value: string } | null | undefined; after !== null; ) {
      const began = performance.now();
      const { scopes, next } = await deps.repo.scopesOver(kind, now(), minCount, minBytes, after, batch);
      after = next;
      await pace.after('quotas', report.evicted.refs, performance.now() - began);
      for (const scope of scopes) {
        const policy = deps.policies(scope.tenantId);
        const { maxCount, maxBytes } = scopeLimitsOf(policy, kind);
        if (scope.count <= maxCount && scope.bytes <= maxBytes) continue;
        if (!evicts(policy.cleanupStrategy)) {
          report.overLimitKept.scopes++;
          continue;
        }
        const began = performance.now();
        const evicted = await deps.repo.enforceScope(scope.tenantId, kind, scope.value, quotaLimitsOf(policy), now());
        const held = performance.now() - began;
        if (evicted.length > 0) report.evicted.scopes++;
        report.evicted.refs += evicted.length;
        report.evicted.bytes += evicted.reduce((sum, r) => sum + r.sizeBytes, 0);
        for (const r of evicted) {
          const tally = tenantTally(report, r.tenantId);
          tally.evictedRefs++;
          tally.evictedBytes += r.sizeBytes;
        }
        await pace.after('quotas', report.evicted.refs, held);
      }
    }
  }
}
