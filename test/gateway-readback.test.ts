/**
 * A model behind the gateway reads back what it stored. The gateway runs in front of
 * server-everything and @playwright/mcp (Debian's Chromium), on stdio as a host launches it
 * (`artifact-store gateway --config mcp.json --embedded`) and mounted in the service at /mcp/gateway;
 * an MCP client plays the model: it calls a tool, gets a summary and a ref, then finds and reads the
 * one part it needs through artifact_search and artifact_read, each answer within the gateway's
 * observation budget, and sees the screenshots its browser takes. Every call and what the model
 * read is written to a transcript under the temp dir (its path is logged at the end).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken } from '../src/http/tokens.js';
import { ARTIFACT_TOOLS } from '../src/mcp/artifact-tools.js';
import { GuardrailConfigSchema } from '../src/mcp/guardrail.js';
import { CHROMIUM_PATH, noChromium } from './helpers/chromium.js';
import { CLI_ARGS, ROOT, startCliServer, type CliServer } from './helpers/cli-server.js';
import { connectOrExplain, peerEntry } from './helpers/mcp-peers.js';

const require = createRequire(import.meta.url);

/** What the gateway holds a tool answer to (its guardrail's default, which its artifact tools share). */
const BUDGET = GuardrailConfigSchema.parse({}).maxObservationChars;
const VIEWPORT = { width: 800, height: 600 };
const ROWS = 3000;
const NEEDLE = 'Order 48213 — refund pending';
const LONG_BASE64 = /[A-Za-z0-9+/]{256,}/;
const SECRET = { kid: 'rb', secret: randomBytes(32).toString('base64url') };

let dir: string;
let page: Server;
let pageUrl: string;
const transcript: string[] = [];

/** A page whose accessibility snapshot is far over the budget: a table of ROWS orders, one of them the needle. */
function ordersPage(): string {
  const rows: string[] = [];
  for (let i = 0; i < ROWS; i++) {
    const order = 46_000 + i;
    const label = order === 48_213 ? NEEDLE : `Order ${order} — shipped`;
    rows.push(`<tr><td>${label}</td><td>${(i % 97) + 1} items</td><td>EUR ${(i * 37) % 1000}.${i % 10}0</td></tr>`);
  }
  return `<!doctype html><html><head><meta charset="utf-8"><title>Orders</title></head><body style="background:#fff">
<h1>Orders</h1><table><thead><tr><th>Order</th><th>Items</th><th>Total</th></tr></thead><tbody>
${rows.join('\n')}
</tbody></table></body></html>`;
}

