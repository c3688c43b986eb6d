/**
 * `npm run worker:size`: bundles src/worker.ts the way `wrangler deploy` does (dry run, nothing
 * uploaded) and prints its size, raw and gzipped. Fails when a Node-only module reached the bundle
 * or the gzipped size passes the budget (Workers' free plan allows 3 MB compressed).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const BUDGET_GZIP_BYTES = 1024 * 1024;
const NODE_ONLY = ['better-sqlite3', 'node:fs', 'node:child_process', 'node:net', 'node:http', 'prom-client', '@hono/node-server', 'src/blob/fs.ts', 'src/db/sqlite.ts', 'src/blob/node-hash.ts'];

const root = join(import.meta.dirname, '..');
const out = mkdtempSync(join(tmpdir(), 'artifact-store-worker-'));
try {
  const run = spawnSync(join(root, 'node_modules/.bin/wrangler'), ['deploy', '--dry-run', '--outdir', out, '--metafile', join(out, 'meta.json')], {
    cwd: root,
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false' },
    encoding: 'utf8',
  });
  if (run.status !== 0) {
    process.stderr.write(run.stdout + run.stderr);
    process.exit(1);
  }
  const files = readdirSync(out).filter((f) => f.endsWith('.js'));
  const code = Buffer.concat(files.map((f) => readFileSync(join(out, f))));
  const gzip = gzipSync(code, { level: 9 }).byteLength;
  const inputs = Object.keys((JSON.parse(readFileSync(join(out, 'meta.json'), 'utf8')) as { inputs: Record<string, unknown> }).inputs);
  const leaked = NODE_ONLY.filter((m) => inputs.some((i) => i.includes(m)));
  const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
  console.log(`src/worker.ts bundle: ${kib(code.byteLength)} raw, ${kib(gzip)} gzipped (${inputs.length} modules; budget ${kib(BUDGET_GZIP_BYTES)} gzipped)`);
  if (leaked.length > 0) {
    console.error(`Node-only modules in the Worker bundle: ${leaked.join(', ')}`);
    process.exit(1);
  }
  if (gzip > BUDGET_GZIP_BYTES) {
    console.error('The Worker bundle is over its budget.');
    process.exit(1);
  }
} finally {
  rmSync(out, { recursive: true, force: true });
}
