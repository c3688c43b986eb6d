/**
 * Child processes of tests: every server or tool a test starts runs in its own process group, and
 * stopping it stops the whole group (a tsx binary, a shell or npx would otherwise leave their own
 * children running). Whatever a test file left running is stopped after the file (test/setup-processes.ts),
 * and the run fails if anything outlives it (test/global-setup-processes.ts).
 */
import { type ChildProcess, spawn, type SpawnOptions } from 'node:child_process';

const running = new Set<ChildProcess>();

const alive = (proc: ChildProcess) => proc.exitCode === null && proc.signalCode === null;

/** spawn(), in a new process group that stopProcess ends as a whole. */
export function spawnProcess<P extends ChildProcess>(
  command: string,
  args: readonly string[],
  options: SpawnOptions,
): P {
  const proc = spawn(command, args, { ...options, detached: true }) as P;
  running.add(proc);
  proc.once('exit', () => running.delete(proc));
  return proc;
}

function signalGroup(proc: ChildProcess, signal: NodeJS.Signals): void {
  if (proc.pid === undefined) return;
  try {
    process.kill(-proc.pid, signal);
  } catch {
    // The group is gone already.
  }
}

/**
 * Sends `signal` to the process's whole group, waits up to `graceMs` for the process to exit, then
 * kills what is left of the group.
 */
export async function stopProcess(
  proc: ChildProcess,
  options: { signal?: NodeJS.Signals; graceMs?: number } = {},
): Promise<void> {
  const exited = alive(proc) ? new Promise<void>((ok) => proc.once('exit', () => ok())) : Promise.resolve();
  signalGroup(proc, options.signal ?? 'SIGTERM');
  const timer = new Promise<'timeout'>((ok) => setTimeout(() => ok('timeout'), options.graceMs ?? 5000).unref());
  if ((await Promise.race([exited, timer])) === 'timeout') {
    signalGroup(proc, 'SIGKILL');
    await exited;
  }
  // The leader may exit before the rest of its group: nothing of it may stay.
  signalGroup(proc, 'SIGKILL');
}

/** Kills every group a test started and did not stop (after each test file). */
export async function stopAllProcesses(): Promise<void> {
  await Promise.all([...running].map((proc) => stopProcess(proc, { signal: 'SIGKILL', graceMs: 2000 })));
}
