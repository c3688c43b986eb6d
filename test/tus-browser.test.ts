/**
 * Resumable uploads (/v1/tus) from a real browser: Uppy with its Tus plugin from npm, bundled with
 * esbuild and run in Chromium (Debian's, driven by playwright-core) on a page of another origin (so
 * through CORS), uploads a file made in the page to `artifact-store serve` in its own process, through
 * a TCP proxy that drops the connection twice in the middle of a PATCH. Uppy must resume by itself
 * (HEAD, then PATCH from the offset the service kept) and the stored artifact must come out by the
 * sha256 the page computed.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UppyUploadOptions, UppyUploadResult } from './fixtures/tus-uppy-page.js';
import { launchChromium, noChromium } from './helpers/chromium.js';
import { closeSuite, ROOT, startCliServer, type CliServer } from './helpers/cli-server.js';
import { droppingProxy, type DroppingProxy } from './helpers/dropping-proxy.js';

const MiB = 1024 * 1024;
const SIZE = 48 * MiB;
const CHUNK = 4 * MiB;
/** Where the proxy drops the connection: bytes forwarded to the service, over all connections. */
const CUT_AT = [Math.round(SIZE * 0.3), Math.round(SIZE * 0.7)];

let dir: string | undefined;
let server: CliServer | undefined;
let browser: Browser | undefined;
let proxy: DroppingProxy | undefined;
let page: Server | undefined;
let pageOrigin: string;

