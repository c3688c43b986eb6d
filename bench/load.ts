/**
 * Small-request load with wrk, run from the bench process (never inside a server).
 *
 * Why wrk and not a Node load generator: autocannon appends every response body to a string
 * (`req.body += chunk`), which UTF-8-decodes random bytes. Against 4 KiB binary bodies that caps it
 * near 18k req/s on a 2-core machine even when the server is plain node:http, so it would measure
 * itself, not the server. wrk reads and discards bodies in C.
 */
import { execFile } from 'node:child_process';

export interface LoadResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

/** One wrk thread: on a 2-core machine the other core is the server's. */
const WRK_THREADS = 1;

/** The reason wrk cannot be used here, or null when it can. */
export function wrkMissing(): Promise<string | null> {
  return new Promise((resolve) => {
    execFile('wrk', ['--version'], (err, stdout, stderr) => {
      // wrk --version prints its banner and exits 1; only a spawn error means it is missing.
      const spawnFailed = err && (err as NodeJS.ErrnoException).code === 'ENOENT';
      if (spawnFailed)
        resolve('wrk is not installed (apt-get install wrk, brew install wrk); the small-GET rows need it');
      else if (!/wrk/i.test(`${stdout}${stderr}`)) resolve(`"wrk --version" printed no banner: ${String(err)}`);
      else resolve(null);
    });
  });
}

const UNIT_MS: Record<string, number> = { us: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

function latencyMs(text: string, percentile: string): number {
  const m = new RegExp(`^\\s*${percentile}%\\s+([\\d.]+)(us|ms|s|m|h)\\s*$`, 'm').exec(text);
  if (!m) throw new Error(`wrk output has no ${percentile}% latency line`);
  return Number(m[1]) * UNIT_MS[m[2]!]!;
}

/** Parses `wrk --latency` output; throws when any request failed or nothing was measured. */
export function parseWrk(text: string): LoadResult {
  const totals = /^\s*(\d+) requests in ([\d.]+)(us|ms|s|m|h)/m.exec(text);
  if (!totals) throw new Error(`unexpected wrk output:\n${text}`);
  const requests = Number(totals[1]);
  const seconds = (Number(totals[2]) * UNIT_MS[totals[3]!]!) / 1000;
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(text)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  const socketErrors = socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0;
  if (requests === 0 || non2xx > 0 || socketErrors > 0) {
    throw new Error(`${requests} requests, ${non2xx} non-2xx/3xx, socket errors: ${socket?.[0] ?? 'none'}`);
  }
  return { requestsPerSecond: requests / seconds, p50Ms: latencyMs(text, '50'), p99Ms: latencyMs(text, '99') };
}

export function load(
  url: string,
  headers: Record<string, string>,
  connections: number,
  durationS: number,
): Promise<LoadResult> {
  const args = [`-t${WRK_THREADS}`, `-c${connections}`, `-d${durationS}s`, '--timeout', '10s', '--latency'];
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}: ${value}`);
  args.push(url);
  return new Promise((resolve, reject) => {
    execFile('wrk', args, { timeout: (durationS + 30) * 1000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`wrk ${url}: ${err.message}${stderr ? `\n${stderr}` : ''}`));
      try {
        resolve(parseWrk(stdout));
      } catch (e) {
        reject(new Error(`wrk ${url}: ${(e as Error).message}`));
      }
    });
  });
}
