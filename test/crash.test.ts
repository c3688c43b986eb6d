import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFsBlobStore } from '../src/blob/fs.js';
import { nodeSha256 } from '../src/blob/node-hash.js';
import { createPolicies, DEFAULT_POLICY } from '../src/core/policy.js';
import { createSqliteRepository } from '../src/db/sqlite.js';
import { createArtifactService } from '../src/service/artifact-service.js';
import { fsck } from '../src/service/fsck.js';
import { runRetention } from '../src/service/retention/index.js';
import { ROOT } from './helpers/cli-server.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

const limits = { ...DEFAULT_POLICY, touchFlushMs: 0 };

/** Runs the fault child until it kills itself at `point`. */
async function crashAt(dataDir: string, action: 'put' | 'retention', point: string, bytes: Buffer): Promise<void> {
  const input = join(dataDir, 'input.bin');
  await writeFile(input, bytes);
  // node itself (not the tsx wrapper), so the signal that ends it is the one seen here.
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'test/helpers/fault-child.ts', dataDir, action, point, input],
      { cwd: ROOT },
      (err, _stdout, stderr) => {
        if (err && (err as { signal?: string }).signal === 'SIGKILL') return resolve();
        reject(
          new Error(
            `the child did not die at ${point} (${err ? `code ${(err as { code?: unknown }).code}, signal ${(err as { signal?: unknown }).signal}` : 'exit 0'}):\n${stderr.slice(-2000)}`,
          ),
        );
      },
    );
  });
}

async function bytesOf(
  service: ReturnType<typeof createArtifactService>,
  sessionId: string,
  id: string,
): Promise<Buffer> {
  const { body } = await service.getStream({ tenantId: 'acme', filter: { sessionId } }, id);
  return Buffer.from(await new Response(body).arrayBuffer());
}

describe('SIGKILL at each phase boundary: the next retention run and fsck finish cleanly', () => {
  const points: ['put' | 'retention', string][] = [
    ['put', 'put:after-staging'],
    ['put', 'put:after-blob-commit'],
    ['put', 'put:after-db-commit'],
    ['retention', 'gc:after-mark'],
    ['retention', 'gc:after-delete'],
  ];

  it.each(points)('%s killed at %s', { timeout: 60_000 }, async (action, point) => {
    const dataDir = await mkdtemp(join(tmpdir(), 'artifact-crash-'));
    dirs.push(dataDir);
    const open = () => {
      const repo = createSqliteRepository({ path: join(dataDir, 'artifacts.db') });
      const blobs = createFsBlobStore({ root: join(dataDir, 'blobs') });
      return {
        repo,
        blobs,
        service: createArtifactService({ repo, blobs, limits, policies: createPolicies(DEFAULT_POLICY) }),
      };
    };

    // Before: one artifact still held, one whose bytes nothing holds any more.
    const before = open();
    const keptBytes = randomBytes(3000);
    const kept = (await before.service.putBytes({ tenantId: 'acme', sessionId: 'keep' }, keptBytes)).ref;
    const gone = (await before.service.putBytes({ tenantId: 'acme', sessionId: 'gone' }, randomBytes(2000))).ref;
    await before.service.delete({ tenantId: 'acme', filter: {} }, gone.id);
    await before.service.close();
    await before.repo.close();
    await new Promise((r) => setTimeout(r, 20));

    const newBytes = randomBytes(5000);
    await crashAt(dataDir, action, point, newBytes);

    // After: past the child's pin (1 s) and the stale-collection window, one run, then fsck.
    await new Promise((r) => setTimeout(r, 1100));
    const after = open();
    try {
      const report = await runRetention({
        repo: after.repo,
        blobs: after.blobs,
        policies: createPolicies(DEFAULT_POLICY),
        graceMs: 1000,
        now: () => Date.now() + 11 * 60_000,
      });
      expect(report.blobs.failed).toBe(0);
      const check = await fsck({ repo: after.repo, blobs: after.blobs, hash: nodeSha256, verify: true, graceMs: 1000 });
      expect(check.problems).toEqual([]);
      // Nothing still referenced was deleted.
      expect((await bytesOf(after.service, 'keep', kept.id)).equals(keptBytes)).toBe(true);
      const committed = point === 'put:after-db-commit';
      const listed = (await after.service.list({ tenantId: 'acme', filter: { sessionId: 'crash' } }, { limit: 10 }))
        .items;
      expect(listed).toHaveLength(committed ? 1 : 0);
      if (committed) expect((await bytesOf(after.service, 'crash', listed[0]!.id)).equals(newBytes)).toBe(true);
      // The unheld bytes are collected; only what is held stays on disk; no staging leftovers.
      expect(await after.blobs.exists(gone.sha256)).toBe(false);
      expect(check.checkedBlobs).toBe(committed ? 2 : 1);
      expect(await readdir(join(dataDir, 'blobs', 'tmp')).catch(() => [])).toEqual([]);
      // A second run finds nothing left to do.
      const again = await runRetention({
        repo: after.repo,
        blobs: after.blobs,
        policies: createPolicies(DEFAULT_POLICY),
        graceMs: 1000,
        now: () => Date.now() + 11 * 60_000,
      });
      expect(again.blobs.collected + again.staging.removed + again.expired.refs).toBe(0);
    } finally {
      await after.service.close();
      await after.repo.close();
    }
  });
});
