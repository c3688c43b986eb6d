/**
 * `npm run dev:worker` as a developer runs it: wrangler dev --local on src/worker.ts, with migrations
 * applied to a local D1 and a local R2 (kept in a temp folder here). A put and a get go through it,
 * and wrangler's /__scheduled runs the cron handler.
 */
import type { ChildProcess } from 'node:child_process';
import { spawnProcess, stopProcess } from './helpers/processes.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from './helpers/cli-server.js';

const freePort = () =>
  new Promise<number>((ok) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => ok(port));
    });
  });

let dir: string;
let proc: ChildProcess;
let output = '';
let base: string;
let token: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'artifact-store-dev-worker-'));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  proc = spawnProcess(join(ROOT, 'node_modules/.bin/tsx'), ['scripts/dev-worker.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      ARTIFACT_STORE_DEV_VARS: join(dir, '.dev.vars'),
      ARTIFACT_STORE_DEV_STATE: join(dir, 'state'),
      CI: 'true',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stdout!.on('data', (b: Buffer) => (output += b.toString()));
  proc.stderr!.on('data', (b: Buffer) => (output += b.toString()));
  const deadline = Date.now() + 90_000;
  while (!/Ready on/.test(output)) {
    if (proc.exitCode !== null || Date.now() > deadline)
      throw new Error(`npm run dev:worker did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  token = /^token: (\S+)$/m.exec(output)![1]!;
}, 120_000);

afterAll(async () => {
  if (proc) await stopProcess(proc);
  rmSync(dir, { recursive: true, force: true });
});

describe('npm run dev:worker', () => {
  it('creates the secrets file, applies the migrations and prints a working token', async () => {
    expect(readFileSync(join(dir, '.dev.vars'), 'utf8')).toMatch(/^ARTIFACT_STORE_JWT_SECRETS=dev:[A-Za-z0-9_-]{43}$/m);
    expect(output).toMatch(/0007_d1_put_scratch\.sql/);
    const auth = { Authorization: `Bearer ${token}` };
    const put = await fetch(`${base}/v1/artifacts`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json', 'X-Artifact-Ttl': '60' },
      body: '{"rows":[1,2,3]}',
    });
    expect(put.status).toBe(201);
    const ref = (await put.json()) as { id: string; sha256: string };
    const back = await fetch(`${base}/v1/artifacts/${ref.id}`, { headers: auth });
    expect(back.status).toBe(200);
    expect(await back.text()).toBe('{"rows":[1,2,3]}');
    expect((await fetch(`${base}/v1/artifacts/${ref.id}`)).status).toBe(401);
  });

  it("runs the cron handler through wrangler's /__scheduled, and the run shows in usage", async () => {
    const tick = await fetch(`${base}/__scheduled?cron=${encodeURIComponent('*/15 * * * *')}`);
    expect(tick.status).toBe(200);
    const usage = await fetch(`${base}/v1/usage`, { headers: { Authorization: `Bearer ${token}` } });
    expect(usage.status).toBe(200);
    const body = (await usage.json()) as { retentionRuns?: { trigger: string }[] };
    expect(body.retentionRuns?.map((r) => r.trigger)).toContain('cron */15 * * * *');
  });
});
