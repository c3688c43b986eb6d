import type { BlobStore } from '../blob/blob-store.js';
import type { HashFactory } from '../core/hash.js';
import type { ArtifactRepository } from '../db/repository.js';

export interface FsckOptions {
  repo: ArtifactRepository;
  blobs: BlobStore;
  /** Streaming sha256, for --verify. */
  hash: HashFactory;
  /** Re-hash every blob's bytes (slow: reads everything). */
  verify?: boolean;
  /** Fix what is safely fixable: orphan bytes past the grace period, rows of unheld blobs whose bytes are gone. */
  repair?: boolean;
  /** Bytes without a row younger than this are left alone (a put may be between its two commits). */
  graceMs: number;
  now?: () => number;
  onProgress?: (checked: number) => void;
}

export type FsckProblem =
  /** Artifacts point at bytes that are not in the blob store. Not fixable here: the bytes are lost. */
  | { kind: 'missing_bytes'; sha256: string; artifacts: { tenantId: string; id: string }[] }
  /** The stored bytes no longer hash to their name (--verify). Not fixable here. */
  | { kind: 'corrupt_bytes'; sha256: string; actual: string; artifacts: { tenantId: string; id: string }[] }
  /** The stored size differs from the recorded one. */
  | { kind: 'size_mismatch'; sha256: string; recorded: number; stored: number }
  /** Bytes in the blob store with no row: left by a crash. Repair deletes them after the grace period. */
  | { kind: 'orphan_bytes'; sha256: string; sizeBytes: number; repaired: boolean }
  /** A row no artifact holds whose bytes are gone. Repair deletes the row. */
  | { kind: 'stale_row'; sha256: string; repaired: boolean };

export interface FsckReport {
  checkedRows: number;
  checkedBlobs: number;
  problems: FsckProblem[];
  /** Problems left after repair. */
  unresolved: number;
}

/**
 * Cross-checks the database and the blob store: rows whose bytes are missing, bytes without rows,
 * and (with verify) bytes that no longer match their sha256. With repair, removes what nothing
 * needs; it never deletes anything an artifact holds or a put has pinned.
 */
export async function fsck(o: FsckOptions): Promise<FsckReport> {
  const now = o.now ?? Date.now;
  const problems: FsckProblem[] = [];
  const progress = o.onProgress ?? (() => {});
  let checkedRows = 0;

  // 1. Every row: are its bytes there, the right size, the right hash?
  for (let after = ''; ; ) {
    const rows = await o.repo.blobRows(after, 500, now());
    if (rows.length === 0) break;
    for (const row of rows) {
      after = row.sha256;
      checkedRows++;
      const stat = await o.blobs.stat(row.sha256);
      if (!stat) {
        if (row.artifacts > 0) {
          problems.push({
            kind: 'missing_bytes',
            sha256: row.sha256,
            artifacts: await o.repo.artifactsOfBlob(row.sha256, 20),
          });
        } else if (!row.pinned) {
          // A pinned row without bytes is a put between pin and commit: not a problem.
          const repaired = o.repair ? await o.repo.deleteIdleBlobRow(row.sha256, now()) : false;
          problems.push({ kind: 'stale_row', sha256: row.sha256, repaired });
        }
        continue;
      }
      // Size 0 is a pin not yet completed by its put (the size is written at the metadata commit).
      if (row.sizeBytes > 0 && stat.sizeBytes !== row.sizeBytes)
        problems.push({ kind: 'size_mismatch', sha256: row.sha256, recorded: row.sizeBytes, stored: stat.sizeBytes });
      if (o.verify) {
        const actual = await hashOf(o.blobs, o.hash, row.sha256);
        if (actual !== null && actual !== row.sha256)
          problems.push({
            kind: 'corrupt_bytes',
            sha256: row.sha256,
            actual,
            artifacts: await o.repo.artifactsOfBlob(row.sha256, 20),
          });
      }
      progress(checkedRows);
    }
  }

  // 2. Every blob in the store: does it have a row?
  let checkedBlobs = 0;
  if (o.blobs.list) {
    let pending: { sha256: string; sizeBytes: number; modifiedAt: number }[] = [];
    const flush = async () => {
      const known = await o.repo.knownBlobs(pending.map((b) => b.sha256));
      for (const b of pending) {
        if (known.has(b.sha256)) continue;
        const old = b.modifiedAt < now() - o.graceMs;
        const repaired = o.repair && old ? await o.blobs.delete(b.sha256) : false;
        problems.push({ kind: 'orphan_bytes', sha256: b.sha256, sizeBytes: b.sizeBytes, repaired });
      }
      pending = [];
    };
    for await (const b of o.blobs.list()) {
      checkedBlobs++;
      pending.push(b);
      if (pending.length >= 500) await flush();
    }
    await flush();
  }

  const unresolved = problems.filter((p) => !('repaired' in p) || !p.repaired).length;
  return { checkedRows, checkedBlobs, problems, unresolved };
}

async function hashOf(blobs: BlobStore, hash: HashFactory, sha256: string): Promise<string | null> {
  const body = await blobs.get(sha256);
  if (!body) return null;
  const hasher = hash();
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    hasher.update(value);
  }
  return hasher.digest();
}
