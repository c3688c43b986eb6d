/**
 * The drivers under the shared HTTP suite, on Node: SQLite in a temp file and the fs blob store.
 * The workerd project of vitest.config.ts swaps this module for drivers.workerd.ts (D1 and R2), so the
 * same suite runs on both runtimes.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFsBlobStore } from '../../src/blob/fs.js';
import { nodeSha256 } from '../../src/blob/node-hash.js';
import { createSqliteRepository } from '../../src/db/sqlite.js';

export const RUNTIME: 'node' | 'workerd' = 'node';

export async function openTestDrivers(_options: { manualClock?: boolean } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'artifact-store-http-'));
  const blobRoot = join(dir, 'blobs');
  const repo = createSqliteRepository({ path: join(dir, 'artifacts.db') });
  const blobs = createFsBlobStore({ root: blobRoot, hash: nodeSha256, fsync: false });
  return {
    repo,
    blobs,
    /** Stored objects other than directories (committed blobs and leftover uploads). */
    blobFiles: async () => listFiles(blobRoot),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

export function listFiles(root: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(root);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const name of entries) {
    const p = join(root, name);
    if (statSync(p).isDirectory()) out.push(...listFiles(p));
    else out.push(p);
  }
  return out;
}
