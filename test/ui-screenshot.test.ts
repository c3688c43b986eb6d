/**
 * The README's screenshot of the artifact browser, docs/images/artifact-browser.png, rendered here so
 * that it shows the page as it is: one agent session's tool outputs (a PDF report, a CSV and a JSON
 * result of a query, a page screenshot, a workbook, a plan saved in three versions) in Debian's
 * Chromium at 1280×800, with the screenshot previewed.
 *
 * Everything in the picture is fixed: the bytes (so sizes, ids and hashes), the service's clock (the
 * service runs in this process, and Date is pinned while it stores and serves), the page's clock,
 * locale and time zone. The committed file is rewritten only when the new render differs from it
 * visibly, compared pixel by pixel in Chromium itself (no PNG decoder needed); a few pixels of
 * antialiasing are tolerated. In CI (`CI` set) a visible difference fails instead, since a rewrite
 * in a fresh clone would be lost: the message says how to regenerate and commit the file. Each render
 * is also kept in test-results/ui/.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { serve } from '@hono/node-server';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createFsBlobStore } from '../src/blob/fs.js';
import { nodeSha256 } from '../src/blob/node-hash.js';
import { composeApp, type ComposedApp } from '../src/compose/compose-app.js';
import { loadConfig } from '../src/core/config.js';
import type { ArtifactRepository } from '../src/db/repository.js';
import { createSqliteRepository } from '../src/db/sqlite.js';
import { mintToken } from '../src/http/tokens.js';
import { nodeUiAssets } from '../src/node/assets.js';
import { bytesOf } from './helpers/app.js';
import { launchChromium, noChromium } from './helpers/chromium.js';
import { ROOT } from './helpers/cli-server.js';
import { pdf } from './helpers/payloads.js';
import { HMAC_KEYS, testAppVars } from './helpers/test-app-options.js';

const COMMITTED = join(ROOT, 'docs', 'images', 'artifact-browser.png');
const RENDERED = join(ROOT, 'test-results', 'ui', 'artifact-browser.png');
const VIEWPORT = { width: 1280, height: 800 };
/** A pixel differs when one of its channels moved by more than this (antialiasing moves them less). */
const CHANNEL_TOLERANCE = 48;
/** The share of differing pixels a render may have and still count as the committed picture. */
const PIXEL_TOLERANCE = 0.002;

/** The session's clock: minutes after 14:00 UTC on a fixed day. */
const T0 = Date.parse('2025-06-12T14:00:00Z');
const at = (minutes: number) => T0 + minutes * 60_000;
/** When the page is looked at. */
const VIEWED_AT = at(10);

let composed: ComposedApp;
let repo: ArtifactRepository;
let server: Server;
let url: string;
let browser: Browser;
let dir: string;

// ---- The artifacts: fixed bytes, so fixed sizes, ids and hashes ----

function chunk(type: string, data: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const out = Buffer.alloc(body.length + 8);
  out.writeUInt32BE(data.length, 0);
  body.copy(out, 4);
  out.writeUInt32BE(crc32(body), body.length + 4);
  return out;
}

/**
 * A zlib stream of stored (uncompressed) blocks: the same bytes from any zlib build, where deflate's
 * output may differ between Node versions and so change the artifact's hash.
 */
function storedZlib(raw: Buffer): Buffer {
  const parts: Buffer[] = [Buffer.from([0x78, 0x01])];
  for (let i = 0; i < raw.length || i === 0; i += 0xffff) {
    const block = raw.subarray(i, i + 0xffff);
    const head = Buffer.alloc(5);
    head[0] = i + 0xffff >= raw.length ? 1 : 0;
    head.writeUInt16LE(block.length, 1);
    head.writeUInt16LE(~block.length & 0xffff, 3);
    parts.push(head, block);
  }
  let a = 1;
  let b = 0;
  for (const byte of raw) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  const adler = Buffer.alloc(4);
  adler.writeUInt32BE(((b << 16) | a) >>> 0);
  parts.push(adler);
  return Buffer.concat(parts);
}

