/**
 * Footprint rows: the built server (`npm run build`, then `node dist/cli/main.js serve` with the Node
 * flags `npm start` uses, no tsx) on the fs driver, its RSS idle and under a mixed soak at
 * concurrency 32 (puts, small and ranged GETs, HEADs, metadata, listings, links and their downloads,
 * deletes, usage), sampled every 100 ms. Baseline: a bare node:http server's idle RSS, in the same
 * run. One more row: the idle RSS without those flags, for whoever starts the server another way.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { buildDist, REPO_ROOT, rssMiB, startNodeFlags } from './children.js';
import { ceilingRow, infoRow, samples, type Row } from './report.js';
import { median } from './stats.js';

const IDLE_LIMIT_MIB = 80;
const SOAK_PEAK_LIMIT_MIB = 160;
const GROWTH_LIMIT_MIB = 16;
const CONCURRENCY = 32;

interface Running {
  child: ChildProcess;
  url: string;
  token: string;
}

/** Starts a process and waits until `ready` finds what it needs in its stdout. */
function start<T>(
  args: string[],
  env: Record<string, string>,
  ready: (stdout: string) => T | undefined,
): Promise<{ child: ChildProcess; found: T }> {
  const child = spawn(process.execPath, args, {
    cwd: REPO_ROOT,
    env: {
      ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ARTIFACT_STORE_'))),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`not ready after 30 s: ${out.slice(-500)}${err}`));
    }, 30_000);
    const onEarlyExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`exited (${code}) before it was ready: ${out.slice(-500)}${err}`));
    };
    child.once('exit', onEarlyExit);
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      out += `${line}\n`;
      const found = ready(out);
      if (found === undefined) return;
      clearTimeout(timer);
      child.removeListener('exit', onEarlyExit);
      // Later lines are read and dropped (the pipe must not fill up).
      lines.removeAllListeners('line');
      lines.on('line', () => {});
      resolve({ child, found });
    });
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((ok) => child.once('exit', ok));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/** The median of a few samples over `ms`: RSS moves with every GC, one sample is noise. */
async function settledRss(pid: number, ms = 1000): Promise<number> {
  const values: number[] = [];
  for (let t = 0; t < ms; t += 100) {
    values.push(rssMiB(pid));
    await new Promise((r) => setTimeout(r, 100));
  }
  return median(values);
}

async function startService(work: string, nodeFlags: string[]): Promise<Running> {
  const dataDir = mkdtempSync(join(work, 'footprint-'));
  const { child, found } = await start(
    [...nodeFlags, join(REPO_ROOT, 'dist/cli/main.js'), 'serve', '--port', '0', '--data-dir', dataDir],
    { ARTIFACT_STORE_LOG_LEVEL: 'silent', ARTIFACT_STORE_ENV: 'development' },
    (out) => {
      const url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
      const token = /ARTIFACT_STORE_TOKEN=(\S+)/.exec(out)?.[1];
      return url && token ? { url, token } : undefined;
    },
  );
  return { child, ...found };
}

