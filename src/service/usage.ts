import { scopeLimitsOf } from '../core/limits.js';
import type { Policy } from '../core/policy.js';
import type { ArtifactRepository } from '../db/repository.js';
import type { RetentionReport, TenantRetention } from './retention/index.js';

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
  /**
   * The latest retention runs, newest first (what each freed). For an operator, the whole run
   * (bytesFreed: bytes of blobs collected); for a tenant's admin, that tenant's part of each run
   * (bytesFreed: bytes of its references expired or evicted; blobsCollected is 0, since blobs are
   * shared across tenants and collected for the service).
   */
  retentionRuns: {
    startedAt: string;
    trigger: string;
    durationMs: number;
    expiredRefs: number;
    evictedRefs: number;
    blobsCollected: number;
    bytesFreed: number;
  }[];
  /** Refusals by the rate limiter in this process, per tenant (operators; a tenant's admin sees its own). */
  rateLimited?: { tenantId: string; requests: number; bytes: number }[];
}

/** What else a report holds, by who asks. */
export interface UsageExtras {
  /** Retention runs: all of each (operators), the scope's tenant's part of each (its admins), or none. */
  retention?: 'service' | 'tenant';
  rateLimited?: { tenantId: string; requests: number; bytes: number }[];
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
export async function usageReport(
  repo: ArtifactRepository,
  policies: (tenantId: string) => Policy,
  scope: UsageScope,
  top: number,
  now = Date.now(),
  extras: UsageExtras = {},
): Promise<UsageReport> {
  const filter = { ...scope, limit: top };
  const [tenants, sessions, traces, runs] = await Promise.all([
    repo.usage('tenant', now, filter),
    repo.usage('session', now, filter),
    repo.usage('trace', now, filter),
    extras.retention ? repo.retentionRuns(30) : Promise.resolve([]),
  ]);
  const tenantOnly = extras.retention === 'tenant' ? scope.tenantId : undefined;
  return {
    at: new Date(now).toISOString(),
    tenants: tenants.map((u) => ({
      tenantId: u.tenantId,
      bytes: u.bytes,
      count: u.count,
      limitBytes: policies(u.tenantId).maxTenantBytes || null,
    })),
    sessions: sessions.map((u) => {
      const limits = scopeLimitsOf(policies(u.tenantId), 'session');
      return {
        tenantId: u.tenantId,
        sessionId: u.value,
        bytes: u.bytes,
        count: u.count,
        limitBytes: limits.maxBytes,
        limitCount: limits.maxCount,
      };
    }),
    traces: traces.map((u) => {
      const limits = scopeLimitsOf(policies(u.tenantId), 'trace');
      return {
        tenantId: u.tenantId,
        traceId: u.value,
        bytes: u.bytes,
        count: u.count,
        limitBytes: limits.maxBytes,
        limitCount: limits.maxCount,
      };
    }),
    retentionRuns: runs.map((r) => {
      const report = r.report as unknown as RetentionReport;
      const run = {
        startedAt: new Date(r.startedAt).toISOString(),
        trigger: r.trigger,
        durationMs: r.finishedAt - r.startedAt,
      };
      if (tenantOnly !== undefined) {
        // Runs recorded before reports kept per-tenant figures count as nothing for the tenant.
        const t: Partial<TenantRetention> = report.tenants?.[tenantOnly] ?? {};
        return {
          ...run,
          expiredRefs: t.expiredRefs ?? 0,
          evictedRefs: t.evictedRefs ?? 0,
          blobsCollected: 0,
          bytesFreed: (t.expiredBytes ?? 0) + (t.evictedBytes ?? 0),
        };
      }
      return {
        ...run,
        expiredRefs: report.expired?.refs ?? 0,
        evictedRefs: report.evicted?.refs ?? 0,
        blobsCollected: report.blobs?.collected ?? 0,
        bytesFreed: report.blobs?.bytes ?? 0,
      };
    }),
    ...(extras.rateLimited ? { rateLimited: extras.rateLimited } : {}),
  };
}
