import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApp } from '../src/http/app.js';
import { createAuthenticator } from '../src/http/auth.js';
import { bearer, bytesOf, createTestApp, listAll, putArtifact, sha256, type TestApp } from './helpers/app.js';

let t: TestApp;
let clock: number;
let tok: string;

beforeEach(async () => {
  clock = Date.parse('2030-01-01T00:00:00.000Z');
  t = await createTestApp({ now: () => clock });
  tok = await t.token({ tenant: 'acme', sub: 'u1', perms: ['read', 'write'] });
});

afterEach(async () => {
  await t.cleanup();
});

describe('POST /v1/artifacts', () => {
  it('answers 201 with a ref and Location, then 200 with the same id and a refreshed expiry on re-put', async () => {
    const bytes = bytesOf(3000, 7);
    const first = await putArtifact(t.app, tok, bytes, {
      'Content-Type': 'application/pdf',
      'X-Artifact-Filename': 'report.pdf',
    });
    expect(first.res.status).toBe(201);
    const ref = first.json;
    expect(ref.id).toBe(`art_${sha256(bytes).slice(0, 24)}`);
    expect(ref).toMatchObject({
      mimeType: 'application/pdf',
      sizeBytes: 3000,
      sha256: sha256(bytes),
      namespace: 'art',
      filename: 'report.pdf',
      scope: { tenantId: 'acme', userId: 'u1' },
    });
    expect(first.res.headers.get('location')).toBe(`/v1/artifacts/${ref.id}`);
    expect(ref.expiresAt).toBe(new Date(clock + 3600_000).toISOString());

    clock += 60_000;
    const again = await putArtifact(t.app, tok, bytes, {
      'Content-Type': 'application/pdf',
      'X-Artifact-Filename': 'report.pdf',
    });
    expect(again.res.status).toBe(200);
    expect(again.json.id).toBe(ref.id);
    expect(again.res.headers.get('location')).toBe(`/v1/artifacts/${ref.id}`);
    expect(Date.parse(again.json.expiresAt)).toBe(clock + 3600_000);
    expect(Date.parse(again.json.expiresAt)).toBeGreaterThan(Date.parse(ref.expiresAt));
    // Still one reference for this scope.
    expect((await listAll(t.app, tok)).map((r) => r.id)).toEqual([ref.id]);
  });

  it('accepts every wire header as a query parameter', async () => {
    const bytes = new TextEncoder().encode('{"rows":[1,2,3]}');
    const meta = { tool: 'q', n: 1, name: 'café' };
    const q = new URLSearchParams({
      filename: 'dir/rows.json',
      namespace: 'tableau.query',
      meta: JSON.stringify(meta),
      ttl: '120',
      sha256: sha256(bytes),
    });
    const { res, json } = await putArtifact(t.app, tok, bytes, { 'Content-Type': 'application/json' }, `?${q}`);
    expect(res.status).toBe(201);
    expect(json).toMatchObject({
      id: `tableau.query_${sha256(bytes).slice(0, 24)}`,
      namespace: 'tableau.query',
      filename: 'rows.json',
      meta,
      mimeType: 'application/json',
    });
    expect(Date.parse(json.expiresAt)).toBe(clock + 120_000);

    const wrong = await putArtifact(t.app, tok, bytes, {}, `?sha256=${'0'.repeat(64)}`);
    expect(wrong.res.status).toBe(422);
    expect(wrong.json.code).toBe('checksum_mismatch');
  });

  it('takes the same options as X-Artifact-* headers', async () => {
    const bytes = bytesOf(100, 3);
    const { res, json } = await putArtifact(t.app, tok, bytes, {
      'Content-Type': 'image/png',
      'X-Artifact-Filename': 'shot.png',
      'X-Artifact-Namespace': 'playwright.screenshot',
      'X-Artifact-Meta': JSON.stringify({ page: 'home' }),
      'X-Artifact-Source': JSON.stringify({ tool: 'screenshot' }),
      'X-Artifact-Ttl': '30',
      'X-Artifact-Sha256': sha256(bytes).toUpperCase(),
    });
    expect(res.status).toBe(201);
    expect(json).toMatchObject({
      namespace: 'playwright.screenshot',
      filename: 'shot.png',
      meta: { page: 'home' },
      source: { tool: 'screenshot' },
      mimeType: 'image/png',
    });
    expect(Date.parse(json.expiresAt)).toBe(clock + 30_000);
  });
});

