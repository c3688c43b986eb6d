/**
 * Where `artifact-store backup` writes and `restore` reads: a folder on this machine, or an S3
 * bucket and prefix (src/node/backup-target-s3.ts, loaded only for s3:// targets). Both hold the
 * same layout (src/service/backup.ts). Also the data dir side of a restore: staging the database
 * next to the live one, and the check that no service is using it.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, existsSync, realpathSync } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat, unlink } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import type { Config } from '../core/config.js';
import { SHA256_PATTERN } from '../core/ids.js';
import type { BackupTarget, ScratchFile } from '../service/backup.js';
import type { StagedDatabase } from '../service/restore.js';

/** A backup's place, as parsed from the command line. */
export type BackupLocation = { kind: 'folder'; path: string } | { kind: 's3'; bucket: string; prefix: string };

/** A usage problem with a backup location: the CLI prints it and exits 2. */
export class BackupLocationError extends Error {}

/**
 * `s3://bucket/prefix` (prefix optional; keys go under `prefix/`) or a folder path. Other URL
 * schemes are refused rather than taken for folder names.
 */
export function parseBackupLocation(text: string): BackupLocation {
  const s3 = /^s3:\/\/([^/]*)\/?(.*)$/i.exec(text);
  if (s3) {
    const bucket = s3[1]!;
    if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket))
      throw new BackupLocationError(
        `${JSON.stringify(text)} names no valid bucket: write s3://bucket/prefix (bucket names are 3-63 of a-z, 0-9, . and -).`,
      );
    const prefix = s3[2]!.replace(/^\/+|\/+$/g, '');
    return { kind: 's3', bucket, prefix: prefix ? `${prefix}/` : '' };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text))
    throw new BackupLocationError(
      `${JSON.stringify(text)}: backups go to a folder or to s3://bucket/prefix (S3, MinIO, Ceph RGW, R2), nothing else.`,
    );
  if (!text) throw new BackupLocationError('The backup location is empty: name a folder or s3://bucket/prefix.');
  return { kind: 'folder', path: resolve(text) };
}

export function describeLocation(location: BackupLocation): string {
  return location.kind === 'folder' ? location.path : `s3://${location.bucket}/${location.prefix.replace(/\/$/, '')}`;
}

/**
 * Refuses a backup location that is the service's own data: a folder whose artifacts.db or blobs/
 * would be the live ones, or the S3 driver's own bucket and prefix.
 */
export function assertNotLiveData(location: BackupLocation, config: Config): void {
  const real = (path: string) => (existsSync(path) ? realpathSync(path) : resolve(path));
  if (location.kind === 'folder') {
    const here = real(location.path);
    const dbDir = real(dirname(resolve(config.dbPath ?? join(config.dataDir, 'artifacts.db'))));
    const blobParent =
      config.blobDriver === 'fs' ? real(dirname(resolve(config.blobDir ?? join(config.dataDir, 'blobs')))) : undefined;
    if (here === dbDir || here === blobParent)
      throw new BackupLocationError(
        `${location.path} is the service's data folder: a backup there would overwrite the live database. Name another folder.`,
      );
    return;
  }
  if (config.blobDriver === 's3' && config.s3Bucket === location.bucket && config.s3Prefix === location.prefix)
    throw new BackupLocationError(
      `${describeLocation(location)} is where the service keeps its blobs (ARTIFACT_STORE_S3_BUCKET and _PREFIX): name another bucket or prefix.`,
    );
}

/** The target at `location`. S3 ones use the S3 driver's connection settings (ARTIFACT_STORE_S3_*). */
export async function openBackupTarget(location: BackupLocation, config: Config): Promise<BackupTarget> {
  if (location.kind === 'folder') return createFolderTarget(location.path);
  // The AWS SDK loads only for s3:// targets.
  const { createS3BackupTarget } = await import('./backup-target-s3.js');
  return createS3BackupTarget({
    bucket: location.bucket,
    prefix: location.prefix,
    connection: {
      region: config.s3Region,
      endpoint: config.s3Endpoint,
      forcePathStyle: config.s3ForcePathStyle,
      accessKeyId: config.s3AccessKeyId,
      secretAccessKey: config.s3SecretAccessKey,
    },
  });
}

const blobRel = (sha256: string) => join('blobs', 'sha256', sha256.slice(0, 2), sha256.slice(2, 4), sha256);

const webStream = (readable: Readable) => Readable.toWeb(readable) as unknown as ReadableStream<Uint8Array>;

