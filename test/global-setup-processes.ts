/**
 * Fails the run when a test leaves a process behind. Every process a test starts carries a marker
 * in its environment (children inherit it); processes that drop the environment (MCP stdio peers
 * get a minimal one) are recognised by running from this checkout and having lost their parent.
 * At the end, any such process still alive outside this run's own process tree is listed, killed,
 * and the run fails. Files run several at a time, each in a worker that is a child of the run: what
 * a finished file left behind has lost its parent (and is found) while the other workers still run.
 */
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const MARKER_NAME = 'TEST_RUN_MARKER_ARTIFACT_STORE';
const ROOT = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');

export interface ProcInfo {
  pid: number;
  ppid: number;
  /** Clock ticks since boot. */
  start: number;
  cmdline: string;
}

function readProc(pid: number): ProcInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: fields start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
    return { pid, ppid: Number(fields[1]), start: Number(fields[19]), cmdline };
  } catch {
    return undefined;
  }
}

const allProcs = (): ProcInfo[] =>
  readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map((name) => readProc(Number(name)))
    .filter((p): p is ProcInfo => p !== undefined);

const read = (path: string, how: (p: string) => string): string => {
  try {
    return how(path);
  } catch {
    return '';
  }
};

/**
 * Processes started since `since` (clock ticks since boot) that are not under `rootPid` (nor its
 * ancestors) and either carry the marker or run from the checkout with no parent left.
 */
export function leakedProcesses(o: { marker: string; since: number; rootPid: number }): ProcInfo[] {
  const procs = allProcs();
  const children = new Map<number, number[]>();
  for (const p of procs) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p.pid]);
  // The run itself: the root, its ancestors and whatever still runs under it (workers shutting down).
  const ours = new Set<number>([o.rootPid]);
  for (let p = readProc(o.rootPid); p && p.ppid > 0; p = readProc(p.ppid)) ours.add(p.ppid);
  const queue = [o.rootPid];
  while (queue.length > 0) {
    for (const c of children.get(queue.pop()!) ?? []) {
      if (ours.has(c)) continue;
      ours.add(c);
      queue.push(c);
    }
  }
  return procs.filter((p) => {
    if (ours.has(p.pid) || p.start < o.since) return false;
    const environ = read(`/proc/${p.pid}/environ`, (f) => readFileSync(f, 'latin1'));
    if (environ.includes(`${MARKER_NAME}=${o.marker}`)) return true;
    const cwd = read(`/proc/${p.pid}/cwd`, readlinkSync);
    return p.ppid === 1 && (p.cmdline.includes(ROOT) || cwd === ROOT || cwd.startsWith(`${ROOT}/`));
  });
}

/** This process's start, in clock ticks since boot (the unit of leakedProcesses' `since`). */
export const startTicks = (pid = process.pid): number => readProc(pid)?.start ?? 0;

export default function setup(): (() => void) | undefined {
  if (process.platform !== 'linux') return undefined;
  const marker = randomUUID();
  // Before the workers start: they, and everything the tests spawn, inherit it.
  process.env[MARKER_NAME] = marker;
  const since = startTicks();
  return () => {
    const leaked = leakedProcesses({ marker, since, rootPid: process.pid });
    if (leaked.length === 0) return;
    for (const p of leaked) {
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {
        // Gone meanwhile.
      }
    }
    // A teardown's exception is only logged by vitest: the exit code is what fails the run.
    process.exitCode = 1;
    console.error(
      `\nTests left ${leaked.length} process(es) running (now killed). Start processes with spawnProcess and stop them with stopProcess (test/helpers/processes.ts):\n${leaked.map((p) => `  ${p.pid}: ${p.cmdline.slice(0, 200)}`).join('\n')}\n`,
    );
  };
}
