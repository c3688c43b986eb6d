/**
 * Rate limits on Workers: each tenant's requests counted across isolates by the Rate Limiting API
 * binding (Miniflare's, with a limit of 3 per 10 s from vitest.config.ts), and a tenant whose policy
 * overrides its rate counted in the isolate instead.
 */
import { describe, expect, it } from 'vitest';
import { mintToken } from '../../src/http/tokens.js';
import { silentLogger } from '../../src/core/logger.js';
import { createWorkerApp, type WorkerEnv } from '../../src/worker.js';
import { env } from './bindings.js';

const SECRET = { kid: 'k1', secret: 'k1-secret-for-tests-0123456789abcdef' };
const testEnv = env as typeof env & { TEST_RATE_LIMITER: WorkerEnv['TENANT_RATE_LIMITER'] };

describe('rate limits on Workers', () => {
  it("counts a tenant's requests across isolates through the binding; another tenant has its own count", async () => {
    const bound: WorkerEnv = { ...env, TENANT_RATE_LIMITER: testEnv.TEST_RATE_LIMITER };
    // Two isolates: two apps, nothing shared between them but the binding.
    const first = await createWorkerApp(bound, { logger: silentLogger });
    const second = await createWorkerApp(bound, { logger: silentLogger });
    // Counts last 10 s and outlive a test: a tenant of its own.
    const tenant = `t-${crypto.randomUUID()}`;
    const list = async (app: typeof first, who: string) =>
      app.app.request('/v1/artifacts', {
        headers: { Authorization: `Bearer ${await mintToken(SECRET, { tenant: who, perms: ['read'] })}` },
      });

    expect((await list(first, tenant)).status).toBe(200);
    expect((await list(second, tenant)).status).toBe(200);
    expect((await list(first, tenant)).status).toBe(200);
    const refused = await list(second, tenant);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('10');
    expect(await refused.json()).toMatchObject({ code: 'rate_limited', details: { reason: 'tenant_requests' } });
    expect((await list(first, `other-${tenant}`)).status).toBe(200);
    expect(first.app).not.toBe(second.app);
  });

  it('a tenant whose policy overrides its rate is counted in the isolate, with its own limit', async () => {
    const tenant = `vip-${crypto.randomUUID()}`;
    const bound: WorkerEnv = {
      ...env,
      TENANT_RATE_LIMITER: testEnv.TEST_RATE_LIMITER,
      ARTIFACT_STORE_TENANT_POLICIES: JSON.stringify({
        [tenant]: { tenantRequestsPerSecond: 0.1, tenantRequestBurst: 5 },
      }),
    };
    const w = await createWorkerApp(bound, { logger: silentLogger });
    const token = await mintToken(SECRET, { tenant, perms: ['read'] });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await w.app.request('/v1/artifacts', { headers: { Authorization: `Bearer ${token}` } })).status);
    // Five (its burst, past the binding's three), then its own rate says wait ten seconds.
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
  });
});
