/**
 * `artifact-store backup` and `restore`, end to end: real `serve` processes, the CLI as a process,
 * a real S3 (Ceph RGW here) as backup target and as blob store. Backups are taken while a writer
 * keeps storing; restores bring back exactly what existed at backup time, byte for byte, with fsck
 * clean; bad targets fail before anything is touched; incomplete backups are refused.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { DeleteObjectCommand, GetObjectCommand, HeadBucketCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { createFsBlobStore } from '../src/blob/fs.js';
import { nodeSha256 } from '../src/blob/node-hash.js';
import { loadConfig } from '../src/core/config.js';
import { createSqliteRepository } from '../src/db/sqlite.js';
import { startServer } from '../src/node.js';
import { createFolderTarget, stageDatabase } from '../src/node/backup-target.js';
import { BACKUP_FILES, backup, type BackupInfo } from '../src/service/backup.js';
import { restore } from '../src/service/restore.js';
import { ROOT, runCli, startCliServer, type CliServer } from './helpers/cli-server.js';
import { createTestBucket, describeS3, s3TestTarget, testS3Client } from './helpers/s3.js';

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const scratch: string[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
}, 120_000);

async function tempDir(label: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `artifact-backup-${label}-`));
  scratch.push(dir);
  return dir;
}

/** The CLI as a process, with only the given ARTIFACT_STORE_* variables; resolves with its exit. */
const cli = (args: string[], env: Record<string, string> = {}, cwd = ROOT) =>
  runCli(args, { env, cwd, timeoutMs: 120_000 });

interface Stored {
  id: string;
  bytes: Uint8Array;
  ackedAt: number;
}

async function put(url: string, token: string, bytes: Uint8Array): Promise<Stored> {
  const res = await fetch(`${url}/v1/artifacts`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/octet-stream' },
    body: bytes as Uint8Array<ArrayBuffer>,
  });
  expect(res.status).toBe(201);
  const { id } = (await res.json()) as { id: string };
  return { id, bytes, ackedAt: performance.now() };
}

async function read(url: string, token: string, id: string): Promise<Uint8Array | null> {
  const res = await fetch(`${url}/v1/artifacts/${id}`, { headers: { Authorization: `Bearer ${token}` } });
  if (res.status === 404) {
    await res.body?.cancel();
    return null;
  }
  expect(res.status).toBe(200);
  return new Uint8Array(await res.arrayBuffer());
}

/**
 * Puts random artifacts until stop() (two loops at once, each a put every WRITER_PAUSE_MS at most),
 * recording each acknowledgement. Paced: unpaced, a backup slowed by a busy machine met thousands of
 * puts, and every one of them was then copied, restored and read back by the test.
 */
const WRITER_PAUSE_MS = 20;
function writer(server: CliServer) {
  const stored: Stored[] = [];
  let running = true;
  const loop = async () => {
    while (running) {
      stored.push(await put(server.url, server.token, randomBytes(1024 + Math.floor(Math.random() * 16384))));
      await new Promise((r) => setTimeout(r, WRITER_PAUSE_MS));
    }
  };
  const loops = [loop(), loop()];
  return {
    stored,
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
}

/** Every file under `dir` with its sha256: to prove nothing changed. */
function fingerprint(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, name.name);
      if (name.isDirectory()) walk(path);
      else out[relative(dir, path)] = sha256(readFileSync(path));
    }
  };
  if (existsSync(dir)) walk(dir);
  return out;
}

async function startServe(dataDir: string, env: Record<string, string> = {}): Promise<CliServer> {
  const server = await startCliServer(dataDir, { ARTIFACT_STORE_ENV: 'development', ...env });
  cleanups.push(async () => {
    server.kill();
    await server.exited;
  });
  return server;
}

