/**
 * The Resources tab of /ui in a real Chromium, against `artifact-store serve` with an MCP gateway
 * config: server-everything over stdio, a small server written here that pages its resource list
 * (server-everything 2026.8.31 lists its seven documents in one page), and one that cannot start.
 * Screenshots are kept in test-results/ui/.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations } from './helpers/axe.js';
import { launchChromium, noChromium } from './helpers/chromium.js';
import { closeSuite, ROOT, startCliServer, type CliServer } from './helpers/cli-server.js';
import { peerEntry } from './helpers/mcp-peers.js';
import { PNG_1X1 } from './helpers/payloads.js';

const SHOTS = join(ROOT, 'test-results', 'ui');
const require = createRequire(import.meta.url);
const sdk = (path: string) => JSON.stringify(require.resolve(`@modelcontextprotocol/sdk/${path}`));

/** Five resources, two a page: four notes and a PNG (a blob, so the gateway stores it). */
const PAGED_SERVER = `
const { Server } = require(${sdk('server/index.js')});
const { StdioServerTransport } = require(${sdk('server/stdio.js')});
const { ListResourcesRequestSchema, ReadResourceRequestSchema } = require(${sdk('types.js')});
const png = ${JSON.stringify(PNG_1X1.toString('base64'))};
const items = [1, 2, 3, 4].map((n) => ({ uri: 'paged://note/' + n, name: 'note ' + n, mimeType: 'text/plain' }));
items.push({ uri: 'paged://dot.png', name: 'dot.png', mimeType: 'image/png' });
const server = new Server({ name: 'paged', version: '1.0.0' }, { capabilities: { resources: {} } });
server.setRequestHandler(ListResourcesRequestSchema, (req) => {
  const at = Number(req.params?.cursor ?? 0);
  return { resources: items.slice(at, at + 2), ...(at + 2 < items.length ? { nextCursor: String(at + 2) } : {}) };
});
server.setRequestHandler(ReadResourceRequestSchema, (req) => ({
  contents: [
    req.params.uri === 'paged://dot.png'
      ? { uri: req.params.uri, mimeType: 'image/png', blob: png }
      : { uri: req.params.uri, mimeType: 'text/plain', text: 'text of ' + req.params.uri },
  ],
}));
server.connect(new StdioServerTransport());
`;

let server: CliServer;
let browser: Browser;
let dir: string;
/** The sign-in link the server printed (tenant dev, read/write/admin). */
let uiLink: string;

