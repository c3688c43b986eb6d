/**
 * Gateway rows: one MCP client (the SDK's, over stdio) calls a server straight and through
 * `artifact-store gateway --embedded`, rounds alternating.
 *
 * - A tiny text tool: p50 and p99 of each; the gateway's added p50 is judged (target: under 2 ms).
 * - The 10 MiB Tableau-shaped result (a 7 MiB base64 PDF in JSON): through the gateway, against
 *   what a host that transforms for itself pays: the same call straight to the server, then
 *   transformToolResult into the same kind of store (the embedded default, in this process).
 *   Target: ≤ 1.2×.
 *
 * Both clients read stdio as the gateway reads its servers (useLinearReadBuffer, and messages up to
 * 256 MiB): the SDK's own reader refuses a message over 10 MiB and copies a big one many times over.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { loadConfig } from '../src/core/config.js';
import { createJsonLogger } from '../src/core/logger.js';
import { transformToolResult } from '../src/mcp/index.js';
import { startServer } from '../src/node.js';
import { MAX_STDIO_MESSAGE_BYTES, useLinearReadBuffer } from '../src/node/gateway.js';
import { createEmbeddedArtifactStore } from '../src/service/embedded-store.js';
import { REPO_ROOT } from './children.js';
import type { Row } from './report.js';
import { fmt, max, median, percentile } from './stats.js';
import { makePdf, workbookText } from './tableau-result.js';

const ROUNDS = 5;
const TINY_CALLS_PER_ROUND = 300;
const BIG_WARMUPS = 2;
const MAX_ADDED_P50_MS = 2;
const MAX_BIG_RATIO = 1.2;

const spread = (values: number[], digits: number) =>
  `${fmt(median(values), digits)} (${fmt(Math.min(...values), digits)}–${fmt(max(values), digits)})`;

async function connect(command: string, args: string[], env: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'bench-host', version: '1.0.0' });
  let stderr = '';
  const transport = new StdioClientTransport({
    command,
    args,
    env: { ...(process.env as Record<string, string>), ...env },
    cwd: REPO_ROOT,
    stderr: 'pipe',
    // As the gateway reads its servers: the SDK's 10 MiB default refuses the big result.
    maxBufferSize: MAX_STDIO_MESSAGE_BYTES,
  });
  // The same reading of stdio as the gateway's own upstream connections, so the rows compare the
  // gateway's work and not two ways of reading a pipe.
  useLinearReadBuffer(transport);
  transport.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString('utf8')).slice(-4000)));
  try {
    await client.connect(transport);
  } catch (err) {
    throw new Error(`${args.join(' ')} did not start: ${(err as Error).message}\n${stderr}`);
  }
  return client;
}

export async function gatewayRows(ctx: {
  progress: (m: string) => void;
}): Promise<{ rows: Row[]; problems: string[] }> {
  const problems: string[] = [];
  const work = mkdtempSync(join(tmpdir(), 'artifact-store-bench-gateway-'));
  const clients: Client[] = [];
  let baselineServer: Awaited<ReturnType<typeof startServer>> | undefined;
  const tiny = {
    direct: [] as number[],
    gateway: [] as number[],
    directP50: [] as number[],
    gatewayP50: [] as number[],
  };
  const big = { direct: [] as number[], gateway: [] as number[] };
  try {
    const pdf = await makePdf();
    writeFileSync(join(work, 'workbook.json'), workbookText(pdf.toString('base64')));
    const server = {
      command: process.execPath,
      args: ['--import', 'tsx', join(REPO_ROOT, 'test/helpers/scripted-mcp-server.ts')],
      env: { SCRIPTED_NAME: 'tableau', SCRIPTED_WORKBOOK: join(work, 'workbook.json') },
    };
    writeFileSync(join(work, 'mcp.json'), JSON.stringify({ mcpServers: { tableau: { ...server, cwd: REPO_ROOT } } }));
    const direct = await connect(server.command, server.args, server.env);
    clients.push(direct);
    const gateway = await connect(
      process.execPath,
      [
        '--import',
        'tsx',
        join(REPO_ROOT, 'src/cli/main.ts'),
        'gateway',
        '--config',
        join(work, 'mcp.json'),
        '--embedded',
        '--data-dir',
        join(work, 'gateway-data'),
        '--port',
        '0',
      ],
      { ARTIFACT_STORE_LOG_LEVEL: 'warn' },
    );
    clients.push(gateway);
    // The host that transforms for itself stores into the same embedded default.
    baselineServer = await startServer(
      loadConfig(
        { ARTIFACT_STORE_DATA_DIR: join(work, 'baseline-data'), ARTIFACT_STORE_LOG_LEVEL: 'warn' },
        { host: '127.0.0.1', port: 0 },
      ),
      {
        logger: createJsonLogger('silent'),
      },
    );
    const store = createEmbeddedArtifactStore({
      service: baselineServer.service,
      scope: { tenantId: 'dev' },
      publicUrl: baselineServer.url,
    });

    const time = async (fn: () => Promise<unknown>) => {
      const started = performance.now();
      await fn();
      return performance.now() - started;
    };
    const echo = (c: Client, name: string) => c.callTool({ name, arguments: { text: 'ping' } });
    for (let i = 0; i < 50; i++) {
      await echo(direct, 'echo');
      await echo(gateway, 'tableau__echo');
    }
    for (let round = 0; round < ROUNDS; round++) {
      const sides = [
        async () => {
          const ms: number[] = [];
          for (let i = 0; i < TINY_CALLS_PER_ROUND; i++) ms.push(await time(() => echo(direct, 'echo')));
          tiny.direct.push(...ms);
          tiny.directP50.push(percentile(ms, 50));
        },
        async () => {
          const ms: number[] = [];
          for (let i = 0; i < TINY_CALLS_PER_ROUND; i++) ms.push(await time(() => echo(gateway, 'tableau__echo')));
          tiny.gateway.push(...ms);
          tiny.gatewayP50.push(percentile(ms, 50));
        },
      ];
      for (const side of round % 2 === 0 ? sides : sides.reverse()) await side();
    }
    ctx.progress(`gateway: ${ROUNDS} rounds of ${TINY_CALLS_PER_ROUND} tiny calls each way done`);

    const viaGateway = async () => {
      const result = (await gateway.callTool({ name: 'tableau__download_workbook', arguments: {} })) as CallToolResult;
      if (JSON.stringify(result).length > 20_000) throw new Error('the gateway handed back a large observation');
    };
    const transformed = async () => {
      const raw = await direct.callTool({ name: 'download_workbook', arguments: {} });
      const out = await transformToolResult('download_workbook', raw, {
        store,
        serverName: 'tableau',
        config: { presets: ['tableau'] },
      });
      if (!out.artifacts.some((a) => a.mimeType === 'application/pdf'))
        throw new Error('the transformer stored no PDF');
    };
    for (let round = 0; round < BIG_WARMUPS + ROUNDS + 2; round++) {
      const record = round >= BIG_WARMUPS;
      const sides = [
        async () => {
          const ms = await time(transformed);
          if (record) big.direct.push(ms);
        },
        async () => {
          const ms = await time(viaGateway);
          if (record) big.gateway.push(ms);
        },
      ];
      for (const side of round % 2 === 0 ? sides : sides.reverse()) await side();
    }
    ctx.progress(`gateway: ${big.gateway.length} rounds of the 10 MiB result each way done`);
  } catch (err) {
    problems.push(`gateway rows: ${(err as Error).message}`);
  } finally {
    // The rows are measured by now: a client that fails to close changes none of them, so it is only said.
    for (const c of clients)
      await c.close().catch((err) => ctx.progress(`gateway: closing a client failed: ${(err as Error).message}`));
    await baselineServer?.close();
    rmSync(work, { recursive: true, force: true });
  }
  const ran = tiny.gateway.length > 0;
  const added = ran ? percentile(tiny.gateway, 50) - percentile(tiny.direct, 50) : Number.NaN;
  const bigRatio = big.gateway.length > 0 ? median(big.gateway) / median(big.direct) : Number.NaN;
  const perRoundAdded = tiny.gatewayP50.map((g, i) => g - tiny.directP50[i]!);
  return {
    rows: [
      {
        metric: `Gateway: tiny tools/call p50, through the gateway vs straight (ms; per-round added: median (min–max))`,
        service: ran ? fmt(percentile(tiny.gateway, 50), 3) : 'n/a',
        baseline: ran ? fmt(percentile(tiny.direct, 50), 3) : 'n/a',
        ratio: ran ? `+${fmt(added, 3)} ms; ${spread(perRoundAdded, 3)}` : 'n/a',
        target: `added < ${MAX_ADDED_P50_MS} ms`,
        result: ran ? (added < MAX_ADDED_P50_MS ? 'PASS' : 'FAIL') : 'not run',
      },
      {
        metric: 'Gateway: tiny tools/call p99, through the gateway vs straight (ms)',
        service: ran ? fmt(percentile(tiny.gateway, 99), 3) : 'n/a',
        baseline: ran ? fmt(percentile(tiny.direct, 99), 3) : 'n/a',
        ratio: ran ? `+${fmt(percentile(tiny.gateway, 99) - percentile(tiny.direct, 99), 3)} ms` : 'n/a',
        target: '—',
        result: ran ? 'info' : 'not run',
      },
      {
        metric:
          'Gateway: 10 MiB Tableau result through the gateway ÷ straight + transformToolResult (ms; median (min–max))',
        service: big.gateway.length > 0 ? spread(big.gateway, 0) : 'n/a',
        baseline: big.direct.length > 0 ? spread(big.direct, 0) : 'n/a',
        ratio: Number.isFinite(bigRatio) ? `${fmt(bigRatio, 2)}×` : 'n/a',
        target: `≤ ${MAX_BIG_RATIO.toFixed(2)}×`,
        result: Number.isFinite(bigRatio) ? (bigRatio <= MAX_BIG_RATIO ? 'PASS' : 'FAIL') : 'not run',
      },
    ],
    problems,
  };
}
