/**
 * The S3 backend killed and restarted under load, the service never restarted. A private Ceph RGW
 * (scripts/rgw.sh; the run's shared S3 server is not one this file may kill) takes the bytes of the
 * real service (its own process, the s3 driver). Concurrent loops put and read on keep-alive
 * connections while the gateway is SIGKILLed and, seconds later, started again. Every answer is a
 * success or a 503 with Retry-After, never a reset connection; puts succeed again once the gateway
 * is back; every acknowledged put reads back intact; one retention run leaves fsck clean.
 */
import { spawnSync, execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeSha256 } from '../src/blob/node-hash.js';
import { createS3BlobStore } from '../src/blob/s3.js';
import { createPolicies, DEFAULT_POLICY } from '../src/core/policy.js';
import { createSqliteRepository } from '../src/db/sqlite.js';
import { fsck } from '../src/service/fsck.js';
import { runRetention } from '../src/service/retention/index.js';
import { startCliServer, type CliServer } from './helpers/cli-server.js';
import { createTestBucket, testS3Client } from './helpers/s3.js';
import type { S3TargetInfo } from './helpers/s3-target.js';
import { rng } from './d1-workload.js';

const RGW_SCRIPT = fileURLToPath(new URL('../scripts/rgw.sh', import.meta.url));
const SEED = process.env.FAULT_SEED ? Number(process.env.FAULT_SEED) : Math.floor(Math.random() * 2 ** 31);
const LOOPS = 12;
/** A gateway that is back but never serves puts again is a failure; this only bounds the wait. */
const RECOVERY_BOUND_MS = 30_000;

const hasRadosgw = spawnSync('sh', ['-c', 'command -v radosgw'], { stdio: 'ignore' }).status === 0;

function rgw(command: 'start' | 'stop' | 'gateway-kill' | 'gateway-start', dir: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', [RGW_SCRIPT, command, dir], { timeout: 240_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`rgw.sh ${command} failed: ${stderr}`)) : resolve(stdout),
    );
  });
}

/** Without radosgw: skipped with the reason, except in CI, which installs it and must run this. */
function describeWithRgw(name: string, fn: () => void): void {
  if (hasRadosgw) {
    describe(name, fn);
    return;
  }
  const reason =
    'radosgw is not installed (Debian/Ubuntu: apt-get install -y --no-install-recommends ceph-mon ceph-osd radosgw ceph-common)';
  if (process.env.CI === 'true') {
    describe(name, () => {
      it('has Ceph RGW to kill and restart', () => {
        throw new Error(`CI must run the S3 fault test, but ${reason}`);
      });
    });
    return;
  }
  describe.skip(`${name} (skipped: ${reason})`, fn);
}

