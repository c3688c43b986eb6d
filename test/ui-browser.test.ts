/**
 * The artifact browser at /ui, in a real Chromium (Debian's, driven by playwright-core), against a real
 * service: `artifact-store serve` in its own process, as npm start runs it. Screenshots are kept in
 * test-results/ui/.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken, type TokenClaims } from '../src/http/tokens.js';
import { createSqliteRepository } from '../src/db/sqlite.js';
import { issueApiKey } from '../src/service/api-keys.js';
import { launchChromium, noChromium } from './helpers/chromium.js';
import { closeSuite, ROOT, startCliServer, type CliServer } from './helpers/cli-server.js';
import { pdf as pdfOf, PNG_1X1, wav } from './helpers/payloads.js';

const SECRET = { kid: 'ui', secret: randomBytes(32).toString('base64url') };
const SHOTS = join(ROOT, 'test-results', 'ui');
// One tenant with a tiny per-session count limit, so a third put evicts the oldest (LRU).
const POLICIES = JSON.stringify({ tiny: { maxArtifactsPerSession: 2 } });

let server: CliServer;
let browser: Browser;
let dir: string;
/** The sign-in link the server printed (tenant dev, read/write/admin). */
let uiLink: string;

interface Ref {
  id: string;
  sha256: string;
  sizeBytes: number;
  filename?: string;
  scope: { sessionId?: string };
}

const tokenFor = (claims: Partial<TokenClaims>, ttlSeconds = 3600) =>
  mintToken(SECRET, { tenant: 'dev', sub: 'tester', perms: ['read', 'write'], ...claims }, ttlSeconds);
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

