import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bearer, bytesOf, createTestApp, listAll, putArtifact, type TestApp } from './helpers/app.js';

let t: TestApp;

beforeEach(async () => {
  t = await createTestApp();
});

afterEach(async () => {
  await t.cleanup();
});

const NEVER = 'art_0123456789abcdef01234567';

/** The 404 body with the id taken out, so two 404s can be compared. */
async function notFoundShape(res: Response, id: string) {
  expect(res.status).toBe(404);
  const body = (await res.json()) as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(['code', 'message']);
  return { code: body.code, message: String(body.message).split(id).join('<id>') };
}

/** Status, headers a caller can see, and the body of a 404, for GET / HEAD / meta / DELETE. */
async function probe(app: TestApp['app'], token: string, id: string) {
  const out: Record<string, unknown> = {};
  for (const [label, method, suffix] of [
    ['get', 'GET', ''],
    ['meta', 'GET', '/meta'],
    ['delete', 'DELETE', ''],
  ] as const) {
    const res = await app.request(`/v1/artifacts/${id}${suffix}`, { method, headers: bearer(token) });
    out[label] =
      res.status === 404
        ? await notFoundShape(res, id)
        : { status: res.status, bytes: (await res.arrayBuffer()).byteLength };
  }
  const head = await app.request(`/v1/artifacts/${id}`, { method: 'HEAD', headers: bearer(token) });
  out.head = {
    status: head.status,
    length: (await head.arrayBuffer()).byteLength,
    etag: head.headers.get('etag'),
    type: head.headers.get('content-type'),
  };
  return out;
}

describe('tenants', () => {
  it("tenant B cannot see tenant A's artifact: every route answers exactly the never-existed 404", async () => {
    const a = await t.token({ tenant: 'A', perms: ['read', 'write'] });
    const b = await t.token({ tenant: 'B', perms: ['read', 'write', 'admin'] });
    const { json } = await putArtifact(t.app, a, bytesOf(500, 9), {
      'Content-Type': 'application/pdf',
      'X-Artifact-Filename': 'secret.pdf',
    });
    // The id embeds the hash prefix; B guessing it learns nothing.
    const foreign = await probe(t.app, b, json.id);
    const missing = await probe(t.app, b, NEVER);
    expect(foreign).toEqual(missing);
    expect(foreign.get).toMatchObject({ code: 'not_found' });
    expect(foreign.head).toEqual({ status: 404, length: 0, etag: null, type: 'application/json' });
    // B's listing is empty and A's artifact survived B's DELETE.
    expect(await listAll(t.app, b)).toEqual([]);
    const still = await t.app.request(`/v1/artifacts/${json.id}`, { headers: bearer(a) });
    expect(still.status).toBe(200);
    expect(new Uint8Array(await still.arrayBuffer())).toEqual(bytesOf(500, 9));
  });

  it('cross-tenant dedup is invisible: B putting the same bytes looks like a first put', async () => {
    const a = await t.token({ tenant: 'A', perms: ['read', 'write'] });
    const b = await t.token({ tenant: 'B', perms: ['read', 'write'] });
    const bytes = bytesOf(300, 4);
    const first = await putArtifact(t.app, a, bytes, { 'X-Artifact-Filename': 'a.bin' });
    const second = await putArtifact(t.app, b, bytes);
    expect(second.res.status).toBe(201);
    expect(second.json.id).toBe(first.json.id);
    expect(second.json.scope).toEqual({ tenantId: 'B' });
    expect(second.json.filename).toBeUndefined();
    expect(Object.keys(second.json).sort()).toEqual(
      Object.keys(first.json)
        .filter((k) => k !== 'filename')
        .sort(),
    );
  });
});

