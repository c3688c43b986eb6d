/** What a retention run reports: its shape, the empty report a run starts from, and each tenant's tally. */

/** What one run did, per category. Counts are references unless named otherwise. */
export interface RetentionReport {
  trigger: string;
  startedAt: string;
  finishedAt: string;
  durationMs: number;
  expired: { refs: number; bytes: number };
  /** Bytes are the references' sizes (freed from their scopes' quotas; the blobs go by GC). */
  evicted: { refs: number; bytes: number; scopes: number };
  /** Scopes over their limit whose strategy is none: left as they are (puts into them are refused). */
  overLimitKept: { scopes: number };
  unreferencedArtifacts: number;
  uploads: { reaped: number; stagingFailed: number };
  /** Blob rows of puts that never stored their bytes (a blob store outage mid-put): removed once the store confirms the bytes are not there. */
  unfinished: { rows: number; checkFailed: number };
  /** Bytes no artifact holds, unpinned and older than the grace period, deleted from the blob store. */
  blobs: { collected: number; bytes: number; failed: number };
  /** Staging leftovers (puts that died mid-stream) older than the grace period. */
  staging: { removed: number; bytes: number };
  /** Outbox events older than a day (a dropped event stream can resume within that day). */
  events: { trimmed: number };
  /** Audit entries past their keeping time. */
  audit: { trimmed: number };
  /** What the run freed in each tenant (references expired and evicted, and their bytes): what a tenant's admin sees. */
  tenants: Record<string, TenantRetention>;
}

/** What one run freed in one tenant. */
export interface TenantRetention {
  expiredRefs: number;
  expiredBytes: number;
  evictedRefs: number;
  evictedBytes: number;
}

/** A report with nothing done yet, of a run started at `startedAt` (ms). */
export function emptyReport(trigger: string, startedAt: number): RetentionReport {
  return {
    trigger,
    startedAt: new Date(startedAt).toISOString(),
    finishedAt: '',
    durationMs: 0,
    expired: { refs: 0, bytes: 0 },
    evicted: { refs: 0, bytes: 0, scopes: 0 },
    overLimitKept: { scopes: 0 },
    unreferencedArtifacts: 0,
    uploads: { reaped: 0, stagingFailed: 0 },
    unfinished: { rows: 0, checkFailed: 0 },
    blobs: { collected: 0, bytes: 0, failed: 0 },
    staging: { removed: 0, bytes: 0 },
    events: { trimmed: 0 },
    audit: { trimmed: 0 },
    tenants: {},
  };
}

/** The tally of `tenantId` in `report`, added at zero the first time the run frees something there. */
export function tenantTally(report: RetentionReport, tenantId: string): TenantRetention {
  report.tenants[tenantId] ??= { expiredRefs: 0, expiredBytes: 0, evictedRefs: 0, evictedBytes: 0 };
  return report.tenants[tenantId];
}
