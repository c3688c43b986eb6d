/**
 * The Worker bundle as `wrangler deploy` builds it (dry run): within its size budget, and free of what
 * must stay out of it (better-sqlite3, fs, node:* built-ins, the MCP SDK, prom-client). The script
 * itself checks; this runs it.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ROOT } from './helpers/cli-server.js';

it('npm run worker:size builds src/worker.ts within budget and with nothing Node-only in it', () => {
  const run = spawnSync(join(ROOT, 'node_modules/.bin/tsx'), ['scripts/worker-size.ts'], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false' },
  });
  expect(run.status, run.stdout + run.stderr).toBe(0);
  const m = /bundle: ([\d.]+) KiB raw, ([\d.]+) KiB gzipped \((\d+) modules/.exec(run.stdout);
  expect(m, run.stdout).not.toBeNull();
  // The whole service is in it: far more than a stub, far less than the budget.
  expect(Number(m![2])).toBeGreaterThan(100);
  expect(Number(m![3])).toBeGreaterThan(100);
}, 120_000);