beforeAll(async () => {
  if (noChromium) return;
  dir = await mkdtemp(join(tmpdir(), 'gateway-readback-'));
  await mkdir(join(dir, 'tmp'));
  const html = ordersPage();
  page = createServer((_req, res) => {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end(html);
  });
  await new Promise<void>((ok) => page.listen(0, '127.0.0.1', ok));
  pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/orders`;
  const cli = join(dirname(require.resolve('@playwright/mcp/package.json')), 'cli.js');
  const playwright = (out: string) => ({
    command: process.execPath,
    // --browser chromium selects a launch without Chromium's sandbox (these machines run as root).
    args: [
      cli,
      '--headless',
      '--browser',
      'chromium',
      '--executable-path',
      CHROMIUM_PATH,
      '--isolated',
      '--viewport-size',
      `${VIEWPORT.width}x${VIEWPORT.height}`,
      '--output-dir',
      join(dir, out),
    ],
    env: { TMPDIR: join(dir, 'tmp') },
    artifacts: { tenants: ['acme'] },
  });
  const everything = {
    command: process.execPath,
    args: [peerEntry('server-everything'), 'stdio'],
    artifacts: { tenants: ['acme'] },
  };
  await writeFile(
    join(dir, 'stdio.json'),
    JSON.stringify({ mcpServers: { everything, playwright: playwright('out-stdio') } }),
  );
  await writeFile(
    join(dir, 'service.json'),
    JSON.stringify({ mcpServers: { everything, playwright: playwright('out-http') } }),
  );
}, 30_000);

afterAll(async () => {
  await new Promise<void>((ok) => (page ? page.close(() => ok()) : ok()));
  if (dir) await rm(dir, { recursive: true, force: true });
  if (transcript.length > 0) {
    const path = join(tmpdir(), `gateway-readback-transcript-${process.pid}.txt`);
    await writeFile(path, `${transcript.join('\n')}\n`);
    console.log(`gateway-readback transcript: ${path}`);
  }
});

const cut = (text: string, max = 600) => (text.length > max ? `${text.slice(0, max)}… [${text.length} chars]` : text);

/** What a host shows the model of one content block, for the transcript. */
function shown(block: CallToolResult['content'][number]): string {
  switch (block.type) {
    case 'text':
      return cut(block.text);
    case 'image':
      return `[image ${block.mimeType}, ${Buffer.from(block.data, 'base64').length} bytes of base64 data]`;
    case 'resource_link':
      return `[resource_link ${block.uri} ${block.mimeType ?? ''} size=${block.size ?? '?'}]`;
    default:
      return cut(JSON.stringify(block));
  }
}

/** The text of an answer: every text block (what counts against the budget besides images). */
const textOf = (result: CallToolResult) =>
  result.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');

/** The artifact a result links to. */
function linkedId(result: CallToolResult): string {
  const link = result.content.find((b) => b.type === 'resource_link') as { uri: string } | undefined;
  expect(link, JSON.stringify(result).slice(0, 800)).toBeDefined();
  return link!.uri.slice('artifact://'.length);
}

/** The line numbers artifact_search answered with (`  8868: …`). */
const matchedLines = (result: CallToolResult) => [...textOf(result).matchAll(/^\s*(\d+): /gm)].map((m) => Number(m[1]));

function pngSize(bytes: Buffer): { width: number; height: number } {
  expect(bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(true);
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

type Caller = (name: string, args?: Record<string, unknown>) => Promise<CallToolResult>;

/**
 * The model's calls: each goes to the transcript with what came back, and the text of every answer
 * must fit the gateway's budget.
 */
function caller(label: string, client: () => Client): Caller {
  const say = (line: string) => transcript.push(`[${label}] ${line}`);
  return async (name, args = {}) => {
    say(`→ ${name} ${cut(JSON.stringify(args), 200)}`);
    const result = (await client().callTool({ name, arguments: args })) as CallToolResult;
    for (const block of result.content)
      say(`←${result.isError ? ' (isError)' : ''} ${shown(block).replace(/\n/g, '\n      ')}`);
    if (result.structuredContent) say(`← structuredContent ${cut(JSON.stringify(result.structuredContent), 200)}`);
    expect(textOf(result).length, `${name}: the text of its answer`).toBeLessThanOrEqual(BUDGET);
    return result;
  };
}

/**
 * The scripted model's session, the same on every transport. `foreign` gives an id this session
 * cannot see, and the session that asks for it.
 */
function session(
  label: string,
  client: () => Client,
  foreign: (stored: string) => Promise<{ id: string; label: string; client: Client }>,
) {
  const say = (line: string) => transcript.push(`[${label}] ${line}`);
  const call = caller(label, client);
  let snapshotId: string;

  it('tools/list: the upstream tools as {server}__{tool}, next to the artifact tools', async () => {
    const { tools } = await client().listTools();
    const names = tools.map((t) => t.name);
    say(`tools/list: ${names.length} tools: ${names.join(', ')}`);
    expect(names).toEqual(
      expect.arrayContaining([
        'everything__echo',
        'everything__get-resource-reference',
        'playwright__browser_navigate',
        'playwright__browser_snapshot',
        'playwright__browser_take_screenshot',
      ]),
    );
    expect(names.slice(-ARTIFACT_TOOLS.length)).toEqual(ARTIFACT_TOOLS.map((t) => t.name));
    expect(ARTIFACT_TOOLS.map((t) => t.name)).toEqual([
      'artifact_read',
      'artifact_search',
      'artifact_query',
      'artifact_list',
      'artifact_info',
      'artifact_url',
    ]);
  });

  it('playwright: a snapshot far over the budget is stored; the model searches it and reads the one row', async () => {
    const navigated = await call('playwright__browser_navigate', { url: pageUrl });
    expect(navigated.isError, textOf(navigated)).toBeFalsy();
    const snapshot = await call('playwright__browser_snapshot');
    expect(snapshot.isError, textOf(snapshot)).toBeFalsy();
    expect(textOf(snapshot)).toMatch(
      /^Large text \(([\d,]+) chars, [\d.]+ KiB\) from browser_snapshot, stored as artifact playwright\.browser_snapshot_\w+; ([\d,]+) lines; artifact_search or artifact_read to look inside\./,
    );
    const [, chars, lines] = /\(([\d,]+) chars.*; ([\d,]+) lines;/.exec(textOf(snapshot))!;
    expect(Number(chars!.replaceAll(',', ''))).toBeGreaterThan(5 * BUDGET);
    expect(Number(lines!.replaceAll(',', ''))).toBeGreaterThan(ROWS);
    // What the model was handed holds no row past the preview's first few.
    expect(textOf(snapshot)).not.toContain('48213');
    snapshotId = linkedId(snapshot);
    expect(snapshotId).toMatch(/^playwright\.browser_snapshot_/);

    const found = await call('artifact_search', { id: snapshotId, pattern: '48213' });
    expect(found.isError).toBeFalsy();
    expect(textOf(found)).toContain(NEEDLE);
    const [line] = matchedLines(found);
    expect(matchedLines(found)).toHaveLength(1);
    const around = await call('artifact_read', { id: snapshotId, offset: line! - 4, limit: 9 });
    expect(around.isError).toBeFalsy();
    expect(textOf(around)).toContain(`${line}\t`);
    expect(textOf(around)).toContain(`cell "${NEEDLE}"`);
    // A row is four lines (the row, its three cells): the read holds the orders on either side.
    expect(textOf(around)).toContain('Order 48212 — shipped');
    expect(textOf(around)).toContain('Order 48214 — shipped');

    // A read without a limit takes as many lines as fit the budget, and says how to go on.
    const page = await call('artifact_read', { id: snapshotId });
    expect(textOf(page)).toMatch(/Continue: artifact_read \{"id":"playwright\.browser_snapshot_\w+","offset":\d+\}/);
    expect(textOf(page).length).toBeGreaterThan(BUDGET / 2);

    const listed = await call('artifact_list');
    const artifacts = JSON.parse(textOf(listed)).artifacts as { id: string; filename: string; source: object }[];
    expect(artifacts).toContainEqual(
      expect.objectContaining({
        id: snapshotId,
        filename: 'browser_snapshot.txt',
        source: { tool: 'browser_snapshot', server: 'playwright' },
      }),
    );
  }, 120_000);

  it('playwright: the screenshot arrives as an image block, with a link and no structuredContent', async () => {
    const shot = await call('playwright__browser_take_screenshot');
    expect(shot.isError, textOf(shot)).toBeFalsy();
    const images = shot.content.filter((b) => b.type === 'image');
    expect(images).toHaveLength(1);
    const image = images[0] as { mimeType: string; data: string };
    expect(image.mimeType).toBe('image/png');
    const png = Buffer.from(image.data, 'base64');
    expect(pngSize(png)).toEqual(VIEWPORT);
    const link = shot.content.find((b) => b.type === 'resource_link') as { uri: string; size?: number };
    expect(link).toMatchObject({
      uri: expect.stringMatching(/^artifact:\/\/playwright\.browser_take_screenshot_/),
      mimeType: 'image/png',
    });
    expect(link.size).toBe(png.length);
    expect(shot.structuredContent).toBeUndefined();
    expect(JSON.stringify(shot.content.filter((b) => b.type !== 'image'))).not.toMatch(LONG_BASE64);
    expect(textOf(shot)).toContain(`Shown above (${VIEWPORT.width}×${VIEWPORT.height} px).`);
    // The stored screenshot is the image the model was shown.
    const info = await call('artifact_info', { id: link.uri.slice('artifact://'.length) });
    expect(info.structuredContent).toMatchObject({ artifact: { mimeType: 'image/png', sizeBytes: png.length } });
    expect((info.structuredContent as { artifact: { sha256: string } }).artifact.sha256).toBe(
      createHash('sha256').update(png).digest('hex'),
    );
  }, 60_000);

  it('server-everything: a large echo is stored whole; the model finds the one error line and reads it', async () => {
    const log = Array.from({ length: 2000 }, (_, i) =>
      i === 1234 ? `${i} ERROR payment 7731 declined: card expired` : `${i} INFO request ${i} served in ${i % 50} ms`,
    );
    const echoed = await call('everything__echo', { message: log.join('\n') });
    expect(echoed.isError).toBeFalsy();
    expect(textOf(echoed)).toMatch(
      /stored as artifact everything\.echo_\w+; 2,000 lines; artifact_search or artifact_read to look inside\./,
    );
    expect(textOf(echoed)).not.toContain('ERROR');
    const id = linkedId(echoed);
    const info = await call('artifact_info', { id });
    expect(info.structuredContent).toMatchObject({
      artifact: { id, mimeType: 'text/plain; charset=utf-8', filename: 'echo.txt' },
    });
    const found = await call('artifact_search', { id, pattern: 'ERROR' });
    expect(matchedLines(found)).toEqual([1235]);
    const read = await call('artifact_read', { id, offset: 1235, limit: 1 });
    expect(textOf(read)).toContain('1235\t1234 ERROR payment 7731 declined: card expired');
  }, 60_000);

  it('server-everything: a blob resource it references is stored, and reads back through artifact_read', async () => {
    const ref = await call('everything__get-resource-reference', { resourceType: 'Blob', resourceId: 3 });
    expect(ref.isError).toBeFalsy();
    expect(JSON.stringify(ref)).not.toMatch(LONG_BASE64);
    const id = linkedId(ref);
    const read = await call('artifact_read', { id });
    expect(read.isError).toBeFalsy();
    // The server writes the time (to the second) into each blob it makes.
    expect(textOf(read)).toMatch(/1\tResource 3: This is a base64 blob/);
  }, 60_000);

  it('an id that is not in this scope: isError "No artifact … here"', async () => {
    const other = await foreign(snapshotId);
    const ask = caller(other.label, () => other.client);
    for (const name of ['artifact_info', 'artifact_read']) {
      const result = await ask(name, { id: other.id });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toBe(
        `No artifact ${other.id} here. It may have expired or been deleted; artifact_list shows what is there.`,
      );
    }
  }, 60_000);
}

const gatewayEnv = () => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ARTIFACT_STORE_'))),
  ARTIFACT_STORE_LOG_LEVEL: 'warn',
});

describe.skipIf(noChromium)(`the gateway on stdio${noChromium ? ` (skipped: ${noChromium})` : ''}`, () => {
  let client: Client;
  let stderr = '';
  beforeAll(async () => {
    client = new Client({ name: 'model', version: '1.0.0' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        ...CLI_ARGS,
        'gateway',
        '--config',
        join(dir, 'stdio.json'),
        '--embedded',
        '--data-dir',
        join(dir, 'data-stdio'),
        '--port',
        '0',
      ],
      cwd: ROOT,
      env: gatewayEnv(),
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    await connectOrExplain(client, transport, () => stderr);
  }, 90_000);
  afterAll(async () => {
    await client?.close();
  });
  // One user on stdio: the foreign id is one it never stored.
  session(
    'stdio',
    () => client,
    async () => ({
      id: 'playwright.browser_snapshot_000000000000000000000000',
      label: 'stdio',
      client,
    }),
  );
});

describe.skipIf(noChromium)(
  `the gateway in the service, /mcp/gateway${noChromium ? ` (skipped: ${noChromium})` : ''}`,
  () => {
    let srv: CliServer;
    let client: Client;
    let other: Client | undefined;
    const token = (session: string) =>
      mintToken(SECRET, { tenant: 'acme', sub: 'model', session, perms: ['read', 'write'] }, 3600);
    const connect = async (session: string) => {
      const c = new Client({ name: 'model', version: '1.0.0' });
      await c.connect(
        new StreamableHTTPClientTransport(new URL(`${srv.url}/mcp/gateway`), {
          requestInit: { headers: { Authorization: `Bearer ${await token(session)}` } },
        }),
      );
      return c;
    };
    beforeAll(async () => {
      srv = await startCliServer(join(dir, 'data-http'), {
        ARTIFACT_STORE_GATEWAY_CONFIG: join(dir, 'service.json'),
        ARTIFACT_STORE_JWT_SECRETS: `${SECRET.kid}:${SECRET.secret}`,
      });
      client = await connect('chat-1');
    }, 90_000);
    afterAll(async () => {
      await client?.close();
      await other?.close();
      await srv?.stop();
    });
    // The foreign id: the snapshot this session stored, asked for by another session of the tenant.
    session(
      'http',
      () => client,
      async (stored) => {
        other = await connect('chat-2');
        return { id: stored, label: 'http chat-2', client: other };
      },
    );
  },
);