describe('sessions', () => {
  async function tokens() {
    return {
      s1: await t.token({ tenant: 'acme', session: 's1', perms: ['read', 'write'] }),
      s1ReadOnly: await t.token({ tenant: 'acme', session: 's1', perms: ['read'] }),
      s2: await t.token({ tenant: 'acme', session: 's2', perms: ['read', 'write'] }),
      wide: await t.token({ tenant: 'acme', perms: ['read', 'write'] }),
      wideReadOnly: await t.token({ tenant: 'acme', perms: ['read'] }),
    };
  }

  it("a session-bound token cannot see another session's refs, and lists only its own", async () => {
    const k = await tokens();
    const mine = await putArtifact(t.app, k.s1, 'in s1');
    expect(mine.json.scope).toEqual({ tenantId: 'acme', sessionId: 's1' });
    const theirs = await putArtifact(t.app, k.wide, 'in s2', { 'X-Artifact-Session': 's2' });
    expect(theirs.res.status).toBe(201);
    expect(theirs.json.scope).toEqual({ tenantId: 'acme', sessionId: 's2' });

    expect(await probe(t.app, k.s1, theirs.json.id)).toEqual(await probe(t.app, k.s1, NEVER));
    expect((await listAll(t.app, k.s1)).map((r) => r.id)).toEqual([mine.json.id]);
    expect((await listAll(t.app, k.s1, 'session=s1')).map((r) => r.id)).toEqual([mine.json.id]);

    const widen = await t.app.request('/v1/artifacts?session=s2', { headers: bearer(k.s1) });
    expect(widen.status).toBe(403);
    expect((await widen.json()).code).toBe('forbidden');

    // s2's artifact is intact.
    const intact = await t.app.request(`/v1/artifacts/${theirs.json.id}`, { headers: bearer(k.s2) });
    expect(intact.status).toBe(200);
    expect(await intact.text()).toBe('in s2');
  });

  it('a session-bound token cannot put into another session', async () => {
    const k = await tokens();
    for (const [headers, query] of [
      [{ 'X-Artifact-Session': 's2' }, ''],
      [{}, '?session=s2'],
    ] as const) {
      const { res, json } = await putArtifact(t.app, k.s1, 'escape', headers, query);
      expect(res.status).toBe(403);
      expect(json.code).toBe('forbidden');
    }
    expect(await listAll(t.app, k.wide)).toEqual([]);
    // Naming its own session is fine.
    const same = await putArtifact(t.app, k.s1, 'stay', { 'X-Artifact-Session': 's1' });
    expect(same.res.status).toBe(201);
    expect(same.json.scope.sessionId).toBe('s1');
  });

  it('a tenant-wide token puts into a named session and lists by ?session=', async () => {
    const k = await tokens();
    const a = await putArtifact(t.app, k.wide, 'one', {
      'X-Artifact-Session': 'sA',
      'X-Artifact-Trace': 'tr1',
      'X-Artifact-User': 'u7',
    });
    expect(a.json.scope).toEqual({ tenantId: 'acme', sessionId: 'sA', traceId: 'tr1', userId: 'u7' });
    const b = await putArtifact(t.app, k.wide, 'two', {}, '?session=sB');
    expect(b.json.scope).toEqual({ tenantId: 'acme', sessionId: 'sB' });
    const c = await putArtifact(t.app, k.wide, 'three');
    expect(c.json.scope).toEqual({ tenantId: 'acme' });
    expect((await listAll(t.app, k.wide, 'session=sA')).map((r) => r.id)).toEqual([a.json.id]);
    expect((await listAll(t.app, k.wide, 'session=sB')).map((r) => r.id)).toEqual([b.json.id]);
    expect((await listAll(t.app, k.wide, 'trace=tr1')).map((r) => r.id)).toEqual([a.json.id]);
    expect((await listAll(t.app, k.wide, 'user=u7')).map((r) => r.id)).toEqual([a.json.id]);
    expect(await listAll(t.app, k.wide)).toHaveLength(3);
  });

  it('same bytes in two sessions: each sees its own filename and meta', async () => {
    const k = await tokens();
    const bytes = bytesOf(256, 77);
    const one = await putArtifact(t.app, k.s1, bytes, {
      'Content-Type': 'application/pdf',
      'X-Artifact-Filename': 'mine.pdf',
      'X-Artifact-Meta': '{"who":"s1"}',
    });
    const two = await putArtifact(t.app, k.s2, bytes, {
      'Content-Type': 'image/png',
      'X-Artifact-Filename': 'theirs.png',
      'X-Artifact-Meta': '{"who":"s2"}',
    });
    expect(one.res.status).toBe(201);
    expect(two.res.status).toBe(201);
    expect(two.json.id).toBe(one.json.id);
    const id = one.json.id as string;

    const view = async (token: string) => {
      const meta = await (await t.app.request(`/v1/artifacts/${id}/meta`, { headers: bearer(token) })).json();
      const dl = await t.app.request(`/v1/artifacts/${id}`, { headers: bearer(token) });
      await dl.arrayBuffer();
      return {
        filename: meta.filename,
        meta: meta.meta,
        mime: meta.mimeType,
        disposition: dl.headers.get('content-disposition'),
        type: dl.headers.get('content-type'),
      };
    };
    expect(await view(k.s1)).toEqual({
      filename: 'mine.pdf',
      meta: { who: 's1' },
      mime: 'application/pdf',
      disposition: 'inline; filename="mine.pdf"',
      type: 'application/pdf',
    });
    expect(await view(k.s2)).toEqual({
      filename: 'theirs.png',
      meta: { who: 's2' },
      mime: 'image/png',
      disposition: 'inline; filename="theirs.png"',
      type: 'image/png',
    });
    expect(JSON.stringify(await listAll(t.app, k.s1))).not.toContain('theirs');
    expect(JSON.stringify(await listAll(t.app, k.s2))).not.toContain('mine');
    // Tenant-wide listing returns one row per scope holding the id.
    const rows = await listAll(t.app, k.wide);
    expect(rows.map((r) => [r.id, r.scope.sessionId]).sort()).toEqual([
      [id, 's1'],
      [id, 's2'],
    ]);
  });

  it("a session DELETE removes only that session's reference", async () => {
    const k = await tokens();
    const bytes = bytesOf(64, 12);
    const { json } = await putArtifact(t.app, k.s1, bytes);
    await putArtifact(t.app, k.s2, bytes);
    const del = await t.app.request(`/v1/artifacts/${json.id}`, { method: 'DELETE', headers: bearer(k.s1) });
    expect(del.status).toBe(204);
    expect((await t.app.request(`/v1/artifacts/${json.id}/meta`, { headers: bearer(k.s1) })).status).toBe(404);
    const s2 = await t.app.request(`/v1/artifacts/${json.id}`, { headers: bearer(k.s2) });
    expect(s2.status).toBe(200);
    expect(new Uint8Array(await s2.arrayBuffer())).toEqual(bytes);
    expect((await listAll(t.app, k.wide)).map((r) => r.scope.sessionId)).toEqual(['s2']);
  });

  it("a tenant-wide DELETE removes every session's reference", async () => {
    const k = await tokens();
    const bytes = bytesOf(64, 13);
    const { json } = await putArtifact(t.app, k.s1, bytes);
    await putArtifact(t.app, k.s2, bytes);
    await putArtifact(t.app, k.wide, bytes, { 'X-Artifact-Session': 's3' });
    const del = await t.app.request(`/v1/artifacts/${json.id}`, { method: 'DELETE', headers: bearer(k.wide) });
    expect(del.status).toBe(204);
    for (const token of [k.s1, k.s2, k.wide]) {
      expect((await t.app.request(`/v1/artifacts/${json.id}/meta`, { headers: bearer(token) })).status).toBe(404);
    }
    expect(await listAll(t.app, k.wide)).toEqual([]);
  });

  it('DELETE without write: 403 on a visible artifact, the same 404 on an invisible one', async () => {
    const k = await tokens();
    const mine = await putArtifact(t.app, k.s1, 'visible');
    const theirs = await putArtifact(t.app, k.s2, 'invisible');

    const visible = await t.app.request(`/v1/artifacts/${mine.json.id}`, {
      method: 'DELETE',
      headers: bearer(k.s1ReadOnly),
    });
    expect(visible.status).toBe(403);
    expect((await visible.json()).code).toBe('forbidden');

    const hidden = await t.app.request(`/v1/artifacts/${theirs.json.id}`, {
      method: 'DELETE',
      headers: bearer(k.s1ReadOnly),
    });
    const never = await t.app.request(`/v1/artifacts/${NEVER}`, { method: 'DELETE', headers: bearer(k.s1ReadOnly) });
    expect(await notFoundShape(hidden, theirs.json.id)).toEqual(await notFoundShape(never, NEVER));

    const wide = await t.app.request(`/v1/artifacts/${mine.json.id}`, {
      method: 'DELETE',
      headers: bearer(k.wideReadOnly),
    });
    expect(wide.status).toBe(403);
    // Nothing was deleted.
    expect(await listAll(t.app, k.wide)).toHaveLength(2);
  });

  it('a trace-bound token sees only its trace and cannot name a session', async () => {
    const traced = await t.token({ tenant: 'acme', trace: 'tr9', perms: ['read', 'write'] });
    const wide = await t.token({ tenant: 'acme', perms: ['read', 'write'] });
    const inTrace = await putArtifact(t.app, traced, 'traced');
    expect(inTrace.json.scope).toEqual({ tenantId: 'acme', traceId: 'tr9' });
    const other = await putArtifact(t.app, wide, 'other', { 'X-Artifact-Trace': 'tr8' });
    expect((await t.app.request(`/v1/artifacts/${other.json.id}`, { headers: bearer(traced) })).status).toBe(404);
    expect((await listAll(t.app, traced)).map((r) => r.id)).toEqual([inTrace.json.id]);
    const named = await putArtifact(t.app, traced, 'x', { 'X-Artifact-Session': 's1' });
    expect(named.res.status).toBe(403);
    const retrace = await putArtifact(t.app, traced, 'x', { 'X-Artifact-Trace': 'tr8' });
    expect(retrace.res.status).toBe(403);
  });
});

