/**
 * SIGKILL at a random moment while the real service (its own process) takes concurrent uploads,
 * several rounds on the same data folder. Afterwards every upload the service acknowledged reads
 * back byte for byte, and one retention run leaves fsck with nothing to report. The kill moments are
 * seeded: the seed is in the test name, FAULT_SEED=<seed> replays them.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createFsBlobStore } from '../src/blob/fs.js';
import { nodeSha256 } from '../src/blob/node-hash.js';
import { createPolicies, DEFAULT_POLICY } from '../src/core/policy.js';
import { createSqliteRepository } from '../src/db/sqlite.js';
import { createArtifactService } from '../src/service/artifact-service.js';
import { fsck } from '../src/service/fsck.js';
import { runRetention } from '../src/service/retention/index.js';
import { startCliServer, type CliServer } from './helpers/cli-server.js';
import { rng } from './d1-workload.js';

const SEED = process.env.FAULT_SEED ? Number(process.env.FAULT_SEED) : Math.floor(Math.random() * 2 ** 31);
const ROUNDS = 4;
/** Concurrent uploaders, each sending one upload after another until the kill. */
const UPLOADERS = 16;
/** A bound in case a kill never lands. */
const MAX_UPLOADS_PER_ROUND = 2000;

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('kills during concurrent uploads', () => {
  it(`acknowledged uploads survive SIGKILL at random moments, and fsck is clean after one retention run (seed ${SEED}; replay with FAULT_SEED=${SEED})`, {
    timeout: 120_000,
  }, async () => {
    // Kill moments and upload sizes from two streams of one seed, so the kill moments replay exactly
    // however many uploads a machine fits in before each kill.
    const killRand = rng(SEED);
    const rand = rng(SEED ^ 0x5bd1e995);
    const dataDir = await mkdtemp(join(tmpdir(), 'artifact-kill-'));
    dirs.push(dataDir);
    const env = {
      ARTIFACT_STORE_ENV: 'development',
      ARTIFACT_STORE_GC_GRACE_SECONDS: '1',
      ARTIFACT_STORE_MAX_ARTIFACT_BYTES: String(4 * 1024 * 1024),
    };
    const acknowledged = new Map<string, string>(); // id -> sha256 of the bytes sent
    let refused = 0;
    let cut = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const server: CliServer = await startCliServer(dataDir, env);
      const token = await (async () => {
        const res = await fetch(`${server.url}/v1/artifacts`, { headers: { Authorization: `Bearer ${server.token}` } });
        expect(res.status).toBe(200);
        return server.token;
      })();
      // Uploaders that keep going until the kill stops them, so uploads are in flight when it lands
      // (a fixed batch could finish first on a fast machine). Sizes and the kill moment come from the
      // seed; how many uploads fit in before the kill depends on the machine.
      let killedAt = Number.POSITIVE_INFINITY;
      const uploadOnce = async (i: number): Promise<boolean> => {
        const size =
          rand() < 0.2 ? 1024 * 1024 + Math.floor(rand() * 1024 * 1024) : 1024 + Math.floor(rand() * 64 * 1024);
        const bytes = randomBytes(size);
        const sha = createHash('sha256').update(bytes).digest('hex');
        const declare = rand() < 0.5;
        const startedAt = performance.now();
        try {
          const res = await fetch(`${server.url}/v1/artifacts`, {
            method: 'POST',
            headers: {
              Authorization: `Bearer ${token}`,
              'Content-Type': 'application/octet-stream',
              'X-Artifact-Session': 'load',
              'X-Artifact-Filename': `r${round}-${i}.bin`,
              ...(declare ? { 'X-Artifact-Sha256': sha } : {}),
            },
            body: bytes,
          });
          const body = (await res.json()) as { id?: string; sha256?: string };
          if (res.status === 201 || res.status === 200) {
            // What the service says it stored is exactly what was sent.
            expect(body.sha256).toBe(sha);
            acknowledged.set(body.id!, sha);
          } else {
            refused++;
          }
          return true;
        } catch {
          // The kill cut it: stored or not, never acknowledged. One sent after the kill only found
          // the port closed, which proves nothing.
          if (startedAt < killedAt) cut++;
          return false;
        }
      };
      let next = 0;
      const uploaders = Array.from({ length: UPLOADERS }, async () => {
        while (next < MAX_UPLOADS_PER_ROUND && (await uploadOnce(next++)));
      });
      await new Promise((r) => setTimeout(r, 30 + Math.floor(killRand() * 400)));
      // On a busy machine no upload of the run may have been answered yet: the kill then waits for the
      // first acknowledgement (up to 10 s), so that the run has something whose survival it checks.
      for (const until = performance.now() + 10_000; acknowledged.size === 0 && performance.now() < until; )
        await new Promise((r) => setTimeout(r, 10));
      killedAt = performance.now();
      server.kill();
      await Promise.all(uploaders);
      await server.exited;
    }
    expect(acknowledged.size).toBeGreaterThan(0);
    expect(cut).toBeGreaterThan(0); // the kills landed while uploads were in flight
    expect(refused).toBe(0);

    // Past the grace period of puts that died after pinning, one retention run, then fsck.
    await new Promise((r) => setTimeout(r, 1100));
    const repo = createSqliteRepository({ path: join(dataDir, 'artifacts.db') });
    const blobs = createFsBlobStore({ root: join(dataDir, 'blobs'), hash: nodeSha256, fsync: false });
    const service = createArtifactService({ repo, blobs, limits: { ...DEFAULT_POLICY, touchFlushMs: 0 } });
    try {
      await runRetention({ repo, blobs, policies: createPolicies(DEFAULT_POLICY), graceMs: 1000 }, 'test');
      const check = await fsck({ repo, blobs, hash: nodeSha256, verify: true, graceMs: 1000 });
      expect(check.problems).toEqual([]);
      for (const [id, sha] of acknowledged) {
        const { body } = await service.getStream({ tenantId: 'dev', filter: { sessionId: 'load' } }, id);
        const got = createHash('sha256')
          .update(Buffer.from(await new Response(body).arrayBuffer()))
          .digest('hex');
        expect(got, id).toBe(sha);
      }
    } finally {
      await service.close();
      await repo.close();
    }
  });
});
