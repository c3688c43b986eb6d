import { type ChildProcessByStdio, execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { COMPILED_SRC } from './compiled-src.js';
import { spawnProcess, stopProcess } from './processes.js';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Node's arguments for the CLI as tests run it, from any folder: src/ as compiled for this run
 * (test/helpers/compiled-src.ts), without tsx's loader. Not bin/artifact-store.js, which runs the
 * compiled dist/ and could be older than the source; test/package.test.ts runs the bin of the packed
 * package.
 */
export const CLI_ARGS: readonly string[] = [join(COMPILED_SRC, 'cli', 'main.js')];

/**
 * The CLI from its TypeScript source under tsx's loader (resolved here), as `npm start` runs it: for
 * tests about which source modules a command loads.
 */
export const SOURCE_CLI_ARGS: readonly string[] = [
  '--import',
  pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href,
  join(ROOT, 'src', 'cli', 'main.ts'),
];

/**
 * The CLI as a process (an ops command, say), with only the given ARTIFACT_STORE_* variables (none
 * inherited); resolves with its exit code and output, whatever the code.
 */
export async function runCli(
  args: readonly string[],
  options: { env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ARTIFACT_STORE_')));
  const run = {
    cwd: options.cwd ?? ROOT,
    env: { ...inherited, ...options.env },
    encoding: 'utf8',
    timeout: options.timeoutMs ?? 60_000,
  } as const;
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [...CLI_ARGS, ...args], run);
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/**
 * The CLI as a process the test may kill part way (`put --resume` cut off): its output (stdout and
 * stderr, in order) and its exit code when it ends. It inherits this process's environment.
 */
export function spawnCli(args: readonly string[], env: Record<string, string> = {}) {
  const proc = spawnProcess<ChildProcessByStdio<null, Readable, Readable>>(process.execPath, [...CLI_ARGS, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  proc.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<number | null>((ok) => proc.on('exit', (code) => ok(code)));
  return { proc, exited, output: () => out };
}

/** `artifact-store serve` in its own process, as `npm start` runs it (from src/ as compiled for this run). */
export interface CliServer {
  url: string;
  /** The dev token it printed (tenant "dev", read/write/admin). */
  token: string;
  proc: ChildProcessByStdio<null, Readable, Readable>;
  output(): string;
  /** Resolves once the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Kills the server's process group at once. */
  kill(): void;
  /** SIGTERM (the server drains), then whatever is left of its group is killed. */
  stop(): Promise<void>;
}

/**
 * Starts the CLI server on a free port (or `port`, to start one again where it was) over `dataDir`,
 * with only the ARTIFACT_STORE_* variables given (none inherited), and waits until it printed its URL
 * and dev token.
 */
export async function startCliServer(
  dataDir: string,
  env: Record<string, string> = {},
  timeoutMs = 60_000,
  port = 0,
): Promise<CliServer> {
  const proc = spawnProcess<ChildProcessByStdio<null, Readable, Readable>>(
    process.execPath,
    [...CLI_ARGS, 'serve', '--port', String(port), '--data-dir', dataDir],
    {
      cwd: ROOT,
      env: {
        ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ARTIFACT_STORE_'))),
        ARTIFACT_STORE_LOG_LEVEL: 'warn',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  proc.stdout.setEncoding('utf8');
  proc.stderr.setEncoding('utf8');
  proc.stdout.on('data', (d: string) => (stdout += d));
  proc.stderr.on('data', (d: string) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((ok) =>
    proc.on('exit', (code, signal) => ok({ code, signal })),
  );
  const kill = () => void stopProcess(proc, { signal: 'SIGKILL' });
  const stop = () => stopProcess(proc);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const url = /listening on (http:\/\/\S+)/.exec(stdout)?.[1];
    const token = /ARTIFACT_STORE_TOKEN=(\S+)/.exec(stdout)?.[1];
    if (url && token) return { url, token, proc, output: () => `${stdout}\n${stderr}`, exited, kill, stop };
    if (proc.exitCode !== null || Date.now() > deadline) {
      await stopProcess(proc, { signal: 'SIGKILL' });
      throw new Error(`artifact-store serve did not start (exit ${proc.exitCode}):\n${stdout}\n${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The end of a browser suite: its browser closed, its server killed and gone, its folder removed
 * (each as far as the suite got to start them).
 */
export async function closeSuite(
  browser: { close(): Promise<void> } | undefined,
  server: CliServer | undefined,
  dir: string | undefined,
): Promise<void> {
  await browser?.close();
  server?.kill();
  await server?.exited;
  if (dir) rmSync(dir, { recursive: true, force: true });
}
