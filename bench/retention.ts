/**
 * Retention rows: put throughput with quotas enforced against the same puts with quotas off, and
 * one retention run over 100,000 expired references (its time and peak RSS).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DIR, REPO_ROOT } from './children.js';
import { ratioRow, samples, type Row } from './report.js';
import { fmt, median, rotate } from './stats.js';

const PUTS = 2000;
const EXPIRED_REFS = 100_000;

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

export async function retentionRows(ctx: {
  work: string;
  runs: number;
  progress: (m: string) => void;
}): Promise<{ rows: Row[]; problems: string[] }> {
  const problems: string[] = [];
  const puts = samples();
  const runs: { seconds: number; peakRssMiB: number }[] = [];
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
    const dir = mkdtempSync(join(ctx.work, 'expire-'));
    const out = await child(['expire', dir, String(EXPIRED_REFS)], 900_000);
    rmSync(dir, { recursive: true, force: true });
    const report = out.report as { expired: { refs: number } };
    if (report.expired.refs !== EXPIRED_REFS)
      throw new Error(`the retention run expired ${report.expired.refs} references, not ${EXPIRED_REFS}`);
    runs.push({ seconds: out.seconds as number, peakRssMiB: out.peakRssMiB as number });
  } catch (err) {
    problems.push(`retention rows: ${(err as Error).message}`);
    if (puts.service!.length < puts.baseline.length) puts.service = null;
  }
  const rows: Row[] = [ratioRow('Puts, 4 KiB, quotas enforced, 16 at a time (artifacts/s)', puts, 0, 0.8)];
  const once = (metric: string, value: number | undefined, digits: number): Row => ({
    metric,
    service: value === undefined ? 'n/a' : fmt(value, digits),
    baseline: '—',
    ratio: '—',
    target: '—',
    result: value === undefined ? 'not run' : 'info',
  });
  rows.push(
    once(
      `Retention run over ${fmt(EXPIRED_REFS)} expired references (s)`,
      runs.length ? median(runs.map((r) => r.seconds)) : undefined,
      1,
    ),
    once('Retention run: peak RSS of the process (MiB)', runs.length ? runs[0]!.peakRssMiB : undefined, 0),
  );
  return { rows, problems };
}