/**
 * What a browser tool's screenshot of a sales dashboard looks like, drawn in rectangles: a top bar,
 * a side menu, three figure cards and a bar chart with its grid. An 8-bit palette PNG.
 */
function dashboardPng(width = 800, height = 450): Buffer {
  const palette = [
    [0xf3, 0xf5, 0xf8], // 0 page
    [0x1f, 0x2a, 0x44], // 1 top bar
    [0xff, 0xff, 0xff], // 2 card
    [0xdd, 0xe2, 0xea], // 3 grid, borders
    [0x2f, 0x6f, 0xde], // 4 bars
    [0x2e, 0xa0, 0x6b], // 5 green
    [0xe8, 0x8a, 0x1a], // 6 orange
    [0x9a, 0xa5, 0xb8], // 7 text placeholders
    [0x2b, 0x36, 0x52], // 8 side menu
  ];
  const px = Buffer.alloc(width * height, 0);
  const rect = (x: number, y: number, w: number, h: number, c: number) => {
    for (let j = Math.max(0, y); j < Math.min(height, y + h); j++) px.fill(c, j * width + x, j * width + x + w);
  };
  rect(0, 0, width, 44, 1);
  rect(16, 16, 120, 12, 7);
  rect(0, 44, 150, height - 44, 8);
  for (let i = 0; i < 6; i++) rect(20, 70 + i * 34, 90 + ((i * 37) % 30), 10, i === 1 ? 2 : 7);
  const cards: [number, number][] = [
    [4, 0.72],
    [5, 0.55],
    [6, 0.38],
  ];
  cards.forEach(([colour, share], i) => {
    const x = 170 + i * 205;
    rect(x, 64, 190, 92, 3);
    rect(x + 1, 65, 188, 90, 2);
    rect(x + 14, 80, 80, 9, 7);
    rect(x + 14, 100, 120, 20, 1);
    rect(x + 14, 134, 160, 8, 3);
    rect(x + 14, 134, Math.round(160 * share), 8, colour);
  });
  // The chart card: grid lines, twelve months of bars, an axis.
  rect(170, 172, 600, 258, 3);
  rect(171, 173, 598, 256, 2);
  rect(186, 186, 160, 10, 7);
  for (let g = 0; g < 5; g++) rect(200, 220 + g * 44, 550, 1, 3);
  const revenue = [58, 64, 61, 72, 80, 77, 86, 91, 88, 97, 104, 112];
  revenue.forEach((v, i) => {
    const h = Math.round(v * 1.6);
    rect(212 + i * 45, 400 - h, 28, h, i === revenue.length - 1 ? 6 : 4);
  });
  rect(200, 400, 550, 2, 1);
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 3; // palette
  const raw = Buffer.alloc((width + 1) * height);
  for (let y = 0; y < height; y++) px.copy(raw, y * (width + 1) + 1, y * width, (y + 1) * width);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('PLTE', Buffer.from(palette.flat())),
    chunk('IDAT', storedZlib(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const regions = ['North', 'South', 'East', 'West', 'Central'];
const ordersCsv = () =>
  [
    'order_id,region,placed_at,items,total_usd',
    ...Array.from({ length: 400 }, (_, i) => {
      const day = String(1 + (i % 30)).padStart(2, '0');
      return `${100_000 + i},${regions[i % 5]},2025-0${7 + (i % 3)}-${day},${1 + ((i * 7) % 9)},${((i * 7919) % 90_000) / 100 + 12}`;
    }),
  ].join('\n');
const queryResult = () =>
  JSON.stringify({
    query: 'SELECT region, sum(total_usd) AS revenue, count(*) AS orders FROM orders GROUP BY region',
    rows: regions.map((region, i) => ({ region, revenue: 182_340 + i * 23_417, orders: 1_204 + i * 97 })),
    elapsedMs: 41,
  });
const plan = (version: number) =>
  [
    '# Q3 sales review',
    '',
    '1. Download the Sales Dashboard workbook as PDF.',
    '2. Pull Q3 orders by region from Postgres.',
    ...(version >= 1 ? ['3. Screenshot the checkout page for the conversion drop.'] : []),
    ...(version >= 2 ? ['4. Summarise: West leads; checkout conversion fell in August.'] : []),
    '',
  ].join('\n');

// ---- The service, in this process, on a pinned clock ----

async function put(token: string, body: Uint8Array | string, type: string, filename: string, namespace: string) {
  const res = await fetch(`${url}/v1/artifacts`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${token}`,
      'Content-Type': type,
      'X-Artifact-Filename': filename,
      'X-Artifact-Namespace': namespace,
    },
    body: body as BodyInit,
  });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { id: string; sizeBytes: number };
}

async function saveVersion(token: string, body: string) {
  const res = await fetch(`${url}/v1/names/research-agent?name=plan.md`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'text/markdown', 'X-Artifact-Filename': 'plan.md' },
    body,
  });
  expect(res.status, await res.clone().text()).toBe(201);
}

/**
 * How many pixels of two PNGs differ visibly (a channel by more than CHANNEL_TOLERANCE), decoded and
 * compared in Chromium; every pixel counts as differing when the sizes differ.
 */
async function visibleDiff(a: Buffer, b: Buffer): Promise<{ differing: number; total: number }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  try {
    return await page.evaluate(
      async ([first, second, tolerance]) => {
        const pixels = async (b64: string) => {
          const img = new Image();
          img.src = `data:image/png;base64,${b64}`;
          await img.decode();
          const canvas = new OffscreenCanvas(img.naturalWidth, img.naturalHeight);
          const ctx = canvas.getContext('2d')!;
          ctx.drawImage(img, 0, 0);
          return ctx.getImageData(0, 0, img.naturalWidth, img.naturalHeight);
        };
        const [x, y] = [await pixels(first), await pixels(second)];
        const total = Math.max(x.width * x.height, y.width * y.height);
        if (x.width !== y.width || x.height !== y.height) return { differing: total, total };
        let differing = 0;
        for (let i = 0; i < x.data.length; i += 4) {
          for (let c = 0; c < 4; c++) {
            if (Math.abs(x.data[i + c]! - y.data[i + c]!) > tolerance) {
              differing++;
              break;
            }
          }
        }
        return { differing, total };
      },
      [a.toString('base64'), b.toString('base64'), CHANNEL_TOLERANCE] as const,
    );
  } finally {
    await context.close();
  }
}

describe.skipIf(noChromium)(`the README's screenshot${noChromium ? ` (skipped: ${noChromium})` : ''}`, () => {
  beforeAll(async () => {
    vi.setSystemTime(T0);
    dir = mkdtempSync(join(tmpdir(), 'artifact-store-ui-shot-'));
    mkdirSync(join(ROOT, 'test-results', 'ui'), { recursive: true });
    const config = loadConfig(testAppVars({}), { env: 'test', dataDir: dir });
    repo = createSqliteRepository({ path: join(dir, 'artifacts.db') });
    const blobs = createFsBlobStore({ root: join(dir, 'blobs'), hash: nodeSha256, fsync: false });
    composed = await composeApp(
      config,
      { repo, blobs, hash: nodeSha256 },
      { keys: { howToSetKeys: 'the test passes its keys.' }, hostActorId: 'test', http: { uiAssets: nodeUiAssets() } },
    );
    server = await new Promise<Server>((ok) => {
      const s = serve({ fetch: composed.app.fetch, port: 0, hostname: '127.0.0.1' }, () => ok(s as Server)) as Server;
    });
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    vi.useRealTimers();
    await browser?.close();
    server?.closeAllConnections();
    await new Promise((ok) => (server ? server.close(ok) : ok(undefined)));
    await composed?.service.close();
    await repo?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('renders a session’s tool outputs with the screenshot previewed, and docs/images/artifact-browser.png shows it', async () => {
    // One agent session's outputs, stored over ten minutes by the tools that made them.
    const sessionToken = (ttlSeconds: number) =>
      mintToken(HMAC_KEYS[0], { tenant: 'acme', sub: 'u-7', session: 's-42', perms: ['read', 'write'] }, ttlSeconds);
    const writer = await sessionToken(3600);
    vi.setSystemTime(at(1));
    await saveVersion(writer, plan(0));
    vi.setSystemTime(at(2));
    await put(
      writer,
      await pdf(4, 'Sales Dashboard'),
      'application/pdf',
      'Sales Dashboard.pdf',
      'tableau.download_workbook',
    );
    vi.setSystemTime(at(3));
    await put(writer, bytesOf(48_213, 7), 'application/zip', 'Sales Dashboard.twbx', 'tableau.download_workbook');
    vi.setSystemTime(at(4));
    await put(writer, ordersCsv(), 'text/csv', 'q3-orders.csv', 'postgres.query');
    vi.setSystemTime(at(5));
    await put(writer, queryResult(), 'application/json', 'revenue-by-region.json', 'postgres.query');
    await saveVersion(writer, plan(1));
    vi.setSystemTime(at(7));
    const shot = await put(writer, dashboardPng(), 'image/png', 'checkout-page.png', 'browser.screenshot');
    vi.setSystemTime(at(8));
    await saveVersion(writer, plan(2));

    // The page, ten minutes in, with a token for the session (valid eight hours).
    vi.setSystemTime(VIEWED_AT);
    const token = await sessionToken(8 * 3600);
    const context = await browser.newContext({
      viewport: VIEWPORT,
      deviceScaleFactor: 1,
      locale: 'en-US',
      timezoneId: 'UTC',
      colorScheme: 'light',
      reducedMotion: 'reduce',
    });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
    await page.clock.setFixedTime(VIEWED_AT);
    await page.goto(`${url}/ui#token=${token}`);
    await page.waitForSelector('#live[data-state="live"]');
    await expect.poll(() => page.locator('#rows tr').count()).toBe(6);
    await expect(page.locator('#who').textContent()).resolves.toBe(
      'tenant acme · session s-42 · read, write · until 10:10 PM',
    );
    await expect(page.locator('#rows tr[data-name="plan.md"] .badge').textContent()).resolves.toBe('v2 · 3 versions');

    await page.locator(`#rows tr[data-id="${shot.id}"]`).click();
    await page.waitForFunction(() => {
      const img = document.querySelector('#preview-body img');
      return img instanceof HTMLImageElement && img.complete && img.naturalWidth === 800;
    });
    await expect(page.locator('#preview-facts').textContent()).resolves.toContain('browser.screenshot');
    // Nothing hovered, every font loaded.
    await page.mouse.move(VIEWPORT.width - 1, VIEWPORT.height - 1);
    await page.evaluate(() => document.fonts.ready);
    const rendered = await page.screenshot({ animations: 'disabled', caret: 'hide' });
    expect(problems).toEqual([]);
    await context.close();
    writeFileSync(RENDERED, rendered);

    const committed = existsSync(COMMITTED) ? readFileSync(COMMITTED) : undefined;
    const diff = committed ? await visibleDiff(rendered, committed) : undefined;
    const stale = !diff || diff.differing > diff.total * PIXEL_TOLERANCE;
    if (!stale) return;
    const what = diff
      ? `${diff.differing} of ${diff.total} pixels differ visibly from the committed one`
      : 'there is no committed one';
    if (process.env.CI) {
      throw new Error(
        `the README screenshot is out of date (${what}; the new render is in test-results/ui/artifact-browser.png): ` +
          'run `npx vitest run --project node test/ui-screenshot.test.ts` and commit docs/images/artifact-browser.png',
      );
    }
    mkdirSync(join(ROOT, 'docs', 'images'), { recursive: true });
    writeFileSync(COMMITTED, rendered);
    console.info(`docs/images/artifact-browser.png rewritten: ${what}`);
  }, 120_000);
});
