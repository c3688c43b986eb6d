/**
 * Named versions in the artifact browser, in a real Chromium against `artifact-store serve` in its own
 * process: a name's versions share one row (its latest version, a "v2 · 3 versions" badge) that
 * opens, by keyboard too, onto its versions newest first, each previewed like any artifact, and a new
 * version arriving on /v1/events updates the row without a reload.
 */
import { mkdirSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, noChromium } from './helpers/chromium.js';
import { closeSuite, ROOT, startCliServer, type CliServer } from './helpers/cli-server.js';

const SHOTS = join(ROOT, 'test-results', 'ui');

let server: CliServer;
let browser: Browser;
let dir: string;
/** The sign-in link the server printed (tenant dev, user dev, read/write/admin). */
let uiLink: string;

interface Ref {
  id: string;
  sizeBytes: number;
  name?: string;
  version?: number;
}

const devToken = () => new URLSearchParams(new URL(uiLink).hash.slice(1)).get('token')!;

/** Saves a new version of report.txt, user-wide in the app "adk". */
async function saveVersion(body: string, type = 'text/plain'): Promise<Ref> {
  const res = await fetch(`${server.url}/v1/names/adk?name=report.txt&scope=user`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${devToken()}`, 'Content-Type': type },
    body,
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Ref;
}

const group = (page: Page) => page.locator('#rows tr[data-name="report.txt"]');
const versionLabels = (page: Page) => page.locator('#rows tr.version td.name .vnum').allTextContents();
const focusedKey = (page: Page) => page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.key);

describe.skipIf(noChromium)(
  `named versions in the artifact browser${noChromium ? ` (skipped: ${noChromium})` : ''}`,
  () => {
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'artifact-store-ui-names-'));
      mkdirSync(SHOTS, { recursive: true });
      server = await startCliServer(join(dir, 'data'), { ARTIFACT_STORE_ENV: 'development' });
      uiLink = /Browser:\s+(http:\/\/\S+\/ui#token=\S+)/.exec(server.output())?.[1] ?? '';
      expect(uiLink, server.output()).not.toBe('');
      browser = await launchChromium();
    }, 120_000);

    afterAll(() => closeSuite(browser, server, dir));

    it('groups a name’s versions in one row that opens onto them, previews one, and follows a new version live', async () => {
      const saved = [];
      for (const body of ['first draft', 'second draft, longer', 'third draft, the longest of them'])
        saved.push(await saveVersion(body));
      expect(saved.map((r) => r.version)).toEqual([0, 1, 2]);
      const plain = await fetch(`${server.url}/v1/artifacts`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${devToken()}`,
          'Content-Type': 'text/plain',
          'X-Artifact-Filename': 'notes.txt',
        },
        body: 'an unnamed artifact',
      });
      expect(plain.status).toBe(201);
      const unnamed = (await plain.json()) as Ref;

      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') problems.push(`console: ${m.text()}`);
      });
      page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
      await page.goto(uiLink);
      await page.waitForSelector('#live[data-state="live"]');

      // Two rows: the unnamed artifact exactly as before, and one for the name showing its latest version.
      await expect.poll(() => page.locator('#rows tr').count()).toBe(2);
      const plainRow = page.locator(`#rows tr[data-id="${unnamed.id}"]`);
      await expect(plainRow.locator('td.name').textContent()).resolves.toBe('notes.txt');
      expect(await plainRow.getAttribute('aria-expanded')).toBeNull();
      expect(await group(page).getAttribute('aria-expanded')).toBe('false');
      await expect(group(page).locator('.badge').textContent()).resolves.toBe('v2 · 3 versions');
      await expect(group(page).locator('td.size').textContent()).resolves.toBe(`${saved[2]!.sizeBytes} B`);
      await expect(group(page).locator('td.tool').textContent()).resolves.toBe('adk');

      // The keyboard opens it (focus stays on the name's row): its versions, newest first.
      await group(page).focus();
      const groupKey = await focusedKey(page);
      await page.keyboard.press('Enter');
      expect(await group(page).getAttribute('aria-expanded')).toBe('true');
      expect(await versionLabels(page)).toEqual(['v2', 'v1', 'v0']);
      expect(await focusedKey(page)).toBe(groupKey);
      expect(await page.locator('#rows tr.version').evaluateAll((trs) => trs.map((tr) => tr.dataset.id))).toEqual([
        saved[2]!.id,
        saved[1]!.id,
        saved[0]!.id,
      ]);

      // Down to v1 and Enter: its own preview, with its own bytes.
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('ArrowDown');
      expect(await page.evaluate(() => (document.activeElement as HTMLElement).dataset.id)).toBe(saved[1]!.id);
      await page.keyboard.press('Enter');
      await expect.poll(() => page.locator('#preview-body pre').textContent()).toBe('second draft, longer');
      await expect(page.locator('#preview-title').textContent()).resolves.toBe('report.txt · v1');
      await expect(page.locator('#preview-facts').textContent()).resolves.toContain(saved[1]!.id);
      // Escape returns to v1's row; Left goes up to the name, Left again closes it, Right opens it.
      await page.keyboard.press('Escape');
      expect(await page.evaluate(() => (document.activeElement as HTMLElement).dataset.id)).toBe(saved[1]!.id);
      await page.keyboard.press('ArrowLeft');
      expect(await focusedKey(page)).toBe(groupKey);
      await page.keyboard.press('ArrowLeft');
      expect(await page.locator('#rows tr').count()).toBe(2);
      await page.keyboard.press('ArrowRight');
      expect(await versionLabels(page)).toEqual(['v2', 'v1', 'v0']);
      // A click does the same: v0's preview, then the version list stays open.
      await page.locator(`#rows tr[data-id="${saved[0]!.id}"]`).click();
      await expect.poll(() => page.locator('#preview-body pre').textContent()).toBe('first draft');

      // A fourth version saved while the page is open: the row shows it, without a reload.
      await page.evaluate(() => ((window as unknown as { marker: number }).marker = 42));
      const fourth = await saveVersion('{"draft":4}', 'application/json');
      expect(fourth.version).toBe(3);
      await expect.poll(() => group(page).locator('.badge').textContent()).toBe('v3 · 4 versions');
      await expect(group(page).locator('td.type').textContent()).resolves.toBe('application/json');
      await expect(group(page).locator('td.size').textContent()).resolves.toBe(`${fourth.sizeBytes} B`);
      expect(await versionLabels(page)).toEqual(['v3', 'v2', 'v1', 'v0']);
      expect(await page.locator('#rows tr:not(.version)').count()).toBe(2);
      expect(await page.evaluate(() => (window as unknown as { marker: number }).marker)).toBe(42);
      await page.locator(`#rows tr[data-id="${fourth.id}"]`).click();
      await expect.poll(() => page.locator('#preview-body pre').textContent()).toBe('{\n  "draft": 4\n}');

      // A deleted version greys out in place, as any artifact does, and the name counts one fewer.
      const del = await fetch(`${server.url}/v1/artifacts/${saved[0]!.id}?user=dev`, {
        method: 'DELETE',
        headers: { Authorization: `Bearer ${devToken()}` },
      });
      expect(del.status, await del.text()).toBe(204);
      await page.locator(`#rows tr.version.gone[data-id="${saved[0]!.id}"]`).waitFor();
      await expect(page.locator(`#rows tr[data-id="${saved[0]!.id}"] td.expires`).textContent()).resolves.toMatch(
        /^deleted /,
      );
      await expect.poll(() => group(page).locator('.badge').textContent()).toBe('v3 · 3 versions');
      expect(await group(page).evaluate((tr) => tr.classList.contains('gone'))).toBe(false);

      await page.screenshot({ path: join(SHOTS, 'names.png') });
      expect(statSync(join(SHOTS, 'names.png')).size).toBeGreaterThan(10_000);
      expect(problems).toEqual([]);
      await context.close();
    });
  },
);
