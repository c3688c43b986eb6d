import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { readSettings } from './settings.js';

export const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
export const REPO_ROOT = join(BENCH_DIR, '..');

/** The V8 flags of `npm start` (package.json), so the rows measure what users run. */
export function startNodeFlags(): string[] {
  const start = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } })
    .scripts.start;
  return start.split(/\s+/).filter((word) => /^--max-[a-z-]+=/.test(word));
}

let built: Promise<void> | undefined;

/**
 * Builds both packages' dist/ once per bench with `npm run build` (scripts/build.mjs), for rows that
 * measure the built code: what the image, the package's bin and a systemd unit run.
 */
export function buildDist(): Promise<void> {
  built ??= new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [join(REPO_ROOT, 'scripts', 'build.mjs')],
      { cwd: REPO_ROOT, timeout: 600_000 },
      (err, stdout, stderr) =>
        err ? reject(new Error(`npm run build failed: ${`${stdout}${stderr}`.slice(-2000)}`)) : resolve(),
    );
  });
  return built;
}

/** A server running in its own process; `info` is the JSON line it printed once listening. */
export interface ServerChild<Info extends { url: string } = { url: string }> {
  name: string;
  pid: number;
  info: Info;
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();

/** Synchronous, so it also works from an 'exit' handler. */
export function killAllChildren(): void {
  for (const child of live) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
  live.clear();
}

/**
 * Starts `node --import tsx <script> ...args` (the pid is the server itself, not a wrapper) and
 * waits for its first stdout line, a JSON object with at least `url`. The child's stdin stays open:
 * servers exit when it closes, so they go with the bench even if it is killed outright.
 */
export async function startServerChild<Info extends { url: string }>(
  name: string,
  script: string,
  args: string[],
  timeoutMs = 30_000,
  /** Variables the child gets beside this process's (BENCH_SERVICE_CODE for one service child). */
  extraEnv: Record<string, string> = {},
): Promise<ServerChild<Info>> {
  const isService = script === 'service-server.ts';
  const env = { ...process.env, ...extraEnv };
  // service-server.ts loads the built service unless BENCH_SERVICE_CODE=source (bench/settings.ts).
  if (isService && readSettings(env).serviceCode === 'dist') await buildDist();
  // The service runs with the V8 flags of `npm start` (and of the image), as users run it; the
  // baselines on Node's defaults.
  const flags = isService ? startNodeFlags() : [];
  const child = spawn(process.execPath, [...flags, '--import', 'tsx', join(BENCH_DIR, script), ...args], {
    cwd: REPO_ROOT,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  live.add(child);
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (s: string) => {
    stderr = (stderr + s).slice(-4000);
  });
  const exited = new Promise<void>((ok) => child.once('exit', () => ok()));
  exited.then(() => live.delete(child));

  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.stdin!.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };

  return new Promise<ServerChild<Info>>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const fail = (why: string) => {
      clearTimeout(timer);
      lines.close();
      child.kill('SIGKILL');
      reject(new Error(`${name}: ${why}${stderr ? `\n${stderr.trim()}` : ''}`));
    };
    const timer = setTimeout(() => fail(`not listening after ${timeoutMs} ms`), timeoutMs);
    const onError = (err: Error) => fail(err.message);
    const onEarlyExit = (code: number | null, signal: string | null) =>
      fail(`exited before listening (code ${code}, signal ${signal})`);
    child.once('error', onError);
    child.once('exit', onEarlyExit);
    lines.once('line', (line) => {
      clearTimeout(timer);
      child.off('error', onError);
      child.off('exit', onEarlyExit);
      let info: Info;
      try {
        info = JSON.parse(line) as Info;
        if (typeof info.url !== 'string') throw new Error('no url');
      } catch {
        fail(`expected a JSON line with a url on stdout, got ${JSON.stringify(line.slice(0, 200))}`);
        return;
      }
      // Anything printed later is drained and ignored.
      lines.on('line', () => {});
      resolve({ name, pid: child.pid!, info, stop });
    });
  });
}

/** Resident set size of a process in MiB, from /proc (NaN where there is no /proc). */
export function rssMiB(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** Samples a process's RSS every `everyMs` until stopped; returns the peak minus the first sample. */
export function watchRss(pid: number, everyMs = 20): { stop(): number } {
  const before = rssMiB(pid);
  let peak = before;
  const sample = () => {
    const now = rssMiB(pid);
    if (now > peak) peak = now;
  };
  const timer = setInterval(sample, everyMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return peak - before;
    },
  };
}

/** A bench child's entry: prints what `main` returns as one JSON line, or the error and exit code 1. */
export function runChild(main: () => Promise<unknown>): void {
  main().then(
    (out) => {
      process.stdout.write(`${JSON.stringify(out)}\n`);
    },
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
