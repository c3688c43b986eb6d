import type { Policy } from '../core/policy.js';
import type { ArtifactRepository } from '../db/repository.js';
import type { RetentionReport } from './retention.js';

export interface UsageRow {
  tenantId: string;
  bytes: number;
  count: number;
}

export interface UsageReport {
  at: string;
  /** Per tenant, biggest first, with the tenant quota (null: none). */
  tenants: (UsageRow & { limitBytes: number | null })[];
  sessions: (UsageRow & { sessionId: string; limitBytes: number; limitCount: number })[];
  traces: (UsageRow & { traceId: string; limitBytes: number; limitCount: number })[];
  /** The latest retention runs, newest first (what each freed). */
  retentionRuns: { startedAt: string; trigger: string; durationMs: number; expiredRefs: number; evictedRefs: number; blobsCollected: number; bytesFreed: number }[];
}

/** Who is asking: every tenant (operators), one tenant, or one session / trace of it. */
export interface UsageScope {
  tenantId?: string;
  sessionId?: string;
  traceId?: string;
}

/**
 * Bytes and counts of live references against their limits: per tenant, and the top `top`
 * sessions and traces by bytes. Only live references count, as for the quotas themselves.
 */
export async function usageReport(repo: ArtifactRepository, policies: (tenantId: string) => Policy, scope: UsageScope, top: number, now = Date.now()): Promise<UsageReport> {
  const filter = { ...scope, limit: top };
  const [tenants, sessions, traces, runs] = await Promise.all([
    repo.usage('tenant', now, filter),
    repo.usage('session', now, filter),
    repo.usage('trace', now, filter),
    scope.tenantId === undefined ? repo.retentionRuns(30) : Promise.resolve([]),
  ]);
  return {
    at: new Date(now).toISOString(),
    tenants: tenants.map((u) => ({ tenantId: u.tenantId, bytes: u.bytes, count: u.count, limitBytes: policies(u.tenantId).maxTenantBytes || null })),
    sessions: sessions.map((u) => {
      const p = policies(u.tenantId);
      return { tenantId: u.tenantId, sessionId: u.value, bytes: u.bytes, count: u.count, limitBytes: p.maxSessionBytes, limitCount: p.maxArtifactsPerSession };
    }),
    traces: traces.map((u) => {
      const p = policies(u.tenantId);
      return { tenantId: u.tenantId, traceId: u.value, bytes: u.bytes, count: u.count, limitBytes: p.maxTraceBytes, limitCount: p.maxArtifactsPerTrace };
    }),
    retentionRuns: runs.map((r) => {
      const report = r.report as unknown as RetentionReport;
      return {
        startedAt: new Date(r.startedAt).toISOString(),
        trigger: r.trigger,
        durationMs: r.finishedAt - r.startedAt,
        expiredRefs: report.expired?.refs ?? 0,
        evictedRefs: report.evicted?.refs ?? 0,
        blobsCollected: report.blobs?.collected ?? 0,
        bytesFreed: report.blobs?.bytes ?? 0,
      };
    }),
  };
}