/** Reads every artifact back from a restored service: those acknowledged before `before` must be there, byte for byte; those after `after` must not. */
async function expectRestored(server: CliServer, stored: Stored[], before: number, after: number) {
  let present = 0;
  for (const s of stored) {
    const bytes = await read(server.url, server.token, s.id);
    if (s.ackedAt < before) expect(bytes, `${s.id}, stored before the backup`).not.toBeNull();
    if (s.ackedAt > after) expect(bytes, `${s.id}, stored after the backup`).toBeNull();
    if (bytes) {
      expect(sha256(bytes), s.id).toBe(sha256(s.bytes));
      present++;
    }
  }
  return present;
}

describeS3('backups to S3', () => {
  const target = s3TestTarget()!;
  const s3Env = (extra: Record<string, string> = {}) => ({
    ARTIFACT_STORE_S3_ENDPOINT: target.endpoint,
    ARTIFACT_STORE_S3_REGION: target.region,
    ARTIFACT_STORE_S3_FORCE_PATH_STYLE: target.forcePathStyle ? 'true' : 'false',
    ARTIFACT_STORE_S3_ACCESS_KEY_ID: target.accessKeyId,
    ARTIFACT_STORE_S3_SECRET_ACCESS_KEY: target.secretAccessKey,
    ...extra,
  });
  const client = testS3Client(target);
  cleanups.push(async () => client.destroy());
  async function keys(bucket: string, prefix: string): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    let token: string | undefined;
    do {
      const page = await client.send(
        new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
      );
      for (const o of page.Contents ?? []) out.set(o.Key!, `${o.ETag} ${o.LastModified?.toISOString()}`);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return out;
  }
  async function object(bucket: string, key: string): Promise<string> {
    const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return out.Body!.transformToString();
  }
  const manifestShas = (text: string) =>
    text
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { sha256: string }).sha256);

  it('fs driver: a backup to s3:// while serve keeps writing, an incremental second one, restores into a fresh and into the old data dir: fsck clean, every artifact of backup time byte for byte', {
    timeout: 300_000,
  }, async () => {
    const bucket = await createTestBucket(target, 'backup-fs');
    cleanups.push(bucket.cleanup);
    const dataDir = join(await tempDir('fs'), 'data');
    const server = await startServe(dataDir);
    const stored: Stored[] = [];
    // One large artifact goes up in parts (multipart upload of the blob file).
    stored.push(await put(server.url, server.token, randomBytes(9 * 1024 * 1024 + 123)));
    for (let i = 0; i < 10; i++) stored.push(await put(server.url, server.token, randomBytes(2048 + i)));

    const load = writer(server);
    const startedAt = performance.now();
    const first = await cli(['backup', `s3://${bucket.bucket}/nightly`, '--data-dir', dataDir], s3Env());
    const endedAt = performance.now();
    await load.stop();
    stored.push(...load.stored);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const during = load.stored.filter((s) => s.ackedAt > startedAt && s.ackedAt < endedAt).length;
    expect(during, 'puts acknowledged while the backup ran').toBeGreaterThan(0);
    expect(first.stdout).toMatch(new RegExp(`^backup in s3://${bucket.bucket}/nightly$`, 'm'));

    // The backup: backup.json, the database, the manifest and exactly its blobs.
    const info = JSON.parse(await object(bucket.bucket, 'nightly/backup.json')) as BackupInfo;
    expect(info).toMatchObject({ format: 'artifact-store-backup', version: 1, blobDriver: 'fs', holdsBlobs: true });
    const manifest1 = manifestShas(await object(bucket.bucket, 'nightly/blobs.manifest.jsonl'));
    expect(manifest1.length).toBe(info.manifest.blobs);
    expect(manifest1).toEqual([...manifest1].sort());
    const blobKeys = (m: Map<string, string>) =>
      [...m.keys()].filter((k) => k.startsWith('nightly/blobs/')).map((k) => k.split('/').at(-1)!);
    const afterFirst = await keys(bucket.bucket, 'nightly/');
    expect(blobKeys(afterFirst).sort()).toEqual(manifest1);
    expect(first.stdout).toContain(
      `  blobs      ${manifest1.length} copied (${info.manifest.blobBytes} bytes), 0 already there`,
    );
    for (const s of stored.filter((x) => x.ackedAt < startedAt)) expect(manifest1).toContain(sha256(s.bytes));

    // Restore into a fresh data dir: fsck clean, a new serve reads back what existed at backup time.
    const fresh = join(await tempDir('fresh'), 'data');
    const restored = await cli(['restore', `s3://${bucket.bucket}/nightly`, '--data-dir', fresh], s3Env());
    expect(restored.stderr).toBe('');
    expect(restored.code).toBe(0);
    expect(restored.stdout).toContain(
      `  blobs      ${manifest1.length} in the manifest: ${manifest1.length} copied (${info.manifest.blobBytes} bytes), 0 already there, 0 missing`,
    );
    const fsck = await cli(['fsck', '--verify', '--data-dir', fresh]);
    expect(fsck.stdout).toMatch(/; 0 problems, 0 unresolved$/m);
    expect(fsck.code).toBe(0);
    const again = await startServe(fresh);
    const present = await expectRestored(again, stored, startedAt, endedAt);
    expect(present).toBe(manifest1.length);
    await again.stop();

    // A second backup into the same prefix uploads only the blobs stored since.
    const since: Stored[] = [];
    for (let i = 0; i < 3; i++) since.push(await put(server.url, server.token, randomBytes(4096)));
    stored.push(...since);
    const second = await cli(['backup', `s3://${bucket.bucket}/nightly`, '--data-dir', dataDir], s3Env());
    expect(second.code).toBe(0);
    const manifest2 = manifestShas(await object(bucket.bucket, 'nightly/blobs.manifest.jsonl'));
    // New since the first backup: the writer's last puts and these three.
    const added = manifest2.filter((s) => !manifest1.includes(s));
    for (const s of since) expect(added).toContain(sha256(s.bytes));
    expect(manifest2.length).toBe(manifest1.length + added.length);
    expect(second.stdout).toContain(`  blobs      ${added.length} copied (`);
    expect(second.stdout).toContain(`, ${manifest1.length} already there`);
    const afterSecond = await keys(bucket.bucket, 'nightly/');
    for (const sha of manifest1) {
      const key = [...afterFirst.keys()].find((k) => k.endsWith(sha))!;
      expect(afterSecond.get(key), `${key} was not uploaded again`).toBe(afterFirst.get(key));
    }
    expect(blobKeys(afterSecond).sort()).toEqual(manifest2);

    // Back onto the old data dir (service stopped): what was stored after the backup goes, fsck is clean.
    const late = await put(server.url, server.token, randomBytes(5000));
    stored.push(late);
    await server.stop();
    const refused = await cli(['restore', `s3://${bucket.bucket}/nightly`, '--data-dir', dataDir], s3Env());
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/already holds a database .* pass --force/);
    const back = await cli(['restore', `s3://${bucket.bucket}/nightly`, '--data-dir', dataDir, '--force'], s3Env());
    expect(back.code).toBe(0);
    expect(back.stdout).toContain(`${manifest2.length} already there, 0 missing`);
    expect(back.stdout).toMatch(/^ {2}removed {4}1 blobs stored after the backup/m);
    const clean = await cli(['fsck', '--verify', '--data-dir', dataDir]);
    expect(clean.stdout).toBe(
      `fsck: ${manifest2.length} blob rows, ${manifest2.length} stored blobs checked; 0 problems, 0 unresolved\n`,
    );
    expect(clean.code).toBe(0);
    const third = await startServe(dataDir);
    await expectRestored(third, stored, late.ackedAt - 1, late.ackedAt - 1);
    await third.stop();
  });

  it('s3 driver: the backup holds the database and the manifest; a restore finds a blob deleted from the bucket, names it and exits 1, and removes what was stored after', {
    timeout: 300_000,
  }, async () => {
    const blobBucket = await createTestBucket(target, 'backup-driver');
    cleanups.push(blobBucket.cleanup);
    const driver = {
      ARTIFACT_STORE_BLOB_DRIVER: 's3',
      ARTIFACT_STORE_S3_BUCKET: blobBucket.bucket,
      ARTIFACT_STORE_S3_PREFIX: 'svc/',
      ARTIFACT_STORE_SMALL_BLOB_CACHE_BYTES: '0',
    };
    const dataDir = join(await tempDir('s3-driver'), 'data');
    const server = await startServe(dataDir, s3Env(driver));
    const stored: Stored[] = [];
    for (let i = 0; i < 5; i++) stored.push(await put(server.url, server.token, randomBytes(3000 + i)));

    // The service's own bucket and prefix is not a backup target.
    const own = await cli(['backup', `s3://${blobBucket.bucket}/svc`, '--data-dir', dataDir], s3Env(driver));
    expect(own.code).toBe(2);
    expect(own.stderr).toMatch(/where the service keeps its blobs/);

    const load = writer(server);
    const startedAt = performance.now();
    const taken = await cli(['backup', `s3://${blobBucket.bucket}/backup`, '--data-dir', dataDir], s3Env(driver));
    const endedAt = performance.now();
    await load.stop();
    stored.push(...load.stored);
    expect(taken.code).toBe(0);
    expect(taken.stdout).toContain(`  blobs      in s3://${blobBucket.bucket}/svc/: keep versioning on there`);
    const backupKeys = [...(await keys(blobBucket.bucket, 'backup/')).keys()].sort();
    expect(backupKeys).toEqual(['backup/artifacts.db', 'backup/backup.json', 'backup/blobs.manifest.jsonl']);
    const info = JSON.parse(await object(blobBucket.bucket, 'backup/backup.json')) as BackupInfo;
    expect(info).toMatchObject({ blobDriver: 's3', holdsBlobs: false });

    // After the backup: one more artifact (its blob is an orphan to the restored database), and one
    // blob of backup time lost from the bucket.
    const late = await put(server.url, server.token, randomBytes(7000));
    await server.stop();
    const lost = stored[2]!;
    const lostSha = sha256(lost.bytes);
    await client.send(
      new DeleteObjectCommand({
        Bucket: blobBucket.bucket,
        Key: `svc/blobs/sha256/${lostSha.slice(0, 2)}/${lostSha.slice(2, 4)}/${lostSha}`,
      }),
    );

    const fresh = join(await tempDir('s3-fresh'), 'data');
    const restored = await cli(['restore', `s3://${blobBucket.bucket}/backup`, '--data-dir', fresh], s3Env(driver));
    expect(restored.code).toBe(1);
    expect(restored.stdout).toContain(`, 1 missing`);
    expect(restored.stdout).toContain(`  ${lostSha} (held by dev/${lost.id})`);
    expect(restored.stdout).toMatch(/from the bucket's versions/);
    // The late one, and the writer's puts that came after the snapshot.
    expect(restored.stdout).toMatch(/^ {2}removed {4}[1-9]\d* blobs stored after the backup/m);
    const lateSha = sha256(late.bytes);
    const remaining = [...(await keys(blobBucket.bucket, 'svc/blobs/')).keys()];
    expect(
      remaining.some((k) => k.endsWith(lateSha)),
      'the blob stored after the backup was removed',
    ).toBe(false);
    // Left in the bucket: the manifest's blobs but the lost one, and at most bytes the restored
    // database has a row for (a put that had pinned its blob at backup time: retention's to collect).
    const manifest = manifestShas(await object(blobBucket.bucket, 'backup/blobs.manifest.jsonl'));
    const left = remaining.map((k) => k.split('/').at(-1)!);
    expect(left).toEqual(expect.arrayContaining(manifest.filter((s) => s !== lostSha)));
    const rows = createSqliteRepository({ path: join(fresh, 'artifacts.db') });
    const known = await rows.knownBlobs(left);
    await rows.close();
    expect(left.filter((s) => !known.has(s))).toEqual([]);
    const fsck = await cli(['fsck', '--data-dir', fresh], s3Env(driver));
    expect(fsck.code).toBe(1);
    expect(fsck.stdout).toMatch(new RegExp(`^ {2}missing_bytes ${lostSha} \\(held by dev/${lost.id}\\)`, 'm'));
    expect(fsck.stdout).toMatch(/; 1 problems, 1 unresolved$/m);

    // Everything else of backup time reads back.
    const again = await startServe(fresh, s3Env(driver));
    await expectRestored(
      again,
      stored.filter((s) => s !== lost),
      startedAt,
      endedAt,
    );
    expect(await read(again.url, again.token, late.id)).toBeNull();
    await again.stop();
  });

  it('a target that cannot be written fails before anything is touched: no such bucket, wrong credentials', {
    timeout: 120_000,
  }, async () => {
    const bucket = await createTestBucket(target, 'backup-bad');
    cleanups.push(bucket.cleanup);
    const dataDir = await storedDataDir();
    const before = fingerprint(dataDir);

    const missing = `as-test-no-such-bucket-${randomBytes(4).toString('hex')}`;
    const noBucket = await cli(['backup', `s3://${missing}/x`, '--data-dir', dataDir], s3Env());
    expect(noBucket.code).toBe(1);
    expect(noBucket.stderr).toBe(
      `artifact-store: Cannot write the backup to s3://${missing}/x: the bucket ${missing} does not exist. Create it, or name another.\n`,
    );
    await expect(client.send(new HeadBucketCommand({ Bucket: missing }))).rejects.toThrow();

    const denied = await cli(
      ['backup', `s3://${bucket.bucket}/x`, '--data-dir', dataDir],
      s3Env({ ARTIFACT_STORE_S3_SECRET_ACCESS_KEY: 'not-the-secret' }),
    );
    expect(denied.code).toBe(1);
    expect(denied.stderr).toMatch(
      new RegExp(
        `^artifact-store: Cannot write the backup to s3://${bucket.bucket}/x: access denied \\(\\w+\\)\\. Check ARTIFACT_STORE_S3_ACCESS_KEY_ID`,
      ),
    );
    expect(denied.stderr.trim().split('\n')).toHaveLength(1);
    expect([...(await keys(bucket.bucket, '')).keys()]).toEqual([]);
    expect(fingerprint(dataDir)).toEqual(before);

    // And restore from such a place says so too.
    const fresh = join(await tempDir('bad-restore'), 'data');
    const none = await cli(['restore', `s3://${bucket.bucket}/x`, '--data-dir', fresh], s3Env());
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/holds no complete backup \(no backup\.json/);
    expect(existsSync(join(fresh, 'artifacts.db'))).toBe(false);
  });
});

