/**
 * MCP rows: transformToolResult on a 10 MiB Tableau download_workbook result holding a 7 MiB base64
 * PDF, into an in-memory store, against the bare cost of the same payload (JSON.parse + base64
 * decode + sha256): time, peak extra memory, and the observation's size before and after.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { BENCH_DIR, REPO_ROOT } from './children.js';
import { samples, spread, type Row, type Samples } from './report.js';
import { fmt, max, median } from './stats.js';

const WARMUPS = 2;
const MIN_RUNS = 7;
const MAX_TIME_RATIO = 1.5;
/** The target on the natural-GC figure: a busy process pays for the garbage its calls leave. */
const MAX_NATURAL_TIME_RATIO = 1.3;
const MAX_MEMORY_RATIO = 3;

interface ChildRun {
  ms: number;
  extraMiB: number;
}

interface ChildOut {
  inputChars: number;
  pdfBytes: number;
  bare: ChildRun[];
  transform: ChildRun[];
  natural: { bare: number[]; transform: number[] };
  charsBefore: number;
  charsAfter: number;
  artifacts: number;
}

/**
 * Times come from a child on Node's defaults. Memory comes from a second child in which glibc's
 * mmap threshold is fixed (MALLOC_MMAP_THRESHOLD_): by default glibc raises the threshold past the
 * first large buffer freed, keeps later ones on its heap and reuses that memory, so every run after
 * the first would show little or no growth. With it fixed, each large buffer is its own mapping,
 * returned to the system when freed, and each run's peak is its own. Page faults on those fresh
 * mappings slow both sides, which is why the times do not come from that child.
 */
function child(env: NodeJS.ProcessEnv, runs: number, timeoutMs: number): Promise<ChildOut> {
  const args = ['--expose-gc', '--import', 'tsx', join(BENCH_DIR, 'mcp-child.ts'), String(WARMUPS), String(runs)];
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      args,
      { cwd: REPO_ROOT, env, timeout: timeoutMs, maxBuffer: 1 << 20 },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`mcp-child: ${err.message}${stderr ? `\n${stderr.slice(-2000)}` : ''}`));
        try {
          resolve(JSON.parse(stdout.trim().split('\n').at(-1)!) as ChildOut);
        } catch {
          reject(new Error(`mcp-child printed no JSON: ${stdout.slice(-500)}`));
        }
      },
    );
  });
}

/**
 * A cost judged by service / baseline, lower is better: cells show median (min–max), the ratio is
 * the median of each round's ratio (the runs alternate), which is judged.
 */
function costRow(metric: string, s: Samples, digits: number, maxRatio: number): Row {
  const target = `≤ ${maxRatio.toFixed(2)}×`;
  if (!s.service || s.service.length === 0)
    return { metric, service: 'n/a', baseline: spread(s.baseline, digits), ratio: 'n/a', target, result: 'not run' };
  const service = s.service;
  const ratios =
    service.length === s.baseline.length
      ? service.map((v, i) => v / s.baseline[i]!)
      : [median(service) / median(s.baseline)];
  const ratio = median(ratios);
  return {
    metric,
    service: spread(service, digits),
    baseline: spread(s.baseline, digits),
    ratio: spread(ratios, 2, '×'),
    target,
    result: Number.isFinite(ratio) ? (ratio <= maxRatio ? 'PASS' : 'FAIL') : 'n/a',
  };
}

/** A ceiling in multiples of the input: cells show median (max) of the runs; the worst run is judged. */
function ceilingRatioRow(metric: string, s: Samples, limit: number): Row {
  const cell = (v: number[]) => `${fmt(median(v), 2)}× (max ${fmt(max(v), 2)}×)`;
  const target = `≤ ${limit.toFixed(2)}×`;
  if (!s.service || s.service.length === 0)
    return {
      metric,
      service: 'n/a',
      baseline: s.baseline.length ? cell(s.baseline) : 'n/a',
      ratio: '—',
      target,
      result: 'not run',
    };
  const worst = max(s.service);
  return {
    metric,
    service: cell(s.service),
    baseline: cell(s.baseline),
    ratio: '—',
    target,
    result: Number.isFinite(worst) ? (worst <= limit ? 'PASS' : 'FAIL') : 'n/a',
  };
}

export async function mcpRows(ctx: {
  runs: number;
  progress: (m: string) => void;
}): Promise<{ rows: Row[]; problems: string[] }> {
  const problems: string[] = [];
  const runs = Math.max(MIN_RUNS, ctx.runs);
  const time = samples();
  const natural = samples();
  const memory = samples();
  let chars: { before: number; after: number } | undefined;
  try {
    const timed = await child(process.env, runs, 300_000);
    time.baseline.push(...timed.bare.map((r) => r.ms));
    time.service!.push(...timed.transform.map((r) => r.ms));
    natural.baseline.push(...timed.natural.bare);
    natural.service!.push(...timed.natural.transform);
    chars = { before: timed.charsBefore, after: timed.charsAfter };
    ctx.progress(`MCP: ${runs} timed runs each done`);
    const measured = await child({ ...process.env, MALLOC_MMAP_THRESHOLD_: '65536' }, runs, 300_000);
    const inputMiB = measured.inputChars / (1024 * 1024);
    memory.baseline.push(...measured.bare.map((r) => r.extraMiB / inputMiB));
    memory.service!.push(...measured.transform.map((r) => r.extraMiB / inputMiB));
    ctx.progress(`MCP: ${runs} memory runs each done`);
  } catch (err) {
    problems.push(`MCP rows: ${(err as Error).message}`);
    for (const s of [time, natural, memory]) if (s.service!.length < runs) s.service = null;
  }
  return {
    rows: [
      costRow(
        'MCP: transform 10 MiB result, 7 MiB base64 PDF, in-memory store, natural GC (ms)',
        natural,
        1,
        MAX_NATURAL_TIME_RATIO,
      ),
      costRow('MCP: the same, each run after a forced GC (ms)', time, 1, MAX_TIME_RATIO),
      ceilingRatioRow('MCP: transform peak extra memory (× the 10 MiB input)', memory, MAX_MEMORY_RATIO),
      {
        metric: 'MCP: observation size, before → after (chars)',
        service: chars ? `${fmt(chars.before)} → ${fmt(chars.after)}` : 'n/a',
        baseline: '—',
        ratio: '—',
        target: '—',
        result: chars ? 'info' : 'not run',
      },
    ],
    problems,
  };
}
