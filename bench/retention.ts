/**
 * Retention rows: put throughput with quotas enforced against the same puts with quotas off, and
 * one retention run over 100,000 expired references (its time and peak RSS).
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DIR, buildDist, REPO_ROOT, startNodeFlags } from './children.js';
import { ratioRow, samples, spread, type Row } from './report.js';
import { fmt, median, rotate } from './stats.js';

const PUTS = 2000;
const EXPIRED_REFS = 100_000;
/** Rounds that also measure put latency during a run (each is a run over EXPIRED_REFS more). */
const PUT_LATENCY_RUNS = 2;

function child(args: string[], timeoutMs: number): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', join(BENCH_DIR, 'retention-child.ts'), ...args],
      { cwd: REPO_ROOT, timeout: timeoutMs, maxBuffer: 1 << 20 },
      (err, stdout, stderr) => {
        if (err)
          return reject(
            new Error(`retention-child ${args[0]}: ${err.message}${stderr ? `\n${stderr.slice(-2000)}` : ''}`),
          );
        try {
          resolve(JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>);
        } catch {
          reject(new Error(`retention-child ${args[0]} printed no JSON: ${stdout.slice(-500)}`));
        }
      },
    );
  });
}

/** Peak RSS (VmHWM) of a running process in MiB, or NaN once it is gone. */
function hwmMiB(pid: number): number {
  try {
    const m = /^VmHWM:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/**
 * One retention run as an operator starts it: the built CLI (`artifact-store retention run`) with the
 * V8 flags of `npm start`, no ARTIFACT_STORE_* variables, over a seeded data dir. Its time is the
 * run's own (the report's durationMs); its peak RSS is the process's, read from /proc every 20 ms
 * (VmHWM only grows, so the last reading is the peak).
 */
function builtRetentionRun(
  dir: string,
  timeoutMs: number,
): Promise<{ seconds: number; peakRssMiB: number; refs: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [...startNodeFlags(), join(REPO_ROOT, 'dist/cli/main.js'), 'retention', 'run', '--data-dir', dir, '--json'],
      { cwd: REPO_ROOT, env: { PATH: process.env.PATH, HOME: dir }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr = (stderr + s).slice(-2000)));
    let peak = 0;
    const sample = () => {
      const now = hwmMiB(child.pid!);
      if (now > peak) peak = now;
    };
    const sampler = setInterval(sample, 20);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearInterval(sampler);
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`artifact-store retention run exited ${code}: ${stderr}`));
      try {
        const report = JSON.parse(stdout.trim().split('\n').at(-1)!) as {
          durationMs: number;
          expired: { refs: number };
        };
        resolve({ seconds: report.durationMs / 1000, peakRssMiB: peak, refs: report.expired.refs });
      } catch {
        reject(new Error(`artifact-store retention run printed no report: ${stdout.slice(-500)}`));
      }
    });
  });
}

