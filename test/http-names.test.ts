/**
 * Named versions through the HTTP API, on both runtimes (Node: SQLite + fs; workerd: D1 + R2):
 * numbering in the put's own transaction (50 parallel saves get 0-49), content dedupe, reads with
 * the download headers, listings, deletes that restart the numbers, retention (no expiry, never
 * evicted, quotas refuse, a tenant's name TTL), app and scope isolation, and the events.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Policy } from '../src/core/policy.js';
import { bearer, createTestApp, RUNTIME, sha256, type TestApp } from './helpers/app.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

const HOUR = 3_600_000;

async function setup(policy: Partial<Policy> = {}) {
  let clock = Date.UTC(2026, 10, 1);
  t = await createTestApp({
    now: () => clock,
    policy: { maxTtlSeconds: 7 * 24 * 3600, ...policy },
    gcGraceMs: 0,
    events: { pollMs: 10, maxPolls: 3 },
  });
  const app = t;
  // The token's subject is the user its names belong to.
  const tenantWide = await app.token({ tenant: 'acme', sub: 'u1', perms: ['read', 'write'] });
  const admin = await app.operatorKey();
  const req = (path: string, init: RequestInit & { token?: string } = {}) =>
    app.app.request(path, { ...init, headers: { ...bearer(init.token ?? tenantWide), ...(init.headers as object) } });
  const save = async (
    name: string,
    body: string,
    q: string,
    headers: Record<string, string> = {},
    token = tenantWide,
  ) => {
    const res = await req(`/v1/names/${q.startsWith('app=') ? '' : 'adk'}?name=${encodeURIComponent(name)}&${q}`, {
      method: 'POST',
      body,
      headers: { 'Content-Type': 'text/plain', ...headers },
      token,
    });
    return { res, json: (await res.json()) as any };
  };
  const retention = async () => {
    const res = await app.app.request('/v1/admin/retention', { method: 'POST', headers: bearer(admin) });
    expect(res.status).toBe(200);
  };
  return { app, tenantWide, req, save, retention, advance: (ms: number) => (clock += ms) };
}

describe(`named versions over HTTP (${RUNTIME})`, () => {
  it('saves versions 0, 1, 2… with their own type and metadata; the same bytes twice are two versions and one blob', async () => {
    const { save, req } = await setup();
    const q = 'session=s1';
    const v0 = await save('report.txt', 'hello', q, { 'X-Artifact-Meta': '{"step":1}' });
    expect(v0.res.status).toBe(201);
    expect(v0.json).toMatchObject({
      name: 'report.txt',
      version: 0,
      namespace: 'adk',
      mimeType: 'text/plain',
      meta: { step: 1 },
      scope: { tenantId: 'acme', userId: 'u1', sessionId: 's1' },
    });
    expect(v0.json.expiresAt).toBeUndefined();
    expect(v0.res.headers.get('location')).toBe('/v1/names/adk/content?name=report.txt&version=0&user=u1&session=s1');
    // The Location reads the version back as it is.
    const located = await req(v0.res.headers.get('location')!);
    expect([located.status, await located.text()]).toEqual([200, 'hello']);
    const v1 = await save('report.txt', 'hello', q, { 'Content-Type': 'application/octet-stream' });
    expect(v1.json).toMatchObject({ version: 1, id: v0.json.id, mimeType: 'application/octet-stream' });
    const v2 = await save('report.txt', 'hello again', q);
    expect(v2.json.version).toBe(2);

    const latest = await req(`/v1/names/adk/content?name=report.txt&${q}`);
    expect(latest.status).toBe(200);
    // The latest changes with each save; a numbered version never does.
    expect(latest.headers.get('cache-control')).toBe('private, no-cache');
    // Which version it was comes with the bytes.
    const sentRef = JSON.parse(Buffer.from(latest.headers.get('x-artifact-ref')!, 'base64url').toString('utf8'));
    expect(sentRef).toMatchObject({ name: 'report.txt', version: 2, sha256: sha256('hello again') });
    expect(await latest.text()).toBe('hello again');
    expect(latest.headers.get('etag')).toBe(`"${sha256('hello again')}"`);
    const first = await req(`/v1/names/adk/content?name=report.txt&version=0&${q}`);
    expect(first.headers.get('cache-control')).toContain('immutable');
    expect(first.headers.get('content-type')).toMatch(/^text\/plain/);
    const second = await req(`/v1/names/adk/content?name=report.txt&version=1&${q}`);
    // Same bytes, its own type.
    expect(second.headers.get('content-type')).toBe('application/octet-stream');
    const range = await req(`/v1/names/adk/content?name=report.txt&version=2&${q}`, {
      headers: { Range: 'bytes=0-4' },
    });
    expect(range.status).toBe(206);
    expect(await range.text()).toBe('hello');
    const head = await req(`/v1/names/adk/content?name=report.txt&version=2&${q}`, { method: 'HEAD' });
    expect([head.status, head.headers.get('content-length')]).toEqual([200, String('hello again'.length)]);
    const cached = await req(`/v1/names/adk/content?name=report.txt&version=2&${q}`, {
      headers: { 'If-None-Match': `"${sha256('hello again')}"` },
    });
    expect(cached.status).toBe(304);

    const versions = (await (await req(`/v1/names/adk/versions?name=report.txt&${q}`)).json()) as any;
    expect(versions.items.map((v: any) => [v.version, v.mimeType, v.meta ?? null])).toEqual([
      [0, 'text/plain', { step: 1 }],
      [1, 'application/octet-stream', null],
      [2, 'text/plain', null],
    ]);
    const names = (await (await req(`/v1/names/adk?${q}`)).json()) as any;
    expect(names.items).toEqual([
      { name: 'report.txt', scope: 'session', latestVersion: 2, versions: 3, updatedAt: expect.any(String) },
    ]);

    const link = await req(`/v1/names/adk/url?name=report.txt&version=0&${q}`, { method: 'POST' });
    expect(link.status).toBe(200);
    const url = new URL(((await link.json()) as { url: string }).url);
    const downloaded = await t!.app.request(`${url.pathname}${url.search}`);
    expect(await downloaded.text()).toBe('hello');
  });

  it('fifty parallel saves of one name get versions 0-49, no gap and no duplicate', async () => {
    const { save } = await setup();
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => save('busy.bin', `payload ${i % 7}`, 'scope=user')),
    );
    expect(results.map((r) => r.res.status)).toEqual(Array(50).fill(201));
    expect(results.map((r) => r.json.version).sort((a: number, b: number) => a - b)).toEqual(
      Array.from({ length: 50 }, (_, i) => i),
    );
  });

  it('deleting a name removes every version; a new save starts again at 0; numbers are never reused while it exists', async () => {
    const { save, req } = await setup();
    const q = 'scope=user';
    await save('a.txt', 'one', q);
    await save('a.txt', 'two', q);
    const gone = await req(`/v1/names/adk?name=a.txt&${q}`, { method: 'DELETE' });
    expect(gone.status).toBe(204);
    expect((await req(`/v1/names/adk/content?name=a.txt&${q}`)).status).toBe(404);
    expect((await req(`/v1/names/adk?name=a.txt&${q}`, { method: 'DELETE' })).status).toBe(404);
    const again = await save('a.txt', 'three', q);
    expect(again.json.version).toBe(0);
  });

  it('deleting one version removes that version only, even when another holds the same bytes; its number is not given again', async () => {
    const { save, req } = await setup();
    const q = 'session=s1';
    const v0 = await save('chart.txt', 'same', q);
    await save('chart.txt', 'same', q);
    await save('chart.txt', 'other', q);
    const one = await req(`/v1/names/adk?name=chart.txt&version=1&${q}`, { method: 'DELETE' });
    expect(one.status).toBe(204);
    const versions = (await (await req(`/v1/names/adk/versions?name=chart.txt&${q}`)).json()) as any;
    expect(versions.items.map((v: { version: number }) => v.version)).toEqual([0, 2]);
    // Version 0 holds the same bytes, and still reads.
    const kept = await req(`/v1/names/adk/content?name=chart.txt&version=0&${q}`);
    expect([kept.status, await kept.text()]).toEqual([200, 'same']);
    expect((await req(`/v1/artifacts/${v0.json.id}?${q}`)).status).toBe(200);
    expect((await req(`/v1/names/adk?name=chart.txt&version=1&${q}`, { method: 'DELETE' })).status).toBe(404);
    for (const bad of ['latest', '-1', 'x'])
      expect((await req(`/v1/names/adk?name=chart.txt&version=${bad}&${q}`, { method: 'DELETE' })).status).toBe(400);
    expect((await save('chart.txt', 'new', q)).json.version).toBe(3);
  });

  it('named versions never expire by default and are never evicted; a full session refuses a new version', async () => {
    const { save, req, retention, advance } = await setup({
      maxArtifactsPerSession: 2,
      cleanupStrategy: 'lru',
    });
    const q = 'session=s1';
    await save('keep.txt', 'v0', q);
    await save('keep.txt', 'v1', q);
    const refused = await save('keep.txt', 'v2', q);
    expect(refused.res.status).toBe(409);
    expect(refused.json.code).toBe('quota_exceeded');
    // An ordinary put into the full session is refused too: LRU may not evict a named version.
    const put = await req('/v1/artifacts?session=s1', {
      method: 'POST',
      body: 'plain',
      headers: { 'Content-Type': 'text/plain' },
    });
    expect(put.status).toBe(409);
    advance(30 * 24 * HOUR);
    await retention();
    expect(await (await req(`/v1/names/adk/content?name=keep.txt&version=0&${q}`)).text()).toBe('v0');
  });

  it("a tenant's name TTL expires versions; the others keep their numbers and the next save does not reuse one", async () => {
    const { save, req, retention, advance } = await setup({ nameTtlSeconds: 3600 });
    const q = 'scope=user';
    const v0 = await save('ttl.txt', 'old', q);
    expect(v0.json.expiresAt).toBeDefined();
    advance(2 * HOUR);
    await save('ttl.txt', 'new', q);
    expect((await req(`/v1/names/adk/content?name=ttl.txt&version=0&${q}`)).status).toBe(404);
    await retention();
    const v2 = await save('ttl.txt', 'newer', q);
    expect(v2.json.version).toBe(2);
    const versions = (await (await req(`/v1/names/adk/versions?name=ttl.txt&${q}`)).json()) as any;
    expect(versions.items.map((v: any) => v.version)).toEqual([1, 2]);
  });

  it('apps, sessions and tenants are apart; a session-bound token sees its session and its user-wide names', async () => {
    const { app, save, req } = await setup();
    await save('same.txt', 'app one', 'session=s1');
    const other = await app.app.request('/v1/names/other-app?name=same.txt&session=s1', {
      method: 'POST',
      body: 'app two',
      headers: { ...bearer(await app.token({ tenant: 'acme', sub: 'u1', perms: ['read', 'write'] })) },
    });
    expect(((await other.json()) as any).version).toBe(0);
    expect(await (await req('/v1/names/adk/content?name=same.txt&session=s1')).text()).toBe('app one');
    await save('profile.txt', 'user-wide', 'scope=user');

    const bound = await app.token({ tenant: 'acme', sub: 'u1', session: 's2', perms: ['read', 'write'] });
    const boundReq = (path: string) => app.app.request(path, { headers: bearer(bound) });
    // Its user's user-wide name: yes. Another session's: indistinguishable from a missing one.
    expect(await (await boundReq('/v1/names/adk/content?name=profile.txt&scope=user')).text()).toBe('user-wide');
    const foreign = await boundReq('/v1/names/adk/content?name=same.txt');
    const missing = await boundReq('/v1/names/adk/content?name=never-saved.txt');
    expect(foreign.status).toBe(404);
    expect((await foreign.json()) as object).toEqual(
      JSON.parse(JSON.stringify(await missing.json()).replace('never-saved.txt', 'same.txt')),
    );
    expect((await boundReq('/v1/names/adk/content?name=same.txt&session=s1')).status).toBe(403);
    const otherTenant = await app.token({ tenant: 'globex', sub: 'x', perms: ['read', 'write'] });
    const cross = await app.app.request('/v1/names/adk/content?name=same.txt&session=s1', {
      headers: bearer(otherTenant),
    });
    expect(cross.status).toBe(404);
  });

  it('refuses bad input with a clear 400 and stores nothing', async () => {
    const { req, save } = await setup();
    const bad: [string, RegExp][] = [
      ['/v1/names/adk', /Give the name/],
      ['/v1/names/bad%20app?name=x', /Invalid app/],
      [`/v1/names/adk?name=${'n'.repeat(513)}`, /Invalid name/],
      ['/v1/names/adk?name=a%0Ab', /Invalid name/],
      ['/v1/names/adk?name=x&scope=everyone', /scope must be/],
      ['/v1/names/adk?name=x&scope=session', /scope=session needs a session/],
      ['/v1/names/..?name=x', /Invalid app|No route/],
      ['/v1/names/.?name=x', /Invalid app|No route/],
    ];
    for (const [path, message] of bad) {
      const res = await req(path, { method: 'POST', body: 'x' });
      expect(res.status === 400 || (res.status === 404 && /No route/.test(message.source)), path).toBe(true);
      expect(((await res.json()) as { message: string }).message).toMatch(message);
    }
    expect((await req('/v1/names/adk/content?name=x&version=-1')).status).toBe(400);
    const withNamespace = await save('x', 'body', 'scope=user', { 'X-Artifact-Namespace': 'other' });
    expect([withNamespace.res.status, withNamespace.json.message]).toEqual([
      400,
      expect.stringMatching(/leave X-Artifact-Namespace out/),
    ]);
    expect((await req('/v1/names/adk?scope=user')).status).toBe(200);
    const mismatch = await save('x', 'body', 'scope=user', { 'X-Artifact-Sha256': '0'.repeat(64) });
    expect(mismatch.res.status).toBe(422);
    const names = (await (await req('/v1/names/adk?scope=user')).json()) as any;
    expect(names.items).toEqual([]);
  });

  it('the events carry the name and version', async () => {
    const { save, req } = await setup();
    const events = req('/v1/events?lastEventId=0');
    await save('ev.txt', 'one', 'scope=user');
    const text = await (await events).text();
    const stored = text
      .split('\n')
      .filter((l) => l.startsWith('data: {'))
      .map((l) => JSON.parse(l.slice(6)))
      .find((e) => e.type === 'artifact.stored');
    expect(stored?.ref).toMatchObject({ name: 'ev.txt', version: 0 });
  });
});