/** The page script (test/fixtures/tus-uppy-page.ts and Uppy) bundled for the browser, in memory. */
async function bundlePage(): Promise<string> {
  const out = await build({
    entryPoints: [join(ROOT, 'test', 'fixtures', 'tus-uppy-page.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'chrome120',
    write: false,
    logLevel: 'silent',
  });
  return out.outputFiles[0]!.text;
}

/** A page server on localhost (another origin than the proxy's 127.0.0.1): the page and its script. */
async function servePage(script: string): Promise<{ server: Server; origin: string }> {
  const html =
    '<!doctype html><meta charset="utf-8"><title>tus upload</title><script type="module" src="/uppy.js"></script>';
  const server = createServer((req, res) => {
    if (req.url === '/') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(html);
    } else if (req.url === '/uppy.js') {
      res.writeHead(200, { 'Content-Type': 'text/javascript; charset=utf-8' }).end(script);
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  return { server, origin: `http://localhost:${port}` };
}

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

describe.skipIf(noChromium)(
  `tus upload from Uppy in Chromium through dropped connections${noChromium ? ` (skipped: ${noChromium})` : ''}`,
  () => {
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'artifact-tus-browser-'));
      const served = await servePage(await bundlePage());
      page = served.server;
      pageOrigin = served.origin;
      server = await startCliServer(join(dir, 'data'), {
        ARTIFACT_STORE_CORS_ORIGINS: pageOrigin,
        ARTIFACT_STORE_MAX_ARTIFACT_BYTES: String(64 * MiB),
      });
      proxy = await droppingProxy(server.url, CUT_AT);
      browser = await launchChromium();
    }, 90_000);

    afterAll(async () => {
      await proxy?.close();
      await new Promise<void>((ok) => (page ? page.close(() => ok()) : ok()));
      await closeSuite(browser, server, dir);
    });

    it('stores a 48 MiB file whose connection dropped twice, by the sha256 the page computed', async () => {
      const context = await browser!.newContext();
      const tab = await context.newPage();
      const pageErrors: string[] = [];
      tab.on('pageerror', (e) => pageErrors.push(e.message));
      await tab.goto(pageOrigin);
      await tab.waitForFunction(
        () => typeof (globalThis as { uploadWithUppy?: unknown }).uploadWithUppy === 'function',
      );

      const options: UppyUploadOptions = {
        endpoint: `${proxy!.url}/v1/tus`,
        token: server!.token,
        sizeBytes: SIZE,
        chunkSize: CHUNK,
        retryDelays: [50, 200, 500, 1000, 2000],
      };
      const result = await tab.evaluate(
        (o) =>
          (
            globalThis as unknown as { uploadWithUppy: (o: UppyUploadOptions) => Promise<UppyUploadResult> }
          ).uploadWithUppy(o),
        options,
      );
      await context.close();
      // What happened, for the assertions' messages: the page's requests (method, Upload-Offset,
      // status; 0 = no answer), the retries, and what went through the proxy on which connection.
      const log = [
        `page: ${result.requests.map((r) => `${r.method}@${r.offset ?? '-'}=${r.status}`).join(' ')}`,
        `retries: ${result.retries.join(' | ')}`,
        `cuts: ${JSON.stringify(proxy!.cuts)}`,
        `proxied: ${proxy!.requests.map((r) => `#${r.connection} ${r.request.split(' ')[0]}`).join(', ')}`,
        `answers: ${proxy!.answers.map((a) => `#${a.connection} ${a.status}`).join(', ')}`,
        `errors: ${result.errors.join(' | ')}; page errors: ${pageErrors.join(' | ')}`,
      ].join('\n');

      // Uppy finished the file, and nothing failed.
      expect(pageErrors, log).toEqual([]);
      expect(result.errors, log).toEqual([]);
      expect(result.failed, log).toBe(0);
      expect(result.successful, log).toBe(1);
      expect(result.sizeBytes).toBe(SIZE);
      expect(result.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(result.artifactId, log).toMatch(/\S/);

      // The page is of another origin: the browser asked the service first (CORS preflights).
      expect(proxy!.requests.filter((r) => r.request.startsWith('OPTIONS /v1/tus')).length, log).toBeGreaterThan(0);

      // The proxy cut twice, each time inside a PATCH of this upload.
      const uploadPath = new URL(result.uploadUrl!).pathname;
      expect(uploadPath).toMatch(/^\/v1\/tus\/up_/);
      expect(
        proxy!.cuts.map((c) => c.request),
        log,
      ).toEqual([`PATCH ${uploadPath}`, `PATCH ${uploadPath}`]);
      expect(proxy!.cuts.map((c) => c.atByte)).toEqual(CUT_AT);

      // One creation only: Uppy resumed the same upload, it did not start over.
      expect(
        result.requests.filter((r) => r.method === 'POST').map((r) => r.status),
        log,
      ).toEqual([201]);
      expect(
        proxy!.requests.filter((r) => r.request === 'POST /v1/tus'),
        log,
      ).toHaveLength(1);
      expect(
        result.requests.every((r) => r.method === 'POST' || r.url.endsWith(uploadPath)),
        log,
      ).toBe(true);

      // Each drop failed one PATCH of the page's, and tus retried it: a HEAD asked where the upload
      // stood (200), then a PATCH went on from there, past where the failed one started (the service
      // kept the bytes that had arrived), so mid-chunk. The failed PATCH ends as a network error
      // (status 0), or as a 409: Chromium's network stack re-sends a request whose reused connection
      // was reset, once, on a new connection, at the old Upload-Offset, and the service refuses it
      // (offset_mismatch) instead of writing those bytes twice.
      const failed = result.requests.flatMap((r, i) => (r.method === 'PATCH' && r.status !== 204 ? [i] : []));
      expect(failed, log).toHaveLength(2);
      for (const i of failed) expect([0, 409], log).toContain(result.requests[i]!.status);
      expect(result.retries, log).toHaveLength(2);
      for (const i of failed) {
        const [head, resumed] = result.requests.slice(i + 1, i + 3);
        expect(head, log).toMatchObject({ method: 'HEAD', status: 200 });
        expect(resumed, log).toMatchObject({ method: 'PATCH', status: 204 });
        expect(resumed!.offset!, log).toBeGreaterThan(result.requests[i]!.offset!);
        expect(resumed!.offset! % CHUNK, log).not.toBe(0);
      }
      // Every PATCH after an answered one began where that one ended, the last one ending at the
      // file's end.
      const patches = result.requests.filter((r) => r.method === 'PATCH');
      expect(
        patches.filter((r) => ![0, 204, 409].includes(r.status)),
        log,
      ).toEqual([]);
      for (const [k, r] of patches.entries()) {
        const next = patches[k + 1];
        if (next && r.status === 204) expect(next.offset, log).toBe(r.offset! + CHUNK);
      }
      const answered = patches.filter((r) => r.status === 204);
      expect(SIZE - answered.at(-1)!.offset!, log).toBeLessThanOrEqual(CHUNK);
      // Through the proxy the service answered nothing but 2xx, and a 409 at most per drop (to
      // Chromium's re-sent PATCH).
      expect(
        proxy!.answers.filter((a) => a.status >= 300 && a.status !== 409),
        log,
      ).toEqual([]);
      expect(proxy!.answers.filter((a) => a.status === 409).length, log).toBeLessThanOrEqual(2);
      // Resuming cost about the bytes in flight, nowhere near a second full upload.
      expect(proxy!.forwarded(), log).toBeGreaterThan(SIZE);
      expect(proxy!.forwarded(), log).toBeLessThan(SIZE + 4 * CHUNK);

      // The service stored it with the page's sha256 and size, and it downloads by that sha256.
      const auth = { Authorization: `Bearer ${server!.token}` };
      const meta = await fetch(`${server!.url}/v1/artifacts/${result.artifactId}/meta`, { headers: auth });
      expect(meta.status).toBe(200);
      const ref = (await meta.json()) as { id: string; sha256: string; sizeBytes: number; filename?: string };
      expect(ref).toMatchObject({ id: result.artifactId, sha256: result.sha256, sizeBytes: SIZE });
      expect(ref.filename).toBe('browser-big.bin');

      const res = await fetch(`${server!.url}/v1/artifacts/${result.artifactId}`, { headers: auth });
      expect(res.status).toBe(200);
      const bytes = new Uint8Array(await res.arrayBuffer());
      expect(bytes.length).toBe(SIZE);
      expect(sha256(bytes)).toBe(result.sha256);

      // The upload itself, asked directly: complete, and pointing at the same artifact.
      const head = await fetch(`${server!.url}${uploadPath}`, {
        method: 'HEAD',
        headers: { ...auth, 'Tus-Resumable': '1.0.0' },
      });
      expect(head.status).toBe(200);
      expect(head.headers.get('upload-offset')).toBe(String(SIZE));
      expect(head.headers.get('x-artifact-id')).toBe(result.artifactId);
    }, 90_000);
  },
);
