/**
 * Restores a data dir from a backup (src/service/backup.ts): the database, the blobs its manifest
 * names (copied from the backup when it holds them, checked in the blob store when not), then what
 * the restored database no longer references is removed, so that fsck is clean.
 */
import type { BlobStore } from '../blob/blob-store.js';
import { isArtifactError } from '../core/errors.js';
import type { HashFactory } from '../core/hash.js';
import { SHA256_PATTERN } from '../core/ids.js';
import type { ArtifactRepository } from '../db/repository.js';
import { BACKUP_FILES, type BackupInfo, type BackupTarget } from './backup.js';
import { fsck, type FsckReport } from './fsck.js';

/** A database file written next to the live one, not yet in its place. */
export interface StagedDatabase {
  /** Puts it in place of the live database (and drops that one's WAL). */
  install(): Promise<void>;
  /** Removes it, if not installed. */
  discard(): Promise<void>;
}

export interface RestoreOptions {
  source: BackupTarget;
  /** The data dir's blob store. */
  blobs: BlobStore;
  hash: HashFactory;
  /** Writes the backup's database next to the live one; a failing body leaves nothing. */
  stageDatabase(body: ReadableStream<Uint8Array>): Promise<StagedDatabase>;
  /** Opens the installed database. */
  openRepository(): Promise<ArtifactRepository>;
  now?: () => number;
  onProgress?: (phase: 'blobs' | 'fsck', done: number) => void;
}

export interface RestoreReport {
  location: string;
  info: BackupInfo;
  /** Blobs of the manifest copied from the backup, and those the blob store already had. */
  copied: number;
  copiedBytes: number;
  present: number;
  /** Blobs the manifest names that neither the blob store nor the backup has (the first 100), and how many. */
  missing: string[];
  missingCount: number;
  /** The check and cleanup after the database was in place (repair on, no grace period). */
  fsck: FsckReport;
}

/** A backup that cannot be restored as it is: the message says why and what to do. */
export class RestoreError extends Error {}

const KEEP_NAMES = 100;

/** Reads and checks backup.json; a backup without one is incomplete (cut short) and refused. */
export async function readBackupInfo(source: BackupTarget): Promise<BackupInfo> {
  const body = await source.read(BACKUP_FILES.info);
  if (!body)
    throw new RestoreError(
      `${source.location} holds no complete backup (no ${BACKUP_FILES.info}: a backup cut short, or not a backup). Name another, or take a new one.`,
    );
  let info: BackupInfo;
  try {
    info = JSON.parse(await new Response(body).text()) as BackupInfo;
  } catch {
    throw new RestoreError(`${source.location}/${BACKUP_FILES.info} is not valid JSON: the backup is damaged.`);
  }
  if (info?.format !== 'artifact-store-backup' || info.version !== 1)
    throw new RestoreError(
      `${source.location}/${BACKUP_FILES.info} is not a backup this version can restore (format ${JSON.stringify(info?.format)}, version ${JSON.stringify(info?.version)}).`,
    );
  return info;
}

/**
 * Restores: the database is staged (its sha256 checked against backup.json), the manifest's blobs
 * are copied into the blob store (each verified against its sha256 by the blob store's put) or,
 * when the backup holds none (S3 driver), looked up there; only then does the database replace the
 * live one. Then the pins of puts that were in flight at backup time are dropped and fsck repairs
 * with no grace period: the bytes stored after the backup (orphans) and the rows of puts that never
 * finished go. The service must be stopped (the caller checks).
 */
export async function restore(o: RestoreOptions): Promise<RestoreReport> {
  const { source, blobs } = o;
  const now = o.now ?? Date.now;
  const progress = o.onProgress ?? (() => {});
  const info = await readBackupInfo(source);
  if (!info.holdsBlobs && blobs.driver !== 's3')
    throw new RestoreError(
      `${source.location} holds the database only (taken on the ${info.blobDriver} driver, whose bucket holds the blobs): restore it with the s3 driver's settings (ARTIFACT_STORE_BLOB_DRIVER=s3, ARTIFACT_STORE_S3_BUCKET, …) pointing at that bucket.`,
    );

  const dbBody = await source.read(info.database.name);
  if (!dbBody) throw new RestoreError(`${source.location} has no ${info.database.name}: the backup is damaged.`);
  const staged = await o.stageDatabase(
    verified(dbBody, o.hash, info.database, `${source.location}/${info.database.name}`),
  );
  let installed = false;
  try {
    const copy = await restoreBlobs(o, info, progress);
    await staged.install();
    installed = true;
    const repo = await o.openRepository();
    try {
      // No put is in flight in the restored world: pins from backup time protect nothing.
      await repo.dropExpiredPins(Number.MAX_SAFE_INTEGER);
      const report = await fsck({
        repo,
        blobs,
        hash: o.hash,
        repair: true,
        graceMs: 0,
        now,
        onProgress: (n) => progress('fsck', n),
      });
      return { location: source.location, info, ...copy, fsck: report };
    } finally {
      await repo.close();
    }
  } finally {
    if (!installed) await staged.discard();
  }
}

