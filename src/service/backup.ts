/**
 * Backups of a data dir into a BackupTarget (a folder, or an S3 bucket and prefix: the Node
 * implementations are in src/node/backup-target.ts), and what they hold:
 *
 *   backup.json            written last: when it was taken, counts, sizes and hashes (BackupInfo)
 *   artifacts.db           SQLite's online backup, taken while the service keeps writing
 *   blobs.manifest.jsonl   one {"sha256","sizeBytes"} line per blob that database records
 *   blobs/sha256/ab/cd/…   the blob files (fs driver only), copied incrementally
 *
 * A backup is complete once backup.json exists. A backup removes it before it writes anything and
 * writes it after everything else, so one cut short (killed, the target full) never looks complete,
 * and restore refuses it.
 */
import type { BlobStore } from '../blob/blob-store.js';
import type { HashFactory } from '../core/hash.js';
import type { ArtifactRepository } from '../db/repository.js';

export const BACKUP_FILES = {
  info: 'backup.json',
  database: 'artifacts.db',
  manifest: 'blobs.manifest.jsonl',
} as const;

/** What backup.json holds (format version 1). */
export interface BackupInfo {
  format: 'artifact-store-backup';
  version: 1;
  /** When the online backup of the database was taken (ISO 8601). */
  takenAt: string;
  /** The blob driver of the service that was backed up. */
  blobDriver: string;
  /** Whether the blob files are in the backup (fs driver). On S3 the bucket holds them. */
  holdsBlobs: boolean;
  database: { name: string; sizeBytes: number; sha256: string };
  manifest: { name: string; sizeBytes: number; sha256: string; blobs: number; blobBytes: number };
  /** Blobs the database records that were not in the blob store when the backup copied them. */
  missing: number;
}

/** A scratch file on this machine for the online database backup, published into the target when done. */
export interface ScratchFile {
  /** A local path SQLite can write to. */
  readonly path: string;
  /** Moves the file into the target under `name` (atomically) and removes the local one. */
  publish(name: string): Promise<{ sizeBytes: number; sha256: string }>;
  /** Removes the local file (and SQLite's side files), if still there. */
  discard(): Promise<void>;
}

/**
 * Where backups are written and read back: a folder, or an S3 bucket and prefix. Names are paths
 * inside the backup ("backup.json", "blobs.manifest.jsonl"); blobs live under blobs/sha256/ab/cd/.
 */
export interface BackupTarget {
  /** The target as named (a folder's absolute path, s3://bucket/prefix), for messages. */
  readonly location: string;
  /**
   * Proves the target writable: writes and removes a small probe. Throws one line that says what is
   * wrong and what to do (no such bucket, access denied, a file where a folder should be).
   */
  probe(): Promise<void>;
  /** A file's bytes, or null when there is no such file. */
  read(name: string): Promise<ReadableStream<Uint8Array> | null>;
  /** Writes a whole file: a reader sees the old one, or the new one once it is complete. */
  write(name: string, body: ReadableStream<Uint8Array> | Uint8Array): Promise<void>;
  /** Removes a file; nothing when there is none. */
  remove(name: string): Promise<void>;
  scratchFile(): Promise<ScratchFile>;
  /** The blob files the target holds, by sha256 ascending. */
  blobs(): AsyncIterable<{ sha256: string; sizeBytes: number }>;
  readBlob(sha256: string): Promise<ReadableStream<Uint8Array> | null>;
  /** Writes one blob file whole (streamed, never held in memory). */
  writeBlob(sha256: string, body: ReadableStream<Uint8Array>, sizeBytes: number): Promise<void>;
  removeBlob(sha256: string): Promise<void>;
  close(): Promise<void>;
}

export interface BackupOptions {
  /** The live database. */
  repo: ArtifactRepository;
  /** The caller has proven it writable (target.probe()) before opening anything. */
  target: BackupTarget;
  hash: HashFactory;
  /** Opens a database file (the online backup, before it is published) to read its blob rows. */
  openSnapshot(path: string): ArtifactRepository;
  blobDriver: string;
  /** The fs driver's blob store: its blobs are copied into the backup, skipping those already there. */
  blobs?: BlobStore;
  /** Blob copies at once (default 4). */
  concurrency?: number;
  now?: () => number;
  onProgress?: (phase: 'manifest' | 'blobs', done: number) => void;
}

export interface BackupReport {
  location: string;
  info: BackupInfo;
  /** Blob files copied into the backup, and those it already had (fs driver). */
  copied: number;
  copiedBytes: number;
  present: number;
  /** Blob files of an earlier backup the database no longer records, removed from the target. */
  removed: number;
  /** Recorded blobs that were not in the blob store (the first 100): fsck on the service tells more. */
  missing: string[];
}

const PAGE = 500;
const KEEP_NAMES = 100;

/**
 * A consistent backup while the service runs: SQLite's online backup of the live database into a
 * scratch file; the manifest of the blobs that backup records (read from the backup itself, so it
 * lists exactly what a restore needs); on the fs driver the blob files, copied unless the target
 * holds them already (a merge of the sorted manifest with the target's sorted listing, in bounded
 * memory), and those it holds that are no longer recorded removed; then the database is published
 * and backup.json written last.
 */
