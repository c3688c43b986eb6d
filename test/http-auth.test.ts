import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/service/api-keys.js';
import { bearer, createTestApp, HMAC_KEYS, putArtifact, RUNTIME, type TestApp } from './helpers/app.js';

let t: TestApp;

beforeEach(async () => {
  t = await createTestApp();
});

afterEach(async () => {
  await t.cleanup();
});

const now = () => Math.floor(Date.now() / 1000);
const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function hs256(payload: JWTPayload, opts: { kid?: string; secret?: string; alg?: string } = {}) {
  const header: { alg: string; kid?: string; typ: string } = { alg: opts.alg ?? 'HS256', typ: 'JWT' };
  if (opts.kid !== '') header.kid = opts.kid ?? 'k1';
  return new SignJWT(payload)
    .setProtectedHeader(header)
    .sign(new TextEncoder().encode(opts.secret ?? HMAC_KEYS[0].secret));
}

async function expectUnauthorized(res: Response, message?: RegExp) {
  expect(res.status).toBe(401);
  expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
  const body = await res.json();
  expect(body.code).toBe('unauthorized');
  expect(typeof body.message).toBe('string');
  if (message) expect(body.message).toMatch(message);
}

const list = (app: TestApp['app'], authorization?: string) =>
  app.request('/v1/artifacts', { headers: authorization === undefined ? {} : { Authorization: authorization } });

