/**
 * The artifact browser as its users meet it, in a real Chromium against `artifact-store serve`: named
 * versions that share bytes, a thousand artifacts searched, filtered and sorted by the service, live
 * arrivals that do not move what the reader looks at, a service restarted under an open page, tokens
 * that fail, change and expire, deletes of every kind, the keyboard alone, and axe-core on every view
 * at 375 and 1280 pixels, light and dark. Screenshots of each view go to test-results/ui/.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken, type TokenClaims } from '../src/http/tokens.js';
import { axeViolations } from './helpers/axe.js';
import { launchChromium, noChromium } from './helpers/chromium.js';
import { closeSuite, ROOT, startCliServer, type CliServer } from './helpers/cli-server.js';
import { pdf as pdfOf, PNG_1X1 } from './helpers/payloads.js';

const SECRET = { kid: 'ui', secret: randomBytes(32).toString('base64url') };
const SHOTS = join(ROOT, 'test-results', 'ui');
const ENV = {
  ARTIFACT_STORE_ENV: 'development',
  ARTIFACT_STORE_JWT_SECRETS: `${SECRET.kid}:${SECRET.secret}`,
  // A thousand artifacts and more in one session, none evicted.
  ARTIFACT_STORE_TENANT_POLICIES: JSON.stringify({ dev: { maxArtifactsPerSession: 100_000 } }),
};

let server: CliServer;
let browser: Browser;
let dir: string;

interface Ref {
  id: string;
  mimeType: string;
  sizeBytes: number;
  filename?: string;
  createdAt: string;
  name?: string;
  version?: number;
  scope: { sessionId?: string };
}

const tokenFor = (claims: Partial<TokenClaims> = {}, ttlSeconds = 3600) =>
  mintToken(SECRET, { tenant: 'dev', sub: 'tester', perms: ['read', 'write', 'admin'], ...claims }, ttlSeconds);

async function call(token: string, path: string, init: RequestInit = {}) {
  return fetch(`${server.url}${path}`, {
    ...init,
    headers: { Authorization: `Bearer ${token}`, ...(init.headers as Record<string, string>) },
  });
}

async function put(token: string, body: Uint8Array | string, type: string, filename: string, session: string) {
  const res = await call(token, '/v1/artifacts', {
    method: 'POST',
    headers: {
      'Content-Type': type,
      'X-Artifact-Filename': filename,
      'X-Artifact-Namespace': 'test.tool',
      'X-Artifact-Session': session,
    },
    body: body as BodyInit,
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Ref;
}

async function saveVersion(token: string, name: string, body: string, session: string) {
  const res = await call(token, `/v1/names/docs?name=${encodeURIComponent(name)}&session=${session}`, {
    method: 'POST',
    headers: { 'Content-Type': 'text/plain' },
    body,
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Ref;
}

/** Every id the API lists for a query, page by page. */
async function apiIds(token: string, query: Record<string, string>) {
  const out: string[] = [];
  let cursor: string | undefined;
  do {
    const q = new URLSearchParams({ ...query, limit: '1000', ...(cursor ? { cursor } : {}) });
    const page = (await (await call(token, `/v1/artifacts?${q}`)).json()) as { items: Ref[]; nextCursor?: string };
    out.push(...page.items.map((r) => r.id));
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

const uiWith = (token: string, session?: string) =>
  `${server.url}/ui#token=${token}${session ? `&session=${encodeURIComponent(session)}` : ''}`;

/** A fresh tab (its own context) with console errors and page errors recorded. */
async function open(link: string, options: { viewport?: { width: number; height: number }; axe?: boolean } = {}) {
  const context: BrowserContext = await browser.newContext({
    viewport: options.viewport ?? { width: 1280, height: 900 },
    // axe-core is injected as a script, which the page's policy would refuse.
    bypassCSP: options.axe ?? false,
  });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  if (link) await page.goto(link);
  return { page, context, problems, close: () => context.close() };
}

const live = (page: Page) => page.waitForSelector('#live[data-state="live"]');
const names = (page: Page) => page.locator('#rows td.name').allTextContents();
const shownIds = (page: Page) =>
  page.locator('#rows tr[data-id]:not(.version)').evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).dataset.id));

