/**
 * @playwright/mcp behind the gateway on stdio, with Debian's Chromium: browser_take_screenshot's
 * image reaches the host as an image the model sees, with a summary, an artifact:// link and a
 * download link, and the stored PNG is the one the server took and the host was shown.
 */
import { createServer, type Server } from 'node:http';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM_PATH, noChromium } from './helpers/chromium.js';
import { CLI_ARGS, ROOT } from './helpers/cli-server.js';
import { connectOrExplain } from './helpers/mcp-peers.js';

const require = createRequire(import.meta.url);
const LONG_BASE64 = /[A-Za-z0-9+/]{256,}/;

let dir: string;
let page: Server;
let client: Client;
let stderr = '';

beforeAll(async () => {
  if (noChromium) return;
  dir = await mkdtemp(join(tmpdir(), 'gateway-playwright-'));
  await mkdir(join(dir, 'tmp'));
  page = createServer((_req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end('<html><body style="background:#2a6"><h1>Quarterly revenue</h1><p>A page to screenshot.</p></body></html>');
  });
  await new Promise<void>((ok) => page.listen(0, '127.0.0.1', ok));
  const cli = join(dirname(require.resolve('@playwright/mcp/package.json')), 'cli.js');
  await writeFile(
    join(dir, 'mcp.json'),
    JSON.stringify({
      mcpServers: {
        // --browser chromium selects a launch without Chromium's sandbox (these machines run as root).
        playwright: {
          command: process.execPath,
          args: [
            cli,
            '--headless',
            '--browser',
            'chromium',
            '--executable-path',
            CHROMIUM_PATH,
            '--isolated',
            '--output-dir',
            join(dir, 'out'),
          ],
          env: { TMPDIR: join(dir, 'tmp') },
        },
      },
    }),
  );
  client = new Client({ name: 'host', version: '1.0.0' });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      ...CLI_ARGS,
      'gateway',
      '--config',
      join(dir, 'mcp.json'),
      '--embedded',
      '--data-dir',
      join(dir, 'data'),
      '--port',
      '0',
    ],
    cwd: ROOT,
    env: {
      ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ARTIFACT_STORE_'))),
      ARTIFACT_STORE_LOG_LEVEL: 'warn',
    },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  await connectOrExplain(client, transport, () => stderr);
}, 90_000);

afterAll(async () => {
  await client?.close();
  await new Promise<void>((ok) => (page ? page.close(() => ok()) : ok()));
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe.skipIf(noChromium)(
  `@playwright/mcp through the gateway${noChromium ? ` (skipped: ${noChromium})` : ''}`,
  () => {
    it('browser_take_screenshot: the host gets the image, a summary and links, and the stored PNG is the one the server took', async () => {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(
        expect.arrayContaining(['playwright__browser_navigate', 'playwright__browser_take_screenshot']),
      );
      const url = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`;
      const navigated = (await client.callTool({
        name: 'playwright__browser_navigate',
        arguments: { url },
      })) as CallToolResult;
      expect(navigated.isError, JSON.stringify(navigated).slice(0, 500)).toBeFalsy();
      const shot = (await client.callTool({
        name: 'playwright__browser_take_screenshot',
        arguments: {},
      })) as CallToolResult;
      expect(shot.isError, JSON.stringify(shot).slice(0, 500)).toBeFalsy();
      // The preset keeps the screenshot inline for the model; it is the only base64 in the result.
      const image = shot.content.find((b) => b.type === 'image');
      expect(image).toMatchObject({ type: 'image', mimeType: 'image/png' });
      const rest = shot.content.filter((b) => b.type !== 'image');
      expect(JSON.stringify(rest)).not.toMatch(LONG_BASE64);
      // The playwright preset names it.
      expect(JSON.stringify(shot)).toMatch(
        /Took a screenshot \(PNG image, [\d.]+ KiB\)\. Artifact \S+\. Shown above \(\d+×\d+ px\)\./,
      );
      const link = shot.content.find((b) => b.type === 'resource_link');
      expect(link).toMatchObject({
        uri: expect.stringMatching(/^artifact:\/\/playwright\.browser_take_screenshot_/),
        mimeType: 'image/png',
        size: expect.any(Number),
      });
      const texts = shot.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');
      const download = /(http:\/\/127\.0\.0\.1:\d+\/v1\/download\/\S+)/.exec(texts)![1]!;
      const res = await fetch(download);
      expect(res.status).toBe(200);
      const stored = Buffer.from(await res.arrayBuffer());
      // The server also writes the screenshot it sent to its output dir.
      const files = (await readdir(join(dir, 'out'))).filter((f) => f.endsWith('.png'));
      expect(files).toHaveLength(1);
      const written = await readFile(join(dir, 'out', files[0]!));
      expect(stored.equals(written)).toBe(true);
      expect(Buffer.from((image as { data: string }).data, 'base64').equals(stored)).toBe(true);
      expect((link as { size: number }).size).toBe(stored.length);
    }, 60_000);
  },
);
