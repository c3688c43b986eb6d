import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../core/logger.js';
import type { AppEnv } from '../context.js';
import { bodyLimits } from './body-limits.js';
import { chain } from './chain.js';
import { errorMapping } from './error-mapping.js';

function app(maxRequestBodyBytes?: number) {
  const onError = errorMapping({ logger: silentLogger });
  const a = new Hono<AppEnv>();
  let read = 0;
  a.use(
    '*',
    chain([bodyLimits({ maxArtifactBytes: 1000, ...(maxRequestBodyBytes ? { maxRequestBodyBytes } : {}) })], onError),
  );
  a.post('/v1/artifacts', async (c) => {
    read += (await c.req.arrayBuffer()).byteLength;
    return c.text('stored', 201);
  });
  a.get('/v1/artifacts', (c) => c.text('listed'));
  a.onError(onError);
  return { app: a, read: () => read };
}

const post = (a: Hono<AppEnv>, length: string, body = 'x') =>
  a.request('/v1/artifacts', { method: 'POST', body, headers: { 'Content-Length': length } });

describe('body limits', () => {
  it('refuses a declared length over the largest artifact with 413 payload_too_large, reading nothing', async () => {
    const t = app();
    const res = await post(t.app, '1001');
    expect(res.status).toBe(413);
    expect((await res.json()).code).toBe('payload_too_large');
    expect(t.read()).toBe(0);
  });

  it("refuses a declared length over the platform's limit with 413 naming direct uploads", async () => {
    const res = await post(app(500).app, '600');
    expect(res.status).toBe(413);
    const body = await res.json();
    expect(body.code).toBe('payload_too_large');
    expect(body.details).toEqual({ limitBytes: 500, reason: 'request_body_limit' });
    expect(body.message).toMatch(/direct upload: POST \/v1\/uploads/);
  });

  it('lets through bodies within the limits, without a length, and requests without bodies', async () => {
    const t = app(500);
    expect((await post(t.app, '1')).status).toBe(201);
    expect((await t.app.request('/v1/artifacts', { method: 'POST', body: 'abc' })).status).toBe(201);
    expect((await t.app.request('/v1/artifacts')).status).toBe(200);
  });
});
