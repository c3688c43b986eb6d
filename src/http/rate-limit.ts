import { ArtifactError } from '../core/errors.js';
import { sha256Hex } from '../core/hash.js';
import type { RateLimits } from '../core/limits.js';

/** Why a request was refused: which bucket was empty. */
export type RateLimitReason = 'tenant_requests' | 'token_requests' | 'tenant_bytes' | 'token_bytes';

/** A tenant's refusals since the process started: what the operator's usage report shows. */
export interface TenantRefusals {
  tenantId: string;
  requests: number;
  bytes: number;
}

/** The Workers Rate Limiting API's binding (wrangler.toml `[[ratelimits]]`). */
export interface RateLimitBinding {
  limit(options: { key: string }): Promise<{ success: boolean }>;
}

/**
 * Request rates counted outside this process, across a Worker's isolates, by Rate Limiting API
 * bindings. Their limit and period are set in wrangler.toml, one for every tenant; a tenant whose
 * policy overrides a rate is counted by the in-process buckets instead (`covers`).
 */
export interface SharedRates {
  tenant?: RateLimitBinding;
  token?: RateLimitBinding;
  /** The bindings' period: what Retry-After says after a refusal. */
  periodSeconds: number;
  /** Which of this tenant's rates the bindings count. */
  covers: (tenantId: string) => { tenant: boolean; token: boolean };
}

/**
 * Tenants' request buckets kept in the database every replica shares (Postgres): a replica leases a
 * few tokens at a time (`lease`) and spends them itself, so a tenant's requests through any number
 * of replicas stay within one bucket: its rate, plus its burst.
 */
export interface RateLeases {
  lease(key: string, ratePerSecond: number, burst: number, want: number): Promise<{ granted: number; tokens: number }>;
}

/** How long leased tokens may be spent: unspent ones are dropped, so they never add up to a second burst. */
const LEASE_LIFE_MS = 1000;
/** Tokens a lease asks for: 50 ms of the rate (one database round trip per that many requests per replica). */
const leaseBatch = (l: RateLimits) => Math.max(1, Math.min(burstOf(l), Math.ceil(l.requestsPerSecond / 20)));

export interface RateLimiterOptions {
  /** Each tenant's limits: its own bucket, and the limits of each of its tokens. */
  limitsOf: (tenantId: string) => { tenant: RateLimits; token: RateLimits };
  /** Per-token buckets kept (least recently used go first). Default 10,000. */
  maxTokens?: number;
  /** Tenants kept (buckets and refusal counts). Default 100,000. */
  maxTenants?: number;
  /** Told of every refusal (metrics: counts by reason, never by tenant). */
  onRefusal?: (reason: RateLimitReason) => void;
  /** Request rates counted by bindings (Workers); then `admitShared` is the call to make. */
  shared?: SharedRates;
  /** Tenants' request rates leased from buckets in the shared database (Postgres); `check` then awaits a lease when it must. */
  leases?: RateLeases;
  now?: () => number;
}

/** A request let through: `release` gives back the bytes it reserved once its body was read. */
export interface Admission {
  release(): void;
}

/** What a token bucket and an in-flight counter keep for one tenant or one token. */
interface Meter {
  tokens: number;
  at: number;
  inFlight: number;
}

const NOTHING: Admission = { release() {} };
const enabled = (l: RateLimits) => l.requestsPerSecond > 0 || l.bytesInFlight > 0;

/**
 * Request rate and bytes in flight, per tenant and per token, in this process. Requests draw on
 * token buckets (a steady rate with a burst on top); request bodies reserve their declared size
 * against an in-flight budget until they have been read. A request is let through only when every
 * bucket it touches has room, and takes from all of them or none. A refusal costs a map lookup: no
 * body is read and nothing is written.
 */
