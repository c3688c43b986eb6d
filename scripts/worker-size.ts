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
/** Modules that must stay out: Node-only, or only needed by what the Worker does not serve (/mcp, /metrics). */
const KEPT_OUT = [
  'better-sqlite3',
  'prom-client',
  '@hono/node-server',
  '@modelcontextprotocol',
  'src/blob/fs.ts',
  'src/db/sqlite',
  'src/blob/node-hash.ts',
  'src/node.ts',
];

const root = join(import.meta.dirname, '..');
const out = mkdtempSync(join(tmpdir(), 'artifact-store-worker-'));
try {
  const run = spawnSync(
    join(root, 'node_modules/.bin/wrangler'),
    ['deploy', '--dry-run', '--outdir', out, '--metafile', join(out, 'meta.json')],
    {
      cwd: root,
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false' },
      encoding: 'utf8',
    },
  );
  if (run.status !== 0) {
    process.stderr.write(run.stdout + run.stderr);
    process.exit(1);
  }
  const files = readdirSync(out).filter((f) => f.endsWith('.js'));
  const code = Buffer.concat(files.map((f) => readFileSync(join(out, f))));
  const gzip = gzipSync(code, { level: 9 }).byteLength;
  const meta = JSON.parse(readFileSync(join(out, 'meta.json'), 'utf8')) as {
    inputs: Record<string, unknown>;
    outputs: Record<string, { imports?: { path: string; external?: boolean }[] }>;
  };
  const inputs = Object.keys(meta.inputs);
  // Node built-ins are left as imports of the bundle (externals), not inputs.
  const externals = Object.values(meta.outputs).flatMap((o) =>
    (o.imports ?? []).filter((i) => i.external).map((i) => i.path),
  );
  const leaked = [
    ...KEPT_OUT.filter((m) => inputs.some((i) => i.includes(m))),
    ...externals.filter((p) => p.startsWith('node:') || p === 'fs' || p === 'crypto'),
  ];
  const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
  console.log(
    `src/worker.ts bundle: ${kib(code.byteLength)} raw, ${kib(gzip)} gzipped (${inputs.length} modules; budget ${kib(BUDGET_GZIP_BYTES)} gzipped)`,
  );
  if (leaked.length > 0) {
    console.error(`Modules that must stay out of the Worker bundle are in it: ${leaked.join(', ')}`);
    process.exit(1);
  }
  if (gzip > BUDGET_GZIP_BYTES) {
    console.error('The Worker bundle is over its budget.');
    process.exit(1);
  }
} finally {
  rmSync(out, { recursive: true, force: true });
}
