import { randomUUID } from 'node:crypto';
import { closeSync, openSync, readSync } from 'node:fs';
import { copyFile, mkdir, open, readdir, rename, rm, stat, unlink } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { errors } from '../core/errors.js';
import type { HashFactory } from '../core/hash.js';
import { SHA256_PATTERN } from '../core/ids.js';
import type { ByteRange } from '../core/schemas.js';
import type { BlobInfo, BlobPutOptions, BlobStore } from './blob-store.js';
import { ingest } from './ingest.js';
import { nodeSha256 } from './node-hash.js';
import { fileRangeStream } from './node-body.js';

export interface FsBlobStoreOptions {
  /** Root folder; blobs live in {root}/sha256/ab/cd/{hex}, uploads in flight in {root}/tmp. */
  root: string;
  hash?: HashFactory;
  /** fsync file and folder before a blob counts as committed (default true). */
  fsync?: boolean;
  /** Descriptors kept open for small reads (default 256, at least 1). */
  maxOpenFiles?: number;
}

/** The embedded default: local files, written to a temp file, fsynced, renamed into sharded folders. */
export function createFsBlobStore(options: FsBlobStoreOptions): BlobStore {
  const root = options.root;
  const hash = options.hash ?? nodeSha256;
  const doSync = options.fsync ?? true;
  const tmpDir = join(root, 'tmp');
  const blobPath = (sha: string) => join(root, 'sha256', sha.slice(0, 2), sha.slice(2, 4), sha);
  let tmpReady: Promise<unknown> | undefined;
  const descriptors = createDescriptorCache(blobPath, Math.max(1, options.maxOpenFiles ?? 256));

  const check = (sha: string) => SHA256_PATTERN.test(sha);
  /** The blob's file open for reading; null for a malformed hash or a blob that is not there. */
  const openBlob = async (sha256: string): Promise<FileHandle | null> => {
    if (!check(sha256)) return null;
    try {
      return await open(blobPath(sha256), 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  };

  /** Moves a durable file into place as a blob (rename over an existing blob is harmless: same bytes). */
  const place = async (file: string, sha256: string) => {
    const final = blobPath(sha256);
    const dir = join(final, '..');
    const firstCreated = await mkdir(dir, { recursive: true });
    await rename(file, final);
    if (doSync) {
      // The new entry, and every folder created for it, must reach the disk before the metadata
      // row that points at it: fsync the blob's folder and each newly created folder's parent.
      await syncDir(dir);
      if (firstCreated) {
        for (let d = dir; d.length >= firstCreated.length; d = dirname(d)) await syncDir(dirname(d));
      }
    }
  };

  return {
    driver: 'fs',

    async adoptFile(path: string, blob: BlobInfo, beforeCommit?: BlobPutOptions['beforeCommit']) {
      if (!check(blob.sha256)) throw errors.badRequest(`Not a sha256: ${JSON.stringify(blob.sha256)}.`);
      const size = (await stat(path)).size;
      if (size !== blob.sizeBytes)
        throw errors.badRequest(`The file to adopt holds ${size} bytes, not the ${blob.sizeBytes} declared.`);
      await beforeCommit?.({ sha256: blob.sha256 });
      try {
        await place(path, blob.sha256);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
        // Another filesystem than the blobs' (ARTIFACT_STORE_BLOB_DIR elsewhere): copy, then rename.
        tmpReady ??= mkdir(tmpDir, { recursive: true });
        await tmpReady;
        const tmp = join(tmpDir, `${randomUUID()}.part`);
        try {
          await copyFile(path, tmp);
          if (doSync) {
            const copy = await open(tmp, 'r+');
            await copy.sync().finally(() => copy.close());
          }
          await place(tmp, blob.sha256);
        } catch (copyErr) {
          await rm(tmp, { force: true }).catch(() => {});
          throw copyErr;
        }
        await unlink(path);
      }
      return { sha256: blob.sha256, sizeBytes: blob.sizeBytes };
    },

    async put(body: ReadableStream<Uint8Array>, putOptions: BlobPutOptions = {}): Promise<BlobInfo> {
      tmpReady ??= mkdir(tmpDir, { recursive: true });
      await tmpReady;
      const tmp = join(tmpDir, `${randomUUID()}.part`);
      let fh: FileHandle | undefined = await open(tmp, 'wx');
      try {
        const handle = fh;
        const info = await ingest(body, hash, putOptions, async (chunks) => {
          await handle.writev(chunks);
        });
        if (doSync) await fh.sync();
        await fh.close();
        fh = undefined;
        await putOptions.beforeCommit?.({ sha256: info.sha256 });
        await place(tmp, info.sha256);
        return { sha256: info.sha256, sizeBytes: info.sizeBytes };
      } catch (err) {
        if (fh) await fh.close().catch(() => {});
        await rm(tmp, { force: true }).catch(() => {});
        throw err;
      }
    },

    async get(sha256: string, range?: ByteRange) {
      const fh = await openBlob(sha256);
      if (!fh) return null;
      let end: number;
      try {
        end = range ? range.end + 1 : (await fh.stat()).size;
      } catch (err) {
        await fh.close();
        throw err;
      }
      return fileRangeStream(
        {
          read: async (target, position) => (await fh.read(target, 0, target.byteLength, position)).bytesRead,
          close: () => fh.close(),
        },
        range?.start ?? 0,
        end,
      );
    },

    async openReader(sha256: string) {
      const fh = await openBlob(sha256);
      if (!fh) return null;
      return {
        async read(target: Uint8Array, position: number) {
          return (await fh.read(target, 0, target.byteLength, position)).bytesRead;
        },
        close: () => fh.close(),
      };
    },

    // Small reads are one synchronous pread on a kept descriptor: from the page cache that takes a
    // microsecond or two, far less than one thread-pool round trip of an async read. Only the HTTP
    // layer's small bodies (≤ 64 KiB) come here; everything larger streams asynchronously.
    async readSmall(sha256: string, range: ByteRange) {
      if (!check(sha256)) return null;
      const fd = descriptors.get(sha256);
      if (fd === null) return null;
      const length = range.end - range.start + 1;
      const buf = Buffer.allocUnsafe(length);
      let done = 0;
      while (done < length) {
        const n = readSync(fd, buf, done, length - done, range.start + done);
        if (n === 0) break;
        done += n;
      }
      return new Uint8Array(buf.buffer, buf.byteOffset, done);
    },

    async stat(sha256: string) {
      if (!check(sha256)) return null;
      try {
        const s = await stat(blobPath(sha256));
        return { sha256, sizeBytes: s.size };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw err;
      }
    },

    async sweepStaging(before: number) {
      let names: string[];
      try {
        names = await readdir(tmpDir);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { removed: 0, bytes: 0 };
        throw err;
      }
      let removed = 0;
      let bytes = 0;
      for (const name of names) {
        if (!name.endsWith('.part')) continue;
        const path = join(tmpDir, name);
        try {
          const st = await stat(path);
          // A put in progress writes to its file all the time: only one silent for the grace period goes.
          if (st.mtimeMs >= before) continue;
          await unlink(path);
          removed++;
          bytes += st.size;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
        }
      }
      return { removed, bytes };
    },

    async exists(sha256: string) {
      return (await this.stat(sha256)) !== null;
    },

    async *list() {
      const top = join(root, 'sha256');
      const names = async (dir: string) =>
        (
          await readdir(dir).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? [] : Promise.reject(err)))
        ).sort();
      for (const a of await names(top)) {
        for (const b of await names(join(top, a))) {
          for (const name of await names(join(top, a, b))) {
            if (!check(name)) continue;
            const st = await stat(join(top, a, b, name)).catch(() => null);
            if (st?.isFile()) yield { sha256: name, sizeBytes: st.size, modifiedAt: st.mtimeMs };
          }
        }
      }
    },

    async delete(sha256: string) {
      if (!check(sha256)) return false;
      descriptors.forget(sha256);
      try {
        await unlink(blobPath(sha256));
        return true;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
        throw err;
      }
    },

    async close() {
      descriptors.closeAll();
    },
  };
}