describe('bearer tokens', () => {
  it('a valid token reaches the API', async () => {
    const res = await list(t.app, `Bearer ${await t.token({ tenant: 'acme' })}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ items: [] });
  });

  it('missing Authorization → 401 with WWW-Authenticate, on every /v1 route', async () => {
    await expectUnauthorized(await list(t.app), /Missing Authorization/);
    for (const [method, path] of [
      ['POST', '/v1/artifacts'],
      ['GET', '/v1/artifacts/art_0123456789abcdef01234567'],
      ['HEAD', '/v1/artifacts/art_0123456789abcdef01234567'],
      ['GET', '/v1/artifacts/x/meta'],
      ['DELETE', '/v1/artifacts/x'],
    ] as const) {
      const res = await t.app.request(path, { method, ...(method === 'POST' ? { body: 'x' } : {}) });
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
  });

  it.each(['Basic dXNlcjpwYXNz', 'Bearer', 'Bearer ', 'Bearer a b', 'Token abc', 'bearer'])(
    'malformed header %j → 401',
    async (header) => {
      await expectUnauthorized(await list(t.app, header));
    },
  );

  it('is case-insensitive about the scheme', async () => {
    const res = await list(t.app, `bearer ${await t.token({ tenant: 'acme' })}`);
    expect(res.status).toBe(200);
  });

  it.each(['garbage', 'a.b.c', 'eyJhbGciOiJIUzI1NiJ9.e30', 'ask_short'])('garbage token %j → 401', async (token) => {
    await expectUnauthorized(await list(t.app, `Bearer ${token}`));
  });

  it('expired token → 401', async () => {
    await expectUnauthorized(
      await list(t.app, `Bearer ${await t.token({ tenant: 'acme' }, { ttlSeconds: -120 })}`),
      /expired/,
    );
  });

  it('a remembered token still expires on time, and every spelling of its header is accepted', async () => {
    // exp two seconds ahead: the verification is remembered until exp, never past it.
    const token = await hs256({ tenant: 'acme', perms: ['read'], exp: now() + 2 });
    for (const header of [`Bearer ${token}`, `Bearer ${token}`, `bearer  ${token}`, `Bearer ${token} `]) {
      expect((await list(t.app, header)).status, header.slice(0, 12)).toBe(200);
    }
    await new Promise((r) => setTimeout(r, 2100));
    await expectUnauthorized(await list(t.app, `Bearer ${token}`), /expired/);
    await expectUnauthorized(await list(t.app, `bearer  ${token}`), /expired/);
  });

  it('token without exp → 401', async () => {
    const token = await hs256({ tenant: 'acme', perms: ['read'], iat: now() });
    await expectUnauthorized(await list(t.app, `Bearer ${token}`), /exp/);
  });

  it('wrong signature → 401', async () => {
    const token = await hs256(
      { tenant: 'acme', exp: now() + 600 },
      { secret: 'some-other-secret-of-sufficient-length' },
    );
    await expectUnauthorized(await list(t.app, `Bearer ${token}`), /signature/);
    // A valid token with a byte of its signature changed.
    const good = await t.token({ tenant: 'acme' });
    const last = good.at(-2) === 'A' ? 'B' : 'A';
    await expectUnauthorized(await list(t.app, `Bearer ${good.slice(0, -2)}${last}${good.at(-1)}`));
    // A valid signature over a changed payload.
    const [h, , s] = good.split('.');
    await expectUnauthorized(
      await list(t.app, `Bearer ${h}.${b64url({ tenant: 'other', perms: ['admin'], exp: now() + 600 })}.${s}`),
    );
  });

  it('unknown kid → 401; no kid with several keys configured → 401', async () => {
    const unknown = await hs256({ tenant: 'acme', exp: now() + 600 }, { kid: 'k9' });
    await expectUnauthorized(await list(t.app, `Bearer ${unknown}`), /k9/);
    const noKid = await hs256({ tenant: 'acme', exp: now() + 600 }, { kid: '' });
    await expectUnauthorized(await list(t.app, `Bearer ${noKid}`));
  });

  it('alg none (an unsigned JWT) → 401', async () => {
    const payload = { tenant: 'acme', perms: ['read', 'write', 'admin'], exp: now() + 600 };
    for (const header of [
      { alg: 'none', typ: 'JWT' },
      { alg: 'none', kid: 'k1' },
      { alg: 'None', kid: 'k1' },
    ]) {
      const token = `${b64url(header)}.${b64url(payload)}.`;
      await expectUnauthorized(await list(t.app, `Bearer ${token}`));
      // Also with a junk signature part.
      await expectUnauthorized(await list(t.app, `Bearer ${token}c2ln`));
    }
  });

  it('rotation: tokens signed by either configured key (k1, k2) are accepted', async () => {
    const k1 = await t.token({ tenant: 'acme', perms: ['read', 'write'] }, { kid: 'k1' });
    const k2 = await t.token({ tenant: 'acme', perms: ['read', 'write'] }, { kid: 'k2' });
    const { res, json } = await putArtifact(t.app, k1, 'rotated');
    expect(res.status).toBe(201);
    const read = await t.app.request(`/v1/artifacts/${json.id}`, { headers: bearer(k2) });
    expect(read.status).toBe(200);
    expect(await read.text()).toBe('rotated');
    // k2's kid with k1's secret is a bad signature.
    const crossed = await hs256({ tenant: 'acme', exp: now() + 600 }, { kid: 'k2', secret: HMAC_KEYS[0].secret });
    await expectUnauthorized(await list(t.app, `Bearer ${crossed}`));
  });

  it('a token missing the tenant claim, or with bad claims, → 401', async () => {
    await expectUnauthorized(
      await list(t.app, `Bearer ${await hs256({ sub: 'u', perms: ['read'], exp: now() + 600 })}`),
      /tenant/,
    );
    await expectUnauthorized(await list(t.app, `Bearer ${await hs256({ tenant: '', exp: now() + 600 })}`), /tenant/);
    await expectUnauthorized(
      await list(t.app, `Bearer ${await hs256({ tenant: 'acme', perms: ['root'], exp: now() + 600 })}`),
      /perms/,
    );
    await expectUnauthorized(
      await list(t.app, `Bearer ${await hs256({ tenant: 42, exp: now() + 600 } as JWTPayload)}`),
      /tenant/,
    );
  });

  it('perms: a token without perms is read-only (POST → 403 forbidden)', async () => {
    const writer = await t.token({ tenant: 'acme', perms: ['read', 'write'] });
    const { json } = await putArtifact(t.app, writer, 'readable');
    const reader = await hs256({ tenant: 'acme', exp: now() + 600 });
    const get = await t.app.request(`/v1/artifacts/${json.id}`, { headers: bearer(reader) });
    expect(get.status).toBe(200);
    expect(await get.text()).toBe('readable');
    const put = await putArtifact(t.app, reader, 'nope');
    expect(put.res.status).toBe(403);
    expect(put.json.code).toBe('forbidden');
    expect(put.json.message).toMatch(/write/);
    const writeOnly = await t.token({ tenant: 'acme', perms: ['write'] });
    const denied = await t.app.request(`/v1/artifacts/${json.id}`, { headers: bearer(writeOnly) });
    expect(denied.status).toBe(403);
    expect((await denied.json()).code).toBe('forbidden');
  });
});

describe('issuer and audience', () => {
  it('are checked when configured', async () => {
    const app = await createTestApp({ issuer: 'https://issuer.example', audience: 'artifact-store' });
    try {
      const good = await app.token({ tenant: 'acme' });
      expect((await list(app.app, `Bearer ${good}`)).status).toBe(200);
      await expectUnauthorized(
        await list(app.app, `Bearer ${await app.token({ tenant: 'acme' }, { issuer: 'https://evil.example' })}`),
        /iss/,
      );
      await expectUnauthorized(
        await list(app.app, `Bearer ${await app.token({ tenant: 'acme' }, { audience: 'someone-else' })}`),
        /aud/,
      );
      const bare = await hs256({ tenant: 'acme', exp: now() + 600 });
      await expectUnauthorized(await list(app.app, `Bearer ${bare}`));
    } finally {
      await app.cleanup();
    }
  });

  it('are not required when not configured', async () => {
    const token = await t.token({ tenant: 'acme' }, { issuer: 'anyone', audience: 'anything' });
    expect((await list(t.app, `Bearer ${token}`)).status).toBe(200);
  });
});

describe('public keys (JWKS)', () => {
  it('accepts RS256 from the matching private key and refuses HS256 when only a JWKS is configured', async () => {
    const { publicKey, privateKey } = await generateKeyPair('RS256');
    const other = await generateKeyPair('RS256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'rsa-1', alg: 'RS256', use: 'sig' };
    const app = await createTestApp({ hmacSecrets: [], jwks: { keys: [jwk] } });
    try {
      const rs = (key: CryptoKey, kid: string, payload: JWTPayload = { tenant: 'acme', perms: ['read', 'write'] }) =>
        new SignJWT(payload)
          .setProtectedHeader({ alg: 'RS256', kid })
          .setExpirationTime(now() + 600)
          .sign(key);

      const good = await rs(privateKey, 'rsa-1');
      const put = await putArtifact(app.app, good, 'signed by rsa');
      expect(put.res.status).toBe(201);
      expect(put.json.scope).toEqual({ tenantId: 'acme' });

      // An HS256 token, even one signed with the public key's bytes, is refused.
      await expectUnauthorized(
        await list(app.app, `Bearer ${await hs256({ tenant: 'acme', exp: now() + 600 })}`),
        /HS256/,
      );
      const confused = await new SignJWT({ tenant: 'acme' })
        .setProtectedHeader({ alg: 'HS256', kid: 'rsa-1' })
        .setExpirationTime(now() + 600)
        .sign(new TextEncoder().encode(JSON.stringify(jwk)));
      await expectUnauthorized(await list(app.app, `Bearer ${confused}`));

      // Another key under the same kid, or an unknown kid, is refused.
      await expectUnauthorized(await list(app.app, `Bearer ${await rs(other.privateKey, 'rsa-1')}`));
      await expectUnauthorized(await list(app.app, `Bearer ${await rs(privateKey, 'rsa-2')}`));
      // exp is still required.
      const noExp = await new SignJWT({ tenant: 'acme' })
        .setProtectedHeader({ alg: 'RS256', kid: 'rsa-1' })
        .sign(privateKey);
      await expectUnauthorized(await list(app.app, `Bearer ${noExp}`));
    } finally {
      await app.cleanup();
    }
  });
});

describe('API keys', () => {
  it('an issued key works as a bearer token for its tenant', async () => {
    const { key } = await issueApiKey(t.repo, { tenantId: 'acme', perms: ['read', 'write'], label: 'ci' });
    expect(key).toMatch(/^ask_/);
    const put = await putArtifact(t.app, key, 'from a key');
    expect(put.res.status).toBe(201);
    expect(put.json.scope).toEqual({ tenantId: 'acme' });
    // The same tenant's JWT sees it, another tenant's does not.
    const jwt = await t.token({ tenant: 'acme' });
    const seen = await t.app.request(`/v1/artifacts/${put.json.id}`, { headers: bearer(jwt) });
    expect(seen.status).toBe(200);
    expect(await seen.text()).toBe('from a key');
    const other = await t.token({ tenant: 'globex' });
    expect((await t.app.request(`/v1/artifacts/${put.json.id}`, { headers: bearer(other) })).status).toBe(404);
  });

  it('a wrong secret or an unknown id → 401', async () => {
    const { id, key } = await issueApiKey(t.repo, { tenantId: 'acme', perms: ['read'] });
    const secret = key.slice(`ask_${id}_`.length);
    const flipped = `ask_${id}_${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;
    await expectUnauthorized(await list(t.app, `Bearer ${flipped}`), /API key/);
    await expectUnauthorized(await list(t.app, `Bearer ask_${'Z'.repeat(12)}_${secret}`), /API key/);
    await expectUnauthorized(await list(t.app, `Bearer ask_${id}_short`));
  });

  it('a revoked key → 401', async () => {
    const { id, key } = await issueApiKey(t.repo, { tenantId: 'acme', perms: ['read'] });
    expect((await list(t.app, `Bearer ${key}`)).status).toBe(200);
    expect(await t.repo.revokeApiKey(id, Date.now())).toBe(true);
    await expectUnauthorized(await list(t.app, `Bearer ${key}`), /revoked/);
  });

  it('perms are enforced: a read-only key cannot POST (403) but can read', async () => {
    const { key } = await issueApiKey(t.repo, { tenantId: 'acme', perms: ['read'] });
    const put = await putArtifact(t.app, key, 'nope');
    expect(put.res.status).toBe(403);
    expect(put.json.code).toBe('forbidden');
    expect((await list(t.app, `Bearer ${key}`)).status).toBe(200);
  });
});

describe("roles: a tenant's admin is not the operator", () => {
  const get = (path: string, authorization: string, init: RequestInit = {}) =>
    t.app.request(path, { ...init, headers: { Authorization: authorization, ...(init.headers ?? {}) } });

  async function twoTenants() {
    const acme = await t.token({ tenant: 'acme', sub: 'u1', perms: ['read', 'write'] });
    const beta = await t.token({ tenant: 'beta', sub: 'u2', perms: ['read', 'write'] });
    expect(
      (await putArtifact(t.app, acme, 'acme bytes', { 'X-Artifact-Session': 'acme-secret-session' })).res.status,
    ).toBe(201);
    expect(
      (await putArtifact(t.app, beta, 'beta bytes', { 'X-Artifact-Session': 'secret-project-x' })).res.status,
    ).toBe(201);
  }

  it('an operator key sees every tenant, runs retention and fsck, reads the audit trail, and holds no artifacts', async () => {
    await twoTenants();
    const operator = `Bearer ${await t.operatorKey()}`;
    const usage = (await (await get('/v1/usage', operator)).json()) as {
      tenants: { tenantId: string }[];
      sessions: { sessionId: string }[];
    };
    expect(usage.tenants.map((x) => x.tenantId).sort()).toEqual(['acme', 'beta']);
    expect(usage.sessions.map((x) => x.sessionId).sort()).toEqual(['acme-secret-session', 'secret-project-x']);
    expect((await get('/v1/admin/retention', operator, { method: 'POST' })).status).toBe(200);
    const fsck = await get('/v1/admin/fsck', operator, { method: 'POST' });
    expect(fsck.status).toBe(200);
    expect(await fsck.json()).toMatchObject({ checkedRows: 2, unresolved: 0 });
    const audit = (await (await get('/v1/admin/audit', operator)).json()) as {
      entries: { action: string; role: string }[];
    };
    expect(audit.entries.map((e) => [e.action, e.role]).slice(0, 2)).toEqual([
      ['fsck.run', 'operator'],
      ['retention.run', 'operator'],
    ]);
    for (const [method, path] of [
      ['GET', '/v1/artifacts'],
      ['POST', '/v1/artifacts'],
      ['POST', '/v1/uploads'],
    ] as const) {
      const res = await get(path, operator, {
        method,
        ...(method === 'POST' ? { body: '{}', headers: { 'Content-Type': 'application/json' } } : {}),
      });
      expect(res.status).toBe(403);
      expect(((await res.json()) as { message: string }).message).toMatch(/operator key .* holds no artifacts/);
    }
    // The Worker serves no /mcp at all (404 for everyone).
    expect(
      (await get('/mcp', operator, { method: 'POST', body: '{}', headers: { 'Content-Type': 'application/json' } }))
        .status,
    ).toBe(RUNTIME === 'node' ? 403 : 404);
  });

  it('no JWT becomes an operator, whatever its claims', async () => {
    await twoTenants();
    const exp = now() + 600;
    const forged: JWTPayload[] = [
      {
        tenant: 'acme',
        perms: ['read', 'write', 'admin'],
        operator: true,
        role: 'operator',
        roles: ['operator'],
        admin: true,
        scope: 'operator admin',
        exp,
      },
      { tenant: '*', perms: ['read', 'write', 'admin'], operator: true, exp },
      { tenant: '', perms: ['admin'], exp },
      { tenant: 'acme', perms: ['operator'], exp },
      { tenant: 'acme', perms: ['admin', 'operator'], exp },
      { tenant: ['acme', 'beta'], perms: ['admin'], exp },
      { tenant: 'acme', sub: 'operator', perms: ['admin'], kind: 'api_key', exp },
      { perms: ['admin'], operator: true, exp },
    ];
    for (const claims of forged) {
      const authorization = `Bearer ${await hs256(claims)}`;
      const retention = await get('/v1/admin/retention', authorization, { method: 'POST' });
      const fsck = await get('/v1/admin/fsck', authorization, { method: 'POST' });
      const usage = await get('/v1/usage', authorization);
      const named = await get('/v1/usage?tenant=beta', authorization);
      const events = await get('/v1/events?tenant=beta', authorization);
      for (const res of [retention, fsck, named, events]) expect([401, 403]).toContain(res.status);
      const seen = usage.status === 200 ? await usage.text() : '';
      expect(seen).not.toContain('beta');
      expect(seen).not.toContain('secret-project-x');
      if (claims.tenant === '*') expect(JSON.parse(seen)).toMatchObject({ tenants: [], sessions: [] });
    }
    expect(await t.repo.retentionRuns(10)).toEqual([]);
  });

  it("a tenant's admin gets its own tenant: usage, audit trail and events; naming another tenant is 403", async () => {
    await twoTenants();
    const admin = `Bearer ${await t.token({ tenant: 'acme', sub: 'boss', perms: ['read', 'write', 'admin'] })}`;
    const usage = await get('/v1/usage', admin);
    const text = await usage.text();
    expect(JSON.parse(text).tenants.map((x: { tenantId: string }) => x.tenantId)).toEqual(['acme']);
    expect(text).not.toMatch(/beta|secret-project-x/);
    for (const path of ['/v1/usage?tenant=beta', '/v1/admin/audit?tenant=beta', '/v1/events?tenant=beta'])
      expect((await get(path, admin)).status).toBe(403);
    expect((await get('/v1/usage?tenant=acme', admin)).status).toBe(200);
    expect((await get('/v1/admin/audit', admin)).status).toBe(200);
  });
});