describe('GET / HEAD / meta / DELETE', () => {
  it('round-trips the exact bytes', async () => {
    const bytes = bytesOf(200_000, 11);
    const { json } = await putArtifact(t.app, tok, bytes, { 'Content-Type': 'application/octet-stream' });
    const res = await t.app.request(`/v1/artifacts/${json.id}`, { headers: bearer(tok) });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(res.headers.get('content-length')).toBe('200000');
    const got = new Uint8Array(await res.arrayBuffer());
    expect(got.byteLength).toBe(bytes.byteLength);
    expect(sha256(got)).toBe(sha256(bytes));
  });

  it('HEAD answers the download headers and Content-Length without a body', async () => {
    const { json } = await putArtifact(t.app, tok, 'hello world', { 'Content-Type': 'text/plain' });
    const res = await t.app.request(`/v1/artifacts/${json.id}`, { method: 'HEAD', headers: bearer(tok) });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe('11');
    expect(res.headers.get('content-type')).toBe('text/plain');
    expect(res.headers.get('etag')).toBe(`"${json.sha256}"`);
    expect(res.headers.get('accept-ranges')).toBe('bytes');
    expect((await res.arrayBuffer()).byteLength).toBe(0);
  });

  it('GET /meta answers the ref as the caller sees it', async () => {
    const { json } = await putArtifact(t.app, tok, 'x', {
      'Content-Type': 'text/plain',
      'X-Artifact-Filename': 'x.txt',
      'X-Artifact-Meta': '{"a":1}',
    });
    const res = await t.app.request(`/v1/artifacts/${json.id}/meta`, { headers: bearer(tok) });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('cache-control')).toBe('private, no-cache');
    const ref = await res.json();
    expect(ref).toMatchObject({
      id: json.id,
      filename: 'x.txt',
      meta: { a: 1 },
      sizeBytes: 1,
      scope: { tenantId: 'acme' },
    });
  });

  it('DELETE answers 204, then the id is gone (404 everywhere)', async () => {
    const { json } = await putArtifact(t.app, tok, 'bye');
    const del = await t.app.request(`/v1/artifacts/${json.id}`, { method: 'DELETE', headers: bearer(tok) });
    expect(del.status).toBe(204);
    expect(await del.text()).toBe('');
    for (const [method, path] of [
      ['GET', ''],
      ['HEAD', ''],
      ['GET', '/meta'],
      ['DELETE', ''],
    ] as const) {
      const res = await t.app.request(`/v1/artifacts/${json.id}${path}`, { method, headers: bearer(tok) });
      expect(res.status, `${method} ${path}`).toBe(404);
      if (method !== 'HEAD') expect((await res.json()).code).toBe('not_found');
    }
    expect(await listAll(t.app, tok)).toEqual([]);
  });
});

