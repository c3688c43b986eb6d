import { createWriteStream } from 'node:fs';
import { copyFile, mkdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ArtifactRepository } from '../db/repository.js';

export interface BackupReport {
  dir: string;
  database: string;
  manifest: string;
  blobs: number;
  blobBytes: number;
  /** Blob files copied (with copyBlobsFrom), skipping those the backup already had. */
  copied: number;
  /** Blobs recorded but not in the folder (collected or lost since): fsck on a restore reports them. */
  missing: string[];
}

/**
 * A consistent backup: the SQLite online backup (taken while the service runs) and a manifest of
 * every blob that database records (`{"sha256","sizeBytes"}` per line). With `copyBlobsFrom` (the fs
 * driver's folder) the blob files are copied too, incrementally; on S3 the bucket is the blob
 * backup (versioning or replication), and the manifest says what it must hold.
 */
export async function backup(repo: ArtifactRepository, dir: string, copyBlobsFrom?: string): Promise<BackupReport> {
  if (!repo.backupTo) throw new Error('This database cannot make an online backup.');
  await mkdir(dir, { recursive: true });
  const database = join(dir, 'artifacts.db');
  await repo.backupTo(database);
  // The manifest is read from the backup's point in time onwards: rows added since are in it too,
  // which only makes it a superset of what the backup needs.
  const manifest = join(dir, 'blobs.manifest.jsonl');
  const out = createWriteStream(manifest);
  let count = 0;
  let bytes = 0;
  let copied = 0;
  const missing: string[] = [];
  try {
    for (let after = ''; ; ) {
      const rows = await repo.blobRows(after, 500, Date.now());
      if (rows.length === 0) break;
      for (const row of rows) {
        after = row.sha256;
        if (row.artifacts === 0 && row.sizeBytes === 0) continue; // a put's pin, no bytes yet
        if (!out.write(`${JSON.stringify({ sha256: row.sha256, sizeBytes: row.sizeBytes })}\n`))
          await new Promise<void>((r) => out.once('drain', () => r()));
        count++;
        bytes += row.sizeBytes;
        if (copyBlobsFrom) {
          const result = await copyBlob(copyBlobsFrom, join(dir, 'blobs'), row.sha256);
          if (result === 'copied') copied++;
          if (result === 'missing') missing.push(row.sha256);
        }
      }
    }
  } finally {
    await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  }
  return { dir, database, manifest, blobs: count, blobBytes: bytes, copied, missing };
}

/** Copies one fs blob into the same layout under `to`, unless it is there already. */
async function copyBlob(from: string, to: string, sha256: string): Promise<'copied' | 'present' | 'missing'> {
  const rel = join('sha256', sha256.slice(0, 2), sha256.slice(2, 4), sha256);
  const dest = join(to, rel);
  if (
    await stat(dest).then(
      () => true,
      () => false,
    )
  )
    return 'present';
  await mkdir(join(dest, '..'), { recursive: true });
  try {
    await copyFile(join(from, rel), dest);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw err;
  }
  return 'copied';
}