/** A data dir with a few artifacts, its service stopped. */
async function storedDataDir(): Promise<string> {
  const dataDir = join(await tempDir('data'), 'data');
  const server = await startServer(loadConfig({}, { port: 0, dataDir, env: 'development', logLevel: 'silent' }));
  for (let i = 0; i < 3; i++) await put(server.url, server.token, randomBytes(1000 + i));
  await server.close();
  return dataDir;
}

describe('backups to a folder', () => {
  it('backup while serve writes, restore into a fresh data dir: fsck clean, every artifact of backup time', {
    timeout: 180_000,
  }, async () => {
    const dataDir = join(await tempDir('local'), 'data');
    const backupDir = join(await tempDir('local-backup'), 'nightly');
    const server = await startServe(dataDir);
    const stored: Stored[] = [];
    for (let i = 0; i < 5; i++) stored.push(await put(server.url, server.token, randomBytes(2000 + i)));
    const load = writer(server);
    const startedAt = performance.now();
    const taken = await cli(['backup', backupDir, '--data-dir', dataDir]);
    const endedAt = performance.now();
    await load.stop();
    stored.push(...load.stored);
    expect(taken.code).toBe(0);
    expect(taken.stdout).toMatch(new RegExp(`^backup in ${backupDir}$`, 'm'));
    expect(readdirSync(backupDir).sort()).toEqual(['artifacts.db', 'backup.json', 'blobs', 'blobs.manifest.jsonl']);
    await server.stop();

    const fresh = join(await tempDir('local-fresh'), 'data');
    const restored = await cli(['restore', backupDir, '--data-dir', fresh]);
    expect(restored.code).toBe(0);
    expect(restored.stdout).toMatch(/, 0 missing$/m);
    const fsck = await cli(['fsck', '--verify', '--data-dir', fresh]);
    expect(fsck.code).toBe(0);
    const again = await startServe(fresh);
    await expectRestored(again, stored, startedAt, endedAt);
    await again.stop();

    // A blob file of the backup that no longer hashes to its name fails the restore: nothing is left.
    const info = JSON.parse(readFileSync(join(backupDir, 'backup.json'), 'utf8')) as BackupInfo;
    const sha = readFileSync(join(backupDir, 'blobs.manifest.jsonl'), 'utf8').split('\n')[0]!;
    const hex = (JSON.parse(sha) as { sha256: string }).sha256;
    const file = join(backupDir, 'blobs', 'sha256', hex.slice(0, 2), hex.slice(2, 4), hex);
    const bytes = readFileSync(file);
    bytes[0] = bytes[0]! ^ 0xff;
    writeFileSync(file, bytes);
    const damaged = join(await tempDir('local-damaged'), 'data');
    const bad = await cli(['restore', backupDir, '--data-dir', damaged]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(`artifact-store: The backup's blob ${hex} hashes to `);
    expect(existsSync(join(damaged, 'artifacts.db'))).toBe(false);
    expect(readdirSync(damaged).filter((f) => f.includes('artifacts.db'))).toEqual([]);
    expect(info.manifest.blobs).toBeGreaterThan(0);
  });

  it('a folder path that is a file fails before anything is touched', async () => {
    const dataDir = await storedDataDir();
    const before = fingerprint(dataDir);
    const parent = await tempDir('file-target');
    const file = join(parent, 'not-a-folder');
    writeFileSync(file, 'keep me');
    for (const [where, why] of [
      [file, 'it is a file, not a folder'],
      [join(file, 'sub'), 'part of that path is a file'],
    ] as const) {
      const r = await cli(['backup', where, '--data-dir', dataDir]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(new RegExp(`^artifact-store: Cannot write the backup to ${where}: ${why}`));
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect(readdirSync(parent)).toEqual(['not-a-folder']);
    expect(readFileSync(file, 'utf8')).toBe('keep me');
    expect(fingerprint(dataDir)).toEqual(before);
  });

  it('a backup cut short leaves no backup.json, and restore refuses it', async () => {
    const dataDir = join(await tempDir('cut'), 'data');
    const server = await startServer(loadConfig({}, { port: 0, dataDir, env: 'development', logLevel: 'silent' }));
    await put(server.url, server.token, randomBytes(1500));
    const backupDir = join(await tempDir('cut-backup'), 'b');
    expect((await cli(['backup', backupDir, '--data-dir', dataDir])).code).toBe(0);
    expect(existsSync(join(backupDir, 'backup.json'))).toBe(true);

    // A blob the next backup must copy cannot be read (a folder where its file should be): that
    // backup fails halfway, after it removed the old backup.json.
    const late = await put(server.url, server.token, randomBytes(1600));
    await server.close();
    const lateSha = sha256(late.bytes);
    const blobFile = join(dataDir, 'blobs', 'sha256', lateSha.slice(0, 2), lateSha.slice(2, 4), lateSha);
    rmSync(blobFile);
    mkdirSync(blobFile);
    const cut = await cli(['backup', backupDir, '--data-dir', dataDir]);
    expect(cut.code).toBe(1);
    expect(existsSync(join(backupDir, 'backup.json'))).toBe(false);
    expect(readdirSync(backupDir).filter((f) => f.endsWith('.part'))).toEqual([]);

    const fresh = join(await tempDir('cut-fresh'), 'data');
    const refused = await cli(['restore', backupDir, '--data-dir', fresh]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(
      `artifact-store: ${backupDir} holds no complete backup (no backup.json: a backup cut short, or not a backup). Name another, or take a new one.\n`,
    );
    expect(existsSync(join(fresh, 'artifacts.db'))).toBe(false);
  });

  it('backup.json is written last: a failure while publishing the database leaves none (service level)', async () => {
    const dataDir = await storedDataDir();
    const dir = join(await tempDir('publish'), 'b');
    const folder = createFolderTarget(dir);
    await folder.probe();
    const repo = createSqliteRepository({ path: join(dataDir, 'artifacts.db') });
    const blobs = createFsBlobStore({ root: join(dataDir, 'blobs') });
    const run = (failPublish: boolean) =>
      backup({
        repo,
        target: {
          ...folder,
          async scratchFile() {
            const file = await folder.scratchFile();
            return failPublish
              ? { ...file, publish: async () => Promise.reject(new Error('the disk filled up')) }
              : file;
          },
        },
        hash: nodeSha256,
        openSnapshot: (path) => createSqliteRepository({ path }),
        blobDriver: 'fs',
        blobs,
      });
    try {
      const ok = await run(false);
      expect(ok.info.manifest.blobs).toBe(3);
      expect(ok).toMatchObject({ copied: 3, present: 0, removed: 0 });
      expect(existsSync(join(dir, BACKUP_FILES.info))).toBe(true);
      // Again: nothing to copy, and a blob file the database does not record is removed.
      const stray = 'ab'.repeat(32);
      const strayFile = join(dir, 'blobs', 'sha256', 'ab', 'ab', stray);
      mkdirSync(join(strayFile, '..'), { recursive: true });
      writeFileSync(strayFile, 'not recorded');
      const again = await run(false);
      expect(again).toMatchObject({ copied: 0, present: 3, removed: 1 });
      expect(existsSync(strayFile)).toBe(false);
      await expect(run(true)).rejects.toThrow('the disk filled up');
      expect(existsSync(join(dir, BACKUP_FILES.info))).toBe(false);
      expect(readdirSync(dir).filter((f) => f.startsWith('.'))).toEqual([]);
      // restore() refuses it before writing anything.
      const fresh = join(await tempDir('publish-fresh'), 'data');
      const dbPath = join(fresh, 'artifacts.db');
      await expect(
        restore({
          source: folder,
          blobs: createFsBlobStore({ root: join(fresh, 'blobs') }),
          hash: nodeSha256,
          stageDatabase: (body) => stageDatabase(dbPath, body),
          openRepository: async () => createSqliteRepository({ path: dbPath }),
        }),
      ).rejects.toThrow(/holds no complete backup/);
      expect(existsSync(fresh)).toBe(false);
    } finally {
      await repo.close();
    }
  });

  it('restore refuses a data dir that holds a database without --force, and bad usage exits 2', async () => {
    const dataDir = await storedDataDir();
    const backupDir = join(await tempDir('force'), 'b');
    expect((await cli(['backup', backupDir, '--data-dir', dataDir])).code).toBe(0);
    const before = fingerprint(dataDir);
    const r = await cli(['restore', backupDir, '--data-dir', dataDir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `artifact-store: ${dataDir} already holds a database (${join(dataDir, 'artifacts.db')}). Stop the service on it, then pass --force to replace it; or restore into an empty data dir.\n`,
    );
    expect(fingerprint(dataDir)).toEqual(before);
    expect(statSync(join(dataDir, 'artifacts.db')).isFile()).toBe(true);

    // While a service runs on it, not even --force restores into it.
    const serving = await startCliServer(dataDir, { ARTIFACT_STORE_ENV: 'development' });
    try {
      const busy = await cli(['restore', backupDir, '--data-dir', dataDir, '--force']);
      expect(busy.code).toBe(1);
      expect(busy.stderr).toBe(
        `artifact-store: A service runs on ${dataDir} (pid ${serving.proc.pid}, ${serving.url}): stop it before restoring into its data dir.\n`,
      );
    } finally {
      serving.kill();
      await serving.exited;
    }

    for (const args of [
      ['restore'],
      ['restore', 'a', 'b'],
      ['restore', 's3://'],
      ['backup', 'https://example.com/x'],
      ['backup', dataDir, '--data-dir', dataDir],
    ]) {
      const u = await cli(args);
      expect(u.code, args.join(' ')).toBe(2);
      expect(u.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
    }
  });
});