export async function retentionRows(ctx: {
  work: string;
  runs: number;
  progress: (m: string) => void;
}): Promise<{ rows: Row[]; problems: string[] }> {
  const problems: string[] = [];
  const puts = samples();
  const runs: { seconds: number; peakRssMiB: number }[] = [];
  const baseRss: number[] = [];
  /** p99 put latency (ms): baseline without a retention run beside the puts, service during one. */
  const p99 = samples();
  /** The slowest put during each run, and the longest the event loop was held (ms). */
  const worst: number[] = [];
  const held: number[] = [];
  try {
    for (let run = 0; run < ctx.runs; run++) {
      await rotate(run, [
        async () => {
          const dir = mkdtempSync(join(ctx.work, 'puts-off-'));
          puts.baseline.push((await child(['puts', dir, 'off', String(PUTS)], 300_000)).perSecond as number);
          rmSync(dir, { recursive: true, force: true });
        },
        async () => {
          const dir = mkdtempSync(join(ctx.work, 'puts-on-'));
          puts.service!.push((await child(['puts', dir, 'on', String(PUTS)], 300_000)).perSecond as number);
          rmSync(dir, { recursive: true, force: true });
        },
      ]);
      ctx.progress(`retention: put run ${run + 1}/${ctx.runs} done`);
    }
    const expiredAll = (refs: number, expected = EXPIRED_REFS) => {
      if (refs !== expected) throw new Error(`the retention run expired ${refs} references, not ${expected}`);
    };
    ctx.progress('retention: building (npm run build) to run the CLI without tsx');
    await buildDist();
    for (let run = 0; run < ctx.runs; run++) {
      const dir = mkdtempSync(join(ctx.work, 'expire-'));
      await child(['seed', dir, String(EXPIRED_REFS)], 300_000);
      const out = await builtRetentionRun(dir, 900_000);
      rmSync(dir, { recursive: true, force: true });
      expiredAll(out.refs);
      runs.push(out);
      // The same process over 10 references: what it holds before the run's own memory.
      const small = mkdtempSync(join(ctx.work, 'expire-small-'));
      await child(['seed', small, '10'], 300_000);
      const base = await builtRetentionRun(small, 300_000);
      rmSync(small, { recursive: true, force: true });
      expiredAll(base.refs, 10);
      baseRss.push(base.peakRssMiB);
      if (run < PUT_LATENCY_RUNS) {
        const during = mkdtempSync(join(ctx.work, 'during-'));
        await child(['seed', during, String(EXPIRED_REFS)], 300_000);
        const loaded = await child(['puts-during', during, '10'], 900_000);
        rmSync(during, { recursive: true, force: true });
        expiredAll((loaded.report as { expired: { refs: number } }).expired.refs);
        p99.baseline.push(loaded.quietP99Ms as number);
        p99.service!.push(loaded.busyP99Ms as number);
        worst.push(loaded.busyMaxMs as number);
        held.push(loaded.loopHeldMaxMs as number);
      }
      ctx.progress(`retention: run ${run + 1}/${ctx.runs} over ${fmt(EXPIRED_REFS)} references done`);
    }
  } catch (err) {
    problems.push(`retention rows: ${(err as Error).message}`);
    if (puts.service!.length < puts.baseline.length) puts.service = null;
  }
  const rows: Row[] = [ratioRow('Puts, 4 KiB, quotas enforced, 16 at a time (artifacts/s)', puts, 0, 0.8)];
  const seconds = runs.map((r) => r.seconds);
  const rss = runs.map((r) => r.peakRssMiB);
  // Time is judged on the median round; memory, like every ceiling of the bench, on the worst.
  const judged = (
    metric: string,
    values: number[],
    digits: number,
    limit: number,
    unit: string,
    on: 'median' | 'worst',
  ): Row => ({
    metric,
    service: values.length ? spread(values, digits) : 'n/a',
    baseline: '—',
    ratio: '—',
    target: `≤ ${limit} ${unit}${on === 'worst' ? ', worst round' : ''}`,
    result: values.length
      ? (on === 'median' ? median(values) : Math.max(...values)) <= limit
        ? 'PASS'
        : 'FAIL'
      : 'not run',
  });
  const added = p99.service?.map((v, i) => v - p99.baseline[i]!) ?? [];
  rows.push(
    judged(`Retention run over ${fmt(EXPIRED_REFS)} expired references (s)`, seconds, 1, 5, 's', 'median'),
    judged('Retention run: peak RSS of its process, the built CLI (MiB)', rss, 0, 96, 'MiB', 'worst'),
    {
      metric: 'The same CLI over 10 references: the process before the run (MiB)',
      service: baseRss.length ? spread(baseRss, 0) : 'n/a',
      baseline: '—',
      ratio: '—',
      target: '—',
      result: 'info',
    },
    {
      metric: 'Puts, 4 KiB, 16 at a time: p99 latency during a retention run vs without (ms; added)',
      service: p99.service?.length ? spread(p99.service, 1) : 'n/a',
      baseline: spread(p99.baseline, 1),
      ratio: added.length ? `${spread(added, 1)} ms added` : 'n/a',
      target: '≤ +50 ms',
      result: added.length ? (median(added) <= 50 ? 'PASS' : 'FAIL') : 'not run',
    },
    {
      metric: 'The same: the slowest put during the run (ms, counted from when it was due)',
      service: worst.length ? spread(worst, 1) : 'n/a',
      baseline: '—',
      ratio: '—',
      target: '—',
      result: 'info',
    },
    {
      metric: 'The same: the longest the event loop was held during the run (ms)',
      service: held.length ? spread(held, 1) : 'n/a',
      baseline: '—',
      ratio: '—',
      target: '—',
      result: 'info',
    },
  );
  return { rows, problems };
}
