import { Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { describe, expect, it } from 'vitest';
import { ArtifactError, errors } from '../../core/errors.js';
import { createJsonLogger } from '../../core/logger.js';
import type { AppEnv } from '../context.js';
import { errorMapping, notFound, toArtifactError } from './error-mapping.js';

function appThrowing(err: unknown) {
  const lines: Record<string, unknown>[] = [];
  const a = new Hono<AppEnv>();
  a.get('/x', () => {
    throw err;
  });
  a.onError(errorMapping({ logger: createJsonLogger('info', (l) => lines.push(JSON.parse(l))) }));
  a.notFound(notFound);
  return { app: a, lines };
}

describe('error mapping', () => {
  it('answers an ArtifactError with its status, code, message and Retry-After', async () => {
    const res = await appThrowing(new ArtifactError('rate_limited', 'Slow down.', { retryAfter: 7 })).app.request('/x');
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('7');
    expect(await res.json()).toMatchObject({ code: 'rate_limited', message: 'Slow down.' });
  });

  it('adds WWW-Authenticate to a 401', async () => {
    const res = await appThrowing(errors.unauthorized('Missing Authorization header.')).app.request('/x');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
  });

  it("maps Hono's HTTPExceptions and a client's cut-off body to the closed codes", () => {
    expect(toArtifactError(new HTTPException(413, { message: 'big' })).code).toBe('payload_too_large');
    expect(toArtifactError(new HTTPException(401, { message: 'who' })).code).toBe('unauthorized');
    expect(toArtifactError(new HTTPException(400, { message: 'bad' })).code).toBe('bad_request');
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    expect(toArtifactError(reset).code).toBe('bad_request');
    expect(toArtifactError(new Error('aborted')).message).toMatch(/ended early/);
  });

  it('answers anything else with 503 backend_unavailable and logs it with its cause', async () => {
    const failure = new Error('disk on fire', { cause: new Error('EIO') });
    const { app, lines } = appThrowing(failure);
    const res = await app.request('/x', { headers: { 'X-Request-Id': 'r9' } });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('1');
    expect((await res.json()).code).toBe('backend_unavailable');
    expect(lines).toMatchObject([
      { level: 'error', msg: 'backend unavailable', error: 'Error: disk on fire', cause: 'Error: EIO' },
    ]);
  });

  it('answers a request no route takes with 404 pointing at /docs', async () => {
    const res = await appThrowing(new Error('unused')).app.request('/nowhere', { method: 'DELETE' });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ code: 'not_found', message: 'No route DELETE /nowhere. See /docs.' });
  });
});