describe('GET /v1/artifacts (list)', () => {
  async function seed() {
    const ids: string[] = [];
    const specs = [
      { mime: 'image/png', ns: 'shots', session: 's1', trace: 't1' },
      { mime: 'image/jpeg', ns: 'shots', session: 's1', trace: 't2' },
      { mime: 'application/pdf', ns: 'docs', session: 's2', trace: 't1' },
      { mime: 'application/json', ns: 'docs', session: 's2', trace: 't2' },
      { mime: 'text/plain', ns: 'art', session: 's3', trace: 't3' },
    ];
    for (const [i, s] of specs.entries()) {
      clock += 1000;
      const { res, json } = await putArtifact(t.app, tok, bytesOf(50 + i, 100 + i), {
        'Content-Type': s.mime,
        'X-Artifact-Namespace': s.ns,
        'X-Artifact-Session': s.session,
        'X-Artifact-Trace': s.trace,
      });
      expect(res.status).toBe(201);
      ids.push(json.id);
    }
    return ids;
  }

  it('pages newest first with a cursor, never repeating or skipping', async () => {
    const ids = await seed();
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await t.app.request(`/v1/artifacts?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, {
        headers: bearer(tok),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('private, no-cache');
      const page = (await res.json()) as { items: { id: string }[]; nextCursor?: string };
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((i) => i.id));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].reverse());
  });

  it('filters by session, trace, namespace, mimePrefix and creation time', async () => {
    const ids = await seed();
    const list = async (q: string) => {
      const res = await t.app.request(`/v1/artifacts?${q}`, { headers: bearer(tok) });
      expect(res.status, q).toBe(200);
      return ((await res.json()) as { items: { id: string }[] }).items.map((i) => i.id).sort();
    };
    const sorted = (...xs: (string | undefined)[]) => xs.map((x) => x!).sort();
    expect(await list('session=s1')).toEqual(sorted(ids[0], ids[1]));
    expect(await list('trace=t1')).toEqual(sorted(ids[0], ids[2]));
    expect(await list('session=s2&trace=t2')).toEqual(sorted(ids[3]));
    expect(await list('namespace=docs')).toEqual(sorted(ids[2], ids[3]));
    expect(await list('mimePrefix=image/')).toEqual(sorted(ids[0], ids[1]));
    expect(await list('mimePrefix=application/pdf')).toEqual(sorted(ids[2]));
    const base = Date.parse('2030-01-01T00:00:00.000Z');
    const at = (s: number) => encodeURIComponent(new Date(base + s * 1000).toISOString());
    // Items were created at +1s .. +5s; after is inclusive, before exclusive.
    expect(await list(`createdAfter=${at(4)}`)).toEqual(sorted(ids[3], ids[4]));
    expect(await list(`createdBefore=${at(3)}`)).toEqual(sorted(ids[0], ids[1]));
    expect(await list(`createdAfter=${at(2)}&createdBefore=${at(4)}`)).toEqual(sorted(ids[1], ids[2]));
    expect(await list('session=nobody')).toEqual([]);
  });

  it('bounds limit to 1..1000 and refuses bad filters and cursors with 400', async () => {
    await seed();
    const ok = await t.app.request('/v1/artifacts?limit=1000', { headers: bearer(tok) });
    expect(ok.status).toBe(200);
    const one = await t.app.request('/v1/artifacts?limit=1', { headers: bearer(tok) });
    expect(((await one.json()) as { items: unknown[] }).items).toHaveLength(1);
    for (const q of [
      'limit=0',
      'limit=1001',
      'limit=abc',
      'limit=-1',
      'cursor=not-a-cursor',
      `cursor=${btoa('v1:x:y')}`,
      'createdAfter=yesterday',
      'namespace=Bad NS',
    ]) {
      const res = await t.app.request(`/v1/artifacts?${q}`, { headers: bearer(tok) });
      expect(res.status, q).toBe(400);
      const body = await res.json();
      expect(body.code, q).toBe('bad_request');
      expect(typeof body.message).toBe('string');
    }
  });
});

describe('ops endpoints', () => {
  it('/healthz and /readyz answer without a token', async () => {
    const h = await t.app.request('/healthz');
    expect(h.status).toBe(200);
    expect(await h.json()).toEqual({ status: 'ok' });
    const r = await t.app.request('/readyz');
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ status: 'ready' });
  });

  it('/readyz answers 503 with Retry-After once draining', async () => {
    let draining = false;
    const app = createApp({
      service: t.service,
      ops: t.ops,
      auth: createAuthenticator({ hmacSecrets: [{ kid: 'k1', secret: 'x'.repeat(32) }] }),
      isDraining: () => draining,
    });
    expect((await app.request('/readyz')).status).toBe(200);
    draining = true;
    const res = await app.request('/readyz');
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect((await res.json()).code).toBe('backend_unavailable');
  });

  it('/openapi.json is an OpenAPI 3.1 document with every /v1 path and operation', async () => {
    const res = await t.app.request('/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const doc = (await res.json()) as {
      openapi: string;
      info: { title: string; version: string };
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, unknown>; securitySchemes: Record<string, unknown> };
    };
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.info.title).toBe('artifact-store');
    expect(doc.info.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(Object.keys(doc.paths['/v1/artifacts'] ?? {}).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/v1/artifacts/{id}'] ?? {}).sort()).toEqual(['delete', 'get', 'head']);
    expect(Object.keys(doc.paths['/v1/artifacts/{id}/meta'] ?? {})).toEqual(['get']);
    expect(doc.paths['/healthz']).toBeDefined();
    expect(doc.paths['/readyz']).toBeDefined();
    expect(doc.components.schemas).toHaveProperty('ArtifactRef');
    expect(doc.components.schemas).toHaveProperty('Error');
    expect(doc.components.securitySchemes).toHaveProperty('bearer');
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        expect(op, `${method} ${path}`).toHaveProperty('responses');
      }
    }
  });
});

describe('bad input', () => {
  const expectNothingStored = async () => {
    expect(await listAll(t.app, tok)).toEqual([]);
    expect(await t.blobFiles()).toEqual([]);
  };

  it('refuses a declared Content-Length over the limit with 413 before reading', async () => {
    const res = await t.app.request('/v1/artifacts', {
      method: 'POST',
      headers: { ...bearer(tok), 'Content-Length': String(2 * 1024 * 1024) },
      body: 'tiny',
    });
    expect(res.status).toBe(413);
    const body = await res.json();
    expect(body.code).toBe('payload_too_large');
    expect(body.message).toMatch(/1048576 bytes/);
    await expectNothingStored();
  });

  it('refuses a streamed body over the limit with 413 and keeps nothing', async () => {
    let pulled = 0;
    const chunk = new Uint8Array(64 * 1024).fill(1);
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += chunk.byteLength;
        if (pulled > 64 * 1024 * 1024) controller.close();
        else controller.enqueue(chunk);
      },
    });
    const res = await t.app.request('/v1/artifacts', {
      method: 'POST',
      headers: bearer(tok),
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(res.status).toBe(413);
    expect((await res.json()).code).toBe('payload_too_large');
    expect(pulled).toBeLessThan(4 * 1024 * 1024);
    await expectNothingStored();
  });

  it('answers 422 checksum_mismatch on a wrong declared sha256 and keeps nothing', async () => {
    const { res, json } = await putArtifact(t.app, tok, 'the bytes', { 'X-Artifact-Sha256': sha256('other bytes') });
    expect(res.status).toBe(422);
    expect(json.code).toBe('checksum_mismatch');
    expect(json.message).toContain(sha256('the bytes'));
    await expectNothingStored();
  });

  it.each([
    ['sha256 not hex', { 'X-Artifact-Sha256': 'xyz' }],
    ['sha256 too short', { 'X-Artifact-Sha256': 'ab'.repeat(16) }],
    ['namespace with a space', { 'X-Artifact-Namespace': 'my tool' }],
    ['namespace too long', { 'X-Artifact-Namespace': 'a'.repeat(129) }],
    ['meta not JSON', { 'X-Artifact-Meta': '{not json' }],
    ['meta an array', { 'X-Artifact-Meta': '[1,2]' }],
    ['meta a string', { 'X-Artifact-Meta': '"x"' }],
    ['meta over 8 KiB', { 'X-Artifact-Meta': JSON.stringify({ big: 'x'.repeat(8200) }) }],
    ['ttl zero', { 'X-Artifact-Ttl': '0' }],
    ['ttl negative', { 'X-Artifact-Ttl': '-5' }],
    ['ttl fraction', { 'X-Artifact-Ttl': '1.5' }],
    ['ttl words', { 'X-Artifact-Ttl': 'soon' }],
    ['ttl over the maximum', { 'X-Artifact-Ttl': String(8 * 24 * 3600) }],
    ['mime type garbage', { 'Content-Type': 'not a mime' }],
  ])('answers 400 bad_request for %s and keeps nothing', async (_name, headers) => {
    const { res, json } = await putArtifact(t.app, tok, 'some bytes', headers as Record<string, string>);
    expect(res.status).toBe(400);
    expect(json.code).toBe('bad_request');
    expect(json.message.length).toBeGreaterThan(10);
    await expectNothingStored();
  });

  it('stores a zero-byte artifact (with or without a body stream); a Range on it is 416 bytes */0', async () => {
    const empty = await putArtifact(t.app, tok, new Uint8Array(0));
    expect(empty.res.status).toBe(201);
    expect(empty.json).toMatchObject({ sizeBytes: 0, sha256: sha256(new Uint8Array(0)) });
    const none = await t.app.request('/v1/artifacts', { method: 'POST', headers: bearer(tok) });
    expect(none.status).toBe(200); // the same bytes, already held by this scope
    expect((await none.json()).id).toBe(empty.json.id);
    const got = await t.app.request(`/v1/artifacts/${empty.json.id}`, { headers: bearer(tok) });
    expect(got.status).toBe(200);
    expect(got.headers.get('content-length')).toBe('0');
    expect(got.headers.get('etag')).toBe(`"${sha256(new Uint8Array(0))}"`);
    expect((await got.arrayBuffer()).byteLength).toBe(0);
    const head = await t.app.request(`/v1/artifacts/${empty.json.id}`, { method: 'HEAD', headers: bearer(tok) });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('0');
    for (const range of ['bytes=0-0', 'bytes=0-', 'bytes=-1']) {
      const res = await t.app.request(`/v1/artifacts/${empty.json.id}`, { headers: { ...bearer(tok), Range: range } });
      expect(res.status, range).toBe(416);
      expect(res.headers.get('content-range'), range).toBe('bytes */0');
      expect((await res.json()).code).toBe('invalid_range');
    }
  });

  it('answers the same 404 body for unknown ids and malformed ids', async () => {
    const body = async (id: string) => {
      const res = await t.app.request(`/v1/artifacts/${encodeURIComponent(id)}/meta`, { headers: bearer(tok) });
      expect(res.status).toBe(404);
      const json = (await res.json()) as { code: string; message: string };
      return { code: json.code, message: json.message.replace(JSON.stringify(id), '<id>') };
    };
    const unknown = await body('art_0123456789abcdef01234567');
    expect(unknown.code).toBe('not_found');
    expect(unknown.message).toContain('<id>');
    for (const bad of [
      'nope',
      'ART_0123456789ABCDEF01234567',
      'art_0123',
      'art_0123456789abcdef0123456z',
      'a b',
      'art_0123456789abcdef01234567x',
    ]) {
      expect(await body(bad), bad).toEqual(unknown);
    }
    const get = await t.app.request('/v1/artifacts/nope', { headers: bearer(tok) });
    expect(get.status).toBe(404);
    const del = await t.app.request('/v1/artifacts/nope', { method: 'DELETE', headers: bearer(tok) });
    expect(del.status).toBe(404);
  });

  it('answers unknown routes with a JSON 404', async () => {
    for (const [method, path] of [
      ['GET', '/nope'],
      ['GET', '/v2/artifacts'],
      ['PUT', '/healthz'],
    ] as const) {
      const res = await t.app.request(path, { method, headers: bearer(tok) });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect((await res.json()).code).toBe('not_found');
    }
  });
});

describe('X-Request-Id', () => {
  const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

  it('echoes a valid id, on success and on errors', async () => {
    const ok = await t.app.request('/healthz', { headers: { 'X-Request-Id': 'req-123.abc:9' } });
    expect(ok.headers.get('x-request-id')).toBe('req-123.abc:9');
    const err = await t.app.request('/v1/artifacts/nope', { headers: { ...bearer(tok), 'X-Request-Id': 'trace_42' } });
    expect(err.status).toBe(404);
    expect(err.headers.get('x-request-id')).toBe('trace_42');
    const unauth = await t.app.request('/v1/artifacts', { headers: { 'X-Request-Id': 'r1' } });
    expect(unauth.status).toBe(401);
    expect(unauth.headers.get('x-request-id')).toBe('r1');
  });

  it('is on every download answer: 200, 206, HEAD, 304, 416 and 404', async () => {
    const { json: ref } = await putArtifact(t.app, tok, bytesOf(5000, 3));
    const url = `/v1/artifacts/${ref.id}`;
    const cases: [string, RequestInit, number][] = [
      ['200', {}, 200],
      ['206', { headers: { Range: 'bytes=0-9' } }, 206],
      ['HEAD', { method: 'HEAD' }, 200],
      ['304', { headers: { 'If-None-Match': `"${ref.sha256}"` } }, 304],
      ['416', { headers: { Range: 'bytes=9000-9001' } }, 416],
    ];
    for (const [name, init, status] of cases) {
      const res = await t.app.request(url, {
        ...init,
        headers: { ...bearer(tok), ...(init.headers as Record<string, string>), 'X-Request-Id': `dl-${name}` },
      });
      expect(res.status, name).toBe(status);
      expect(res.headers.get('x-request-id'), name).toBe(`dl-${name}`);
      // Exactly one value, never the id twice.
      expect(res.headers.get('x-request-id')?.split(',')).toHaveLength(1);
    }
    const gone = await t.app.request('/v1/artifacts/art_0123456789abcdef01234567', {
      headers: { ...bearer(tok), 'X-Request-Id': 'dl-404' },
    });
    expect(gone.status).toBe(404);
    expect(gone.headers.get('x-request-id')).toBe('dl-404');
  });

  it('generates one when absent or invalid', async () => {
    const none = await t.app.request('/healthz');
    expect(none.headers.get('x-request-id')).toMatch(UUID);
    for (const bad of ['has spaces', 'x'.repeat(129), 'semi;colon', '<script>']) {
      const res = await t.app.request('/healthz', { headers: { 'X-Request-Id': bad } });
      const id = res.headers.get('x-request-id');
      expect(id, bad).toMatch(UUID);
    }
    const a = (await t.app.request('/healthz')).headers.get('x-request-id');
    const b = (await t.app.request('/healthz')).headers.get('x-request-id');
    expect(a).not.toBe(b);
  });
});

describe('CORS', () => {
  it('answers preflight for a configured origin only, and exposes the download headers', async () => {
    const c = await createTestApp({ corsOrigins: ['https://app.example'] });
    try {
      const preflight = (origin: string) =>
        c.app.request('/v1/artifacts', {
          method: 'OPTIONS',
          headers: {
            Origin: origin,
            'Access-Control-Request-Method': 'POST',
            'Access-Control-Request-Headers': 'authorization,x-artifact-filename,content-type',
          },
        });
      const ok = await preflight('https://app.example');
      expect(ok.status).toBe(204);
      expect(ok.headers.get('access-control-allow-origin')).toBe('https://app.example');
      expect(ok.headers.get('access-control-allow-methods')).toContain('POST');
      const allowed = (ok.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(',');
      expect(allowed).toEqual(
        expect.arrayContaining(['authorization', 'x-artifact-filename', 'content-type', 'range']),
      );

      const other = await preflight('https://evil.example');
      expect(other.headers.get('access-control-allow-origin')).toBeNull();

      const token = await c.token({ tenant: 'acme', perms: ['read', 'write'] });
      const { json } = await putArtifact(c.app, token, 'cors bytes', { Origin: 'https://app.example' });
      const get = await c.app.request(`/v1/artifacts/${json.id}`, {
        headers: { ...bearer(token), Origin: 'https://app.example', Range: 'bytes=0-3' },
      });
      expect(get.status).toBe(206);
      expect(get.headers.get('access-control-allow-origin')).toBe('https://app.example');
      const exposed = (get.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(',');
      expect(exposed).toEqual(expect.arrayContaining(['etag', 'content-range', 'content-disposition', 'x-request-id']));
      expect(get.headers.get('vary')).toMatch(/origin/i);
      expect(await get.text()).toBe('cors');

      const evil = await c.app.request(`/v1/artifacts/${json.id}`, {
        headers: { ...bearer(token), Origin: 'https://evil.example' },
      });
      expect(evil.headers.get('access-control-allow-origin')).toBeNull();
      await evil.arrayBuffer();
    } finally {
      await c.cleanup();
    }
  });

  it('sends no CORS headers when no origins are configured', async () => {
    const pre = await t.app.request('/v1/artifacts', {
      method: 'OPTIONS',
      headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'POST' },
    });
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
    expect(pre.headers.get('access-control-allow-methods')).toBeNull();
    const { json } = await putArtifact(t.app, tok, 'no cors');
    const get = await t.app.request(`/v1/artifacts/${json.id}`, {
      headers: { ...bearer(tok), Origin: 'https://app.example' },
    });
    expect(get.status).toBe(200);
    for (const [name] of get.headers) expect(name.startsWith('access-control-')).toBe(false);
    expect(await get.text()).toBe('no cors');
  });
});