/** A backup folder on this machine. Every file is written to a temp name, fsynced, then renamed. */
export function createFolderTarget(dir: string): BackupTarget {
  const path = (name: string) => join(dir, name);
  const readFile = async (file: string) => {
    try {
      const fh = await open(file, 'r');
      return webStream(fh.createReadStream());
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  };

  return {
    location: dir,

    async probe() {
      let created: string | undefined;
      try {
        created = await mkdir(dir, { recursive: true });
        const probe = path(`.write-probe-${randomUUID()}`);
        await (await open(probe, 'wx')).close();
        await unlink(probe);
      } catch (err) {
        if (created) await rm(created, { recursive: true, force: true }).catch(() => {});
        throw new Error(`Cannot write the backup to ${dir}: ${folderProblem(err)}.`);
      }
    },

    read: (name) => readFile(path(name)),
    write: (name, body) => writeFileAtomically(path(name), body),
    remove: (name) => rm(path(name), { force: true }),

    async scratchFile(): Promise<ScratchFile> {
      const file = path(`.${randomUUID()}.db.part`);
      return {
        path: file,
        async publish(name) {
          const sha256 = await hashFile(file);
          const { size } = await stat(file);
          await syncFile(file);
          await rename(file, path(name));
          await syncDir(dir);
          return { sizeBytes: size, sha256 };
        },
        discard: () => removeDatabaseFile(file),
      };
    },

    async *blobs() {
      const top = path(join('blobs', 'sha256'));
      const names = async (d: string) =>
        (
          await readdir(d).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? [] : Promise.reject(err)))
        ).sort();
      for (const a of await names(top)) {
        for (const b of await names(join(top, a))) {
          for (const name of await names(join(top, a, b))) {
            if (!SHA256_PATTERN.test(name)) continue;
            const st = await stat(join(top, a, b, name)).catch(() => null);
            if (st?.isFile()) yield { sha256: name, sizeBytes: st.size };
          }
        }
      }
    },

    readBlob: (sha256) => readFile(path(blobRel(sha256))),
    writeBlob: (sha256, body) => writeFileAtomically(path(blobRel(sha256)), body),
    removeBlob: (sha256) => rm(path(blobRel(sha256)), { force: true }),
    async close() {},
  };
}

function folderProblem(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  switch (e.code) {
    case 'EEXIST':
      return 'it is a file, not a folder. Name a folder';
    case 'ENOTDIR':
      return 'part of that path is a file, not a folder. Name a folder';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied. Name a folder this user may write to';
    case 'EROFS':
      return 'the file system is read-only';
    case 'ENOSPC':
      return 'the disk is full';
    default:
      return e.message ?? String(err);
  }
}

/** Writes `body` to `file` through a temp file in the same folder: fsynced, then renamed over it. */
async function writeFileAtomically(file: string, body: ReadableStream<Uint8Array> | Uint8Array): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const tmp = `${file}.${randomUUID()}.part`;
  const fh = await open(tmp, 'wx');
  try {
    try {
      if (body instanceof Uint8Array) {
        await fh.write(body);
      } else {
        const reader = body.getReader();
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            await fh.write(value);
          }
        } catch (err) {
          await reader.cancel(err).catch(() => {});
          throw err;
        }
      }
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, file);
    await syncDir(dirname(file));
  } catch (err) {
    await rm(tmp, { force: true }).catch(() => {});
    throw err;
  }
}

async function hashFile(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}

async function syncFile(file: string): Promise<void> {
  const fh = await open(file, 'r+');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Removes a SQLite file and the side files SQLite may have left next to it. */
export async function removeDatabaseFile(file: string): Promise<void> {
  for (const suffix of ['', '-wal', '-shm', '-journal']) await rm(`${file}${suffix}`, { force: true });
}

/**
 * Refuses to restore over a data dir a service may be using. Today that is any data dir that
 * already holds a database, unless `force` (the operator says the service is stopped); it cannot
 * yet tell a running service from a stopped one. Extend it here once `serve` records its running
 * processes.
 */
export async function assertNotServing(
  dataDir: string,
  dbPath: string,
  options: { force?: boolean; servedBy?: { pid: number; url: string }[] },
): Promise<void> {
  const serving = options.servedBy?.[0];
  if (serving)
    throw new Error(
      `A service runs on ${resolve(dataDir)} (pid ${serving.pid}, ${serving.url}): stop it before restoring into its data dir.`,
    );
  if (options.force || !existsSync(dbPath)) return;
  throw new Error(
    `${resolve(dataDir)} already holds a database (${dbPath}). Stop the service on it, then pass --force to replace it; or restore into an empty data dir.`,
  );
}

/**
 * Writes the backup's database to a temp file next to `dbPath` (fsynced); install() swaps it in for
 * the live one, whose WAL and shared memory files go with it.
 */
export async function stageDatabase(dbPath: string, body: ReadableStream<Uint8Array>): Promise<StagedDatabase> {
  const tmp = `${dbPath}.restore-${randomUUID()}`;
  await writeFileAtomically(tmp, body);
  let installed = false;
  return {
    async install() {
      for (const suffix of ['-wal', '-shm', '-journal']) await rm(`${dbPath}${suffix}`, { force: true });
      await rename(tmp, dbPath);
      await syncDir(dirname(dbPath));
      installed = true;
    },
    async discard() {
      if (!installed) await removeDatabaseFile(tmp);
    },
  };
}
