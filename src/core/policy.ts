import { z } from 'zod';

/**
 * What a put does when it would take a session or trace past its limits:
 * - `lru` / `fifo`: evict that scope's least-recently-accessed / oldest references to make room;
 * - `reject`: refuse the put (409 quota_exceeded), evict nothing;
 * - `never`: evict nothing and refuse nothing: session and trace limits are not applied (penguiflow's
 *   `none`). The tenant quota, where one is set, refuses whatever the strategy.
 */
export const CLEANUP_STRATEGIES = ['lru', 'fifo', 'reject', 'never'] as const;
export type CleanupStrategy = (typeof CLEANUP_STRATEGIES)[number];

/** Strategies that make room by evicting (the others evict nothing). */
export const evicts = (strategy: CleanupStrategy): strategy is 'lru' | 'fifo' =>
  strategy === 'lru' || strategy === 'fifo';

/**
 * The strategy named `none` meant `reject` here and means `never` in penguiflow: taken silently either
 * way, somebody's limits would change. It is refused with both names.
 */
export const AMBIGUOUS_NONE =
  'cleanup strategy "none" is no longer accepted, since it reads two ways: use "reject" to refuse puts ' +
  'over a session or trace limit (what "none" did here), or "never" to evict nothing and let puts go ' +
  'past those limits (what "none" means in penguiflow)';

/** A cleanup strategy from configuration: one of CLEANUP_STRATEGIES, with `none` refused by both names. */
export const CleanupStrategySchema = z.enum(CLEANUP_STRATEGIES, {
  error: (issue) =>
    issue.input === 'none'
      ? AMBIGUOUS_NONE
      : `must be one of ${CLEANUP_STRATEGIES.map((s) => `"${s}"`).join(', ')} (got ${JSON.stringify(issue.input)})`,
});

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
  /** What a put does to a full session or trace (see CLEANUP_STRATEGIES). */
  cleanupStrategy: CleanupStrategy;
  /**
   * Whether a put may ask for a reference that never expires (`ttl: 'never'`). Such references still
   * count against every limit and may still be evicted from a full session or trace; only time does
   * not remove them.
   */
  allowNoExpiry: boolean;
  /**
   * How long a named version lives unless its save says otherwise (seconds); 0 = it does not expire.
   * Named versions are meant to last: LRU never evicts them, and their limits refuse instead.
   */
  nameTtlSeconds: number;
  /**
   * Rate limits (0 = off), in each process: the tenant's requests per second, its burst above that
   * (0 = twice the rate) and the request-body bytes it may send at once; the same for each token.
   */
  tenantRequestsPerSecond: number;
  tenantRequestBurst: number;
  tenantBytesInFlight: number;
  tokenRequestsPerSecond: number;
  tokenRequestBurst: number;
  tokenBytesInFlight: number;
}

/** The rate-limit part of a policy. */
export type RateLimitPolicy = Pick<
  Policy,
  | 'tenantRequestsPerSecond'
  | 'tenantRequestBurst'
  | 'tenantBytesInFlight'
  | 'tokenRequestsPerSecond'
  | 'tokenRequestBurst'
  | 'tokenBytesInFlight'
>;

const MiB = 1024 * 1024;

/** No rate limits: development and tests, unless configured. */
export const NO_RATE_LIMITS: RateLimitPolicy = {
  tenantRequestsPerSecond: 0,
  tenantRequestBurst: 0,
  tenantBytesInFlight: 0,
  tokenRequestsPerSecond: 0,
  tokenRequestBurst: 0,
  tokenBytesInFlight: 0,
};

/**
 * Production's rate limits: far above what an agent does (a few requests a second, a few puts at a
 * time), low enough that one runaway loop or one tenant cannot take a 2-core service from the rest.
 */
export const PRODUCTION_RATE_LIMITS: RateLimitPolicy = {
  tenantRequestsPerSecond: 500,
  tenantRequestBurst: 1000,
  tenantBytesInFlight: 1024 * MiB,
  tokenRequestsPerSecond: 100,
  tokenRequestBurst: 200,
  tokenBytesInFlight: 256 * MiB,
};

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
  allowNoExpiry: false,
  nameTtlSeconds: 0,
  ...NO_RATE_LIMITS,
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
    cleanupStrategy: CleanupStrategySchema,
    allowNoExpiry: z.boolean(),
    nameTtlSeconds: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
    tenantRequestsPerSecond: z.number().nonnegative().max(1e9),
    tenantRequestBurst: z.number().int().nonnegative().max(1e9),
    tenantBytesInFlight: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
    tokenRequestsPerSecond: z.number().nonnegative().max(1e9),
    tokenRequestBurst: z.number().int().nonnegative().max(1e9),
    tokenBytesInFlight: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
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
  if (p.maxTtlSeconds > MAX_TTL_CEILING_SECONDS)
    out.push(['maxTtlSeconds', `must be at most ${MAX_TTL_CEILING_SECONDS} (10 years)`]);
  if (p.defaultTtlSeconds > p.maxTtlSeconds) out.push(['defaultTtlSeconds', 'must not exceed the maximum TTL']);
  return out;
}

/** The policy of each tenant: the base, with that tenant's overrides on top. */
export function createPolicies(base: Policy, overrides: TenantPolicies = {}): (tenantId: string) => Policy {
  const merged = new Map(Object.entries(overrides).map(([tenant, o]) => [tenant, { ...base, ...o } as Policy]));
  return (tenantId) => merged.get(tenantId) ?? base;
}