async function put(
  token: string,
  body: Uint8Array | string,
  type: string,
  filename: string,
  session?: string,
): Promise<Ref> {
  // pdf-lib and Buffer hand out Uint8Arrays over ArrayBufferLike; fetch sends them the same.
  const payload = body as BodyInit;
  const res = await fetch(`${server.url}/v1/artifacts`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${token}`,
      'Content-Type': type,
      'X-Artifact-Filename': filename,
      'X-Artifact-Namespace': 'test.tool',
      ...(session ? { 'X-Artifact-Session': session } : {}),
    },
    body: payload,
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Ref;
}

const devToken = () => new URLSearchParams(new URL(uiLink).hash.slice(1)).get('token')!;

/**
 * A fresh tab (its own context: no shared sessionStorage) on a UI link, with every console error,
 * page error and dialog recorded: the page must produce none.
 */
async function open(link: string, viewport = { width: 1280, height: 900 }) {
  const context = await browser.newContext({ viewport, acceptDownloads: true });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('dialog', (d) => {
    problems.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  await page.goto(link);
  return { page, problems, close: () => context.close() };
}

const uiWith = (token: string, session?: string) =>
  `${server.url}/ui#token=${token}${session ? `&session=${encodeURIComponent(session)}` : ''}`;
const live = (page: Page) => page.waitForSelector('#live[data-state="live"]');
const row = (page: Page, id: string) => page.locator(`#rows tr[data-id="${id}"]`);

describe.skipIf(noChromium)(`artifact browser in Chromium${noChromium ? ` (skipped: ${noChromium})` : ''}`, () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'artifact-store-ui-'));
    mkdirSync(SHOTS, { recursive: true });
    server = await startCliServer(join(dir, 'data'), {
      ARTIFACT_STORE_ENV: 'development',
      ARTIFACT_STORE_JWT_SECRETS: `${SECRET.kid}:${SECRET.secret}`,
      ARTIFACT_STORE_TENANT_POLICIES: POLICIES,
    });
    uiLink = /Browser:\s+(http:\/\/\S+\/ui#token=\S+)/.exec(server.output())?.[1] ?? '';
    expect(uiLink, server.output()).not.toBe('');
    browser = await launchChromium();
  }, 120_000);

  afterAll(() => closeSuite(browser, server, dir));

  it('signs in from the link npm start prints, drops the token from the address bar, and shows a new artifact live', async () => {
    const { page, problems, close } = await open(uiLink);
    await live(page);
    expect(page.url()).toBe(`${server.url}/ui`);
    await expect(page.locator('#who').textContent()).resolves.toContain('tenant dev');
    // A marker that a reload would wipe.
    await page.evaluate(() => ((window as unknown as { marker: number }).marker = 42));
    const ref = await put(devToken(), 'stored while the page was open', 'text/plain', 'live.txt', 's-live');
    await row(page, ref.id).waitFor();
    await expect(row(page, ref.id).locator('td.name').textContent()).resolves.toBe('live.txt');
    await expect(row(page, ref.id).locator('td.tool').textContent()).resolves.toBe('test.tool');
    expect(await page.evaluate(() => (window as unknown as { marker: number }).marker)).toBe(42);
    expect(problems).toEqual([]);
    await close();
  });

  it('signs in with a pasted token, and says what to do with a bad one', async () => {
    const { page, problems, close } = await open(`${server.url}/ui`);
    await page.fill('#token', 'eyJhbGciOiJIUzI1NiJ9.e30.not-a-signature');
    await page.click('#signin-form button[type=submit]');
    await expect
      .poll(() => page.locator('#signin-error').textContent())
      .toMatch(/did not accept this token.*Paste a new one/);
    expect(await page.locator('#browser').isHidden()).toBe(true);
    // The 401 itself is the only console line allowed here: Chromium logs every failed fetch.
    expect(problems.filter((p) => !/status of 401/.test(p))).toEqual([]);
    await page.fill('#token', `Bearer ${await tokenFor({ session: 's-paste' })}`);
    await page.click('#signin-form button[type=submit]');
    await live(page);
    await expect(page.locator('#who').textContent()).resolves.toContain('session s-paste');
    await close();
  });

  it('previews an image and a PDF in place from signed links, with no token in any URL', async () => {
    const token = await tokenFor({ session: 's-preview' });
    const png = PNG_1X1;
    const pdf = await pdfOf(1, 'artifact-store PDF preview');
    const image = await put(token, png, 'image/png', 'dot.png', 's-preview');
    const doc = await put(token, pdf, 'application/pdf', 'report.pdf', 's-preview');
    const { page, problems, close } = await open(uiWith(token));
    await live(page);
    await row(page, image.id).waitFor();

    await row(page, image.id).click();
    const img = page.locator('#preview-body img');
    await img.waitFor();
    await page.waitForFunction(() => {
      const el = document.querySelector('#preview-body img');
      return el instanceof HTMLImageElement && el.complete && el.naturalWidth > 0;
    });
    expect(await img.evaluate((el: HTMLImageElement) => [el.naturalWidth, el.naturalHeight])).toEqual([1, 1]);
    const imgSrc = (await img.getAttribute('src'))!;
    expect(imgSrc.startsWith(`${server.url}/v1/download/`)).toBe(true);
    expect(imgSrc).not.toContain(token);
    await expect(page.locator('#preview-facts').textContent()).resolves.toContain(image.sha256);

    const pdfResponse = page.waitForResponse(
      (r) => r.url().includes('/v1/download/') && r.request().resourceType() === 'document',
    );
    await row(page, doc.id).click();
    const frame = page.locator('#preview-body iframe');
    await frame.waitFor();
    const response = await pdfResponse;
    expect(response.status()).toBe(200);
    const headers = await response.allHeaders();
    expect(headers['content-type']).toBe('application/pdf');
    expect(headers['content-security-policy']).toBe('sandbox');
    expect(headers['content-disposition']).toMatch(/^inline/);
    expect(headers.etag).toBe(`"${doc.sha256}"`);
    expect((await frame.getAttribute('src'))!).not.toContain(token);
    // Chromium's own viewer took the document (its extension frame, and the plugin embed on the signed
    // link), rather than a download or an error page.
    await expect
      .poll(() => page.frames().some((f) => /^chrome-extension:\/\/[a-p]{32}\/index\.html$/.test(f.url())), {
        timeout: 15_000,
      })
      .toBe(true);
    const embedded = async () => {
      for (const f of page.frames().filter((fr) => fr.url() === response.url())) {
        if ((await f.locator('embed[type="application/x-google-chrome-pdf"]').count()) > 0)
          return f.locator('embed').getAttribute('original-url');
      }
      return null;
    };
    await expect.poll(embedded, { timeout: 15_000 }).toBe(response.url());
    await page.screenshot({ path: join(SHOTS, 'pdf-preview.png') });
    expect(problems).toEqual([]);
    await close();
  });

  it('pretty-prints JSON, caps big text at 256 KiB, and plays audio in the native player', async () => {
    const token = await tokenFor({ session: 's-kinds' });
    const json = await put(token, '{"a":[1,{"b":"<i>x</i>"}]}', 'application/json', 'small.json', 's-kinds');
    const big = 'line of a long tool log\n'.repeat(30_000); // 720,000 bytes
    const log = await put(token, big, 'text/plain', 'huge.log', 's-kinds');
    // One second of 8 kHz mono 16-bit audio.
    const audio = await put(token, wav(8000), 'audio/wav', 'silence.wav', 's-kinds');
    const { page, problems, close } = await open(uiWith(token));
    await row(page, audio.id).waitFor();

    await row(page, json.id).click();
    await expect
      .poll(() => page.locator('#preview-body pre').textContent())
      .toBe(JSON.stringify({ a: [1, { b: '<i>x</i>' }] }, null, 2));
    expect(await page.locator('#preview-body i').count()).toBe(0);

    await row(page, log.id).click();
    await expect
      .poll(() => page.locator('#preview-body pre').evaluate((el) => el.textContent?.length ?? 0))
      .toBe(256 * 1024);
    await expect(page.locator('#preview-body p.muted').textContent()).resolves.toBe(
      'Showing the first 256 KiB of 703 KiB. Download for the rest.',
    );

    await row(page, audio.id).click();
    const player = page.locator('#preview-body audio');
    await player.waitFor();
    expect(await player.getAttribute('controls')).not.toBeNull();
    await expect.poll(() => player.evaluate((el: HTMLAudioElement) => el.duration)).toBeCloseTo(1, 2);
    expect(problems).toEqual([]);
    await close();
  });

  it('downloads through a signed link (no bearer token in it) and the bytes match', async () => {
    const token = await tokenFor({ session: 's-download' });
    const bytes = randomBytes(700_000);
    const ref = await put(token, bytes, 'application/octet-stream', 'blob.bin', 's-download');
    const { page, problems, close } = await open(uiWith(token));
    await row(page, ref.id).waitFor();
    await row(page, ref.id).click();
    await expect(page.locator('#preview-body .card').textContent()).resolves.toContain('No preview for this type');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download')]);
    expect(download.url()).toMatch(new RegExp(`^${server.url}/v1/download/`));
    expect(download.url()).not.toContain(token);
    expect(download.suggestedFilename()).toBe('blob.bin');
    const saved = readFileSync((await download.path())!);
    expect(saved.length).toBe(bytes.length);
    expect(sha(saved)).toBe(sha(bytes));
    await expect(page.locator('#download-note').textContent()).resolves.toMatch(/service link, valid until/);
    expect(problems).toEqual([]);
    await close();
  });

  it('never runs stored SVG or HTML on its origin: payloads that read the token in the clear get nothing through the UI', async () => {
    // Each payload reads the token from the tab, then tells on itself three ways the test can see: a
    // request to /stolen on the service's own origin (which the UI's CSP would allow), a console line,
    // and the top page's title.
    const steal = (where: string) =>
      `var t='none';try{t=sessionStorage.getItem('artifact-store.token')||'empty'}catch(e){t='blocked'}` +
      `try{t+='|'+parent.sessionStorage.getItem('artifact-store.token')}catch(e){}` +
      `try{top.document.title='owned'}catch(e){}` +
      `console.log('stolen:${where}:'+t);new Image().src='/stolen/${where}?t='+encodeURIComponent(t);`;
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40" onload="${steal('svg-onload').replace(/"/g, '&quot;')}"><script>${steal('svg')}</script><rect width="40" height="40" fill="blue"/></svg>`;
    const html = `<!doctype html><html><body><h1>hostile</h1><img src="x" onerror="${steal('html-onerror').replace(/"/g, '&quot;')}"><script>${steal('html')}</script></body></html>`;
    const token = await tokenFor({ session: 's-hostile' });

    /** A signed-in tab that records every sign of a payload having run in it or its frames. */
    const watched = async () => {
      const tab = await open(uiWith(token));
      const signs: string[] = [];
      tab.page.context().on('request', (r) => {
        if (r.url().includes('/stolen/')) signs.push(`request ${r.url()}`);
      });
      tab.page.on('console', (m) => {
        if (m.text().startsWith('stolen:')) signs.push(`console ${m.text()}`);
      });
      await live(tab.page);
      return { ...tab, signs };
    };

    // Control: the same payloads served as documents on the service's origin, in a tab that holds the
    // token, do read it. So silence below means the UI kept them from running.
    {
      const { page, signs, close } = await watched();
      await page.route(`${server.url}/control/*`, (route) => {
        const isSvg = route.request().url().endsWith('.svg');
        return route.fulfill({
          status: 200,
          contentType: isSvg ? 'image/svg+xml' : 'text/html',
          body: isSvg ? svg : html,
        });
      });
      await page.goto(`${server.url}/control/payload.html`);
      await expect.poll(() => signs.filter((s) => s.includes(token)).length).toBeGreaterThanOrEqual(2);
      await page.goto(`${server.url}/control/payload.svg`);
      await expect
        .poll(() => signs.filter((s) => s.includes('svg') && s.includes(token)).length)
        .toBeGreaterThanOrEqual(2);
      expect(await page.title()).toBe('owned');
      await close();
    }

    const svgRef = await put(token, svg, 'image/svg+xml', 'hostile.svg', 's-hostile');
    const htmlRef = await put(token, html, 'text/html', 'hostile.html', 's-hostile');
    const { page, problems, signs, close } = await watched();
    await row(page, svgRef.id).waitFor();

    await row(page, svgRef.id).click();
    await page.waitForFunction(() => {
      const el = document.querySelector('#preview-body img');
      return el instanceof HTMLImageElement && el.complete && el.naturalWidth === 40;
    });
    await row(page, htmlRef.id).click();
    const text = page.locator('#preview-body pre');
    await text.waitFor();
    // Shown as its source, escaped: the markup is text, not elements.
    await expect(text.textContent()).resolves.toBe(html);
    expect(await page.locator('#preview-body h1, #preview-body script, #preview-body pre img').count()).toBe(0);

    // Opening their links in this very tab (which holds the token) downloads them instead of rendering.
    for (const ref of [svgRef, htmlRef]) {
      const link = await page.evaluate(
        async ({ id, t }) => {
          const res = await fetch(`/v1/artifacts/${id}/url`, {
            method: 'POST',
            headers: { Authorization: `Bearer ${t}`, 'Content-Type': 'application/json' },
            body: JSON.stringify({ mode: 'proxy', disposition: 'inline' }),
          });
          return ((await res.json()) as { url: string }).url;
        },
        { id: ref.id, t: token },
      );
      const [download] = await Promise.all([page.waitForEvent('download'), page.goto(link).catch(() => undefined)]);
      expect(sha(readFileSync((await download.path())!))).toBe(ref.sha256);
    }
    expect(page.url()).toBe(`${server.url}/ui`);
    // Give any script that did start time to tell on itself.
    await page.waitForTimeout(1000);
    expect(signs).toEqual([]);
    expect(await page.title()).toBe('artifact-store');
    expect(problems).toEqual([]);
    await close();
  });

  it('shows nothing of another session: a token for s-other sees an empty page, yet its own artifacts arrive live', async () => {
    const mine = await tokenFor({ session: 's-mine' });
    await put(mine, 'not yours', 'text/plain', 'private.txt', 's-mine');
    const other = await tokenFor({ session: 's-other', perms: ['read', 'write'] });
    const { page, problems, close } = await open(uiWith(other));
    await live(page);
    await page.locator('#empty').waitFor();
    expect(await page.locator('#rows tr').count()).toBe(0);
    // A put into the first session while the page is open does not show up either...
    await put(mine, 'still not yours', 'text/plain', 'later.txt', 's-mine');
    // ...while one into its own session does, so the page is live and the emptiness is real.
    const own = await put(other, 'yours', 'text/plain', 'own.txt', 's-other');
    await row(page, own.id).waitFor();
    expect(await page.locator('#rows tr').count()).toBe(1);
    await expect(page.locator('#usage-scope').textContent()).resolves.toContain('Session s-other');
    expect(problems).toEqual([]);
    await close();
  });

  it('greys out an evicted artifact and a deleted one as the events arrive', async () => {
    const token = await tokenFor({ tenant: 'tiny', session: 's-evict' });
    const first = await put(token, 'first', 'text/plain', 'first.txt', 's-evict');
    const second = await put(token, 'second', 'text/plain', 'second.txt', 's-evict');
    const { page, problems, close } = await open(uiWith(token));
    await live(page);
    await row(page, second.id).waitFor();
    // The session holds at most 2: a third put evicts the least recently used, the first.
    const third = await put(token, 'third', 'text/plain', 'third.txt', 's-evict');
    await row(page, third.id).waitFor();
    const evicted = page.locator('#rows tr.gone');
    await evicted.waitFor();
    expect(await evicted.getAttribute('data-id')).toBe(first.id);
    expect(await evicted.getAttribute('aria-disabled')).toBe('true');
    await expect(evicted.locator('td.expires').textContent()).resolves.toMatch(/^evicted /);

    await row(page, second.id).click();
    await page.locator('#preview-body pre').waitFor();
    const del = await fetch(`${server.url}/v1/artifacts/${second.id}`, {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(del.status).toBe(204);
    await page.locator(`#rows tr.gone[data-id="${second.id}"]`).waitFor();
    await expect(row(page, second.id).locator('td.expires').textContent()).resolves.toMatch(/^deleted /);
    // The open preview of the deleted one says so, and offers no download.
    await expect(page.locator('#preview-body .card').textContent()).resolves.toMatch(/was deleted/);
    expect(await page.locator('#download').isHidden()).toBe(true);
    expect(problems).toEqual([]);
    await close();
  });

  it('uploads a dropped file with a progress bar, and the stored bytes are the file', async () => {
    const token = await tokenFor({ session: 's-upload' });
    const bytes = randomBytes(3 * 1024 * 1024 + 5);
    const { page, problems, close } = await open(uiWith(token));
    await live(page);
    const dropped = await page.evaluateHandle((b64) => {
      const data = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const transfer = new DataTransfer();
      transfer.items.add(new File([data], 'dropped été.bin', { type: 'application/octet-stream' }));
      return transfer;
    }, bytes.toString('base64'));
    await page.dispatchEvent('#drop', 'drop', { dataTransfer: dropped });
    const item = page.locator('#uploads li', { hasText: 'dropped été.bin' });
    await item.locator('.muted', { hasText: 'stored' }).waitFor();
    const bar = item.locator('progress');
    expect(await bar.evaluate((el: HTMLProgressElement) => [el.value, el.max])).toEqual([bytes.length, bytes.length]);
    const newRow = page.locator('#rows tr', { hasText: 'dropped été.bin' });
    await newRow.waitFor();
    const id = (await newRow.getAttribute('data-id'))!;
    const stored = await fetch(`${server.url}/v1/artifacts/${id}`, { headers: { Authorization: `Bearer ${token}` } });
    expect(stored.status).toBe(200);
    expect(sha(new Uint8Array(await stored.arrayBuffer()))).toBe(sha(bytes));

    // The picker does the same for keyboard users.
    const picked = join(dir, 'picked.txt');
    await import('node:fs').then((fs) => fs.writeFileSync(picked, 'picked by keyboard'));
    await page.setInputFiles('#file', picked);
    await page.locator('#rows tr', { hasText: 'picked.txt' }).waitFor();
    expect(problems).toEqual([]);
    await close();
  });

  it("shows a tenant's admin usage bars, its top sessions by bytes and its part of the retention history, and nothing of another tenant", async () => {
    await put(devToken(), randomBytes(5 * 1024 * 1024), 'application/octet-stream', 'big.bin', 's-biggest');
    // Another tenant, bigger, in a session whose name must not reach dev's page.
    await put(
      await tokenFor({ tenant: 'rival' }),
      randomBytes(9 * 1024 * 1024),
      'application/octet-stream',
      'rival.bin',
      'rival-secret-session',
    );
    // Six bytes of dev's that the run will expire, and four of rival's.
    for (const [tenant, body] of [
      ['dev', 'brief!'],
      ['rival', 'gone'],
    ] as const) {
      const res = await fetch(`${server.url}/v1/artifacts?ttl=1`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${await tokenFor({ tenant })}`, 'Content-Type': 'text/plain' },
        body,
      });
      expect(res.status).toBe(201);
    }
    await new Promise((r) => setTimeout(r, 1100));
    // Retention is the operator's: a key made on the host, as `artifact-store keys create --operator` does.
    const repo = createSqliteRepository({ path: join(dir, 'data', 'artifacts.db') });
    const { key: operator } = await issueApiKey(repo, { operator: true });
    await repo.close();
    expect(
      (
        await fetch(`${server.url}/v1/admin/retention`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${devToken()}` },
        })
      ).status,
    ).toBe(403);
    const run = await fetch(`${server.url}/v1/admin/retention`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${operator}` },
    });
    expect(run.status).toBe(200);
    expect(await run.json()).toMatchObject({ expired: { refs: 2, bytes: 10 } });
    const { page, problems, close } = await open(uiLink);
    await live(page);
    const top = page.locator('#usage-top ol li');
    await top.first().waitFor();
    const labels = await top.locator('button').allTextContents();
    expect(labels[0]).toMatch(/s-biggest$/);
    expect(await page.locator('#usage-retention svg.chart rect').count()).toBeGreaterThanOrEqual(1);
    // dev's part of the run: its six bytes, not rival's four.
    await expect(page.locator('#usage-retention').textContent()).resolves.toMatch(/The last run freed 6 B/);
    const panel = (await page.locator('#usage').textContent()) ?? '';
    expect(panel).toContain('Tenant dev');
    expect(panel).not.toMatch(/rival/);
    expect(
      await page.locator('#session-ids option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value)),
    ).not.toContain('rival-secret-session');
    // Picking a session narrows the list to it, and its bars replace the tenant's.
    await top.locator('button', { hasText: 's-biggest' }).click();
    await expect.poll(() => page.locator('#rows tr').count()).toBe(1);
    await expect(page.locator('#usage-scope').textContent()).resolves.toContain('Session s-biggest');
    expect(await page.locator('#usage-scope meter').count()).toBe(2);
    expect(page.url()).toBe(`${server.url}/ui#session=s-biggest`);
    expect(problems).toEqual([]);
    await close();
  });

  it('works from the keyboard and reads at 320 px without sideways scrolling; keeps screenshots', async () => {
    // One agent session's outputs, viewed by a tenant admin.
    const dev = devToken();
    await put(dev, PNG_1X1, 'image/png', 'revenue-chart.png', 's-42');
    await put(
      dev,
      JSON.stringify({ rows: Array.from({ length: 40 }, (_, i) => ({ region: `R${i}`, revenue: 1000 + i * 37 })) }),
      'application/json',
      'query-result.json',
      's-42',
    );
    await put(dev, await pdfOf(2, 'Quarterly sales'), 'application/pdf', 'Sales Q3.pdf', 's-42');
    await put(dev, 'GET /api/orders 200 12ms\n'.repeat(300), 'text/plain', 'server.log', 's-42');
    await put(dev, randomBytes(40_000), 'application/zip', 'workbook.twbx', 's-42');
    const { page, problems, close } = await open(uiWith(dev, 's-42'));
    await live(page);
    await expect.poll(() => page.locator('#rows tr').count()).toBe(5);
    await page.locator('#rows tr', { hasText: 'query-result.json' }).click();
    await page.locator('#preview-body pre').waitFor();
    await page.screenshot({ path: join(SHOTS, 'session.png') });
    await page.locator('#preview-close').click();
    // Search, type and sort are the service's: each lists again.
    await page.fill('#filter', 'json');
    await expect.poll(() => page.locator('#rows td.name').allTextContents()).toEqual(['query-result.json']);
    await page.fill('#filter', '');
    await page.selectOption('#kind', 'image/');
    await expect.poll(() => page.locator('#rows td.name').allTextContents()).toEqual(['revenue-chart.png']);
    await page.selectOption('#kind', '');
    await page.selectOption('#sort', 'largest');
    await expect.poll(async () => (await page.locator('#rows td.name').allTextContents())[0]).toBe('workbook.twbx');
    await page.click('th[data-sort="name"] button');
    // By name in byte order, as the service sorts: capitals first.
    await expect
      .poll(() => page.locator('#rows td.name').allTextContents())
      .toEqual(['Sales Q3.pdf', 'query-result.json', 'revenue-chart.png', 'server.log', 'workbook.twbx']);
    expect(await page.getAttribute('th[data-sort="name"]', 'aria-sort')).toBe('ascending');
    await page.selectOption('#sort', 'newest');
    await expect.poll(async () => (await page.locator('#rows td.name').allTextContents())[0]).toBe('workbook.twbx');
    await page.focus('#rows tr[tabindex="0"]');
    await page.keyboard.press('Home');
    expect(await page.evaluate(() => document.activeElement === document.querySelector('#rows tr'))).toBe(true);
    const firstId = await page.evaluate(() => (document.activeElement as HTMLElement).dataset.id);
    await page.keyboard.press('ArrowDown');
    const secondId = await page.evaluate(() => (document.activeElement as HTMLElement).dataset.id);
    expect(secondId).toBeTruthy();
    expect(secondId).not.toBe(firstId);
    await page.keyboard.press('Enter');
    await page.locator('#preview').waitFor();
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('preview-title');
    await page.keyboard.press('Escape');
    expect(await page.locator('#preview').isHidden()).toBe(true);
    expect(await page.evaluate(() => (document.activeElement as HTMLElement).dataset.id)).toBe(secondId);
    // Every control is reachable by Tab; none is an unlabelled field.
    const unlabelled = await page.evaluate(() =>
      [...document.querySelectorAll('input:not([type=file]), select, textarea')]
        .filter((el) => !(el as HTMLInputElement).labels?.length)
        .map((el) => el.id),
    );
    expect(unlabelled).toEqual([]);

    await page.setViewportSize({ width: 320, height: 800 });
    await page.locator('#rows tr').first().click();
    await page.locator('#preview-body :is(pre, img, iframe, .card, audio, video)').first().waitFor();
    const layout = await page.evaluate(() => ({
      scrollWidth: document.documentElement.scrollWidth,
      // Whatever sticks out, named, so a failure says what to fix (screen-reader-only text is clipped to 1 px).
      wide: [...document.querySelectorAll('body *')]
        .filter((e) => !e.closest('.visually-hidden') && e.getBoundingClientRect().right > window.innerWidth + 0.5)
        .map((e) => `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}.${e.className}`),
    }));
    expect(layout.wide).toEqual([]);
    expect(layout.scrollWidth).toBe(320);
    await page.screenshot({ path: join(SHOTS, 'narrow.png'), fullPage: true });
    expect(statSync(join(SHOTS, 'session.png')).size).toBeGreaterThan(10_000);
    expect(problems).toEqual([]);
    await close();
  });
});