/**
 * Read-only descriptors of recently read small blobs, least recently used closed first (like
 * nginx's open_file_cache). A blob is immutable under its hash, so a kept descriptor always reads
 * the right bytes, and a small read costs one pread instead of open + read + close. A blob deleted
 * by another process stays readable through a kept descriptor (same bytes) until it is evicted.
 */
function createDescriptorCache(pathOf: (sha256: string) => string, max: number) {
  const open = new Map<string, number>();
  return {
    /** The descriptor of a blob, or null when the file does not exist. */
    get(sha256: string): number | null {
      const kept = open.get(sha256);
      if (kept !== undefined) {
        // Re-insert: Map order is the recency order.
        open.delete(sha256);
        open.set(sha256, kept);
        return kept;
      }
      let fd: number;
      try {
        fd = openSync(pathOf(sha256), 'r');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
        throw err;
      }
      open.set(sha256, fd);
      if (open.size > max) {
        const [oldest, oldFd] = open.entries().next().value!;
        open.delete(oldest);
        closeSync(oldFd);
      }
      return fd;
    },
    forget(sha256: string): void {
      const fd = open.get(sha256);
      if (fd !== undefined) {
        open.delete(sha256);
        closeSync(fd);
      }
    },
    closeAll(): void {
      for (const fd of open.values()) closeSync(fd);
      open.clear();
    },
  };
}

async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