/** A mixed workload from `CONCURRENCY` loops until `until`; returns how many requests and how many failed (5xx or network). */
async function soak(
  s: Running,
  until: number,
): Promise<{ requests: number; failures: number; byStatus: Record<string, number> }> {
  const auth = { Authorization: `Bearer ${s.token}` };
  const ids: string[] = [];
  const byStatus: Record<string, number> = {};
  let requests = 0;
  let failures = 0;
  const count = async (res: Response) => {
    requests++;
    byStatus[res.status] = (byStatus[res.status] ?? 0) + 1;
    if (res.status >= 500) failures++;
    await res.arrayBuffer().catch(() => {});
    return res;
  };
  const put = async (size: number) => {
    const res = await fetch(`${s.url}/v1/artifacts`, {
      method: 'POST',
      headers: {
        ...auth,
        'Content-Type': 'application/octet-stream',
        'X-Artifact-Session': `soak-${Math.floor(Math.random() * 8)}`,
      },
      body: randomBytes(size),
    });
    if (res.status === 201) ids.push(((await res.clone().json()) as { id: string }).id);
    if (ids.length > 2000) ids.splice(0, 1000);
    await count(res);
  };
  for (let i = 0; i < 50; i++) await put(4096);
  const pick = () => ids[Math.floor(Math.random() * ids.length)]!;
  const loop = async () => {
    while (Date.now() < until) {
      const r = Math.random();
      try {
        if (r < 0.15) await put(r < 0.01 ? 1024 * 1024 : 4096 + Math.floor(Math.random() * 60_000));
        else if (r < 0.55) await count(await fetch(`${s.url}/v1/artifacts/${pick()}`, { headers: auth }));
        else if (r < 0.6)
          await count(await fetch(`${s.url}/v1/artifacts/${pick()}`, { headers: { ...auth, Range: 'bytes=0-99' } }));
        else if (r < 0.65)
          await count(await fetch(`${s.url}/v1/artifacts/${pick()}`, { method: 'HEAD', headers: auth }));
        else if (r < 0.75) await count(await fetch(`${s.url}/v1/artifacts/${pick()}/meta`, { headers: auth }));
        else if (r < 0.82)
          await count(
            await fetch(`${s.url}/v1/artifacts?limit=50&session=soak-${Math.floor(Math.random() * 8)}`, {
              headers: auth,
            }),
          );
        else if (r < 0.9) {
          const link = await fetch(`${s.url}/v1/artifacts/${pick()}/url`, {
            method: 'POST',
            headers: { ...auth, 'Content-Type': 'application/json' },
            body: '{}',
          });
          const url = link.status === 200 ? ((await link.clone().json()) as { url: string }).url : undefined;
          await count(link);
          if (url) await count(await fetch(url));
        } else if (r < 0.95)
          await count(
            await fetch(`${s.url}/v1/artifacts/${ids.splice(Math.floor(Math.random() * ids.length), 1)[0] ?? pick()}`, {
              method: 'DELETE',
              headers: auth,
            }),
          );
        else await count(await fetch(`${s.url}/v1/usage`, { headers: auth }));
      } catch {
        requests++;
        failures++;
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, loop));
  return { requests, failures, byStatus };
}

export async function footprintRows(ctx: {
  work: string;
  runs: number;
  soakSeconds: number;
  progress: (m: string) => void;
}): Promise<{ rows: Row[]; problems: string[] }> {
  const idle = samples();
  const peak = samples();
  const growth = samples();
  const idleWithoutFlags = samples();
  const flags = startNodeFlags();
  const problems: string[] = [];
  try {
    ctx.progress('footprint: building (npm run build) to run the server without tsx');
    await buildDist();
    for (let run = 0; run < ctx.runs; run++) {
      const base = await start(
        [
          '-e',
          "require('node:http').createServer((q, s) => s.end('ok')).listen(0, '127.0.0.1', function () { console.log('ready ' + this.address().port); })",
        ],
        {},
        (out) => (out.includes('ready') ? true : undefined),
      );
      const plain = await startService(ctx.work, []);
      const service = await startService(ctx.work, flags);
      try {
        await new Promise((r) => setTimeout(r, 3000));
        const [serviceIdle, plainIdle, baseIdle] = await Promise.all([
          settledRss(service.child.pid!),
          settledRss(plain.child.pid!),
          settledRss(base.child.pid!),
        ]);
        await stop(plain.child);
        idle.service!.push(serviceIdle);
        idle.baseline.push(baseIdle);
        idleWithoutFlags.service!.push(plainIdle);
        idleWithoutFlags.baseline.push(baseIdle);
        // Under the soak: every 100 ms; the peak, and growth between two 5 s windows.
        const started = Date.now();
        const trace: { at: number; mib: number }[] = [];
        const timer = setInterval(() => trace.push({ at: Date.now() - started, mib: rssMiB(service.child.pid!) }), 100);
        const result = await soak(service, started + ctx.soakSeconds * 1000);
        clearInterval(timer);
        if (result.failures > 0)
          problems.push(
            `footprint run ${run + 1}: ${result.failures} of ${result.requests} soak requests failed (5xx or network): ${JSON.stringify(result.byStatus)}`,
          );
        const window = (fromMs: number, toMs: number) =>
          median(trace.filter((t) => t.at >= fromMs && t.at < toMs).map((t) => t.mib));
        const end = trace.at(-1)!.at;
        peak.service!.push(Math.max(...trace.map((t) => t.mib)));
        peak.baseline.push(baseIdle);
        // Medians over 5 s, not 1 s: RSS rises and falls by 20-30 MiB with each old-generation GC
        // cycle under this load, and a 1 s window measures where in that cycle it fell, not growth.
        growth.service!.push(window(end - 5000, end + 1) - window(10_000, 15_000));
        growth.baseline.push(0);
        ctx.progress(
          `footprint run ${run + 1}/${ctx.runs}: idle ${serviceIdle.toFixed(1)} MiB, ${result.requests} soak requests in ${ctx.soakSeconds} s, peak ${peak.service!.at(-1)!.toFixed(1)} MiB`,
        );
      } finally {
        await Promise.all([stop(service.child), stop(plain.child), stop(base.child)]);
      }
    }
  } catch (err) {
    problems.push(`footprint: ${err instanceof Error ? err.message : String(err)}`);
    idle.service = null;
    peak.service = null;
    growth.service = null;
    idleWithoutFlags.service = null;
  }
  return {
    rows: [
      ceilingRow(`Built server on fs, idle RSS (MiB; baseline: bare node:http)`, idle, IDLE_LIMIT_MIB, 'MiB'),
      infoRow(`The same without ${flags.join(' ') || 'Node flags'} (MiB)`, idleWithoutFlags, 1),
      ceilingRow(
        `Soak ${ctx.soakSeconds} s at ${CONCURRENCY} concurrent, peak RSS (MiB)`,
        peak,
        SOAK_PEAK_LIMIT_MIB,
        'MiB',
      ),
      ceilingRow('Soak: RSS growth, 10-15 s to the last 5 s (MiB)', growth, GROWTH_LIMIT_MIB, 'MiB'),
    ],
    problems,
  };
}