describeWithRgw('the S3 backend killed and restarted under load', () => {
  let rgwDir: string;
  let dataDir: string;
  let target: S3TargetInfo;
  let bucket: string;
  let dropBucket: (() => Promise<void>) | undefined;
  let server: CliServer | undefined;

  beforeAll(async () => {
    rgwDir = await mkdtemp(join(tmpdir(), 'artifact-fault-rgw-'));
    dataDir = await mkdtemp(join(tmpdir(), 'artifact-fault-s3-'));
    const info = JSON.parse((await rgw('start', rgwDir)).trim().split('\n').pop()!) as Omit<
      S3TargetInfo,
      'name' | 'forcePathStyle'
    >;
    target = { ...info, name: 'private Ceph RGW', forcePathStyle: true };
    ({ bucket, cleanup: dropBucket } = await createTestBucket(target, 'fault'));
    server = await startCliServer(dataDir, {
      ARTIFACT_STORE_ENV: 'development',
      ARTIFACT_STORE_BLOB_DRIVER: 's3',
      ARTIFACT_STORE_S3_BUCKET: bucket,
      ARTIFACT_STORE_S3_ENDPOINT: target.endpoint,
      ARTIFACT_STORE_S3_REGION: target.region,
      ARTIFACT_STORE_S3_ACCESS_KEY_ID: target.accessKeyId,
      ARTIFACT_STORE_S3_SECRET_ACCESS_KEY: target.secretAccessKey,
      ARTIFACT_STORE_GC_GRACE_SECONDS: '1',
      // The small-blob cache would answer reads without S3; this is about the S3 path.
      ARTIFACT_STORE_SMALL_BLOB_CACHE_BYTES: '0',
    });
  }, 300_000);

  afterAll(async () => {
    server?.kill();
    await server?.exited;
    await dropBucket?.().catch(() => {});
    if (rgwDir) await rgw('stop', rgwDir).catch(() => {});
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 120_000);

  it(`answers 503 with Retry-After and never a reset while S3 is down, recovers when it is back, loses nothing acknowledged, and fsck is clean after one retention run (seed ${SEED}; FAULT_SEED replays it)`, {
    timeout: 240_000,
  }, async () => {
    const rand = rng(SEED);
    const s = server!;
    const auth = { Authorization: `Bearer ${s.token}` };
    type Phase = 'before' | 'down' | 'restarting' | 'after';
    let phase: Phase = 'before';
    let stopAt = Number.POSITIVE_INFINITY;
    let recoveredAt: number | undefined;
    let restartBegan = 0;
    let restartedAt = 0;
    const acknowledged = new Map<string, string>(); // id -> sha256 of the bytes sent
    const answers: Record<Phase, Record<string, number>> = { before: {}, down: {}, restarting: {}, after: {} };
    const resets: string[] = [];
    const unexpected: string[] = [];
    const corrupt: string[] = [];

    const record = (res: Response, what: string) => {
      answers[phase][res.status] = (answers[phase][res.status] ?? 0) + 1;
      if (res.status === 503 && !res.headers.get('retry-after')) unexpected.push(`${what}: 503 without Retry-After`);
      if (![200, 201, 503].includes(res.status)) unexpected.push(`${what}: ${res.status} in phase ${phase}`);
    };

    const loop = async () => {
      while (Date.now() < stopAt) {
        try {
          if (acknowledged.size === 0 || rand() < 0.5) {
            const bytes = randomBytes(
              rand() < 0.1 ? 256 * 1024 + Math.floor(rand() * 768 * 1024) : 1024 + Math.floor(rand() * 63 * 1024),
            );
            const sha = createHash('sha256').update(bytes).digest('hex');
            const declare = rand() < 0.5;
            const putPhase = phase;
            const res = await fetch(`${s.url}/v1/artifacts`, {
              method: 'POST',
              headers: {
                ...auth,
                'Content-Type': 'application/octet-stream',
                'X-Artifact-Session': 'load',
                ...(declare ? { 'X-Artifact-Sha256': sha } : {}),
              },
              body: bytes,
            });
            record(res, 'put');
            const body = (await res.json()) as { id?: string; sha256?: string };
            if (res.status === 201) {
              if (body.sha256 !== sha) corrupt.push(`put ${body.id}: acknowledged sha ${body.sha256}, sent ${sha}`);
              acknowledged.set(body.id!, sha);
              if ((putPhase === 'restarting' || putPhase === 'after') && recoveredAt === undefined)
                recoveredAt = Date.now();
            }
          } else {
            const ids = [...acknowledged.keys()];
            const id = ids[Math.floor(rand() * ids.length)]!;
            const res = await fetch(`${s.url}/v1/artifacts/${id}`, { headers: auth });
            record(res, 'get');
            const bytes = Buffer.from(await res.arrayBuffer());
            if (res.status === 200 && createHash('sha256').update(bytes).digest('hex') !== acknowledged.get(id))
              corrupt.push(`get ${id}: bytes differ`);
          }
        } catch (err) {
          const cause = (err as { cause?: { code?: string; message?: string } }).cause;
          resets.push(`${phase}: ${cause?.code ?? cause?.message ?? String(err)}`);
        }
      }
    };

    const loops = Array.from({ length: LOOPS }, loop);
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    try {
      await sleep(1500 + Math.floor(rand() * 1000));
      await rgw('gateway-kill', rgwDir);
      phase = 'down';
      await sleep(3000);
      phase = 'restarting';
      restartBegan = Date.now();
      await rgw('gateway-start', rgwDir);
      restartedAt = Date.now();
      phase = 'after';
      const deadline = Date.now() + RECOVERY_BOUND_MS;
      while (recoveredAt === undefined && Date.now() < deadline) await sleep(50);
      // A little more load on the recovered backend.
      stopAt = Date.now() + 1000;
    } finally {
      stopAt = 0;
      await Promise.all(loops);
    }

    const summary = JSON.stringify({
      answers,
      acknowledged: acknowledged.size,
      gatewayStartMs: restartedAt - restartBegan,
      firstPutAfterStartMs: recoveredAt === undefined ? null : recoveredAt - restartBegan,
      resets: resets.length,
    });
    console.info(`S3 outage under load: ${summary}`);
    expect(resets, summary).toEqual([]);
    expect(unexpected, summary).toEqual([]);
    expect(corrupt, summary).toEqual([]);
    expect(answers.before['201'] ?? 0, summary).toBeGreaterThan(0);
    expect(answers.down['503'] ?? 0, summary).toBeGreaterThan(0); // the outage was seen, as 503s
    expect(
      recoveredAt,
      `no put succeeded within ${RECOVERY_BOUND_MS / 1000} s of the gateway answering again: ${summary}`,
    ).toBeDefined();

    // Everything acknowledged reads back through the same service, which was never restarted.
    for (const [id, sha] of acknowledged) {
      const res = await fetch(`${s.url}/v1/artifacts/${id}`, { headers: auth });
      expect(res.status, id).toBe(200);
      expect(
        createHash('sha256')
          .update(Buffer.from(await res.arrayBuffer()))
          .digest('hex'),
        id,
      ).toBe(sha);
    }

    // Past the grace period of puts that died after pinning, one retention run, then fsck --verify.
    await sleep(1100);
    const repo = createSqliteRepository({ path: join(dataDir, 'artifacts.db') });
    const client = testS3Client(target);
    const blobs = createS3BlobStore({ client, bucket, hash: nodeSha256 });
    try {
      await runRetention({ repo, blobs, policies: createPolicies(DEFAULT_POLICY), graceMs: 1000 }, 'test');
      const check = await fsck({ repo, blobs, hash: nodeSha256, verify: true, graceMs: 1000 });
      expect(check.problems, summary).toEqual([]);
    } finally {
      await repo.close();
      client.destroy();
    }
  });
});
