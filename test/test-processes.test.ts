/**
 * The test suite's own hygiene: processes started through spawnProcess stop as a group, and the
 * end-of-run check (test/global-setup-processes.ts) finds what a test would leave behind.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { leakedProcesses, MARKER_NAME, startTicks } from './global-setup-processes.js';
import { ROOT } from './helpers/cli-server.js';
import { spawnProcess, stopProcess } from './helpers/processes.js';

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return !/^\S+ \(\S+\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

/** Starts `sleep` as an orphan (its shell exits at once) and returns its pid. */
async function orphanSleep(env: NodeJS.ProcessEnv, cwd = ROOT): Promise<number> {
  const shell = spawn('bash', ['-c', 'sleep 60 & echo $!'], { cwd, env, stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  shell.stdout.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise((ok) => shell.once('exit', ok));
  return Number(out.trim());
}

describe.runIf(process.platform === 'linux')('test processes', () => {
  it('stopProcess ends the whole group, grandchildren included', async () => {
    const proc = spawnProcess('bash', ['-c', 'sleep 60 & echo $!; wait'], { stdio: ['ignore', 'pipe', 'ignore'] });
    const grandchild = await new Promise<number>((ok) =>
      proc.stdout!.once('data', (d: Buffer) => ok(Number(d.toString().trim()))),
    );
    expect(isAlive(grandchild)).toBe(true);
    await stopProcess(proc);
    await expect.poll(() => isAlive(grandchild)).toBe(false);
  });

  it('the end-of-run check finds a marked process and an orphan running from the checkout, and nothing else', async () => {
    const since = startTicks();
    const marker = 'probe-marker';
    const marked = await orphanSleep({ PATH: process.env.PATH, [MARKER_NAME]: marker });
    const unmarked = await orphanSleep({ PATH: process.env.PATH });
    const elsewhere = await orphanSleep({ PATH: process.env.PATH }, '/');
    try {
      const leaked = leakedProcesses({ marker, since, rootPid: process.pid }).map((p) => p.pid);
      expect(leaked).toContain(marked);
      expect(leaked).toContain(unmarked);
      // This worker's own processes are the run's, not leaks.
      expect(leaked).not.toContain(process.pid);
      // An unmarked process of someone else's, outside the checkout, is not this run's business.
      expect(leaked).not.toContain(elsewhere);
    } finally {
      for (const pid of [marked, unmarked, elsewhere]) process.kill(pid, 'SIGKILL');
    }
  });
});