async function restoreBlobs(
  o: RestoreOptions,
  info: BackupInfo,
  progress: (phase: 'blobs', done: number) => void,
): Promise<Pick<RestoreReport, 'copied' | 'copiedBytes' | 'present' | 'missing' | 'missingCount'>> {
  const { source, blobs } = o;
  const where = `${source.location}/${info.manifest.name}`;
  const read = async () => {
    const body = await source.read(info.manifest.name);
    if (!body) throw new RestoreError(`${source.location} has no ${info.manifest.name}: the backup is damaged.`);
    return body;
  };
  // Checked whole before it is acted on: a damaged manifest copies nothing.
  await verified(await read(), o.hash, info.manifest, where).pipeTo(new WritableStream());
  const result = { copied: 0, copiedBytes: 0, present: 0, missing: [] as string[], missingCount: 0 };
  let done = 0;
  for await (const line of lines(await read())) {
    let entry: { sha256: string; sizeBytes: number };
    try {
      entry = JSON.parse(line);
    } catch {
      throw new RestoreError(`${where} has a line that is not JSON: the backup is damaged.`);
    }
    if (!SHA256_PATTERN.test(String(entry?.sha256)) || !Number.isSafeInteger(entry.sizeBytes))
      throw new RestoreError(`${where} has a line that names no blob (${line.slice(0, 100)}): the backup is damaged.`);
    const stat = await blobs.stat(entry.sha256);
    if (stat && stat.sizeBytes === entry.sizeBytes) {
      result.present++;
    } else {
      const bytes = info.holdsBlobs ? await source.readBlob(entry.sha256) : null;
      if (!bytes) {
        result.missingCount++;
        if (result.missing.length < KEEP_NAMES) result.missing.push(entry.sha256);
      } else {
        try {
          await blobs.put(bytes, { expectedSha256: entry.sha256 });
        } catch (err) {
          if (isArtifactError(err) && err.code === 'checksum_mismatch')
            throw new RestoreError(
              `The backup's blob ${entry.sha256} hashes to ${(err.details as { actual?: string })?.actual ?? 'something else'}: the backup is damaged. Nothing was restored.`,
            );
          throw err;
        }
        result.copied++;
        result.copiedBytes += entry.sizeBytes;
      }
    }
    progress('blobs', ++done);
  }
  if (done !== info.manifest.blobs)
    throw new RestoreError(
      `${where} has ${done} lines, backup.json says ${info.manifest.blobs}: the backup is damaged.`,
    );
  return result;
}

/** The body, failing at its end unless it had the expected size and sha256. */
function verified(
  body: ReadableStream<Uint8Array>,
  hash: HashFactory,
  expected: { sizeBytes: number; sha256: string },
  where: string,
): ReadableStream<Uint8Array> {
  const hasher = hash();
  let size = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        hasher.update(chunk);
        size += chunk.byteLength;
        controller.enqueue(chunk);
      },
      async flush() {
        const sha256 = await hasher.digest();
        if (size !== expected.sizeBytes || sha256 !== expected.sha256)
          throw new RestoreError(
            `${where} is ${size} bytes hashing to ${sha256}, backup.json says ${expected.sizeBytes} bytes, ${expected.sha256}: the backup is damaged. Nothing was restored.`,
          );
      },
    }),
  );
}

/** The non-empty lines of a UTF-8 stream, one at a time. */
async function* lines(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let rest = '';
  const reader = body.getReader();
  let finished = false;
  try {
    while (!finished) {
      const { done, value } = await reader.read();
      finished = done;
      rest += done ? decoder.decode() : decoder.decode(value, { stream: true });
      const parts = rest.split('\n');
      rest = done ? '' : parts.pop()!;
      for (const part of parts) if (part.trim()) yield part;
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => {});
  }
}
