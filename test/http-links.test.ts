import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createUrlSigner } from '../src/core/url-signing.js';
import { bearer, bytesOf, createTestApp, putArtifact, URL_KEYS, type TestApp } from './helpers/app.js';

let t: TestApp;
let clock: number;
let tok: string;

beforeEach(async () => {
  clock = Date.parse('2030-01-01T00:00:00.000Z');
  t = await createTestApp({ now: () => clock, publicUrl: 'https://files.example.com' });
  tok = await t.token({ tenant: 'acme', sub: 'u1', perms: ['read', 'write'] });
});

afterEach(async () => {
  await t.cleanup();
});

async function linkFor(id: string, body: unknown = {}, token = tok) {
  const res = await t.app.request(`/v1/artifacts/${id}/url`, {
    method: 'POST',
    headers: { ...bearer(token), 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { res, json: (await res.json()) as Record<string, any> };
}

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** The link's path and query, as the service would receive them. */
const local = (url: string) => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};

describe('POST /v1/artifacts/{id}/url (proxy links)', () => {
  it('returns a link on the public URL that downloads without a token, with Range, until it expires', async () => {
    const bytes = bytesOf(5000, 9);
    const { json: ref } = await putArtifact(t.app, tok, bytes, {
      'Content-Type': 'application/pdf',
      'X-Artifact-Filename': 'Q3 report.pdf',
    });
    const { res, json } = await linkFor(ref.id, { expiresIn: 600 });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(json).toMatchObject({
      fetchMode: 'proxy',
      mimeType: 'application/pdf',
      sizeBytes: 5000,
      urlExpiresAt: '2030-01-01T00:10:00.000Z',
    });
    expect(json.url.startsWith(`https://files.example.com/v1/download/${ref.id}?`)).toBe(true);

    const got = await t.app.request(local(json.url));
    expect(got.status).toBe(200);
    expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
    expect(got.headers.get('content-type')).toBe('application/pdf');
    expect(got.headers.get('content-disposition')).toBe('inline; filename="Q3 report.pdf"');
    expect(got.headers.get('x-content-type-options')).toBe('nosniff');
    expect(got.headers.get('content-security-policy')).toBe('sandbox');
    // Shared caches may keep it, never past the link's expiry.
    expect(got.headers.get('cache-control')).toBe('public, max-age=600, immutable');

    const part = await t.app.request(local(json.url), { headers: { Range: 'bytes=10-19' } });
    expect(part.status).toBe(206);
    expect(Buffer.from(await part.arrayBuffer()).equals(bytes.subarray(10, 20))).toBe(true);
    const head = await t.app.request(local(json.url), { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('5000');

    clock += 601_000;
    const late = await t.app.request(local(json.url));
    expect(late.status).toBe(403);
    expect((await late.json()).message).toMatch(/expired/);
  });

  it('attachment links, and active types are attachments whatever was asked', async () => {
    const { json: pdf } = await putArtifact(t.app, tok, bytesOf(100, 1), {
      'Content-Type': 'application/pdf',
      'X-Artifact-Filename': 'a.pdf',
    });
    const att = await linkFor(pdf.id, { disposition: 'attachment' });
    expect((await t.app.request(local(att.json.url))).headers.get('content-disposition')).toBe(
      'attachment; filename="a.pdf"',
    );
    const { json: svg } = await putArtifact(t.app, tok, '<svg xmlns="http://www.w3.org/2000/svg"/>', {
      'Content-Type': 'image/svg+xml',
    });
    const inl = await linkFor(svg.id, { disposition: 'inline' });
    expect((await t.app.request(local(inl.json.url))).headers.get('content-disposition')).toBe('attachment');
  });

  it('tampered, foreign, incomplete or unknown-key links answer 403 and serve nothing', async () => {
    const { json: a } = await putArtifact(t.app, tok, bytesOf(300, 2));
    const { json: b } = await putArtifact(t.app, tok, bytesOf(300, 3));
    const { json } = await linkFor(a.id);
    const u = new URL(json.url);
    const variant = (edit: (q: URLSearchParams) => void, id = a.id) => {
      const q = new URLSearchParams(u.search);
      edit(q);
      return `/v1/download/${id}?${q}`;
    };
    const sig = u.searchParams.get('signature')!;
    const flipped = (sig.startsWith('A') ? 'B' : 'A') + sig.slice(1);
    const cases: Record<string, string> = {
      'signature changed': variant((q) => q.set('signature', flipped)),
      'another id': variant(() => {}, b.id),
      'another tenant': variant((q) => q.set('tenant', 'evil')),
      'later expiry': variant((q) => q.set('expires', String(Number(q.get('expires')) + 3600))),
      'other disposition': variant((q) => q.set('disposition', 'attachment')),
      'unknown kid': variant((q) => q.set('kid', 'nope')),
      'no signature': variant((q) => q.delete('signature')),
      'junk expiry': variant((q) => q.set('expires', '1e99')),
      // The same 32 bytes spelled another way (the last character's unused bits).
      'non-canonical signature': variant((q) =>
        q.set('signature', sig.slice(0, -1) + B64URL[B64URL.indexOf(sig[42]!) ^ 1]),
      ),
    };
    for (const [name, path] of Object.entries(cases)) {
      const res = await t.app.request(path);
      expect(res.status, name).toBe(403);
      const body = await res.json();
      expect(body.code, name).toBe('forbidden');
      expect(res.headers.get('content-disposition'), name).toBeNull();
    }
    // The genuine one still works.
    expect((await t.app.request(local(json.url))).status).toBe(200);
  });

  it('a link keeps working after the signing key rotates, while its key is still accepted', async () => {
    const { json: a } = await putArtifact(t.app, tok, bytesOf(50, 4));
    // Signed by l0, the second (older) key: still accepted.
    const old = createUrlSigner([URL_KEYS[1]!]);
    const query = await old.sign({
      tenantId: 'acme',
      artifactId: a.id,
      expiresAt: clock / 1000 + 60,
      disposition: 'inline',
    });
    expect((await t.app.request(`/v1/download/${a.id}?${query}`)).status).toBe(200);
  });

  it('needs the read perm, sees only the caller scope (same 404), and never outlives the reference', async () => {
    const { json: a } = await putArtifact(t.app, tok, bytesOf(200, 5), {
      'X-Artifact-Session': 's1',
      'X-Artifact-Ttl': '120',
    });
    const other = await t.token({ tenant: 'acme', sub: 'u2', session: 's2', perms: ['read'] });
    const hidden = await linkFor(a.id, {}, other);
    expect(hidden.res.status).toBe(404);
    const missing = await linkFor('art_0123456789abcdef01234567');
    expect(hidden.json).toEqual({
      ...missing.json,
      message: missing.json.message.replace('art_0123456789abcdef01234567', a.id),
    });
    const writeOnly = await t.token({ tenant: 'acme', sub: 'u1', perms: ['write'] });
    expect((await linkFor(a.id, {}, writeOnly)).res.status).toBe(403);

    const { json } = await linkFor(a.id, { expiresIn: 3600 });
    expect(json.urlExpiresAt).toBe('2030-01-01T00:02:00.000Z');
  });

  it('refuses a bad body with 400', async () => {
    const { json: a } = await putArtifact(t.app, tok, bytesOf(10, 6));
    for (const body of [
      { expiresIn: 0 },
      { expiresIn: 10 ** 9 },
      { expiresIn: 1.5 },
      { mode: 'cdn' },
      { disposition: 'download' },
    ]) {
      const { res, json } = await linkFor(a.id, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(json.code).toBe('bad_request');
    }
    const raw = await t.app.request(`/v1/artifacts/${a.id}/url`, {
      method: 'POST',
      headers: { ...bearer(tok), 'Content-Type': 'application/json' },
      body: '{not json',
    });
    expect(raw.status).toBe(400);
  });

  it('direct falls back to proxy on the fs driver, and says so', async () => {
    const { json: a } = await putArtifact(t.app, tok, bytesOf(10, 7));
    const { json } = await linkFor(a.id, { mode: 'direct' });
    expect(json.fetchMode).toBe('proxy');
    expect((await t.app.request(local(json.url))).status).toBe(200);
  });

  it('an empty body takes the defaults (15 minutes, inline)', async () => {
    const { json: a } = await putArtifact(t.app, tok, bytesOf(10, 8));
    const res = await t.app.request(`/v1/artifacts/${a.id}/url`, { method: 'POST', headers: bearer(tok) });
    expect(res.status).toBe(200);
    expect((await res.json()).urlExpiresAt).toBe('2030-01-01T00:15:00.000Z');
  });
});

describe('?url= on ArtifactRef answers', () => {
  it('put, meta and list carry a working link when asked, and none otherwise', async () => {
    const bytes = bytesOf(1234, 11);
    const put = await t.app.request('/v1/artifacts?url=proxy', {
      method: 'POST',
      headers: { ...bearer(tok), 'Content-Type': 'application/pdf' },
      body: bytes as Uint8Array<ArrayBuffer>,
    });
    expect(put.status).toBe(201);
    const ref = (await put.json()) as Record<string, any>;
    expect(ref).toMatchObject({ fetchMode: 'proxy', urlExpiresAt: '2030-01-01T00:15:00.000Z' });
    const fetched = await t.app.request(local(ref.url));
    expect(Buffer.from(await fetched.arrayBuffer()).equals(bytes)).toBe(true);

    const meta = (await (
      await t.app.request(`/v1/artifacts/${ref.id}/meta?url=direct`, { headers: bearer(tok) })
    ).json()) as Record<string, any>;
    expect(meta.fetchMode).toBe('proxy'); // fs cannot presign
    expect((await t.app.request(local(meta.url))).status).toBe(200);
    const plain = (await (
      await t.app.request(`/v1/artifacts/${ref.id}/meta`, { headers: bearer(tok) })
    ).json()) as Record<string, any>;
    expect(plain.url).toBeUndefined();

    await putArtifact(t.app, tok, bytesOf(10, 12));
    const list = (await (await t.app.request('/v1/artifacts?url=proxy', { headers: bearer(tok) })).json()) as {
      items: Record<string, any>[];
    };
    expect(list.items).toHaveLength(2);
    for (const item of list.items) expect((await t.app.request(local(item.url))).status).toBe(200);
  });

  it('a bad url mode is 400, and a put refused for it stores nothing', async () => {
    const put = await t.app.request('/v1/artifacts?url=cdn', {
      method: 'POST',
      headers: { ...bearer(tok), 'Content-Type': 'text/plain' },
      body: 'never stored',
    });
    expect(put.status).toBe(400);
    expect((await put.json()).code).toBe('bad_request');
    const list = (await (await t.app.request('/v1/artifacts', { headers: bearer(tok) })).json()) as {
      items: unknown[];
    };
    expect(list.items).toEqual([]);
    expect((await t.app.request('/v1/artifacts?url=cdn', { headers: bearer(tok) })).status).toBe(400);
  });
});