describe('naming a scope with headers (tenant-wide tokens)', () => {
  it('lists by X-Artifact-Session as by ?session=, and a token sub is only a default user', async () => {
    const tok = await t.token({ tenant: 'acme', sub: 'dev', perms: ['read', 'write'] });
    const a = await putArtifact(t.app, tok, bytesOf(10, 1), { 'X-Artifact-Session': 'A' });
    const b = await putArtifact(t.app, tok, bytesOf(10, 2), { 'X-Artifact-Session': 'B', 'X-Artifact-User': 'bob' });
    expect(a.res.status).toBe(201);
    expect(b.res.status).toBe(201);
    expect(a.json.scope).toEqual({ tenantId: 'acme', userId: 'dev', sessionId: 'A' });
    expect(b.json.scope).toEqual({ tenantId: 'acme', userId: 'bob', sessionId: 'B' });
    const byHeader = await t.app.request('/v1/artifacts', { headers: { ...bearer(tok), 'X-Artifact-Session': 'B' } });
    expect(((await byHeader.json()) as { items: { id: string }[] }).items.map((r) => r.id)).toEqual([b.json.id]);
    const byQuery = await t.app.request('/v1/artifacts?session=A', { headers: bearer(tok) });
    expect(((await byQuery.json()) as { items: { id: string }[] }).items.map((r) => r.id)).toEqual([a.json.id]);
  });

  it('a session-bound token cannot name another user, and over-long scope values are refused', async () => {
    const bound = await t.token({ tenant: 'acme', sub: 'u1', session: 's1', perms: ['read', 'write'] });
    const other = await putArtifact(t.app, bound, bytesOf(10, 3), { 'X-Artifact-User': 'u2' });
    expect(other.res.status).toBe(403);
    const wide = await t.token({ tenant: 'acme', perms: ['read', 'write'] });
    const long = await putArtifact(t.app, wide, bytesOf(10, 4), { 'X-Artifact-Session': 'x'.repeat(300) });
    expect(long.res.status).toBe(400);
    expect(long.json.code).toBe('bad_request');
    expect(await listAll(t.app, wide)).toHaveLength(0);
  });
});

