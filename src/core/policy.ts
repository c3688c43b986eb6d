import { z } from 'zod';

export const CLEANUP_STRATEGIES = ['lru', 'fifo', 'none'] as const;
export type CleanupStrategy = (typeof CLEANUP_STRATEGIES)[number];

/**
 * What one tenant may store. Limits count references: a 1 MiB artifact held by two sessions counts
 * 1 MiB against each. Only live references count (an expired one waits for retention but uses
 * nothing). maxTenantBytes 0 means no tenant quota.
 */
export interface Policy {
  defaultTtlSeconds: number;
  maxTtlSeconds: number;
  maxArtifactBytes: number;
  maxSessionBytes: number;
  maxTraceBytes: number;
  maxArtifactsPerSession: number;
  maxArtifactsPerTrace: number;
  maxTenantBytes: number;
  /** What a put does to a full session or trace: evict least-recently-accessed, oldest-created, or refuse. */
  cleanupStrategy: CleanupStrategy;
}

const MiB = 1024 * 1024;

/** The reference design's defaults (the config's defaults too). */
export const DEFAULT_POLICY: Policy = {
  defaultTtlSeconds: 3600,
  maxTtlSeconds: 7 * 24 * 3600,
  maxArtifactBytes: 50 * MiB,
  maxSessionBytes: 500 * MiB,
  maxTraceBytes: 100 * MiB,
  maxArtifactsPerSession: 1000,
  maxArtifactsPerTrace: 100,
  maxTenantBytes: 0,
  cleanupStrategy: 'lru',
};

const positive = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);

/** One tenant's overrides: any subset of the policy, nothing else. */
export const PolicyOverrideSchema = z
  .object({
    defaultTtlSeconds: positive,
    maxTtlSeconds: positive,
    maxArtifactBytes: positive,
    maxSessionBytes: positive,
    maxTraceBytes: positive,
    maxArtifactsPerSession: positive,
    maxArtifactsPerTrace: positive,
    maxTenantBytes: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
    cleanupStrategy: z.enum(CLEANUP_STRATEGIES),
  })
  .partial()
  .strict();

export const TenantPoliciesSchema = z.record(z.string().min(1), PolicyOverrideSchema);
export type TenantPolicies = z.infer<typeof TenantPoliciesSchema>;

/** TTLs are whole seconds from 1 s to 10 years; anything else is a typo. */
export const MAX_TTL_CEILING_SECONDS = 10 * 366 * 24 * 3600;

/** Problems of a complete policy (after overrides), as [key, message] pairs. */
export function policyProblems(p: Policy): [keyof Policy, string][] {
  const out: [keyof Policy, string][] = [];
  if (p.defaultTtlSeconds < 1) out.push(['defaultTtlSeconds', 'must be at least 1 second']);
  if (p.maxTtlSeconds > MAX_TTL_CEILING_SECONDS) out.push(['maxTtlSeconds', `must be at most ${MAX_TTL_CEILING_SECONDS} (10 years)`]);
  if (p.defaultTtlSeconds > p.maxTtlSeconds) out.push(['defaultTtlSeconds', 'must not exceed the maximum TTL']);
  return out;
}

/** The policy of each tenant: the base, with that tenant's overrides on top. */
export function createPolicies(base: Policy, overrides: TenantPolicies = {}): (tenantId: string) => Policy {
  const merged = new Map(Object.entries(overrides).map(([tenant, o]) => [tenant, { ...base, ...o } as Policy]));
  return (tenantId) => merged.get(tenantId) ?? base;
}
