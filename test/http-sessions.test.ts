/**
 * Ending a session over HTTP (DELETE /v1/sessions/{id}), on both runtimes (Node: SQLite + fs;
 * workerd: D1 + R2): everything of the session goes at once and the answer counts it exactly, named
 * versions with their names (a later save starts at 0), other sessions and user-wide names stay, an
 * artifact.deleted event per reference; who may end which session; bad input; idempotence; tenants.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { bearer, bytesOf, createTestApp, listAll, putArtifact, RUNTIME, type TestApp } from './helpers/app.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

const MINUTE = 60_000;

async function setup() {
  let clock = Date.UTC(2026, 10, 1);
  t = await createTestApp({ now: () => clock, events: { pollMs: 10, maxPolls: 3 } });
  const app = t;
  const wide = await app.token({ tenant: 'acme', sub: 'u1', perms: ['read', 'write'] });
  const req = (path: string, init: RequestInit & { token?: string } = {}) =>
    app.app.request(path, { ...init, headers: { ...bearer(init.token ?? wide), ...(init.headers as object) } });
  /** A put into a scope (tenant-wide tokens name it), answering the ref. */
  const put = async (body: Uint8Array | string, scope: Record<string, string>, token = wide) => {
    const headers: Record<string, string> = Object.fromEntries(
      Object.entries(scope).map(([k, v]) => [`X-Artifact-${k}`, v]),
    );
    if (typeof body === 'string') headers['Content-Type'] = 'text/plain';
    const { res, json } = await putArtifact(app.app, token, body, headers);
    expect(res.status, JSON.stringify(json)).toBeLessThan(300);
    return json;
  };
  /** A named version, in a session (`session=…`) or user-wide (`scope=user`). */
  const save = async (name: string, body: string, q: string, token = wide) => {
    const res = await req(`/v1/names/adk?name=${encodeURIComponent(name)}&${q}`, { method: 'POST', body, token });
    expect(res.status).toBe(201);
    return (await res.json()) as Record<string, any>;
  };
  const end = async (session: string, token = wide, query = '') => {
    const res = await req(`/v1/sessions/${encodeURIComponent(session)}${query}`, { method: 'DELETE', token });
    return { status: res.status, json: (await res.json()) as Record<string, any> };
  };
  return { app, wide, req, put, save, end, advance: (ms: number) => (clock += ms) };
}

/** Every artifact event the tenant's stream has, oldest first. */
async function events(req: (path: string) => Response | Promise<Response>) {
  const text = await (await req('/v1/events?lastEventId=0')).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('data: {'))
    .map((l) => JSON.parse(l.slice(6)) as { type: string; ref: Record<string, any> });
}

