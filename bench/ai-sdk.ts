/**
 * AI SDK rows: what `withArtifacts` adds to a tool call, in this process, rounds alternating.
 *
 * - A small result (a few rows of JSON, nothing stored): the wrapped tool's execute + toModelOutput
 *   against the bare tool's execute. The added p50 is judged (target: ≤ 0.5 ms).
 * - The 10 MiB Tableau-shaped result (a 7 MiB base64 PDF in JSON): the wrapped tool against what an
 *   app that transforms for itself pays, transformToolResult on the same raw result into the same
 *   kind of store (the embedded default, SQLite + files, in this process). Target: ≤ 1.2×.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Tool, ToolExecutionOptions } from 'ai';
import { withArtifacts } from '../src/ai-sdk/index.js';
import { loadConfig } from '../src/core/config.js';
import { createJsonLogger } from '../src/core/logger.js';
import { transformToolResult } from '../src/mcp/index.js';
import { startServer } from '../src/node.js';
import { createEmbeddedArtifactStore } from '../src/service/embedded-store.js';
import type { Row } from './report.js';
import { fmt, max, median, percentile } from './stats.js';
import { makePdf, workbookText } from './tableau-result.js';

const ROUNDS = 7;
const SMALL_CALLS_PER_ROUND = 2000;
const BIG_WARMUPS = 2;
const MAX_ADDED_P50_MS = 0.5;
const MAX_BIG_RATIO = 1.2;

const spread = (values: number[], digits: number) =>
  `${fmt(median(values), digits)} (${fmt(Math.min(...values), digits)}–${fmt(max(values), digits)})`;

export async function aiSdkRows(ctx: { progress: (m: string) => void }): Promise<{ rows: Row[]; problems: string[] }> {
  const problems: string[] = [];
  const work = mkdtempSync(join(tmpdir(), 'artifact-store-bench-ai-sdk-'));
  let server: Awaited<ReturnType<typeof startServer>> | undefined;
  const small = { bare: [] as number[], wrapped: [] as number[], bareP50: [] as number[], wrappedP50: [] as number[] };
  const big = { direct: [] as number[], wrapped: [] as number[] };
  try {
    server = await startServer(
      loadConfig({ ARTIFACT_STORE_DATA_DIR: join(work, 'data'), ARTIFACT_STORE_LOG_LEVEL: 'warn' }, { port: 0 }),
      { logger: createJsonLogger('silent') },
    );
    const store = createEmbeddedArtifactStore({ service: server.service, scope: { tenantId: 'dev' } });
    const rows = [
      { region: 'EMEA', units: 120, revenue: 1500.5 },
      { region: 'APAC', units: 80, revenue: 990.25 },
    ];
    const workbook = workbookText((await makePdf()).toString('base64'));
    const raw = {
      lookup: { description: 'small', execute: async () => ({ rows }) } as unknown as Tool,
      download_workbook: {
        description: 'big',
        execute: async () => ({ content: [{ type: 'text', text: workbook }] }),
      } as unknown as Tool,
    };
    const wrapped = withArtifacts(raw, { store, serverName: 'tableau', config: { presets: ['tableau'] } });
    const call = (id: string): ToolExecutionOptions => ({ toolCallId: id, messages: [] });
    const time = async (fn: () => Promise<unknown>) => {
      const started = performance.now();
      await fn();
      return performance.now() - started;
    };
    const bareCall = () => raw.lookup.execute!({}, call('bare')) as Promise<unknown>;
    const wrappedCall = async () => {
      const output = await (wrapped.lookup.execute!({}, call('wrapped')) as Promise<unknown>);
      return wrapped.lookup.toModelOutput!({ toolCallId: 'wrapped', input: {}, output });
    };
    for (let i = 0; i < 200; i++) await Promise.all([bareCall(), wrappedCall()]);
    for (let round = 0; round < ROUNDS; round++) {
      const sides = [
        async () => {
          const ms: number[] = [];
          for (let i = 0; i < SMALL_CALLS_PER_ROUND; i++) ms.push(await time(bareCall));
          small.bare.push(...ms);
          small.bareP50.push(percentile(ms, 50));
        },
        async () => {
          const ms: number[] = [];
          for (let i = 0; i < SMALL_CALLS_PER_ROUND; i++) ms.push(await time(wrappedCall));
          small.wrapped.push(...ms);
          small.wrappedP50.push(percentile(ms, 50));
        },
      ];
      for (const side of round % 2 === 0 ? sides : sides.reverse()) await side();
    }
    ctx.progress(`ai-sdk: ${ROUNDS} rounds of ${SMALL_CALLS_PER_ROUND} small calls each way done`);

    const direct = async () => {
      const result = await raw.download_workbook.execute!({}, call('direct'));
      const out = await transformToolResult('download_workbook', result, {
        store,
        serverName: 'tableau',
        config: { presets: ['tableau'] },
      });
      if (!out.artifacts.some((a) => a.mimeType === 'application/pdf'))
        throw new Error('the transformer stored no PDF');
    };
    const throughWrapper = async () => {
      const output = await (wrapped.download_workbook.execute!({}, call('big')) as Promise<unknown>);
      const model = await wrapped.download_workbook.toModelOutput!({ toolCallId: 'big', input: {}, output });
      if (JSON.stringify(model).length > 20_000) throw new Error('the wrapper handed the model a large output');
    };
    for (let round = 0; round < BIG_WARMUPS + ROUNDS; round++) {
      const record = round >= BIG_WARMUPS;
      const sides = [
        async () => {
          const ms = await time(direct);
          if (record) big.direct.push(ms);
        },
        async () => {
          const ms = await time(throughWrapper);
          if (record) big.wrapped.push(ms);
        },
      ];
      for (const side of round % 2 === 0 ? sides : sides.reverse()) await side();
    }
    ctx.progress(`ai-sdk: ${big.wrapped.length} rounds of the 10 MiB result each way done`);
  } catch (err) {
    problems.push(`AI SDK rows: ${(err as Error).message}`);
  } finally {
    await server?.close();
    rmSync(work, { recursive: true, force: true });
  }
  const ran = small.wrapped.length > 0;
  const added = ran ? percentile(small.wrapped, 50) - percentile(small.bare, 50) : Number.NaN;
  const perRoundAdded = small.wrappedP50.map((w, i) => w - small.bareP50[i]!);
  const bigRatio = big.wrapped.length > 0 ? median(big.wrapped) / median(big.direct) : Number.NaN;
  return {
    rows: [
      {
        metric:
          'AI SDK: small tool result p50, withArtifacts (execute + toModelOutput) vs the bare execute (ms; per-round added: median (min–max))',
        service: ran ? fmt(percentile(small.wrapped, 50), 4) : 'n/a',
        baseline: ran ? fmt(percentile(small.bare, 50), 4) : 'n/a',
        ratio: ran ? `+${fmt(added, 4)} ms; ${spread(perRoundAdded, 4)}` : 'n/a',
        target: `added ≤ ${MAX_ADDED_P50_MS} ms`,
        result: ran ? (added <= MAX_ADDED_P50_MS ? 'PASS' : 'FAIL') : 'not run',
      },
      {
        metric: 'AI SDK: 10 MiB Tableau result through withArtifacts ÷ transformToolResult (ms; median (min–max))',
        service: big.wrapped.length > 0 ? spread(big.wrapped, 0) : 'n/a',
        baseline: big.direct.length > 0 ? spread(big.direct, 0) : 'n/a',
        ratio: Number.isFinite(bigRatio) ? `${fmt(bigRatio, 2)}×` : 'n/a',
        target: `≤ ${MAX_BIG_RATIO.toFixed(2)}×`,
        result: Number.isFinite(bigRatio) ? (bigRatio <= MAX_BIG_RATIO ? 'PASS' : 'FAIL') : 'not run',
      },
    ],
    problems,
  };
}
