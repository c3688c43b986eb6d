import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { bearer, bytesOf, createTestApp, listAll, putArtifact, type TestApp } from './helpers/app.js';

let t: TestApp;
let tok: string;

beforeEach(async () => {
  t = await createTestApp();
  tok = await t.token({ tenant: 'acme', perms: ['read', 'write'] });
});

afterEach(async () => {
  await t.cleanup();
});

const SIZE = 1000;

async function stored(headers: Record<string, string> = {}, bytes: Uint8Array = bytesOf(SIZE, 5)) {
  const { res, json } = await putArtifact(t.app, tok, bytes, headers);
  expect(res.status).toBe(201);
  return { id: json.id as string, sha256: json.sha256 as string, bytes };
}

const get = (id: string, headers: Record<string, string> = {}, query = '', method = 'GET') =>
  t.app.request(`/v1/artifacts/${id}${query}`, { method, headers: { ...bearer(tok), ...headers } });

function expectSafeDownload(res: Response) {
  expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  expect(res.headers.get('content-security-policy')).toBe('sandbox');
}

describe('Range', () => {
  it.each([
    ['bytes=0-99', 0, 99],
    ['bytes=100-100', 100, 100],
    ['bytes=900-', 900, 999],
    ['bytes=-100', 900, 999],
    ['bytes=-5000', 0, 999],
    ['bytes=990-5000', 990, 999],
  ])('%s answers 206 with the exact bytes', async (range, start, end) => {
    const a = await stored({ 'Content-Type': 'application/pdf' });
    const res = await get(a.id, { Range: range });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe(`bytes ${start}-${end}/${SIZE}`);
    expect(res.headers.get('content-length')).toBe(String(end - start + 1));
    expect(res.headers.get('etag')).toBe(`"${a.sha256}"`);
    expectSafeDownload(res);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(a.bytes.slice(start, end + 1));
  });

  it.each(['bytes=abc', 'items=0-10', 'bytes=5-1', 'bytes=-', 'bytes=1000-', 'bytes=5000-6000', 'bytes=-0', '0-10'])(
    '%s answers 416 invalid_range with Content-Range bytes */size',
    async (range) => {
      const a = await stored();
      const res = await get(a.id, { Range: range });
      expect(res.status).toBe(416);
      expect(res.headers.get('content-range')).toBe(`bytes */${SIZE}`);
      const body = await res.json();
      expect(body.code).toBe('invalid_range');
      expect(typeof body.message).toBe('string');
    },
  );

  it('serves the whole body for a multi-range request', async () => {
    const a = await stored();
    const res = await get(a.id, { Range: 'bytes=0-9,20-29' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-range')).toBeNull();
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(a.bytes);
  });

  it('If-Range with another ETag serves the whole body; with this ETag the range', async () => {
    const a = await stored();
    const whole = await get(a.id, { Range: 'bytes=0-9', 'If-Range': `"${'0'.repeat(64)}"` });
    expect(whole.status).toBe(200);
    expect(new Uint8Array(await whole.arrayBuffer())).toEqual(a.bytes);
    const weak = await get(a.id, { Range: 'bytes=0-9', 'If-Range': `W/"${a.sha256}"` });
    expect(weak.status).toBe(200);
    await weak.arrayBuffer();
    const part = await get(a.id, { Range: 'bytes=0-9', 'If-Range': `"${a.sha256}"` });
    expect(part.status).toBe(206);
    expect(new Uint8Array(await part.arrayBuffer())).toEqual(a.bytes.slice(0, 10));
  });
});

describe('ETag and caching', () => {
  it('ETag is the quoted sha256; Cache-Control is private and immutable for bearer callers', async () => {
    const a = await stored();
    const res = await get(a.id);
    expect(res.headers.get('etag')).toBe(`"${a.sha256}"`);
    const cache = res.headers.get('cache-control') ?? '';
    expect(cache).toContain('private');
    expect(cache).toContain('immutable');
    expect(cache).not.toContain('public');
    expect(res.headers.get('vary')).toMatch(/authorization/i);
    await res.arrayBuffer();
  });

  it.each([
    ['exact', (s: string) => `"${s}"`],
    ['weak', (s: string) => `W/"${s}"`],
    ['list', (s: string) => `"${'1'.repeat(64)}", W/"x", "${s}"`],
    ['star', () => '*'],
  ])('If-None-Match (%s) answers 304 without a body, for GET and HEAD', async (_name, header) => {
    const a = await stored();
    for (const method of ['GET', 'HEAD']) {
      const res = await get(a.id, { 'If-None-Match': header(a.sha256) }, '', method);
      expect(res.status, method).toBe(304);
      expect(res.headers.get('etag')).toBe(`"${a.sha256}"`);
      expect(res.headers.get('cache-control')).toContain('private');
      expect(await res.text()).toBe('');
    }
  });

  it('If-None-Match naming other content answers 200 with the bytes', async () => {
    const a = await stored();
    const res = await get(a.id, { 'If-None-Match': `"${'f'.repeat(64)}"` });
    expect(res.status).toBe(200);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(a.bytes);
  });
});

describe('HEAD', () => {
  it('answers headers without opening the blob, ignoring Range', async () => {
    const a = await stored({ 'Content-Type': 'application/pdf' });
    const blobGet = vi.spyOn(t.blobs, 'get');
    const res = await get(a.id, { Range: 'bytes=0-9' }, '', 'HEAD');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe(String(SIZE));
    expect(res.headers.get('content-range')).toBeNull();
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('etag')).toBe(`"${a.sha256}"`);
    expectSafeDownload(res);
    expect((await res.arrayBuffer()).byteLength).toBe(0);
    expect(blobGet).not.toHaveBeenCalled();
  });
});

describe('untrusted bytes', () => {
  it('every download (200, 206, HEAD) carries nosniff and CSP sandbox', async () => {
    const a = await stored({ 'Content-Type': 'image/png' });
    const full = await get(a.id);
    expect(full.status).toBe(200);
    expectSafeDownload(full);
    await full.arrayBuffer();
    const part = await get(a.id, { Range: 'bytes=1-2' });
    expect(part.status).toBe(206);
    expectSafeDownload(part);
    await part.arrayBuffer();
    const head = await get(a.id, {}, '', 'HEAD');
    expect(head.status).toBe(200);
    expectSafeDownload(head);
  });

  it.each([
    'text/html',
    'text/html; charset=utf-8',
    'image/svg+xml',
    'application/xml',
    'text/xml',
    'text/javascript',
    'application/javascript',
    'application/xhtml+xml',
  ])('%s is always an attachment, even with ?disposition=inline', async (mime) => {
    const a = await stored(
      { 'Content-Type': mime, 'X-Artifact-Filename': 'page.html' },
      new TextEncoder().encode(`<x>${mime}</x>`),
    );
    for (const query of ['', '?disposition=inline']) {
      const res = await get(a.id, {}, query);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-disposition')).toBe('attachment; filename="page.html"');
      expectSafeDownload(res);
      await res.arrayBuffer();
      const head = await get(a.id, {}, query, 'HEAD');
      expect(head.headers.get('content-disposition')).toBe('attachment; filename="page.html"');
    }
  });

  it('a PDF is inline by default and an attachment with ?disposition=attachment', async () => {
    const a = await stored({ 'Content-Type': 'application/pdf', 'X-Artifact-Filename': 'Sales.pdf' });
    const inline = await get(a.id);
    expect(inline.headers.get('content-disposition')).toBe('inline; filename="Sales.pdf"');
    await inline.arrayBuffer();
    const att = await get(a.id, {}, '?disposition=attachment');
    expect(att.headers.get('content-disposition')).toBe('attachment; filename="Sales.pdf"');
    await att.arrayBuffer();
    const bad = await get(a.id, {}, '?disposition=evil');
    expect(bad.status).toBe(400);
    expect((await bad.json()).code).toBe('bad_request');
  });
});

describe('Content-Disposition', () => {
  async function dispositionFor(filename: string, via: 'header' | 'query' = 'header') {
    const headers: Record<string, string> = { 'Content-Type': 'application/pdf' };
    if (via === 'header') headers['X-Artifact-Filename'] = filename;
    const query = via === 'query' ? `?filename=${encodeURIComponent(filename)}` : '';
    const { res, json } = await putArtifact(t.app, tok, bytesOf(10, filename.length + 1), headers, query);
    expect(res.status, filename).toBe(201);
    const dl = await get(json.id);
    await dl.arrayBuffer();
    return { ref: json, header: dl.headers.get('content-disposition') ?? '' };
  }

  it('neutralizes quotes in filename="…"', async () => {
    const { ref, header } = await dispositionFor('say "hi".pdf');
    expect(ref.filename).toBe('say "hi".pdf');
    expect(header).toBe(`inline; filename="say _hi_.pdf"; filename*=UTF-8''say%20%22hi%22.pdf`);
    // One quoted string, nothing can break out of it.
    expect(header).toMatch(/^inline; filename="[^"\\]*"(; filename\*=UTF-8''[A-Za-z0-9%._~!$&+^`|-]+)?$/);
  });

  it('keeps the exact non-ASCII name in filename* (RFC 8187 in, RFC 8187 out)', async () => {
    const { ref, header } = await dispositionFor("UTF-8''na%C3%AFve.pdf");
    expect(ref.filename).toBe('naïve.pdf');
    expect(header).toBe(`inline; filename="na_ve.pdf"; filename*=UTF-8''na%C3%AFve.pdf`);
    const q = await dispositionFor('résumé 2024.pdf', 'query');
    expect(q.ref.filename).toBe('résumé 2024.pdf');
    expect(q.header).toBe(`inline; filename="r_sum_ 2024.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9%202024.pdf`);
  });

  it('takes a plain name with apostrophes as it is', async () => {
    const { ref, header } = await dispositionFor("rock'n'roll.pdf");
    expect(ref.filename).toBe("rock'n'roll.pdf");
    expect(header).toBe(`inline; filename="rock'n'roll.pdf"`);
  });

  it.each([
    ['../../etc/passwd', 'passwd'],
    ['C:\\x\\y.pdf', 'y.pdf'],
    ['/abs/path/z.pdf', 'z.pdf'],
    ['a\\"b.pdf', '"b.pdf'],
  ])('strips directories: %s → %s', async (sent, kept) => {
    const { ref, header } = await dispositionFor(sent);
    expect(ref.filename).toBe(kept);
    expect(header.startsWith(`inline; filename="${kept.replace(/"/g, '_')}"`)).toBe(true);
    expect(header).not.toContain('/');
    expect(header.replace(/filename\*=.*$/, '')).not.toContain('\\');
  });

  it.each([
    ['CR LF (query)', 'query', 'a\r\nSet-Cookie: x=1.pdf'],
    ['LF (query)', 'query', 'a\nb.pdf'],
    ['NUL (query)', 'query', 'a\u0000b.pdf'],
    ['DEL (query)', 'query', 'a\u007fb.pdf'],
    ['C1 control (query)', 'query', 'a\u0085b.pdf'],
    ['tab (header)', 'header', 'a\tb.pdf'],
    ['CR LF (RFC 8187 header)', 'header', "UTF-8''a%0D%0ASet-Cookie%3A%20x.pdf"],
    ['NUL (RFC 8187 header)', 'header', "UTF-8''a%00b.pdf"],
    ['ESC (RFC 8187 header)', 'header', "UTF-8''a%1Bb.pdf"],
  ])('refuses control characters (%s) with 400 and stores nothing', async (_name, via, filename) => {
    const headers: Record<string, string> = via === 'header' ? { 'X-Artifact-Filename': filename } : {};
    const query = via === 'query' ? `?filename=${encodeURIComponent(filename)}` : '';
    const { res, json } = await putArtifact(t.app, tok, 'payload', headers, query);
    expect(res.status).toBe(400);
    expect(json.code).toBe('bad_request');
    expect(res.headers.get('set-cookie')).toBeNull();
    expect(await listAll(t.app, tok)).toEqual([]);
  });

  it('refuses a bad RFC 8187 value with 400', async () => {
    for (const filename of ["UTF-8''%E0%A4%A.pdf", "UTF-8''%FF.pdf", "ISO-8859-1''%E9.pdf"]) {
      const { res, json } = await putArtifact(t.app, tok, 'payload', { 'X-Artifact-Filename': filename });
      expect(res.status, filename).toBe(400);
      expect(json.code).toBe('bad_request');
    }
    expect(await listAll(t.app, tok)).toEqual([]);
  });
});

describe('small bodies (one buffer, cached) and large bodies (streamed)', () => {
  it.each([
    ['small', 4096],
    ['at the 64 KiB line', 64 * 1024],
    ['large', 200_000],
  ])('%s artifact: whole body and ranges are exact, also on repeated reads', async (_label, size) => {
    const bytes = bytesOf(size, 3);
    const a = await stored({ 'Content-Type': 'application/octet-stream' }, bytes);
    for (let round = 0; round < 2; round++) {
      const whole = await get(a.id);
      expect(whole.status).toBe(200);
      expect(whole.headers.get('content-length')).toBe(String(size));
      expect(new Uint8Array(await whole.arrayBuffer())).toEqual(bytes);
      const part = await get(a.id, { Range: `bytes=${size - 300}-${size - 101}` });
      expect(part.status).toBe(206);
      expect(part.headers.get('content-range')).toBe(`bytes ${size - 300}-${size - 101}/${size}`);
      expect(new Uint8Array(await part.arrayBuffer())).toEqual(bytes.subarray(size - 300, size - 100));
    }
  });

  it('a small artifact whose bytes vanished from the blob store answers 503, not wrong bytes', async () => {
    const a = await stored();
    const cold = await createTestApp({ limits: { smallBlobCacheBytes: 0 } });
    try {
      const coldTok = await cold.token({ tenant: 'acme', perms: ['read', 'write'] });
      const { json } = await putArtifact(cold.app, coldTok, a.bytes, {});
      await cold.blobs.delete(json.sha256);
      const res = await cold.app.request(`/v1/artifacts/${json.id}`, { headers: bearer(coldTok) });
      expect(res.status).toBe(503);
      expect((await res.json()).code).toBe('backend_unavailable');
    } finally {
      await cold.cleanup();
    }
  });
});
