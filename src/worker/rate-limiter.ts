/** Request rates on Workers: across isolates through the Rate Limiting API bindings, else per isolate. */
import type { Config } from '../core/config.js';
import { readTenantPolicies } from '../core/config.js';
import type { Policy } from '../core/policy.js';
import { rateLimitsOf } from '../core/limits.js';
import { createRateLimiter } from '../http/rate-limit.js';
import type { WorkerEnv } from './config.js';

/** Requests per second → the bindings' period (wrangler.toml: `simple = { limit, period = 10 }`). */
const RATE_LIMIT_PERIOD_SECONDS = 10;

/**
 * Request rates across isolates through the Rate Limiting API bindings when they are bound (their
 * limit is wrangler.toml's, the same for every tenant); a tenant whose policy overrides a rate, and
 * every bytes-in-flight budget, are counted in this isolate's buckets.
 */
export function workerRateLimiter(env: WorkerEnv, config: Config, policies: (tenantId: string) => Policy) {
  const overrides = readTenantPolicies(config.tenantPolicies);
  const covers = (tenantId: string) => {
    const o = overrides[tenantId] ?? {};
    return {
      tenant:
        env.TENANT_RATE_LIMITER !== undefined &&
        o.tenantRequestsPerSecond === undefined &&
        o.tenantRequestBurst === undefined,
      token:
        env.TOKEN_RATE_LIMITER !== undefined &&
        o.tokenRequestsPerSecond === undefined &&
        o.tokenRequestBurst === undefined,
    };
  };
  const limitsOf = (tenantId: string) => {
    const limits = rateLimitsOf(policies(tenantId));
    const shared = covers(tenantId);
    // What a binding counts is not counted again here.
    return {
      tenant: shared.tenant ? { ...limits.tenant, requestsPerSecond: 0 } : limits.tenant,
      token: shared.token ? { ...limits.token, requestsPerSecond: 0 } : limits.token,
    };
  };
  const bound = env.TENANT_RATE_LIMITER !== undefined || env.TOKEN_RATE_LIMITER !== undefined;
  return createRateLimiter({
    limitsOf,
    ...(bound
      ? {
          shared: {
            tenant: env.TENANT_RATE_LIMITER,
            token: env.TOKEN_RATE_LIMITER,
            periodSeconds: RATE_LIMIT_PERIOD_SECONDS,
            covers,
          },
        }
      : {}),
  });
}
