import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ListQuery } from '../src/core/schemas.js';
import type { ArtifactStore } from '../src/client/artifact-store.js';
import { ArtifactError, type ErrorCode } from '../src/core/errors.js';
import { sha256Hex } from '../src/core/hash.js';

export interface ContractSubject {
  store: ArtifactStore;
  /** A store for another session of the same tenant, when the implementation has sessions. */
  otherSession?: ArtifactStore;
  cleanup(): Promise<void>;
}

const text = (bytes: Uint8Array | null) => (bytes ? new TextDecoder().decode(bytes) : null);

async function readAll(stream: ReadableStream<Uint8Array> | null): Promise<Uint8Array | null> {
  return stream ? new Uint8Array(await new Response(stream).arrayBuffer()) : null;
}

function streamOf(...chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(c);
      controller.close();
    },
  });
}

/** Distinct non-trivial bytes per seed. */
function bytesOf(seed: number, size = 1000): Uint8Array {
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = (i * 31 + seed * 7 + (i >> 8)) & 0xff;
  out[0] = seed & 0xff;
  out[1] = (seed >> 8) & 0xff;
  return out;
}

async function expectArtifactError(promise: Promise<unknown>, code: ErrorCode): Promise<ArtifactError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, `expected ArtifactError ${code}`).toBeInstanceOf(ArtifactError);
  expect((err as ArtifactError).code).toBe(code);
  return err as ArtifactError;
}

const ID = (ns: string) => new RegExp(`^${ns.replace(/\./g, '\\.')}_[0-9a-f]{24}$`);
const MISSING_ID = 'art_000000000000000000000000';
// A one-pixel PNG.
const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

/**
 * The behaviour every ArtifactStore shares (HTTP, embedded, in-memory): run it once per implementation.
 * `make` is called before each test and must return stores over empty storage (or a fresh session).
 */