describe.skipIf(noChromium)(`the artifact browser at scale${noChromium ? ` (skipped: ${noChromium})` : ''}`, () => {
  let token: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'artifact-store-ui-scale-'));
    mkdirSync(SHOTS, { recursive: true });
    server = await startCliServer(join(dir, 'data'), ENV);
    browser = await launchChromium();
    token = await tokenFor();
  }, 120_000);

  afterAll(() => closeSuite(browser, server, dir));

  it('shows named versions that share bytes exactly as the API lists them', async () => {
    const session = 's-dup';
    // v0 and v1 hold the same bytes; so do v2, v3 and v4.
    for (const body of ['same', 'same', 'again', 'again', 'again']) await saveVersion(token, 'plan.md', body, session);
    await saveVersion(token, 'notes.md', 'one', session);
    await saveVersion(token, 'notes.md', 'one', session);
    const { page, problems, close } = await open(uiWith(token, session));
    await live(page);
    const badge = (name: string) => page.locator(`#rows tr[data-name="${name}"] .badge`).textContent();
    await expect.poll(() => badge('plan.md')).toBe('v4 · 5 versions');
    await expect.poll(() => badge('notes.md')).toBe('v1 · 2 versions');
    await page.locator('#rows tr[data-name="plan.md"] .twisty').click();
    await expect
      .poll(() => page.locator('#rows tr.version .vnum').allTextContents())
      .toEqual(['v4', 'v3', 'v2', 'v1', 'v0']);
    const api = (await (await call(token, `/v1/names/docs/versions?name=plan.md&session=${session}`)).json()) as {
      items: Ref[];
    };
    expect(api.items.map((v) => v.version)).toEqual([0, 1, 2, 3, 4]);
    expect(problems).toEqual([]);
    await close();
  });

  describe('a thousand artifacts', () => {
    const session = 's-big';
    const made: Ref[] = [];

    beforeAll(async () => {
      // Every ninth an image, every seventh JSON, the rest text; sizes all different.
      const jobs = Array.from({ length: 1000 }, (_, i) => i);
      let next = 0;
      const worker = async () => {
        while (next < jobs.length) {
          const i = next++;
          const name = `item-${String(i).padStart(4, '0')}`;
          if (i % 9 === 0) {
            const png = Buffer.concat([PNG_1X1, Buffer.alloc(i, i & 0xff)]);
            made[i] = await put(token, png, 'image/png', `${name}.png`, session);
          } else if (i % 7 === 0) {
            made[i] = await put(
              token,
              JSON.stringify({ i, pad: 'x'.repeat(i) }),
              'application/json',
              `${name}.json`,
              session,
            );
          } else {
            made[i] = await put(token, `${name}\n${'.'.repeat(i * 3)}`, 'text/plain', `${name}.txt`, session);
          }
        }
      };
      await Promise.all(Array.from({ length: 8 }, worker));
    }, 120_000);

    it('search, type, dates and sort are the service’s, over the whole scope, and agree with the API', async () => {
      const { page, problems, close } = await open(uiWith(token, session));
      await live(page);
      await expect.poll(() => page.locator('#rows tr').count()).toBe(100);
      expect(await page.locator('#more').isVisible()).toBe(true);
      expect(await shownIds(page)).toEqual((await apiIds(token, { session })).slice(0, 100));

      // The oldest one is on the last page of newest-first: a search finds it.
      const oldest = (await apiIds(token, { session })).at(-1)!;
      const oldestName = made.find((r) => r.id === oldest)!.filename!;
      await page.fill('#filter', oldestName.toUpperCase());
      await expect.poll(() => names(page)).toEqual([oldestName]);
      await page.fill('#filter', 'nothing like this');
      await expect.poll(() => page.locator('#empty').textContent()).toMatch(/No artifacts match/);
      await page.fill('#filter', '');
      await expect.poll(() => page.locator('#rows tr').count()).toBe(100);

      // Images: 112 of them, 100 on the first page, the rest after "Load more", in the API's order.
      await page.selectOption('#kind', 'image/');
      const images = await apiIds(token, { session, mimePrefix: 'image/' });
      expect(images).toHaveLength(112);
      await expect.poll(() => shownIds(page)).toEqual(images.slice(0, 100));
      await page.click('#more');
      await expect.poll(() => shownIds(page)).toEqual(images);
      expect(await page.locator('#more').isVisible()).toBe(false);
      await page.selectOption('#kind', '');

      for (const sort of ['oldest', 'largest', 'smallest', 'name']) {
        await page.selectOption('#sort', sort);
        const want = (await apiIds(token, { session, sort })).slice(0, 100);
        await expect.poll(() => shownIds(page), { message: sort }).toEqual(want);
      }
      await page.selectOption('#sort', 'newest');

      // Dates: everything was made today; up to yesterday is nothing, from today is everything.
      const day = (offset: number) => {
        const d = new Date(Date.now() + offset * 86_400_000);
        return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
      };
      await page.fill('#to', day(-1));
      await page.locator('#to').dispatchEvent('change');
      await expect.poll(() => page.locator('#empty').textContent()).toMatch(/No artifacts match/);
      await page.fill('#to', '');
      await page.fill('#from', day(0));
      await page.locator('#from').dispatchEvent('change');
      await expect.poll(() => shownIds(page)).toEqual((await apiIds(token, { session })).slice(0, 100));
      await page.screenshot({ path: join(SHOTS, 'thousand.png') });
      expect(problems).toEqual([]);
      await close();
    });

    it('live arrivals: none moves the row under the pointer, each costs one row, and the bar shows them', async () => {
      const { page, problems, close } = await open(uiWith(token, session));
      await live(page);
      await expect.poll(() => page.locator('#rows tr').count()).toBe(100);
      const target = page.locator('#rows tr').nth(5);
      await target.hover();
      const before = await target.boundingBox();
      const targetId = await target.getAttribute('data-id');
      await page.evaluate(() => {
        const w = window as unknown as { rowRecords: number; barRecords: number };
        w.rowRecords = 0;
        w.barRecords = 0;
        new MutationObserver((records) => (w.rowRecords += records.length)).observe(document.getElementById('rows')!, {
          childList: true,
          subtree: true,
          attributes: true,
          characterData: true,
        });
        new MutationObserver((records) => (w.barRecords += records.length)).observe(
          document.getElementById('new-bar')!,
          { childList: true, subtree: true, attributes: true, characterData: true },
        );
      });
      for (let i = 0; i < 20; i++) await put(token, `arrival ${i}`, 'text/plain', `arrival-${i}.txt`, session);
      await expect.poll(() => page.locator('#new-count').textContent()).toBe('20 new');
      const counts = await page.evaluate(() => {
        const w = window as unknown as { rowRecords: number; barRecords: number };
        return { rowRecords: w.rowRecords, barRecords: w.barRecords };
      });
      // Nothing in the table moved; the bar changed once or twice an arrival.
      expect(counts.rowRecords).toBe(0);
      expect(counts.barRecords).toBeLessThanOrEqual(2 * 20 + 1);
      expect(await target.boundingBox()).toEqual(before);
      expect(
        await page.evaluate(({ x, y }) => (document.elementFromPoint(x, y)?.closest('tr') as HTMLElement)?.dataset.id, {
          x: before!.x + 40,
          y: before!.y + before!.height / 2,
        }),
      ).toBe(targetId);

      // Shown: each arrival one row, in its place at the top, newest first.
      await page.evaluate(() => ((window as unknown as { rowRecords: number }).rowRecords = 0));
      await page.click('#new-bar');
      await expect
        .poll(async () => (await names(page)).slice(0, 20))
        .toEqual(Array.from({ length: 20 }, (_, i) => `arrival-${19 - i}.txt`));
      const rowRecords = await page.evaluate(() => (window as unknown as { rowRecords: number }).rowRecords);
      expect(rowRecords).toBeLessThanOrEqual(20);

      // Away from the list at the top of the page, an arrival goes straight in: one row.
      await page.mouse.move(5, 5);
      await page.evaluate(() => {
        scrollTo(0, 0);
        (document.activeElement as HTMLElement | null)?.blur();
        (window as unknown as { rowRecords: number }).rowRecords = 0;
      });
      await put(token, 'one more', 'text/plain', 'arrival-20.txt', session);
      await expect.poll(async () => (await names(page))[0]).toBe('arrival-20.txt');
      expect(await page.evaluate(() => (window as unknown as { rowRecords: number }).rowRecords)).toBe(1);
      expect(problems).toEqual([]);
      await close();
    });
  });

  it('a restart of the service under an open page: it says so, recovers without a reload, and shows what arrived meanwhile', async () => {
    const session = 's-restart';
    for (const n of ['one', 'two', 'three']) await put(token, n, 'text/plain', `${n}.txt`, session);
    const { page, problems, close } = await open(uiWith(token, session));
    await live(page);
    await expect.poll(() => page.locator('#rows tr').count()).toBe(3);
    await page.evaluate(() => ((window as unknown as { marker: number }).marker = 7));
    const port = Number(new URL(server.url).port);
    await server.stop();
    await expect.poll(() => page.locator('#live').getAttribute('data-state'), { timeout: 20_000 }).toBe('down');
    await expect(page.locator('#live-text').textContent()).resolves.toMatch(/cannot be reached.*Trying again/);
    // A new view while it is down: the listing says so in plain words, and keeps trying.
    await page.selectOption('#sort', 'oldest');
    await expect.poll(() => page.locator('#list-error').textContent()).toMatch(/cannot be reached/);
    expect(await page.locator('#list-error').textContent()).not.toMatch(/Failed to fetch/);

    server = await startCliServer(join(dir, 'data'), ENV, 60_000, port);
    // Stored before the page is back: it must show them once it is.
    await put(token, 'four', 'text/plain', 'four.txt', session);
    await put(token, 'five', 'text/plain', 'five.txt', session);
    await page.click('#retry-now');
    await live(page);
    await expect
      .poll(() => names(page), { timeout: 20_000 })
      .toEqual(['one.txt', 'two.txt', 'three.txt', 'four.txt', 'five.txt']);
    expect(await page.locator('#list-error').textContent()).toBe('');
    expect(await page.evaluate(() => (window as unknown as { marker: number }).marker)).toBe(7);
    // The console logs each refused connection while the service was away; nothing else.
    expect(problems.filter((p) => !/ERR_CONNECTION_REFUSED|Failed to load resource/.test(p))).toEqual([]);
    await close();
  }, 120_000);

  describe('tokens', () => {
    it('a 503 at sign-in keeps the token and signs in once the service answers', async () => {
      const { page, context, close } = await open('');
      let refused = 0;
      await context.route('**/v1/usage?top=200', async (route) => {
        if (refused++ < 2)
          return route.fulfill({
            status: 503,
            contentType: 'application/json',
            body: JSON.stringify({ code: 'backend_unavailable', message: 'The database is busy.' }),
          });
        return route.continue();
      });
      await page.goto(uiWith(token, 's-token'));
      await expect.poll(() => page.locator('#signin-error').textContent()).toMatch(/token is kept; trying again/);
      expect(page.url()).not.toContain('token=');
      await live(page);
      expect(refused).toBeGreaterThanOrEqual(3);
      // Kept in the tab: a reload during an outage keeps it too.
      refused = 0;
      await page.reload();
      await expect.poll(() => page.locator('#signin-error').textContent()).toMatch(/token is kept/);
      expect(await page.evaluate(() => sessionStorage.getItem('artifact-store.token'))).toBe(token);
      await live(page);
      await close();
    });

    it('a sign-in link pasted into an open tab replaces the token and leaves the address bar', async () => {
      const { page, problems, close } = await open(uiWith(token, 's-token'));
      await live(page);
      const other = await tokenFor({ session: 's-pasted' });
      await page.evaluate((t) => (location.hash = `#token=${t}`), other);
      await expect.poll(() => page.locator('#who').textContent()).toContain('session s-pasted');
      expect(page.url()).not.toContain('token=');
      expect(await page.evaluate(() => sessionStorage.getItem('artifact-store.token'))).toBe(other);
      await live(page);
      expect(problems).toEqual([]);
      await close();
    });

    it('an expiring token is warned about, closes the stream at its expiry, and a new one keeps the view', async () => {
      const session = 's-expiry';
      await put(token, 'before', 'text/plain', 'before.txt', session);
      const short = await tokenFor({}, 4);
      const { page, problems, close } = await open(uiWith(short, session));
      await live(page);
      await page.fill('#filter', 'txt');
      await expect.poll(() => names(page)).toEqual(['before.txt']);
      await expect.poll(() => page.locator('#expiry-text').textContent()).toMatch(/expires at .*Paste a new one/);
      await expect
        .poll(() => page.locator('#expiry-text').textContent(), { timeout: 15_000 })
        .toMatch(/expired at .*stopped updating/);
      expect(await page.locator('#live').getAttribute('data-state')).toBe('down');
      // The stream is closed: what is stored now does not arrive, and the page did not sign out.
      await put(token, 'after', 'text/plain', 'after.txt', session);
      await page.waitForTimeout(500);
      expect(await names(page)).toEqual(['before.txt']);
      expect(await page.locator('#browser').isVisible()).toBe(true);
      await page.click('#renew');
      await page.fill('#renew-token', await tokenFor());
      await page.click('#renew-form button[type=submit]');
      await live(page);
      // The view (its search) stayed; the list caught up.
      expect(await page.inputValue('#filter')).toBe('txt');
      await expect.poll(() => names(page)).toEqual(['after.txt', 'before.txt']);
      expect(await page.locator('#expiry').isHidden()).toBe(true);
      expect(problems).toEqual([]);
      await close();
    }, 60_000);

    it('a token with a wrong signature: plain words, no server path', async () => {
      const { page, close } = await open(`${server.url}/ui`);
      const forged = await mintToken(
        { kid: 'ui', secret: randomBytes(32).toString('base64url') },
        { tenant: 'dev' },
        60,
      );
      await page.fill('#token', forged);
      await page.click('#signin-form button[type=submit]');
      await expect.poll(() => page.locator('#signin-error').textContent()).toMatch(/did not accept this token/);
      expect(await page.locator('#signin-error').textContent()).not.toMatch(/\/|ARTIFACT_STORE|secret/i);
      await close();
    });
  });

  it('deletes one, several, a version, a name and a session, each confirmed, each gone from the API', async () => {
    const session = 's-del';
    const [a, b, c, d] = [
      await put(token, 'a', 'text/plain', 'a.txt', session),
      await put(token, 'b', 'text/plain', 'b.txt', session),
      await put(token, 'c', 'text/plain', 'c.txt', session),
      await put(token, 'd', 'text/plain', 'd.txt', session),
    ];
    await saveVersion(token, 'doc.md', 'v0', session);
    await saveVersion(token, 'doc.md', 'v1', session);
    const { page, problems, close } = await open(uiWith(token, session));
    await live(page);
    await expect.poll(() => page.locator('#rows tr').count()).toBe(5);
    const status = async (id: string) => (await call(token, `/v1/artifacts/${id}/meta?session=${session}`)).status;

    // One, cancelled first, then confirmed.
    await page.locator(`#rows tr[data-id="${a!.id}"]`).click();
    await page.click('#delete');
    await expect(page.locator('#confirm-text').textContent()).resolves.toMatch(/Delete a\.txt\?/);
    await page.click('#confirm button[value=cancel]');
    expect(await status(a!.id)).toBe(200);
    await page.click('#delete');
    await page.click('#confirm-ok');
    await expect.poll(() => status(a!.id)).toBe(404);
    await expect.poll(() => page.locator(`#rows tr[data-id="${a!.id}"]`).count()).toBe(0);

    // Two picked, by click and by Space.
    await page.locator(`#rows tr[data-id="${b!.id}"] input[type=checkbox]`).check();
    await page.locator(`#rows tr[data-id="${c!.id}"]`).focus();
    await page.keyboard.press(' ');
    await expect(page.locator('#bulk-count').textContent()).resolves.toBe('2 picked');
    await page.click('#bulk-delete');
    await page.click('#confirm-ok');
    await expect.poll(async () => [await status(b!.id), await status(c!.id)]).toEqual([404, 404]);
    expect(await status(d!.id)).toBe(200);

    // A version, then the name.
    await page.locator('#rows tr[data-name="doc.md"] .twisty').click();
    await page.locator('#rows tr.version', { hasText: 'v0' }).click();
    await expect(page.locator('#delete').textContent()).resolves.toBe('Delete v0…');
    await page.click('#delete');
    await page.click('#confirm-ok');
    const versions = async () =>
      (
        (await (await call(token, `/v1/names/docs/versions?name=doc.md&session=${session}`)).json()) as {
          items?: Ref[];
        }
      ).items?.map((v) => v.version) ?? [];
    await expect.poll(versions).toEqual([1]);
    await expect.poll(() => page.locator('#rows tr[data-name="doc.md"] .badge').textContent()).toBe('v1 · 1 version');
    await page.locator('#rows tr.version', { hasText: 'v1' }).click();
    await page.click('#delete-name');
    await expect(page.locator('#confirm-text').textContent()).resolves.toMatch(/the name doc\.md and every version/);
    await page.click('#confirm-ok');
    await expect
      .poll(async () => (await call(token, `/v1/names/docs/meta?name=doc.md&session=${session}`)).status)
      .toBe(404);

    // The whole session.
    await page.click('#end-session');
    await page.click('#confirm-ok');
    await expect.poll(() => apiIds(token, { session })).toEqual([]);
    await expect.poll(() => page.locator('#list-error').textContent()).toMatch(/Session s-del ended/);
    expect(problems).toEqual([]);
    await close();
  });

  it('a read-only token sees no upload zone and no delete', async () => {
    const session = 's-read';
    await put(token, 'x', 'text/plain', 'x.txt', session);
    const reader = await tokenFor({ perms: ['read'], session });
    const { page, close } = await open(uiWith(reader));
    await live(page);
    await expect.poll(() => page.locator('#rows tr').count()).toBe(1);
    expect(await page.locator('#drop').isHidden()).toBe(true);
    await page.locator('#rows tr').first().click();
    await page.locator('#preview-body pre').waitFor();
    expect(await page.locator('#delete').isHidden()).toBe(true);
    expect(await page.locator('#end-session').isHidden()).toBe(true);
    await close();
  });

  it('the keyboard alone: focus never enters the PDF viewer, its own tab is a link away, Escape goes back', async () => {
    const session = 's-keys';
    await put(token, await pdfOf(2, 'Keyboard'), 'application/pdf', 'keys.pdf', session);
    const { page, close } = await open(uiWith(token, session));
    await live(page);
    await page.locator('#rows tr').first().focus();
    await page.keyboard.press('Enter');
    await page.locator('#preview-body iframe').waitFor();
    const visited: string[] = [];
    for (let i = 0; i < 14; i++) {
      await page.keyboard.press('Tab');
      visited.push(
        await page.evaluate(
          () =>
            document.activeElement?.tagName.toLowerCase() +
            (document.activeElement?.id ? `#${document.activeElement.id}` : ''),
        ),
      );
    }
    expect(visited).not.toContain('iframe');
    expect(visited).toContain('a');
    expect(visited).toContain('button#copy-link');
    await page.keyboard.press('Escape');
    expect(await page.locator('#preview').isHidden()).toBe(true);
    expect(await page.evaluate(() => (document.activeElement as HTMLElement).dataset.id)).toBeTruthy();
    await close();
  });

  describe('axe-core: no WCAG 2.1 A or AA violation on any view', () => {
    const session = 's-axe';
    beforeAll(async () => {
      await put(token, PNG_1X1, 'image/png', 'chart.png', session);
      await put(token, await pdfOf(1, 'Axe'), 'application/pdf', 'report.pdf', session);
      await put(token, '{"a":1}', 'application/json', 'data.json', session);
      await saveVersion(token, 'plan.md', 'one', session);
      await saveVersion(token, 'plan.md', 'two', session);
    });

    for (const width of [375, 1280])
      for (const scheme of ['light', 'dark'] as const)
        it(`at ${width} px, ${scheme}`, async () => {
          const { page, problems, close } = await open('', { viewport: { width, height: 900 }, axe: true });
          await page.emulateMedia({ colorScheme: scheme });
          const views: [string, () => Promise<void>][] = [
            ['sign-in', async () => void (await page.goto(`${server.url}/ui`))],
            [
              'list',
              async () => {
                await page.goto(uiWith(await tokenFor({}, 100), session));
                await live(page);
                await expect.poll(() => page.locator('#rows tr').count()).toBe(4);
                await page.locator('#rows tr[data-name="plan.md"] .twisty').click();
                await page.locator('#rows tr[data-name="plan.md"] input[type=checkbox]').check();
              },
            ],
            [
              'preview',
              async () => {
                await page.locator('#rows tr', { hasText: 'data.json' }).click();
                await page.locator('#preview-body pre').waitFor();
              },
            ],
            [
              'pdf',
              async () => {
                // On a phone the preview is a sheet over the list: closed first.
                await page.click('#preview-close');
                await page.locator('#rows tr', { hasText: 'report.pdf' }).click();
                await page.locator('#preview-body iframe').waitFor();
              },
            ],
            [
              'confirm',
              async () => {
                await page.click('#delete');
                await page.locator('#confirm[open]').waitFor();
              },
            ],
            [
              'no-match',
              async () => {
                await page.click('#confirm button[value=cancel]');
                await page.click('#preview-close');
                await page.fill('#filter', 'nothing matches this');
                await expect.poll(() => page.locator('#empty').isVisible()).toBe(true);
              },
            ],
          ];
          for (const [name, show] of views) {
            await show();
            await page.screenshot({ path: join(SHOTS, `${name}-${width}-${scheme}.png`) });
            expect(await axeViolations(page), `${name} at ${width} px, ${scheme}`).toEqual([]);
          }
          expect(problems).toEqual([]);
          await close();
        }, 60_000);
  });
});
