import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { errors } from '../../core/errors.js';
import { silentLogger } from '../../core/logger.js';
import type { Authenticator, Caller } from '../auth.js';
import type { AppEnv } from '../context.js';
import { authentication } from './authentication.js';
import { chain } from './chain.js';
import { errorMapping } from './error-mapping.js';

const tenant: Caller = { kind: 'jwt', role: 'tenant', actorId: 'u1', tenantId: 'acme', perms: new Set(['read']) };
const operator: Caller = { kind: 'api_key', role: 'operator', actorId: 'k1', tenantId: '', perms: new Set(['admin']) };

/** Knows two tokens; anything else is refused as the real authenticator refuses. */
const auth: Authenticator = {
  authenticate(authorization) {
    // As the real one answers a token verified moments ago: the caller itself, no promise.
    if (authorization === 'Bearer tenant-cached') return tenant;
    if (authorization === 'Bearer operator-cached') return operator;
    if (authorization === 'Bearer tenant') return Promise.resolve(tenant);
    if (authorization === 'Bearer operator') return Promise.resolve(operator);
    return Promise.reject(errors.unauthorized('Unknown token.'));
  },
};

function app() {
  const onError = errorMapping({ logger: silentLogger });
  const a = new Hono<AppEnv>();
  a.use('/v1/*', chain([authentication({ auth })], onError));
  a.get('/v1/*', (c) => c.json({ caller: c.get('caller')?.actorId ?? null }));
  a.onError(onError);
  return a;
}

describe('authentication', () => {
  it('admits a caller that comes back without a promise the same way, operator check included', async () => {
    const res = await app().request('/v1/artifacts/x', { headers: { Authorization: 'Bearer tenant-cached' } });
    expect(await res.json()).toEqual({ caller: 'u1' });
    const op = await app().request('/v1/artifacts/x', { headers: { Authorization: 'Bearer operator-cached' } });
    expect(op.status).toBe(403);
    const usage = await app().request('/v1/usage', { headers: { Authorization: 'Bearer operator-cached' } });
    expect(await usage.json()).toEqual({ caller: 'k1' });
  });

  it('sets the caller from the bearer token', async () => {
    const res = await app().request('/v1/artifacts/x', { headers: { Authorization: 'Bearer tenant' } });
    expect(await res.json()).toEqual({ caller: 'u1' });
  });

  it('refuses a missing or unknown token with 401 and WWW-Authenticate', async () => {
    for (const headers of [{}, { Authorization: 'Bearer nope' }] as Record<string, string>[]) {
      const res = await app().request('/v1/artifacts/x', { headers });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      expect((await res.json()).code).toBe('unauthorized');
    }
  });

  it('lets an operator key reach usage, events and admin only', async () => {
    const as = (path: string) => app().request(path, { headers: { Authorization: 'Bearer operator' } });
    for (const path of ['/v1/usage', '/v1/events', '/v1/admin/retention']) expect((await as(path)).status).toBe(200);
    const refused = await as('/v1/artifacts/x');
    expect(refused.status).toBe(403);
    expect((await refused.json()).message).toMatch(/operator key .* holds no artifacts/);
  });

  it('leaves signed download links to their route: no token, no caller', async () => {
    const res = await app().request('/v1/download/x?signature=s');
    expect(await res.json()).toEqual({ caller: null });
  });
});