export function describeArtifactStoreContract(name: string, make: () => Promise<ContractSubject>): void {
  describe(`ArtifactStore contract: ${name}`, () => {
    let subject: ContractSubject;
    let store: ArtifactStore;

    beforeEach(async () => {
      subject = await make();
      store = subject.store;
    });
    afterEach(async () => {
      await subject.cleanup();
    });

    describe('round trips', () => {
      it('putBytes → get and getStream give the same bytes back', async () => {
        const data = bytesOf(1, 70_000);
        const ref = await store.putBytes(data, { mimeType: 'application/pdf', filename: 'Sales.pdf' });
        expect(ref.sizeBytes).toBe(data.byteLength);
        expect(ref.sha256).toBe(await sha256Hex(data));
        expect(await store.get(ref.id)).toEqual(data);
        expect(await readAll(await store.getStream(ref.id))).toEqual(data);
      });

      it('putText stores UTF-8 with a text/plain mime type by default', async () => {
        const ref = await store.putText('naïve café ☕\nline two');
        expect(ref.mimeType).toMatch(/^text\/plain/);
        expect(text(await store.get(ref.id))).toBe('naïve café ☕\nline two');
      });

      it('putBase64 with a data: URL takes its media type and stores the decoded bytes', async () => {
        const ref = await store.putBase64(`data:image/png;base64,${PNG_BASE64}`);
        expect(ref.mimeType).toBe('image/png');
        const bytes = await store.get(ref.id);
        expect(bytes?.subarray(0, 4)).toEqual(new Uint8Array([0x89, 0x50, 0x4e, 0x47]));
        expect(ref.sizeBytes).toBe(bytes?.byteLength);
      });

      it('putBase64 accepts plain and url-safe base64 of the same bytes (same id)', async () => {
        const data = bytesOf(2, 300);
        const standard = btoa(String.fromCharCode(...data));
        const urlSafe = standard.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
        const a = await store.putBase64(standard, { mimeType: 'application/octet-stream' });
        const b = await store.putBase64(urlSafe);
        expect(b.id).toBe(a.id);
        expect(await store.get(a.id)).toEqual(data);
      });

      it('putStream stores a multi-chunk stream whole', async () => {
        const parts = [bytesOf(3, 5000), bytesOf(4, 1), bytesOf(5, 20_000)];
        const whole = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
        let offset = 0;
        for (const p of parts) {
          whole.set(p, offset);
          offset += p.byteLength;
        }
        const ref = await store.putStream(streamOf(...parts), { mimeType: 'application/octet-stream' });
        expect(ref.sizeBytes).toBe(whole.byteLength);
        expect(ref.sha256).toBe(await sha256Hex(whole));
        expect(await store.get(ref.id)).toEqual(whole);
      });
    });

    describe('ids', () => {
      it('are {namespace}_{first 24 hex of sha256}', async () => {
        const data = bytesOf(6);
        const sha = await sha256Hex(data);
        const plain = await store.putBytes(data);
        expect(plain.id).toBe(`art_${sha.slice(0, 24)}`);
        expect(plain.namespace).toBe('art');
        const named = await store.putBytes(data, { namespace: 'tableau.download_workbook' });
        expect(named.id).toMatch(ID('tableau.download_workbook'));
        expect(named.id).toBe(`tableau.download_workbook_${sha.slice(0, 24)}`);
      });

      it('a re-put of the same bytes gives the same id and one listing row', async () => {
        const data = bytesOf(7);
        const first = await store.putBytes(data, { filename: 'a.bin' });
        const again = await store.putBytes(data, { filename: 'a.bin' });
        expect(again.id).toBe(first.id);
        const page = await store.list();
        expect(page.items.filter((r) => r.id === first.id)).toHaveLength(1);
      });

      it('different bytes give different ids', async () => {
        const a = await store.putBytes(bytesOf(8));
        const b = await store.putBytes(bytesOf(9));
        expect(a.id).not.toBe(b.id);
      });
    });

    describe('getRef', () => {
      it('describes what was put', async () => {
        const data = bytesOf(10, 4321);
        const ref = await store.putBytes(data, {
          mimeType: 'application/pdf',
          filename: 'reports/Q3 Sales.pdf',
          namespace: 'reports',
          meta: { pages: 3, title: 'Q3' },
          source: { tool: 'download_workbook' },
          ttl: 120,
        });
        const got = await store.getRef(ref.id);
        expect(got).not.toBeNull();
        expect(got).toMatchObject({
          id: ref.id,
          mimeType: 'application/pdf',
          filename: 'Q3 Sales.pdf',
          sizeBytes: 4321,
          sha256: await sha256Hex(data),
          namespace: 'reports',
          meta: { pages: 3, title: 'Q3' },
          source: { tool: 'download_workbook' },
        });
        expect(got!.scope).toEqual(ref.scope);
        expect(got!.scope.tenantId).toEqual(expect.any(String));
        const created = Date.parse(got!.createdAt);
        expect(Number.isNaN(created)).toBe(false);
        expect(Date.parse(got!.expiresAt!) - created).toBe(120_000);
      });

      it('keeps a non-ASCII filename exactly', async () => {
        const ref = await store.putText('x', { filename: 'Ünïcødé résumé 报告.txt' });
        expect(ref.filename).toBe('Ünïcødé résumé 报告.txt');
        expect((await store.getRef(ref.id))?.filename).toBe('Ünïcødé résumé 报告.txt');
      });

      it('keeps non-ASCII meta exactly', async () => {
        const ref = await store.putText('meta', { meta: { title: 'Straße – 東京', quote: "it's" } });
        expect((await store.getRef(ref.id))?.meta).toEqual({ title: 'Straße – 東京', quote: "it's" });
      });
    });

    describe('ranges (where ranges is declared)', () => {
      it('getStream returns the asked byte range (inclusive ends), clamped to the size', async (ctx) => {
        if (!store.capabilities.ranges) return ctx.skip('this store declares no ranges capability');
        const data = bytesOf(11, 10_000);
        const ref = await store.putBytes(data);
        expect(await readAll(await store.getStream(ref.id, { range: { start: 100, end: 199 } }))).toEqual(
          data.subarray(100, 200),
        );
        expect(await readAll(await store.getStream(ref.id, { range: { start: 9990, end: 20_000 } }))).toEqual(
          data.subarray(9990),
        );
        expect(await readAll(await store.getStream(ref.id, { range: { start: 0, end: 0 } }))).toEqual(
          data.subarray(0, 1),
        );
      });

      it('a range starting past the end is invalid_range', async (ctx) => {
        if (!store.capabilities.ranges) return ctx.skip('this store declares no ranges capability');
        const ref = await store.putBytes(bytesOf(12, 10));
        await expectArtifactError(store.getStream(ref.id, { range: { start: 10, end: 20 } }), 'invalid_range');
      });
    });

    describe('missing, exists and delete', () => {
      it('a missing or malformed id reads as null / false', async () => {
        for (const id of [MISSING_ID, 'not-an-id', '../../etc/passwd']) {
          expect(await store.get(id)).toBeNull();
          expect(await store.getStream(id)).toBeNull();
          expect(await store.getRef(id)).toBeNull();
          expect(await store.exists(id)).toBe(false);
          expect(await store.delete(id)).toBe(false);
        }
      });

      it('delete removes the artifact; a second delete is false', async () => {
        const ref = await store.putText('to delete');
        expect(await store.exists(ref.id)).toBe(true);
        expect(await store.delete(ref.id)).toBe(true);
        expect(await store.exists(ref.id)).toBe(false);
        expect(await store.get(ref.id)).toBeNull();
        expect(await store.getRef(ref.id)).toBeNull();
        expect((await store.list()).items.map((r) => r.id)).not.toContain(ref.id);
        expect(await store.delete(ref.id)).toBe(false);
      });

      it('the same bytes can be stored again after a delete', async () => {
        const ref = await store.putText('phoenix');
        await store.delete(ref.id);
        const again = await store.putText('phoenix');
        expect(again.id).toBe(ref.id);
        expect(text(await store.get(ref.id))).toBe('phoenix');
      });
    });

    describe('list', () => {
      it('pages with a cursor cover every item once, newest first', async () => {
        const put: string[] = [];
        for (let i = 0; i < 7; i++) put.push((await store.putBytes(bytesOf(100 + i, 50))).id);
        const seen: string[] = [];
        let cursor: string | undefined;
        let pages = 0;
        do {
          const page = await store.list({ limit: 2, ...(cursor ? { cursor } : {}) });
          expect(page.items.length).toBeLessThanOrEqual(2);
          seen.push(...page.items.map((r) => r.id));
          cursor = page.nextCursor;
          pages++;
        } while (cursor && pages < 20);
        expect(pages).toBe(4);
        expect(new Set(seen).size).toBe(seen.length);
        expect([...seen].sort()).toEqual([...put].sort());
        const createdAt = (await store.list({ limit: 100 })).items.map((r) => Date.parse(r.createdAt));
        expect(createdAt).toEqual([...createdAt].sort((a, b) => b - a));
      });

      it('filters by namespace and mime prefix', async () => {
        const alpha = await store.putBytes(bytesOf(200), { namespace: 'alpha', mimeType: 'image/png' });
        const beta = await store.putBytes(bytesOf(201), { namespace: 'beta', mimeType: 'application/pdf' });
        expect((await store.list({ namespace: 'alpha' })).items.map((r) => r.id)).toEqual([alpha.id]);
        expect((await store.list({ namespace: 'beta' })).items.map((r) => r.id)).toEqual([beta.id]);
        expect((await store.list({ mimePrefix: 'image/' })).items.map((r) => r.id)).toEqual([alpha.id]);
        expect((await store.list({ namespace: 'gamma' })).items).toEqual([]);
      });

      it('an invalid cursor is bad_request', async () => {
        await expectArtifactError(store.list({ cursor: '%%%not-a-cursor' }), 'bad_request');
      });

      it('searches id, filename and name in either case, and follows each sort page by page', async () => {
        const put = [
          await store.putBytes(bytesOf(300, 30), { filename: 'Q3 Report.pdf', mimeType: 'application/pdf' }),
          await store.putBytes(bytesOf(301, 10), { filename: 'rate_100%.csv', mimeType: 'text/csv' }),
          await store.putBytes(bytesOf(302, 50), { filename: 'aardvark.png', mimeType: 'image/png' }),
          await store.putBytes(bytesOf(303, 20), { namespace: 'zeta' }),
        ];
        const [report, rate, png, bare] = put;
        const ids = async (query: ListQuery) => {
          const out: string[] = [];
          let cursor: string | undefined;
          do {
            const page = await store.list({ ...query, limit: 1, ...(cursor ? { cursor } : {}) });
            out.push(...page.items.map((r) => r.id));
            cursor = page.nextCursor;
          } while (cursor);
          return out;
        };
        expect(await ids({ q: 'report' })).toEqual([report!.id]);
        expect(await ids({ q: '100%' })).toEqual([rate!.id]);
        expect(await ids({ q: '%' })).toEqual([rate!.id]);
        expect(await ids({ q: 'zeta_' })).toEqual([bare!.id]);
        expect(await ids({ q: 'nothing like it' })).toEqual([]);
        expect(await ids({ sort: 'largest' })).toEqual([png!.id, report!.id, bare!.id, rate!.id]);
        expect(await ids({ sort: 'smallest' })).toEqual([rate!.id, bare!.id, report!.id, png!.id]);
        // Byte order: upper case before lower case; no filename sorts by its id.
        expect(await ids({ sort: 'name' })).toEqual([report!.id, png!.id, rate!.id, bare!.id]);
        expect(await ids({ sort: 'oldest' })).toEqual(put.map((r) => r.id));
        expect(await ids({})).toEqual(put.map((r) => r.id).reverse());
      });

      it('refuses a bad search, a bad sort and a cursor of another sort with bad_request', async () => {
        await store.putBytes(bytesOf(310));
        await store.putBytes(bytesOf(311));
        await expectArtifactError(store.list({ q: '' }), 'bad_request');
        await expectArtifactError(store.list({ q: 'x'.repeat(201) }), 'bad_request');
        await expectArtifactError(store.list({ sort: 'biggest' as never }), 'bad_request');
        const { nextCursor } = await store.list({ sort: 'largest', limit: 1 });
        await expectArtifactError(store.list({ sort: 'name', cursor: nextCursor! }), 'bad_request');
        await expectArtifactError(store.list({ cursor: nextCursor! }), 'bad_request');
      });
    });

    describe('bad input', () => {
      it('an invalid namespace is bad_request', async () => {
        await expectArtifactError(store.putBytes(bytesOf(300), { namespace: 'Bad Namespace!' }), 'bad_request');
        await expectArtifactError(store.putText('x', { namespace: '' }), 'bad_request');
      });

      it('malformed base64 is bad_request', async () => {
        await expectArtifactError(store.putBase64('this is *not* base64!'), 'bad_request');
        await expectArtifactError(store.putBase64('data:image/png,notbase64'), 'bad_request');
        await expectArtifactError(store.putBase64('QUJD='), 'bad_request');
      });

      it('a declared sha256 that does not match is checksum_mismatch, and nothing is stored', async () => {
        const data = bytesOf(301);
        const wrong = await sha256Hex(bytesOf(302));
        const err = await expectArtifactError(store.putBytes(data, { sha256: wrong }), 'checksum_mismatch');
        expect(err.details).toMatchObject({ expected: wrong, actual: await sha256Hex(data) });
        await expectArtifactError(store.putStream(streamOf(data), { sha256: wrong }), 'checksum_mismatch');
        expect((await store.list()).items).toEqual([]);
      });

      it('a matching declared sha256 is accepted', async () => {
        const data = bytesOf(303);
        const ref = await store.putBytes(data, { sha256: await sha256Hex(data) });
        expect(ref.sha256).toBe(await sha256Hex(data));
      });

      it('a zero-byte artifact is stored and reads back empty, whichever put (an empty tool output is an output)', async () => {
        const empty = await sha256Hex(new Uint8Array(0));
        const refs = [
          await store.putBytes(new Uint8Array(0)),
          await store.putText(''),
          await store.putStream(streamOf()),
          await store.putBase64(''),
        ];
        for (const ref of refs) expect(ref).toMatchObject({ id: refs[0]!.id, sizeBytes: 0, sha256: empty });
        expect(await store.exists(refs[0]!.id)).toBe(true);
        const bytes = await store.get(refs[0]!.id);
        expect(bytes).not.toBeNull();
        expect(bytes!.byteLength).toBe(0);
        expect((await readAll(await store.getStream(refs[0]!.id)))?.byteLength).toBe(0);
        if (store.capabilities.ranges) {
          await expectArtifactError(store.getStream(refs[0]!.id, { range: { start: 0, end: 0 } }), 'invalid_range');
        }
        expect((await store.list()).items.map((r) => r.id)).toEqual([refs[0]!.id]);
      });

      it('a filename with control characters is bad_request', async () => {
        await expectArtifactError(store.putText('x', { filename: 'evil\r\nX-Injected: 1.txt' }), 'bad_request');
      });
    });

    describe('views (where views is declared)', () => {
      it('read, search and query look inside an artifact, and another scope sees nothing', async (ctx) => {
        if (!store.capabilities.views || !store.read || !store.search || !store.query)
          return ctx.skip('this store declares no views capability');
        const log = `${Array.from({ length: 300 }, (_, i) => (i === 211 ? 'ERROR disk full' : `ok ${i + 1}`)).join('\n')}\n`;
        const ref = await store.putText(log, { filename: 'build.log' });
        const page = await store.read(ref.id, { offset: 210, limit: 3 });
        expect(page).toMatchObject({ view: 'text', offset: 210, lines: ['ok 210', 'ok 211', 'ERROR disk full'] });
        expect(page.totalLines).toBe(300);
        expect(page.nextOffset).toBe(213);
        const hits = await store.search(ref.id, { pattern: 'error', ignoreCase: true });
        expect(hits).toMatchObject({ totalMatches: 1, lines: [{ line: 212, text: 'ERROR disk full', match: true }] });
        const json = await store.putText(JSON.stringify({ a: [{ b: 1 }, { b: 2 }] }), { mimeType: 'application/json' });
        expect((await store.query(json.id, { path: '$.a[*].b' })).matches).toEqual([
          { path: "$['a'][0]['b']", value: 1 },
          { path: "$['a'][1]['b']", value: 2 },
        ]);
        await expectArtifactError(store.read('art_0123456789abcdef01234567'), 'not_found');
        await expectArtifactError(store.read(ref.id, { offset: 301 }), 'bad_request');
        const other = subject.otherSession;
        if (other?.read) await expectArtifactError(other.read(ref.id), 'not_found');
      });
    });

    describe('download links (where signedUrls is declared)', () => {
      it('a link downloads the bytes with no token, and Range works on it', async (ctx) => {
        if (!store.capabilities.signedUrls || !store.url)
          return ctx.skip('this store declares no signedUrls capability');
        const data = bytesOf(3, 20_000);
        const ref = await store.putBytes(data, { mimeType: 'application/pdf', filename: 'Sales.pdf' });
        const link = await store.url(ref.id, { expiresIn: 300 });
        expect(link).toMatchObject({ mimeType: 'application/pdf', sizeBytes: data.byteLength });
        expect(['proxy', 'direct']).toContain(link.fetchMode);
        expect(Date.parse(link.urlExpiresAt) - Date.now()).toBeGreaterThan(250_000);
        const res = await fetch(link.url);
        expect(res.status).toBe(200);
        expect(new Uint8Array(await res.arrayBuffer())).toEqual(data);
        const part = await fetch(link.url, { headers: { Range: 'bytes=100-199' } });
        expect(part.status).toBe(206);
        expect(new Uint8Array(await part.arrayBuffer())).toEqual(data.subarray(100, 200));
      });

      it('an altered link is refused (403) and serves nothing', async (ctx) => {
        if (!store.capabilities.signedUrls || !store.url)
          return ctx.skip('this store declares no signedUrls capability');
        const ref = await store.putText('secret report');
        const link = await store.url(ref.id);
        const u = new URL(link.url);
        const sigName = u.searchParams.has('signature') ? 'signature' : 'X-Amz-Signature';
        const sig = u.searchParams.get(sigName)!;
        u.searchParams.set(sigName, (sig.startsWith('a') ? 'b' : 'a') + sig.slice(1));
        const res = await fetch(u);
        expect(res.status).toBe(403);
        expect(await res.text()).not.toContain('secret report');
      });

      it('a link for a missing or out-of-scope id is not_found', async (ctx) => {
        if (!store.capabilities.signedUrls || !store.url)
          return ctx.skip('this store declares no signedUrls capability');
        await expect(store.url('art_0123456789abcdef01234567')).rejects.toMatchObject({ code: 'not_found' });
        const ref = await store.putText('only mine');
        if (subject.otherSession?.url)
          await expect(subject.otherSession.url(ref.id)).rejects.toMatchObject({ code: 'not_found' });
      });
    });

    describe('session isolation (where the store has a second session)', () => {
      it('another session cannot see, read, list or delete this session’s artifact', async (ctx) => {
        const other = subject.otherSession;
        if (!other) return ctx.skip('this store has no second session to compare with (one store, one scope)');
        const ref = await store.putText('secret of session A', { filename: 'a.txt' });
        expect(await other.getRef(ref.id)).toBeNull();
        expect(await other.get(ref.id)).toBeNull();
        expect(await other.getStream(ref.id)).toBeNull();
        expect(await other.exists(ref.id)).toBe(false);
        expect((await other.list()).items.map((r) => r.id)).not.toContain(ref.id);
        expect(await other.delete(ref.id)).toBe(false);
        expect(text(await store.get(ref.id))).toBe('secret of session A');
      });

      it('the same bytes put by two sessions: each sees its own filename; deletes are per session', async (ctx) => {
        const other = subject.otherSession;
        if (!other) return ctx.skip('this store has no second session to compare with (one store, one scope)');
        const a = await store.putText('shared bytes', { filename: 'a.txt', meta: { by: 'A' } });
        const b = await other.putText('shared bytes', { filename: 'b.txt', meta: { by: 'B' } });
        expect(b.id).toBe(a.id);
        expect(await store.getRef(a.id)).toMatchObject({ filename: 'a.txt', meta: { by: 'A' } });
        expect(await other.getRef(a.id)).toMatchObject({ filename: 'b.txt', meta: { by: 'B' } });
        expect((await store.list()).items.map((r) => r.filename)).toEqual(['a.txt']);
        expect(await other.delete(a.id)).toBe(true);
        expect(await other.exists(a.id)).toBe(false);
        expect(text(await store.get(a.id))).toBe('shared bytes');
        expect((await store.getRef(a.id))?.filename).toBe('a.txt');
      });
    });

    describe('ending a session', () => {
      const report = { app: 'contract-app', name: 'report.txt' };

      it('removes what the session holds, named versions with their names, and says what went; the rest stays', async () => {
        expect(store.endSession).toBeTypeOf('function');
        const a = await store.putText('held by the session', { filename: 'a.txt' });
        const b = await store.putBytes(bytesOf(21, 300));
        const session = a.scope.sessionId!;
        const v0 = await store.names!.saveVersion(report, 'draft');
        const v1 = await store.names!.saveVersion(report, 'final');
        const profile = { app: 'contract-app', name: 'profile', userWide: true };
        await store.names!.saveVersion(profile, 'user-wide');
        const other = subject.otherSession;
        const theirs = await other?.putText('held by the session', { filename: 'theirs.txt' });

        expect(await store.endSession!(session)).toEqual({
          sessionId: session,
          refs: 4,
          bytes: a.sizeBytes + b.sizeBytes + v0.sizeBytes + v1.sizeBytes,
          versions: 2,
        });
        expect(await store.get(a.id)).toBeNull();
        expect(await store.exists(b.id)).toBe(false);
        expect((await store.list()).items).toEqual([]);
        expect(await store.names!.loadVersion(report)).toBeNull();
        expect(text((await store.names!.loadVersion(profile))!.bytes)).toBe('user-wide');
        // Another session holding the same bytes keeps them.
        if (other && theirs) expect(await other.getRef(theirs.id)).toMatchObject({ filename: 'theirs.txt' });

        expect(await store.endSession!(session)).toEqual({ sessionId: session, refs: 0, bytes: 0, versions: 0 });
        expect((await store.names!.saveVersion(report, 'again')).version).toBe(0);
      });

      it("ends the store's own session by default where it knows it; a malformed id is bad_request", async () => {
        const ref = await store.putText('x');
        const session = ref.scope.sessionId!;
        const byDefault = await store.endSession!().catch((err: unknown) => err);
        // A store over a session-bound token does not know its session: it asks for it.
        if (byDefault instanceof ArtifactError) {
          expect(byDefault).toMatchObject({ code: 'bad_request', message: expect.stringMatching(/Name the session/) });
          expect((await store.endSession!(session)).refs).toBe(1);
        } else expect(byDefault).toEqual({ sessionId: session, refs: 1, bytes: 1, versions: 0 });
        for (const bad of ['', 'x'.repeat(257), '..']) await expectArtifactError(store.endSession!(bad), 'bad_request');
      });
    });

    describe('named versions', () => {
      const report = { app: 'contract-app', name: 'report.txt' };

      it('numbers versions 0, 1, 2… each with its own type and metadata; the same bytes twice share one artifact', async () => {
        const names = store.names!;
        expect(store.capabilities.names).toBe(true);
        const v0 = await names.saveVersion(report, 'first draft');
        expect(v0).toMatchObject({
          name: 'report.txt',
          version: 0,
          namespace: 'contract-app',
          mimeType: 'text/plain; charset=utf-8',
        });
        const bytes = bytesOf(11);
        const v1 = await names.saveVersion(report, bytes, { mimeType: 'application/octet-stream', meta: { step: 2 } });
        const v2 = await names.saveVersion(report, streamOf(bytes), { mimeType: 'application/x-thing' });
        expect([v1.version, v2.version]).toEqual([1, 2]);
        expect(v2.id).toBe(v1.id);
        expect(v2.id).toMatch(ID('contract-app'));

        const latest = await names.loadVersion(report);
        expect(latest?.ref).toMatchObject({ version: 2, mimeType: 'application/x-thing' });
        expect(latest?.bytes).toEqual(bytes);
        expect(text((await names.loadVersion(report, 0))!.bytes)).toBe('first draft');
        expect(await names.loadVersion(report, 7)).toBeNull();
        const part = await names.loadVersionStream(report, 1, { range: { start: 2, end: 5 } });
        expect(await readAll(part!.stream)).toEqual(bytes.slice(2, 6));

        const versions = await names.listVersions(report);
        expect(versions.map((v) => [v.version, v.mimeType, v.meta ?? null])).toEqual([
          [0, 'text/plain; charset=utf-8', null],
          [1, 'application/octet-stream', { step: 2 }],
          [2, 'application/x-thing', null],
        ]);
        await names.saveVersion({ app: 'contract-app', name: 'another.bin' }, bytesOf(12));
        const page = await names.listNames({ app: 'contract-app' }, { limit: 1 });
        expect(page.items.map((n) => [n.name, n.latestVersion, n.versions])).toEqual([['another.bin', 0, 1]]);
        const rest = await names.listNames({ app: 'contract-app' }, { cursor: page.nextCursor! });
        expect(rest.items.map((n) => [n.name, n.latestVersion, n.versions])).toEqual([['report.txt', 2, 3]]);
        expect(rest.nextCursor).toBeUndefined();
      });

      it("keeps apps and sessions apart; user-wide names are shared by the user's sessions", async () => {
        const names = store.names!;
        await names.saveVersion({ app: 'contract-app', name: 'profile', userWide: true }, 'mine');
        await names.saveVersion({ app: 'contract-app', name: 'scratch' }, 'this session');
        await names.saveVersion({ app: 'other-app', name: 'scratch' }, 'another app');
        expect(text((await names.loadVersion({ app: 'contract-app', name: 'scratch' }))!.bytes)).toBe('this session');
        const other = subject.otherSession?.names;
        if (!other) return;
        expect(text((await other.loadVersion({ app: 'contract-app', name: 'profile', userWide: true }))!.bytes)).toBe(
          'mine',
        );
        expect(await other.loadVersion({ app: 'contract-app', name: 'scratch' })).toBeNull();
        expect(await other.listVersions({ app: 'contract-app', name: 'scratch' })).toEqual([]);
        expect((await other.listNames({ app: 'contract-app' })).items).toEqual([]);
      });

      it('deleteName removes every version, and the next save starts again at 0', async () => {
        const names = store.names!;
        await names.saveVersion(report, 'a');
        await names.saveVersion(report, 'b');
        expect(await names.deleteName(report)).toBe(true);
        expect(await names.loadVersion(report)).toBeNull();
        expect(await names.deleteName(report)).toBe(false);
        expect((await names.saveVersion(report, 'c')).version).toBe(0);
      });

      it('refuses a bad app, name or version with bad_request, and a wrong sha256 with checksum_mismatch', async () => {
        const names = store.names!;
        await expectArtifactError(names.saveVersion({ app: 'bad app', name: 'x' }, 'x'), 'bad_request');
        await expectArtifactError(names.saveVersion({ app: 'contract-app', name: '' }, 'x'), 'bad_request');
        await expectArtifactError(names.loadVersion(report, -1), 'bad_request');
        await expectArtifactError(names.saveVersion(report, 'x', { sha256: '0'.repeat(64) }), 'checksum_mismatch');
        expect(await names.listVersions(report)).toEqual([]);
      });

      it('gives a download link for a version where the store signs links', async () => {
        const names = store.names!;
        if (!store.capabilities.signedUrls || !names.versionUrl) return;
        await names.saveVersion(report, 'linked');
        const link = await names.versionUrl(report, 0);
        const res = await fetch(link.url);
        expect(await res.text()).toBe('linked');
      });
    });
  });
}
