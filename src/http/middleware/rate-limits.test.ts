import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/logger.js';
import { createPolicies, DEFAULT_POLICY } from '../../core/policy.js';
import type { Caller } from '../auth.js';
import type { AppEnv } from '../context.js';
import { createRateLimiter } from '../rate-limit.js';
import { chain, type RequestStep } from './chain.js';
import { errorMapping } from './error-mapping.js';
import { rateLimits } from './rate-limits.js';

const caller: Caller = { kind: 'jwt', role: 'tenant', actorId: 'u', tenantId: 'acme', perms: new Set(['write']) };
const OFF = { requestsPerSecond: 0, requestBurst: 0, bytesInFlight: 0 };

/** A caller set as authentication would, then the rate limits, over a limiter whose clock stands still. */
function app(tenant: { requestsPerSecond: number; requestBurst: number; bytesInFlight: number }) {
  const limiter = createRateLimiter({ limitsOf: () => ({ tenant, token: OFF }), now: () => 0 });
  const authenticated: RequestStep = { name: 'caller', enter: (c) => void c.set('caller', caller) };
  const onError = errorMapping({ logger: silentLogger });
  const a = new Hono<AppEnv>();
  let release: () => void = () => {};
  const held = new Promise<void>((r) => (release = r));
  a.use('/v1/*', chain([authenticated, rateLimits({ limiter, policies: createPolicies(DEFAULT_POLICY) })], onError));
  a.get('/v1/x', (c) => c.text('ok'));
  // A put whose handler waits until the test lets it finish: its body's bytes stay reserved until then.
  a.post('/v1/slow', async (c) => {
    await held;
    return c.text('stored');
  });
  a.post('/v1/fast', (c) => c.text('stored'));
  a.onError(onError);
  return { app: a, release };
}

describe('rate limits', () => {
  it("refuses a request over the tenant's rate with 429 and Retry-After", async () => {
    const { app: a } = app({ requestsPerSecond: 1, requestBurst: 1, bytesInFlight: 0 });
    expect((await a.request('/v1/x')).status).toBe(200);
    const refused = await a.request('/v1/x');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await refused.json()).code).toBe('rate_limited');
  });

  it('holds a body’s declared bytes until its answer, then gives them back', async () => {
    const { app: a, release } = app({ requestsPerSecond: 0, requestBurst: 0, bytesInFlight: 100 });
    const put = (path: string, bytes: number) =>
      a.request(path, { method: 'POST', body: 'x'.repeat(bytes), headers: { 'Content-Length': String(bytes) } });
    const slow = put('/v1/slow', 80);
    // 80 of 100 bytes are in flight: 30 more do not fit, 20 do.
    expect((await put('/v1/fast', 30)).status).toBe(429);
    expect((await put('/v1/fast', 20)).status).toBe(200);
    release();
    expect((await slow).status).toBe(200);
    expect((await put('/v1/fast', 90)).status).toBe(200);
  });

  it('meters nothing without a caller (signed links are admitted by their route)', async () => {
    const limiter = createRateLimiter({
      limitsOf: () => ({ tenant: { requestsPerSecond: 1, requestBurst: 1, bytesInFlight: 0 }, token: OFF }),
      now: () => 0,
    });
    const a = new Hono<AppEnv>();
    a.use(
      '*',
      chain(
        [rateLimits({ limiter, policies: createPolicies(DEFAULT_POLICY) })],
        errorMapping({ logger: silentLogger }),
      ),
    );
    a.get('/v1/download/x', (c) => c.text('ok'));
    for (let i = 0; i < 3; i++) expect((await a.request('/v1/download/x')).status).toBe(200);
  });
});
