/**
 * Python rows: the Python client (clients/python) uploading and downloading the bench's artifact
 * through the service, against curl doing the same against the same service in the same run. Each
 * upload is new content (varyHead), curl streams the file (-T, not --data-binary, which reads it all
 * first), and both times run from the request to the last byte (curl's time_total; the client's own,
 * without Python's start). The client's RSS growth is its peak during the transfer. The sync client
 * is judged; the async one is shown beside it (asyncio adds a loop turn to every 64 KiB read that
 * httpcore makes, which costs downloads about half their speed on loopback).
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DIR, REPO_ROOT } from './children.js';
import { ceilingRow, infoRow, ratioRow, samples, type Row, type Samples } from './report.js';
import { MiB } from './settings.js';
import { rotate } from './stats.js';
import { varyHead } from './transfer.js';

const PYTHON = '/usr/bin/python3';
const MIN_RATIO = 0.7;
const RSS_LIMIT_MIB = 64;

export interface PythonBenchOptions {
  service: { url: string; token: string };
  input: string;
  size: number;
  runs: number;
  timeoutMs: number;
  progress(msg: string): void;
}

interface Transfer {
  seconds: number;
  bytes: number;
  rssGrowthMiB?: number;
  id?: string | null;
}

function run(file: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { cwd: REPO_ROOT, env, timeout: timeoutMs, maxBuffer: 1 << 20 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${file} ${args[0]}: ${err.message}\n${stderr.slice(-2000)}`)) : resolve(stdout),
    );
  });
}

/** Why the Python rows cannot run here, or undefined. */
function unavailable(): string | undefined {
  if (!existsSync(PYTHON)) return `no ${PYTHON}`;
  const probe = spawnSync(PYTHON, ['-c', 'import httpx'], { encoding: 'utf8' });
  if (probe.status !== 0) return 'the Python module httpx is not installed (apt-get install python3-httpx)';
  if (spawnSync('curl', ['--version']).status !== 0) return 'no curl (the baseline)';
  return undefined;
}

export async function pythonRows(o: PythonBenchOptions): Promise<{ rows: Row[]; problems: string[] }> {
  const mib = o.size / MiB;
  const figures = {
    up: samples(),
    down: samples(),
    asyncUp: samples(),
    asyncDown: samples(),
    upRss: samples(),
    downRss: samples(),
  };
  const rows = () => [
    ratioRow(`Python client: upload ${mib} MiB, vs curl (MiB/s)`, figures.up, 0, MIN_RATIO),
    ratioRow(`Python client: download ${mib} MiB, vs curl (MiB/s)`, figures.down, 0, MIN_RATIO),
    infoRow(`Python async client: upload ${mib} MiB, vs curl (MiB/s)`, figures.asyncUp, 0),
    infoRow(`Python async client: download ${mib} MiB, vs curl (MiB/s)`, figures.asyncDown, 0),
    ceilingRow('Python client: upload, peak RSS growth of the client (MiB)', figures.upRss, RSS_LIMIT_MIB, 'MiB'),
    ceilingRow('Python client: download, peak RSS growth of the client (MiB)', figures.downRss, RSS_LIMIT_MIB, 'MiB'),
  ];
  const why = unavailable();
  if (why) {
    for (const s of Object.values(figures)) s.service = null;
    return { rows: rows(), problems: [`python rows: ${why}`] };
  }

  const { url, token } = o.service;
  const env = { ...process.env, PYTHONPATH: join(REPO_ROOT, 'clients/python/src'), PYTHONDONTWRITEBYTECODE: '1' };
  const rate = (t: Transfer) => t.bytes / MiB / t.seconds;
  const client = async (direction: 'up' | 'down', flavour: 'sync' | 'async', what: string): Promise<Transfer> => {
    const out = await run(
      PYTHON,
      [join(BENCH_DIR, 'python-client.py'), direction, flavour, url, token, what],
      env,
      o.timeoutMs,
    );
    const t = JSON.parse(out.trim().split('\n').at(-1)!) as Transfer;
    if (t.bytes !== o.size) throw new Error(`the Python client moved ${t.bytes} of ${o.size} bytes`);
    return t;
  };
  const curl = async (args: string[]): Promise<Transfer> => {
    const out = await run(
      'curl',
      ['-sS', '--fail', '-o', '/dev/null', '-w', '%{time_total} %{size_upload} %{size_download}', ...args],
      process.env,
      o.timeoutMs,
    );
    const [seconds, up, down] = out.trim().split(' ').map(Number);
    return { seconds: seconds!, bytes: Math.max(up!, down!) };
  };
  const auth = ['-H', `Authorization: Bearer ${token}`];
  const curlUp = () =>
    curl(['-T', o.input, '-X', 'POST', ...auth, '-H', 'Content-Type: application/octet-stream', `${url}/v1/artifacts`]);

  const problems: string[] = [];
  let stored: string | undefined;
  try {
    for (let i = 0; i < o.runs; i++) {
      await rotate(i, [
        async () => {
          await varyHead(o.input);
          const t = await curlUp();
          figures.up.baseline.push(rate(t));
          figures.asyncUp.baseline.push(rate(t));
        },
        async () => {
          await varyHead(o.input);
          const t = await client('up', 'sync', o.input);
          stored = t.id ?? undefined;
          figures.up.service!.push(rate(t));
          figures.upRss.service!.push(t.rssGrowthMiB ?? Number.NaN);
        },
        async () => {
          await varyHead(o.input);
          figures.asyncUp.service!.push(rate(await client('up', 'async', o.input)));
        },
      ]);
      o.progress(`python upload run ${i + 1}/${o.runs} done`);
    }
    if (!stored) throw new Error('no upload stored an artifact to download');
    const id = stored;
    for (let i = 0; i < o.runs; i++) {
      await rotate(i, [
        async () => {
          const t = await curl([...auth, `${url}/v1/artifacts/${encodeURIComponent(id)}`]);
          figures.down.baseline.push(rate(t));
          figures.asyncDown.baseline.push(rate(t));
        },
        async () => {
          const t = await client('down', 'sync', id);
          figures.down.service!.push(rate(t));
          figures.downRss.service!.push(t.rssGrowthMiB ?? Number.NaN);
        },
        async () => {
          figures.asyncDown.service!.push(rate(await client('down', 'async', id)));
        },
      ]);
      o.progress(`python download run ${i + 1}/${o.runs} done`);
    }
  } catch (err) {
    problems.push(`python rows: ${err instanceof Error ? err.message : String(err)}`);
    for (const s of Object.values(figures) as Samples[]) if ((s.service?.length ?? 0) < o.runs) s.service = null;
  }
  return { rows: rows(), problems };
}
