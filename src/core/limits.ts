/**
 * What a tenant's policy means as limits: the quotas a put or a retention run enforces, the limits
 * of one session or trace, and the request rates the rate limiter meters. The one place a Policy's
 * fields are mapped to the limits each part of the service checks.
 */
import type { CleanupStrategy, Policy } from './policy.js';

/**
 * Limits of the scopes a put lands in. A missing or 0 limit is no limit. Session and trace limits
 * follow the strategy (evict least-recently-accessed or oldest-created references of that scope
 * until the new one fits, or refuse); the tenant quota always refuses, because making room there
 * would evict other sessions' work.
 */
export interface QuotaLimits {
  strategy: CleanupStrategy;
  maxSessionBytes?: number;
  maxSessionCount?: number;
  maxTraceBytes?: number;
  maxTraceCount?: number;
  maxTenantBytes?: number;
}

/** The limits a put (or a retention run) enforces under a tenant's policy. */
export function quotaLimitsOf(p: Policy): QuotaLimits {
  return {
    strategy: p.cleanupStrategy,
    maxSessionBytes: p.maxSessionBytes,
    maxSessionCount: p.maxArtifactsPerSession,
    maxTraceBytes: p.maxTraceBytes,
    maxTraceCount: p.maxArtifactsPerTrace,
    maxTenantBytes: p.maxTenantBytes,
  };
}

/** The two kinds of scope that have limits of their own. */
export type LimitedScope = 'session' | 'trace';

/** One session's or trace's limits under a policy: what retention scans for and the usage report shows. */
export function scopeLimitsOf(p: Policy, kind: LimitedScope): { maxBytes: number; maxCount: number } {
  return kind === 'session'
    ? { maxBytes: p.maxSessionBytes, maxCount: p.maxArtifactsPerSession }
    : { maxBytes: p.maxTraceBytes, maxCount: p.maxArtifactsPerTrace };
}

/** One rate-limit bucket's limits. 0 turns that limit off. */
export interface RateLimits {
  /** Sustained requests per second. */
  requestsPerSecond: number;
  /** How many requests may come at once above the sustained rate (the bucket's size; 0 = twice the rate). */
  requestBurst: number;
  /** Request-body bytes being received at once (puts in progress). */
  bytesInFlight: number;
}

const rateLimitsByPolicy = new WeakMap<Policy, { tenant: RateLimits; token: RateLimits }>();

/**
 * The rate limits of a tenant's policy: its own bucket, and each of its tokens'. The same object each
 * time for the same policy, so the rate limiter's per-request lookup allocates nothing.
 */
export function rateLimitsOf(p: Policy): { tenant: RateLimits; token: RateLimits } {
  let limits = rateLimitsByPolicy.get(p);
  if (!limits) {
    limits = {
      tenant: {
        requestsPerSecond: p.tenantRequestsPerSecond,
        requestBurst: p.tenantRequestBurst,
        bytesInFlight: p.tenantBytesInFlight,
      },
      token: {
        requestsPerSecond: p.tokenRequestsPerSecond,
        requestBurst: p.tokenRequestBurst,
        bytesInFlight: p.tokenBytesInFlight,
      },
    };
    rateLimitsByPolicy.set(p, limits);
  }
  return limits;
}