export function createRateLimiter(options: RateLimiterOptions) {
  const now = options.now ?? Date.now;
  const maxTokens = options.maxTokens ?? 10_000;
  const maxTenants = options.maxTenants ?? 100_000;
  const tenants = new Map<string, Meter>();
  const tokens = new Map<string, Meter>();
  const refusals = new Map<string, TenantRefusals>();

  /**
   * The meter of `key`, made most recently used; the least recently used goes past `max`. Below
   * half of `max` nothing is evicted soon, so a hit skips the re-insertion (the hot path's cost).
   */
  function meterOf(map: Map<string, Meter>, key: string, max: number, limits: RateLimits, t: number): Meter {
    let m = map.get(key);
    if (m) {
      if (map.size < max / 2) return m;
      map.delete(key);
    } else {
      m = { tokens: burstOf(limits), at: t, inFlight: 0 };
      if (map.size >= max) map.delete(map.keys().next().value!);
    }
    map.set(key, m);
    return m;
  }

  /** Seconds until one request fits, or 0 when it fits now (the bucket is refilled up to `t` first). */
  function waitFor(m: Meter, limits: RateLimits, t: number): number {
    if (limits.requestsPerSecond <= 0) return 0;
    m.tokens = Math.min(burstOf(limits), m.tokens + ((t - m.at) / 1000) * limits.requestsPerSecond);
    m.at = t;
    return m.tokens >= 1 ? 0 : (1 - m.tokens) / limits.requestsPerSecond;
  }

  const bytesFit = (m: Meter, limits: RateLimits, bytes: number) =>
    limits.bytesInFlight <= 0 || bytes === 0 || m.inFlight === 0 || m.inFlight + bytes <= limits.bytesInFlight;

  function refuse(
    tenantId: string,
    reason: RateLimitReason,
    limits: RateLimits | 'shared',
    retryAfterSeconds: number,
  ): never {
    options.onRefusal?.(reason);
    if (tenantId !== '') {
      let r = refusals.get(tenantId);
      if (!r) {
        if (refusals.size >= maxTenants) refusals.delete(refusals.keys().next().value!);
        r = { tenantId, requests: 0, bytes: 0 };
        refusals.set(tenantId, r);
      }
      if (reason.endsWith('_requests')) r.requests++;
      else r.bytes++;
    }
    const retryAfter = Math.max(1, Math.ceil(retryAfterSeconds));
    const whose = reason.startsWith('tenant') ? 'This tenant' : 'This token';
    const rate =
      limits === 'shared'
        ? 'counted across the service'
        : `${limits.requestsPerSecond}/s, bursts of ${burstOf(limits)}`;
    const message =
      reason.endsWith('_requests') || limits === 'shared'
        ? `${whose} is over its request rate (${rate}). Retry after ${retryAfter} s, and slow down; if this is steady traffic, ask the operator to raise it.`
        : `${whose} is already sending ${limits.bytesInFlight} bytes of request bodies at once. Retry after ${retryAfter} s, when a put in progress has finished, or send fewer at a time.`;
    throw new ArtifactError('rate_limited', message, { retryAfter, details: { reason, retryAfter } });
  }

  function admit(tenantId: string, tokenKey: string | undefined, bytes: number): Admission {
    return limiter.admit(tenantId, tokenKey, bytes);
  }

  /** Tokens leased from the shared buckets, per tenant, and the lease in flight. */
  const leased = new Map<
    string,
    { tokens: number; at: number; pending?: Promise<{ granted: number; tokens: number }> }
  >();

  /** Takes one of the tenant's request tokens from what this process leased, leasing more when none is left. */
  async function takeLeased(leases: RateLeases, tenantId: string, limits: RateLimits): Promise<void> {
    let m = leased.get(tenantId);
    if (!m) {
      if (leased.size >= maxTenants) leased.delete(leased.keys().next().value!);
      m = { tokens: 0, at: 0 };
      leased.set(tenantId, m);
    }
    for (;;) {
      if (now() - m.at > LEASE_LIFE_MS) m.tokens = 0;
      if (m.tokens >= 1) {
        m.tokens -= 1;
        return;
      }
      const meter = m;
      meter.pending ??= leases
        .lease(`tenant:${tenantId}`, limits.requestsPerSecond, burstOf(limits), leaseBatch(limits))
        .then((r) => {
          meter.tokens += r.granted;
          meter.at = now();
          return r;
        })
        .finally(() => {
          meter.pending = undefined;
        });
      const r = await meter.pending;
      if (r.granted < 1 && meter.tokens < 1)
        refuse(tenantId, 'tenant_requests', limits, (1 - r.tokens) / limits.requestsPerSecond);
    }
  }

  const limiter = {
    /** `admitShared` when bindings count the rates, else `admit` (synchronous: nothing to wait for). */
    check(tenantId: string, tokenKey: string | undefined, bytes: number): Admission | Promise<Admission> {
      if (options.shared) return limiter.admitShared(tenantId, tokenKey, bytes);
      if (options.leases && tenantId !== '') {
        const tenantLimits = options.limitsOf(tenantId).tenant;
        if (tenantLimits.requestsPerSecond > 0)
          return takeLeased(options.leases, tenantId, tenantLimits).then(() =>
            limiter.admit(tenantId, tokenKey, bytes, true),
          );
      }
      return admit(tenantId, tokenKey, bytes);
    },
    /**
     * `admit`, after the bindings have counted the request (a refusal there is final; what the
     * bindings took is not given back when a later bucket refuses).
     */
    async admitShared(tenantId: string, tokenKey: string | undefined, bytes: number): Promise<Admission> {
      const shared = options.shared;
      if (shared) {
        const covers = shared.covers(tenantId);
        if (
          shared.tenant &&
          covers.tenant &&
          tenantId !== '' &&
          !(await shared.tenant.limit({ key: `tenant:${tenantId}` })).success
        ) {
          refuse(tenantId, 'tenant_requests', 'shared', shared.periodSeconds);
        }
        if (
          shared.token &&
          covers.token &&
          tokenKey !== undefined &&
          !(await shared.token.limit({ key: `token:${await sha256Hex(new TextEncoder().encode(tokenKey))}` })).success
        ) {
          refuse(tenantId, 'token_requests', 'shared', shared.periodSeconds);
        }
      }
      return admit(tenantId, tokenKey, bytes);
    },
    /**
     * Lets one request of `tenantId` (`''`: an operator, with no tenant bucket) sent with `tokenKey`
     * through, reserving `bytes` of request body; or throws rate_limited with Retry-After.
     * `tenantRateTaken`: the tenant's request token came from a lease (check), not this process's bucket.
     */
    admit(tenantId: string, tokenKey: string | undefined, bytes: number, tenantRateTaken = false): Admission {
      const limits = options.limitsOf(tenantId);
      const useTenant = tenantId !== '' && enabled(limits.tenant);
      const useToken = tokenKey !== undefined && enabled(limits.token);
      if (!useTenant && !useToken) return NOTHING;
      const t = now();
      const tenant = useTenant ? meterOf(tenants, tenantId, maxTenants, limits.tenant, t) : undefined;
      const token = useToken ? meterOf(tokens, tokenKey, maxTokens, limits.token, t) : undefined;
      if (tenant && !tenantRateTaken) {
        const wait = waitFor(tenant, limits.tenant, t);
        if (wait > 0) refuse(tenantId, 'tenant_requests', limits.tenant, wait);
      }
      if (token) {
        const wait = waitFor(token, limits.token, t);
        if (wait > 0) refuse(tenantId, 'token_requests', limits.token, wait);
      }
      if (tenant && !bytesFit(tenant, limits.tenant, bytes)) refuse(tenantId, 'tenant_bytes', limits.tenant, 1);
      if (token && !bytesFit(token, limits.token, bytes)) refuse(tenantId, 'token_bytes', limits.token, 1);
      // Every bucket has room: take from all of them.
      if (tenant && !tenantRateTaken && limits.tenant.requestsPerSecond > 0) tenant.tokens -= 1;
      if (token && limits.token.requestsPerSecond > 0) token.tokens -= 1;
      if (bytes === 0) return NOTHING;
      const held = [tenant, token].filter((m): m is Meter => m !== undefined);
      for (const m of held) m.inFlight += bytes;
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          for (const m of held) m.inFlight -= bytes;
        },
      };
    },
    /** Refusals per tenant since this process started, most refused first. */
    refusals(tenantId?: string): TenantRefusals[] {
      const rows =
        tenantId === undefined ? [...refusals.values()] : refusals.has(tenantId) ? [refusals.get(tenantId)!] : [];
      return rows
        .map((r) => ({ ...r }))
        .sort((a, b) => b.requests + b.bytes - (a.requests + a.bytes) || (a.tenantId < b.tenantId ? -1 : 1));
    },
  };
  return limiter;
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;

function burstOf(l: RateLimits): number {
  return l.requestBurst > 0 ? l.requestBurst : Math.max(1, 2 * l.requestsPerSecond);
}