const linkOf = (s: CliServer) => /Browser:\s+(http:\/\/\S+\/ui#token=\S+)/.exec(s.output())?.[1] ?? '';
const tokenOf = (link: string) => new URLSearchParams(new URL(link).hash.slice(1)).get('token')!;

/**
 * A fresh tab on a UI link, recording the paths it asked for and every console error, page error and
 * dialog: the page must produce none. `before` runs before the page loads (routes).
 */
async function open(link: string, before?: (page: Page) => Promise<unknown>) {
  // The page's policy bypassed so that axe-core can be injected; nothing here tests the policy.
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
  const page = await context.newPage();
  const problems: string[] = [];
  const asked: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('dialog', (d) => {
    problems.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  page.on('request', (r) => asked.push(new URL(r.url()).pathname));
  await before?.(page);
  await page.goto(link);
  await page.waitForSelector('#live[data-state="live"]');
  return { page, problems, asked, close: () => context.close() };
}

/** The answer to the next read of `uri` through the REST view. */
const readOf = (page: Page, uri: string) =>
  page.waitForResponse((r) => r.url().includes('/resources/read?') && new URL(r.url()).searchParams.get('uri') === uri);

async function readUri(page: Page, uri: string) {
  const answer = readOf(page, uri);
  await page.fill('#read-uri', uri);
  await page.click('#read-uri-form button[type=submit]');
  const res = await answer;
  expect(res.status(), await res.text()).toBe(200);
  return (await res.json()) as { fromCache: boolean; artifacts: { id: string }[] };
}

const fact = (page: Page, name: string) =>
  page.locator('#reading-facts dt', { hasText: name }).locator('xpath=following-sibling::dd[1]').textContent();

const serverEnv = () => ({ ARTIFACT_STORE_ENV: 'development', ARTIFACT_STORE_GATEWAY_CONFIG: join(dir, 'mcp.json') });

describe.skipIf(noChromium)(`Resources tab in Chromium${noChromium ? ` (skipped: ${noChromium})` : ''}`, () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'artifact-store-ui-resources-'));
    mkdirSync(SHOTS, { recursive: true });
    writeFileSync(join(dir, 'paged-server.cjs'), PAGED_SERVER);
    const tenants = { tenants: ['dev'] };
    const config = {
      mcpServers: {
        everything: { command: process.execPath, args: [peerEntry('server-everything'), 'stdio'], artifacts: tenants },
        paged: { command: process.execPath, args: [join(dir, 'paged-server.cjs')], artifacts: tenants },
        broken: { command: join(dir, 'no-such-server'), args: [], artifacts: tenants },
      },
    };
    writeFileSync(join(dir, 'mcp.json'), JSON.stringify(config));
    server = await startCliServer(join(dir, 'data'), serverEnv());
    uiLink = linkOf(server);
    expect(uiLink, server.output()).not.toBe('');
    browser = await launchChromium();
  }, 120_000);

  afterAll(() => closeSuite(browser, server, dir));

  it('lists the servers with their state, pages resources with "more", reads text inline and blobs into artifacts', async () => {
    const { page, problems, asked, close } = await open(uiLink);
    await page.click('#tab-resources');
    expect(await page.getAttribute('#tab-resources', 'aria-selected')).toBe('true');
    expect(await page.locator('#artifacts-view').isHidden()).toBe(true);

    const everything = page.locator('#servers li[data-server="everything"]');
    await expect.poll(() => everything.getAttribute('data-state')).toBe('ready');
    await expect(everything.textContent()).resolves.toContain('mcp-servers/everything 2.0.0');
    // The one that cannot start says why, and offers nothing to pick.
    const broken = page.locator('#servers li[data-server="broken"]');
    await expect.poll(() => broken.getAttribute('data-state'), { timeout: 15_000 }).toBe('failed');
    await expect(broken.locator('.error').textContent()).resolves.toMatch(/did not start/);
    expect(await broken.locator('button').count()).toBe(0);

    // Pages as the server pages them: "Load more" sends nextCursor back, and goes once there is none.
    const items = page.locator('#resource-list button[data-uri]');
    await page.click('#servers button[data-server="paged"]');
    await expect.poll(() => items.allTextContents()).toEqual(['note 1', 'note 2']);
    await page.click('#resources-more');
    await expect.poll(() => items.allTextContents()).toEqual(['note 1', 'note 2', 'note 3', 'note 4']);
    await page.click('#resources-more');
    await expect.poll(() => items.allTextContents()).toEqual(['note 1', 'note 2', 'note 3', 'note 4', 'dot.png']);
    await expect.poll(() => page.locator('#resources-more').isHidden()).toBe(true);
    expect(asked.filter((p) => p === '/v1/mcp/servers/paged/resources')).toHaveLength(3);

    // A blob: stored as an artifact, previewed as the artifact view does (an image from its signed link).
    const png = readOf(page, 'paged://dot.png');
    await items.filter({ hasText: 'dot.png' }).click();
    const pngRef = ((await (await png).json()) as { artifacts: { id: string }[] }).artifacts[0]!;
    await expect.poll(() => page.locator('#reading-body .stored').textContent()).toContain(pngRef.id);
    await page.waitForFunction(() => {
      const img = document.querySelector('#preview-body img');
      return img instanceof HTMLImageElement && img.complete && img.naturalWidth === 1;
    });
    expect(await page.getAttribute('#preview-body img', 'src')).toMatch(new RegExp(`^${server.url}/v1/download/`));
    await expect(page.locator('#preview-facts').textContent()).resolves.toContain(pngRef.id);

    // server-everything: its documents in one page, read as inline text; a second read comes from the cache.
    await page.click('#servers button[data-server="everything"]');
    await expect.poll(() => items.count()).toBe(7);
    await expect.poll(() => page.locator('#resources-more').isHidden()).toBe(true);
    const startup = readOf(page, 'demo://resource/static/document/startup.md');
    await items.filter({ hasText: 'startup.md' }).click();
    expect((await (await startup).json()).artifacts).toEqual([]);
    await expect
      .poll(() => page.locator('#reading-body pre').textContent())
      .toMatch(/^# Everything Server - Startup Process/);
    await expect(fact(page, 'From the cache')).resolves.toBe('no');
    await items.filter({ hasText: 'startup.md' }).click();
    await expect.poll(() => fact(page, 'From the cache')).toBe('yes');

    // A templated resource (not listed) by its URI: a blob, so an artifact, whose text the preview shows.
    const read = await readUri(page, 'demo://resource/dynamic/blob/1');
    const id = read.artifacts[0]!.id;
    expect(id).toMatch(/^everything\./);
    await expect.poll(() => page.locator('#reading-body .stored').textContent()).toContain(`Stored as artifact ${id}`);
    await expect.poll(() => page.locator('#preview-facts').textContent()).toContain(id);
    await expect
      .poll(() => page.locator('#preview-body pre').textContent())
      .toMatch(/^Resource 1: This is a base64 blob created at/);
    await page.screenshot({ path: join(SHOTS, 'resources.png'), fullPage: true });
    // No WCAG 2.1 A or AA violation in this view, at 1280 and 375 px, light and dark.
    for (const width of [1280, 375])
      for (const colorScheme of ['light', 'dark'] as const) {
        await page.setViewportSize({ width, height: 900 });
        await page.emulateMedia({ colorScheme });
        await page.screenshot({ path: join(SHOTS, `resources-${width}-${colorScheme}.png`) });
        expect(await axeViolations(page), `resources at ${width} px, ${colorScheme}`).toEqual([]);
      }
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.emulateMedia({ colorScheme: 'light' });

    // Its id links to it in the Artifacts tab, selected in the list.
    await page.click(`#reading-body .stored button[data-key]`);
    expect(await page.locator('#artifacts-view').isVisible()).toBe(true);
    expect(await page.getAttribute('#tab-artifacts', 'aria-selected')).toBe('true');
    await expect.poll(() => page.locator(`#rows tr[data-id="${id}"]`).getAttribute('aria-selected')).toBe('true');
    expect(problems).toEqual([]);
    await close();
  });

  it('says when the resource on screen changed upstream (resource.updated on /v1/events) and reads it again past the cache', async () => {
    const { page, problems, close } = await open(uiLink);
    await page.click('#tab-resources');
    await page.click('#servers button[data-server="everything"]');
    const uri = 'demo://resource/dynamic/text/1';
    expect((await readUri(page, uri)).fromCache).toBe(false);
    await expect
      .poll(() => page.locator('#reading-body pre').textContent())
      .toMatch(/^Resource 1: This is a plaintext resource created at/);
    expect((await readUri(page, uri)).fromCache).toBe(true);
    expect(await page.locator('#reading-updated').textContent()).toBe('');

    // The REST read subscribed upstream for this scope. server-everything sends updates for the
    // subscriptions of the MCP session that toggles them on; over stdio the gateway holds one session
    // with it, so a tool call through /mcp/gateway (any host) turns them on for the gateway's subscriptions.
    const client = new Client({ name: 'ui-resources-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url}/mcp/gateway`), {
        requestInit: { headers: { Authorization: `Bearer ${tokenOf(uiLink)}` } },
      }),
    );
    const toggle = () => client.callTool({ name: 'everything__toggle-subscriber-updates', arguments: {} });
    try {
      expect(JSON.stringify(await toggle())).toContain('Started simulated resource updated notifications');
      await expect
        .poll(() => page.locator('#reading-updated').textContent(), { timeout: 15_000 })
        .toMatch(/^It changed upstream at .+: read it again for the new content\.$/);
      await page.locator('#reading').scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(SHOTS, 'resource-updated.png') });
      const again = readOf(page, uri);
      await page.click('#reread');
      const res = await again;
      expect(new URL(res.url()).searchParams.get('fresh')).toBe('true');
      expect(((await res.json()) as { fromCache: boolean }).fromCache).toBe(false);
      await expect.poll(() => fact(page, 'From the cache')).toBe('no');
    } finally {
      await toggle();
      await client.close();
    }
    // Nothing in the tab sticks out of a phone's width.
    await page.setViewportSize({ width: 320, height: 800 });
    const wide = await page.evaluate(() =>
      [...document.querySelectorAll('body *')]
        .filter((e) => !e.closest('.visually-hidden') && e.getBoundingClientRect().right > window.innerWidth + 0.5)
        .map((e) => `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}.${e.className}`),
    );
    expect(wide).toEqual([]);
    await page.screenshot({ path: join(SHOTS, 'resources-narrow.png'), fullPage: true });
    expect(problems).toEqual([]);
    await close();
  });

  it('hides the tab on a service without a gateway config, whose server list is empty', async () => {
    const plain = await startCliServer(join(dir, 'plain-data'), { ARTIFACT_STORE_ENV: 'development' });
    try {
      const link = linkOf(plain);
      const res = await fetch(`${plain.url}/v1/mcp/servers`, { headers: { Authorization: `Bearer ${tokenOf(link)}` } });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ servers: [] });
      const { page, problems, asked, close } = await open(link);
      await page.waitForSelector('#tabs[data-gateway="no"]', { state: 'attached' });
      expect(await page.locator('#tab-resources').isHidden()).toBe(true);
      expect(await page.locator('#artifacts-view').isVisible()).toBe(true);
      expect(asked).toContain('/v1/mcp/servers');
      expect(problems).toEqual([]);
      await close();
    } finally {
      plain.kill();
      await plain.exited;
    }
  });

  it('hides the tab when the route is missing (an older service answers 404)', async () => {
    const notFound = JSON.stringify({ code: 'not_found', message: 'Not found' });
    const { page, problems, asked, close } = await open(uiLink, (p) =>
      p.route('**/v1/mcp/servers', (route) =>
        route.fulfill({ status: 404, contentType: 'application/json', body: notFound }),
      ),
    );
    await page.waitForSelector('#tabs[data-gateway="no"]', { state: 'attached' });
    expect(asked).toContain('/v1/mcp/servers');
    expect(await page.locator('#tab-resources').isHidden()).toBe(true);
    // That 404 is the only console line: Chromium logs every failed fetch.
    expect(problems.filter((p) => !/status of 404/.test(p))).toEqual([]);
    await close();
  });

  it('with the service away: the state shows in this view too, a refresh says so in plain words, and it lists again once back', async () => {
    const { page, problems, close } = await open(uiLink);
    await page.click('#tab-resources');
    const everything = page.locator('#servers li[data-server="everything"]');
    await expect.poll(() => everything.getAttribute('data-state')).toBe('ready');
    const port = Number(new URL(server.url).port);
    await server.stop();
    await expect.poll(() => page.locator('#live').getAttribute('data-state'), { timeout: 20_000 }).toBe('down');
    expect(await page.locator('#live').isVisible()).toBe(true);
    await page.click('#servers-refresh');
    await expect.poll(() => page.locator('#servers-error').textContent()).toMatch(/cannot be reached/);
    expect(await page.locator('#servers-error').textContent()).not.toMatch(/Failed to fetch/);

    server = await startCliServer(join(dir, 'data'), serverEnv(), 60_000, port);
    await page.click('#retry-now');
    await page.waitForSelector('#live[data-state="live"]', { timeout: 20_000 });
    // The gateway's servers start again with the service: a refresh lists them once it answers.
    await expect
      .poll(
        async () => {
          await page.click('#servers-refresh');
          await page.waitForTimeout(300);
          return page.locator('#servers-error').textContent();
        },
        { timeout: 30_000 },
      )
      .toBe('');
    await expect.poll(() => everything.getAttribute('data-state'), { timeout: 20_000 }).toBe('ready');
    // The console logs each refused connection while the service was away; nothing else.
    expect(problems.filter((p) => !/ERR_CONNECTION_REFUSED|Failed to load resource/.test(p))).toEqual([]);
    await close();
  }, 120_000);
});