describe(`ending a session over HTTP (${RUNTIME})`, () => {
  it('removes what the session holds at once and counts it exactly; other sessions and user-wide names stay', async () => {
    const { app, req, put, save, end, advance } = await setup();
    const shared = await put('the same bytes in two sessions', { Session: 's1' });
    await put('the same bytes in two sessions', { Session: 's2' });
    const traced = await put(bytesOf(1000, 3), { Session: 's1', Trace: 'tr-1' });
    const otherUser = await put(bytesOf(300, 4), { Session: 's1', User: 'u2' });
    const onlyS2 = await put('only in s2', { Session: 's2' });
    await put('gone before the end', { Session: 's1', Ttl: '60' }); // expires first: retention's, not counted
    const v0 = await save('notes.md', 'draft', 'session=s1');
    const v1 = await save('notes.md', 'final text', 'session=s1');
    const elsewhere = await save('notes.md', 'in s2', 'session=s2');
    const userWide = await save('profile.json', '{"tz":"UTC"}', 'scope=user');
    advance(2 * MINUTE); // the short-lived reference expired: not the session's to report

    const ended = await end('s1');
    expect(ended.status).toBe(200);
    const gone = [shared, traced, otherUser, v0, v1];
    expect(ended.json).toEqual({
      sessionId: 's1',
      refs: gone.length,
      bytes: gone.reduce((n, r) => n + r.sizeBytes, 0),
      versions: 2,
    });

    // At once: nothing of s1 reads or lists any more.
    for (const ref of [shared, traced, otherUser]) {
      expect((await req(`/v1/artifacts/${ref.id}?session=s1`)).status, ref.id).toBe(404);
    }
    expect((await req(`/v1/artifacts/${traced.id}`)).status).toBe(404);
    expect(
      await listAll(app.app, (await app.token({ tenant: 'acme', perms: ['read'] })) as string, 'session=s1'),
    ).toEqual([]);
    expect((await req('/v1/names/adk/content?name=notes.md&session=s1')).status).toBe(404);
    expect(((await (await req('/v1/names/adk?session=s1')).json()) as any).items).toEqual([]);
    // s2 and the user-wide name are untouched, the shared bytes included.
    expect(await (await req(`/v1/artifacts/${shared.id}`)).text()).toBe('the same bytes in two sessions');
    expect(await (await req(`/v1/artifacts/${onlyS2.id}?session=s2`)).text()).toBe('only in s2');
    const s2 = await listAll(app.app, (await app.token({ tenant: 'acme', perms: ['read'] })) as string, 'session=s2');
    expect(s2.map((r) => r.id).sort()).toEqual([shared.id, onlyS2.id, elsewhere.id].sort());
    expect(await (await req('/v1/names/adk/content?name=notes.md&session=s2')).text()).toBe('in s2');
    expect(await (await req('/v1/names/adk/content?name=profile.json&scope=user')).text()).toBe('{"tz":"UTC"}');
    expect(userWide.version).toBe(0);

    // One artifact.deleted per reference, carrying the reference as it was.
    const deleted = (await events(req)).filter((e) => e.type === 'artifact.deleted');
    expect(deleted.map((e) => e.ref.id).sort()).toEqual(gone.map((r) => r.id).sort());
    expect(deleted.every((e) => e.ref.scope.sessionId === 's1')).toBe(true);
    expect(deleted.filter((e) => e.ref.name === 'notes.md').map((e) => e.ref.version)).toEqual([0, 1]);

    // Idempotent: the second end finds nothing. The name went too: its next save is version 0 again.
    expect(await end('s1')).toEqual({ status: 200, json: { sessionId: 's1', refs: 0, bytes: 0, versions: 0 } });
    expect((await save('notes.md', 'a new start', 'session=s1')).version).toBe(0);
    expect((await save('notes.md', 'in s2 again', 'session=s2')).version).toBe(1);
  });

  it('a session-bound token ends its own session only; trace-bound, read-only and operator tokens are refused', async () => {
    const { app, put, save, end } = await setup();
    const own = await app.token({ tenant: 'acme', sub: 'u1', session: 's1', perms: ['read', 'write'] });
    const mine = await put('mine', {}, own);
    await save('notes.md', 'mine too', '', own);
    const theirs = await put('theirs', { Session: 's2' });

    const other = await end('s2', own);
    expect(other.status).toBe(403);
    expect(other.json).toEqual({ code: 'forbidden', message: expect.stringMatching(/bound to session "s1"/) });
    for (const [label, token] of [
      ['trace-bound', await app.token({ tenant: 'acme', trace: 'tr-1', perms: ['read', 'write'] })],
      [
        'session and trace',
        await app.token({ tenant: 'acme', session: 's1', trace: 'tr-1', perms: ['read', 'write'] }),
      ],
      ['read-only', await app.token({ tenant: 'acme', session: 's1', perms: ['read'] })],
      ['operator', await app.operatorKey()],
    ] as const) {
      const refused = await end('s1', token);
      expect(refused.status, label).toBe(403);
      expect(refused.json.code, label).toBe('forbidden');
    }
    // Nothing went so far.
    expect((await app.app.request(`/v1/artifacts/${mine.id}`, { headers: bearer(own) })).status).toBe(200);

    expect(await end('s1', own)).toEqual({
      status: 200,
      json: { sessionId: 's1', refs: 2, bytes: 'mine'.length + 'mine too'.length, versions: 1 },
    });
    expect((await app.app.request(`/v1/artifacts/${mine.id}`, { headers: bearer(own) })).status).toBe(404);
    const s2 = await app.app.request(`/v1/artifacts/${theirs.id}`, {
      headers: bearer(await app.token({ tenant: 'acme' })),
    });
    expect(await s2.text()).toBe('theirs');
  });

  it("a tenant-wide token naming a user ends that user's part of the session only", async () => {
    const { app, req, put, save, end } = await setup();
    // No subject: a token that may name any user (names belong to the token's subject otherwise).
    const host = await app.token({ tenant: 'acme', perms: ['read', 'write'] });
    const u1 = await put('by u1', { Session: 's1' });
    const u2 = await put('by u2', { Session: 's1', User: 'u2' });
    await save('n.txt', 'u1 name', 'session=s1');
    await save('n.txt', 'u2 name', 'session=s1&user=u2', host);
    const ended = await end('s1', host, '?user=u2');
    expect(ended.json).toEqual({ sessionId: 's1', refs: 2, bytes: 'by u2'.length + 'u2 name'.length, versions: 1 });
    expect((await req(`/v1/artifacts/${u2.id}`)).status).toBe(404);
    expect(await (await req(`/v1/artifacts/${u1.id}`)).text()).toBe('by u1');
    expect(await (await req('/v1/names/adk/content?name=n.txt&session=s1')).text()).toBe('u1 name');
    const u2Name = await req('/v1/names/adk/content?name=n.txt&session=s1&user=u2', { token: host });
    expect(u2Name.status).toBe(404);
  });

  it('refuses a malformed request with 400 { code, message }, and a session that holds nothing answers zeros', async () => {
    const { put, end, req } = await setup();
    const kept = await put('kept', { Session: 's1' });
    for (const [session, query, message] of [
      ['x'.repeat(257), '', /Invalid session id \(257 characters\)/],
      ['s1', '?trace=tr-1', /leave X-Artifact-Trace/],
      ['s1', '?session=s2', /the one in the path/],
      ['s1', `?user=${'u'.repeat(300)}`, /Invalid user/],
    ] as const) {
      const refused = await end(session, undefined, query);
      expect(refused.status, query || session).toBe(400);
      expect(refused.json).toEqual({ code: 'bad_request', message: expect.stringMatching(message) });
    }
    expect(await (await req(`/v1/artifacts/${kept.id}`)).text()).toBe('kept');
    for (let i = 0; i < 2; i++)
      expect(await end('never-used')).toEqual({
        status: 200,
        json: { sessionId: 'never-used', refs: 0, bytes: 0, versions: 0 },
      });
    // The id is any 1-256 characters, as a put's session is: spaces and slashes too.
    await put('odd', { Session: 'a b/c' });
    expect((await end('a b/c')).json).toMatchObject({ sessionId: 'a b/c', refs: 1 });
  });

  it('is in /openapi.json, with its answer', async () => {
    const { app } = await setup();
    const doc = (await (await app.app.request('/openapi.json')).json()) as any;
    const op = doc.paths['/v1/sessions/{id}'];
    expect(Object.keys(op)).toEqual(['delete']);
    expect(Object.keys(op.delete.responses).sort()).toEqual(['200', '400', '401', '403']);
    expect(doc.components.schemas.SessionEnd.required.sort()).toEqual(['bytes', 'refs', 'sessionId', 'versions']);
  });

  it("tenant A cannot end tenant B's session: A's answer is zeros and B's references stay", async () => {
    const { app, put, save, end } = await setup();
    const b = await app.token({ tenant: 'globex', sub: 'u1', perms: ['read', 'write'] });
    const theirs = await put('globex data', { Session: 's1' }, b);
    await save('notes.md', 'globex notes', 'session=s1', b);
    const ours = await put('acme data', { Session: 's1' });
    const ownSessionToken = await app.token({ tenant: 'acme', session: 's1', perms: ['read', 'write'] });

    expect((await end('s1')).json).toEqual({ sessionId: 's1', refs: 1, bytes: 'acme data'.length, versions: 0 });
    expect((await end('s1', ownSessionToken)).json).toEqual({ sessionId: 's1', refs: 0, bytes: 0, versions: 0 });
    expect((await app.app.request(`/v1/artifacts/${ours.id}`, { headers: bearer(ownSessionToken) })).status).toBe(404);
    const read = await app.app.request(`/v1/artifacts/${theirs.id}`, { headers: bearer(b) });
    expect(await read.text()).toBe('globex data');
    const name = await app.app.request('/v1/names/adk/content?name=notes.md&session=s1', { headers: bearer(b) });
    expect(await name.text()).toBe('globex notes');
    expect((await listAll(app.app, b, 'session=s1')).length).toBe(2);
  });
});
