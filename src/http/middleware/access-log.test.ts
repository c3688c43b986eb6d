import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { createJsonLogger } from '../../core/logger.js';
import type { Caller } from '../auth.js';
import type { AppEnv } from '../context.js';
import type { Metrics } from '../metrics.js';
import { accessLog } from './access-log.js';
import { chain, type RequestStep } from './chain.js';
import { errorMapping } from './error-mapping.js';
import { requestContext } from './request-context.js';

const caller: Caller = { kind: 'jwt', role: 'tenant', actorId: 'u', tenantId: 'acme', perms: new Set(['read']) };

function appWith(step: RequestStep | undefined) {
  const app = new Hono<AppEnv>();
  const onError = errorMapping({ logger: createJsonLogger('silent') });
  app.use('*', chain(step ? [requestContext(), step] : [requestContext()], onError));
  app.get('/v1/artifacts/:id', (c) => {
    c.set('caller', caller);
    return c.text('bytes');
  });
  app.onError(onError);
  return app;
}

/** Counts what the step reports to metrics. */
function countingMetrics() {
  const requests: [string, string, number][] = [];
  const metrics = {
    request: (method: string, route: string, status: number) => void requests.push([method, route, status]),
  } as unknown as Metrics;
  return { metrics, requests };
}

describe('access log', () => {
  it('logs one request line per answer, with the tenant once the caller is known', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createJsonLogger('info', (l) => lines.push(JSON.parse(l) as Record<string, unknown>));
    const app = appWith(accessLog({ logger }));
    await app.request('/v1/artifacts/a', { headers: { 'X-Request-Id': 'r1' } });
    await app.request('/nowhere', { headers: { 'X-Request-Id': 'r2' } });
    expect(
      lines.map(({ time: _t, durationMs, ...rest }) => ({ ...rest, timed: typeof durationMs === 'number' })),
    ).toEqual([
      {
        level: 'info',
        msg: 'request',
        requestId: 'r1',
        method: 'GET',
        path: '/v1/artifacts/a',
        status: 200,
        tenant: 'acme',
        timed: true,
      },
      { level: 'info', msg: 'request', requestId: 'r2', method: 'GET', path: '/nowhere', status: 404, timed: true },
    ]);
  });

  it('hands lines to a logger that formats them later', async () => {
    const later: string[] = [];
    const base = createJsonLogger('info', () => {});
    const logger = { ...base, infoLater: (msg: string) => void later.push(msg) };
    await appWith(accessLog({ logger })).request('/v1/artifacts/a');
    expect(later).toEqual(['request']);
  });

  it('counts each request by its route pattern, and requests no route took as unmatched', async () => {
    const { metrics, requests } = countingMetrics();
    const app = appWith(accessLog({ logger: createJsonLogger('warn'), metrics }));
    await app.request('/v1/artifacts/a');
    await app.request('/nowhere');
    expect(requests).toEqual([
      ['GET', '/v1/artifacts/:id', 200],
      ['GET', 'unmatched', 404],
    ]);
  });

  it('is left out of the chain when there is nothing to log or count', () => {
    expect(accessLog({ logger: createJsonLogger('warn') })).toBeUndefined();
    expect(accessLog({ logger: createJsonLogger('silent') })).toBeUndefined();
  });
});