export async function backup(o: BackupOptions): Promise<BackupReport> {
  const { target } = o;
  if (!o.repo.backupTo) throw new Error('This database cannot make an online backup.');
  const now = o.now ?? Date.now;
  const progress = o.onProgress ?? (() => {});

  // From here on the target holds no complete backup until the new backup.json is written.
  await target.remove(BACKUP_FILES.info);
  const scratch = await target.scratchFile();
  try {
    const takenAt = new Date(now()).toISOString();
    await o.repo.backupTo(scratch.path);
    const snapshot = o.openSnapshot(scratch.path);
    let manifest: BackupInfo['manifest'];
    let copy: BlobCopy = { copied: 0, copiedBytes: 0, present: 0, removed: 0, missing: 0, missingNames: [] };
    try {
      manifest = await writeManifest(snapshot, target, o.hash, now, progress);
      if (o.blobs) copy = await copyBlobs(snapshot, o.blobs, target, now, o.concurrency ?? 4, progress);
    } finally {
      await snapshot.close();
    }
    const database = await scratch.publish(BACKUP_FILES.database);
    const info: BackupInfo = {
      format: 'artifact-store-backup',
      version: 1,
      takenAt,
      blobDriver: o.blobDriver,
      holdsBlobs: Boolean(o.blobs),
      database: { name: BACKUP_FILES.database, ...database },
      manifest,
      missing: copy.missing,
    };
    await target.write(BACKUP_FILES.info, new TextEncoder().encode(`${JSON.stringify(info, null, 2)}\n`));
    return {
      location: target.location,
      info,
      copied: copy.copied,
      copiedBytes: copy.copiedBytes,
      present: copy.present,
      removed: copy.removed,
      missing: copy.missingNames,
    };
  } finally {
    await scratch.discard();
  }
}

/** The blob rows a backup carries: every row but a put's pin that has no bytes yet. */
async function* manifestRows(repo: ArtifactRepository, now: () => number) {
  for (let after = ''; ; ) {
    const rows = await repo.blobRows(after, PAGE, now());
    if (rows.length === 0) return;
    after = rows.at(-1)!.sha256;
    yield rows.filter((row) => !(row.artifacts === 0 && row.sizeBytes === 0));
  }
}

async function writeManifest(
  snapshot: ArtifactRepository,
  target: BackupTarget,
  hash: HashFactory,
  now: () => number,
  progress: (phase: 'manifest', done: number) => void,
): Promise<BackupInfo['manifest']> {
  const hasher = hash();
  const encoder = new TextEncoder();
  let blobs = 0;
  let blobBytes = 0;
  let sizeBytes = 0;
  const pages = manifestRows(snapshot, now);
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        const next = await pages.next();
        if (next.done) return controller.close();
        if (next.value.length === 0) continue;
        let text = '';
        for (const row of next.value) {
          text += `${JSON.stringify({ sha256: row.sha256, sizeBytes: row.sizeBytes })}\n`;
          blobs++;
          blobBytes += row.sizeBytes;
        }
        const chunk = encoder.encode(text);
        hasher.update(chunk);
        sizeBytes += chunk.byteLength;
        progress('manifest', blobs);
        return controller.enqueue(chunk);
      }
    },
    async cancel() {
      await pages.return(undefined);
    },
  });
  await target.write(BACKUP_FILES.manifest, body);
  return { name: BACKUP_FILES.manifest, sizeBytes, sha256: await hasher.digest(), blobs, blobBytes };
}

interface BlobCopy {
  copied: number;
  copiedBytes: number;
  present: number;
  removed: number;
  missing: number;
  missingNames: string[];
}

/**
 * Walks the snapshot's rows and the target's blob listing side by side (both by sha256): a row the
 * target lacks (or holds at another size) is copied, a listed blob no row names is removed.
 */
async function copyBlobs(
  snapshot: ArtifactRepository,
  from: BlobStore,
  target: BackupTarget,
  now: () => number,
  concurrency: number,
  progress: (phase: 'blobs', done: number) => void,
): Promise<BlobCopy> {
  const result: BlobCopy = { copied: 0, copiedBytes: 0, present: 0, removed: 0, missing: 0, missingNames: [] };
  const pool = createPool(concurrency);
  const listing = target.blobs()[Symbol.asyncIterator]();
  let listed = await listing.next();
  let done = 0;
  try {
    for await (const rows of manifestRows(snapshot, now)) {
      for (const row of rows) {
        while (!listed.done && listed.value.sha256 < row.sha256) {
          const extra = listed.value.sha256;
          await pool.run(async () => {
            await target.removeBlob(extra);
            result.removed++;
          });
          listed = await listing.next();
        }
        let present = false;
        if (!listed.done && listed.value.sha256 === row.sha256) {
          present = listed.value.sizeBytes === row.sizeBytes;
          listed = await listing.next();
        }
        if (present) {
          result.present++;
        } else {
          await pool.run(async () => {
            const body = await from.get(row.sha256);
            if (!body) {
              result.missing++;
              if (result.missingNames.length < KEEP_NAMES) result.missingNames.push(row.sha256);
              return;
            }
            await target.writeBlob(row.sha256, body, row.sizeBytes);
            result.copied++;
            result.copiedBytes += row.sizeBytes;
          });
        }
        progress('blobs', ++done);
      }
    }
    while (!listed.done) {
      const extra = listed.value.sha256;
      await pool.run(async () => {
        await target.removeBlob(extra);
        result.removed++;
      });
      listed = await listing.next();
    }
    await pool.drain();
  } catch (err) {
    await pool.drain().catch(() => {});
    await listing.return?.(undefined);
    throw err;
  }
  return result;
}

/** Runs at most `size` tasks at once; the first failure is thrown by the next run() or drain(). */
function createPool(size: number) {
  const running = new Set<Promise<void>>();
  let failure: { err: unknown } | undefined;
  const check = () => {
    if (failure) throw failure.err;
  };
  return {
    async run(task: () => Promise<void>) {
      check();
      while (running.size >= Math.max(1, size)) await Promise.race(running);
      check();
      const p: Promise<void> = task()
        .catch((err) => {
          failure ??= { err };
        })
        .finally(() => running.delete(p));
      running.add(p);
    },
    async drain() {
      await Promise.all(running);
      check();
    },
  };
}