describe('reads narrowed to a scope (tenant-wide tokens)', () => {
  /** The same bytes stored by sessions A and B (and under a user in each), A first. */
  async function sharedBytes() {
    const wide = await t.token({ tenant: 'acme', sub: 'host', perms: ['read', 'write'] });
    const bytes = bytesOf(400, 21);
    const a = await putArtifact(t.app, wide, bytes, {
      'X-Artifact-Session': 'A',
      'X-Artifact-User': 'ann',
      'X-Artifact-Filename': 'a.pdf',
      'Content-Type': 'application/pdf',
    });
    const b = await putArtifact(t.app, wide, bytes, {
      'X-Artifact-Session': 'B',
      'X-Artifact-User': 'bob',
      'X-Artifact-Filename': 'b.pdf',
      'Content-Type': 'application/pdf',
    });
    expect(b.json.id).toBe(a.json.id);
    return { wide, bytes, id: a.json.id as string };
  }

  it("GET, HEAD, meta and links answer the named session's reference, by header or query", async () => {
    const { wide, bytes, id } = await sharedBytes();
    for (const [session, user, filename] of [
      ['A', 'ann', 'a.pdf'],
      ['B', 'bob', 'b.pdf'],
    ] as const) {
      const byHeader = await t.app.request(`/v1/artifacts/${id}/meta`, {
        headers: { ...bearer(wide), 'X-Artifact-Session': session },
      });
      expect(await byHeader.json()).toMatchObject({ filename, scope: { sessionId: session, userId: user } });
      const byQuery = await t.app.request(`/v1/artifacts/${id}/meta?session=${session}`, { headers: bearer(wide) });
      expect(await byQuery.json()).toMatchObject({ filename, scope: { sessionId: session } });
      const byUser = await t.app.request(`/v1/artifacts/${id}/meta?user=${user}`, { headers: bearer(wide) });
      expect(await byUser.json()).toMatchObject({ filename, scope: { userId: user } });
      const get = await t.app.request(`/v1/artifacts/${id}`, {
        headers: { ...bearer(wide), 'X-Artifact-Session': session },
      });
      expect(get.headers.get('content-disposition')).toBe(`inline; filename="${filename}"`);
      expect(new Uint8Array(await get.arrayBuffer())).toEqual(bytes);
      const head = await t.app.request(`/v1/artifacts/${id}?session=${session}`, {
        method: 'HEAD',
        headers: bearer(wide),
      });
      expect(head.headers.get('content-disposition')).toBe(`inline; filename="${filename}"`);
      const link = await t.app.request(`/v1/artifacts/${id}/url`, {
        method: 'POST',
        headers: { ...bearer(wide), 'X-Artifact-Session': session },
      });
      expect(link.status).toBe(200);
    }
  });

  it('a session, trace or user that does not hold it reads as missing, the same 404 as an unknown id', async () => {
    const { wide, id } = await sharedBytes();
    const scopes: Record<string, string>[] = [
      { 'X-Artifact-Session': 'C' },
      { 'X-Artifact-User': 'carl' },
      { 'X-Artifact-Trace': 't9' },
    ];
    for (const named of scopes) {
      for (const [method, suffix] of [
        ['GET', ''],
        ['GET', '/meta'],
        ['HEAD', ''],
        ['POST', '/url'],
        ['DELETE', ''],
      ] as const) {
        const res = await t.app.request(`/v1/artifacts/${id}${suffix}`, {
          method,
          headers: { ...bearer(wide), ...named },
        });
        expect(res.status, `${method} ${suffix} ${JSON.stringify(named)}`).toBe(404);
        if (method !== 'HEAD') {
          const unknown = await t.app.request(`/v1/artifacts/${NEVER}${suffix}`, {
            method,
            headers: { ...bearer(wide), ...named },
          });
          expect(await notFoundShape(res, id)).toEqual(await notFoundShape(unknown, NEVER));
        }
      }
    }
    expect(await listAll(t.app, wide)).toHaveLength(2);
  });

  it("a DELETE narrowed to one session removes that session's reference only", async () => {
    const { wide, bytes, id } = await sharedBytes();
    const del = await t.app.request(`/v1/artifacts/${id}?session=A`, { method: 'DELETE', headers: bearer(wide) });
    expect(del.status).toBe(204);
    expect((await listAll(t.app, wide)).map((r) => r.scope.sessionId)).toEqual(['B']);
    const b = await t.app.request(`/v1/artifacts/${id}`, { headers: { ...bearer(wide), 'X-Artifact-Session': 'B' } });
    expect(new Uint8Array(await b.arrayBuffer())).toEqual(bytes);
  });

  it('a bound token may repeat its own session but not name another (403), and bad values are 400', async () => {
    const { wide, id } = await sharedBytes();
    const a = await t.token({ tenant: 'acme', session: 'A', perms: ['read', 'write'] });
    const own = await t.app.request(`/v1/artifacts/${id}/meta`, {
      headers: { ...bearer(a), 'X-Artifact-Session': 'A' },
    });
    expect(await own.json()).toMatchObject({ filename: 'a.pdf' });
    for (const [method, suffix] of [
      ['GET', ''],
      ['GET', '/meta'],
      ['POST', '/url'],
      ['DELETE', ''],
    ] as const) {
      const other = await t.app.request(`/v1/artifacts/${id}${suffix}?session=B`, { method, headers: bearer(a) });
      expect(other.status, `${method} ${suffix}`).toBe(403);
      expect((await other.json()).code).toBe('forbidden');
      const long = await t.app.request(`/v1/artifacts/${id}${suffix}`, {
        method,
        headers: { ...bearer(wide), 'X-Artifact-Session': 'x'.repeat(300) },
      });
      expect(long.status, `${method} ${suffix}`).toBe(400);
    }
    expect(await listAll(t.app, wide)).toHaveLength(2);
  });
});
