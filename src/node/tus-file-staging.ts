/**
 * Node's staging of resumable (tus) uploads: one file per upload in a folder of the data dir, written
 * at the acknowledged offset and fsynced before an append resolves, with each upload's running sha256
 * kept in this process. node:crypto's hash state cannot be saved, but it can be copied: an append
 * that fails takes the hash back to where it was, and a process that holds none at the offset asked
 * (after a restart) hashes the file's first bytes again from disk.
 */
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, rm } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { ArtifactError, errors } from '../core/errors.js';
import type { AppendResult, TusStaging } from '../service/tus-staging.js';

export interface TusFileStagingOptions {
  /** The folder of staged files (the data dir's tus/); made on first use. */
  dir: string;
  /** fsync each append before it is acknowledged (default true). */
  fsync?: boolean;
}

/** Bytes gathered before one write: a body's small chunks go to the disk in one writev. */
const BATCH_BYTES = 1 << 20;
/** Reads when hashing a staged file again from disk. */
const REHASH_CHUNK = 4 << 20;

export function createTusFileStaging(options: TusFileStagingOptions): TusStaging {
  const { dir } = options;
  const doSync = options.fsync ?? true;
  const hashes = new Map<string, { offset: number; hash: Hash }>();
  let ready: Promise<unknown> | undefined;
  const fileOf = (id: string) => join(dir, id);

  const gone = (id: string) =>
    new ArtifactError(
      'not_found',
      `The staged bytes of upload ${id} are gone (the upload ended). Start a new one with POST /v1/tus.`,
    );

  /** The running hash of the first `offset` bytes: kept, or made again from the file. */
  async function hashAt(id: string, fh: FileHandle, offset: number): Promise<Hash> {
    const kept = hashes.get(id);
    if (kept && kept.offset === offset) return kept.hash;
    const hash = createHash('sha256');
    const buf = Buffer.allocUnsafe(Math.min(REHASH_CHUNK, Math.max(1, offset)));
    for (let at = 0; at < offset; ) {
      const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, offset - at), at);
      if (bytesRead === 0) throw gone(id);
      hash.update(buf.subarray(0, bytesRead));
      at += bytesRead;
    }
    return hash;
  }

  return {
    async create(id) {
      ready ??= mkdir(dir, { recursive: true, mode: 0o700 });
      await ready;
      const fh = await open(fileOf(id), 'wx', 0o600);
      await fh.close();
      if (doSync) await syncDir(dir);
    },

    async append(id, offset, body, { maxBytes, checksum }): Promise<AppendResult> {
      let fh: FileHandle;
      try {
        fh = await open(fileOf(id), 'r+');
      } catch (err) {
        await body.cancel().catch(() => {});
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw gone(id);
        throw err;
      }
      const reader = body.getReader();
      let written = 0;
      try {
        // Bytes past the acknowledged offset were never acknowledged: a write cut by a crash.
        if ((await fh.stat()).size < offset) throw gone(id);
        await fh.truncate(offset);
        const hash = await hashAt(id, fh, offset);
        // Kept again only once the bytes are durable (or dropped): a failure in between leaves none,
        // and the next append hashes the file again.
        hashes.delete(id);
        const before = hash.copy();
        const check = checksum ? createHash(checksum.algorithm) : undefined;
        /** Drops this body's bytes: the file back to the offset, the hash back to before them. */
        const undo = async () => {
          await fh.truncate(offset);
          if (doSync) await fh.sync();
          hashes.set(id, { offset, hash: before });
        };
        let batch: Buffer[] = [];
        let batchBytes = 0;
        let pending: Promise<unknown> = Promise.resolve();
        let position = offset;
        const flush = async () => {
          await pending;
          const chunks = batch;
          const at = position;
          position += batchBytes;
          batch = [];
          batchBytes = 0;
          pending = writeAll(fh, chunks, at);
          // Handled from here on: a failed write surfaces at the next `await pending`.
          (pending as Promise<unknown>).catch(() => {});
        };
        let interrupted: unknown;
        for (;;) {
          let next: ReadableStreamReadResult<Uint8Array>;
          try {
            next = await reader.read();
          } catch (err) {
            interrupted = err ?? new Error('the request body ended early');
            break;
          }
          if (next.done) break;
          const chunk = next.value;
          if (chunk.byteLength === 0) continue;
          if (written + chunk.byteLength > maxBytes) {
            await pending.catch(() => {});
            await undo();
            throw errors.payloadTooLarge(maxBytes);
          }
          const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
          hash.update(bytes);
          check?.update(bytes);
          batch.push(bytes);
          batchBytes += bytes.byteLength;
          written += bytes.byteLength;
          if (batchBytes >= BATCH_BYTES) await flush();
        }
        if (batchBytes > 0) await flush();
        await pending;
        if (checksum && (interrupted !== undefined || !equalBytes(check!.digest(), checksum.digest))) {
          await undo();
          if (interrupted !== undefined) throw interrupted;
          throw new ArtifactError(
            'checksum_mismatch',
            `This PATCH's bytes do not hash to its Upload-Checksum (${checksum.algorithm}). They were not kept; send them again from the same offset.`,
            { details: { reason: 'upload_checksum', algorithm: checksum.algorithm } },
          );
        }
        if (doSync && written > 0) await fh.sync();
        hashes.set(id, { offset: offset + written, hash });
        return interrupted === undefined ? { written } : { written, interrupted };
      } catch (err) {
        await reader.cancel(err).catch(() => {});
        throw err;
      } finally {
        reader.releaseLock();
        await fh.close().catch(() => {});
      }
    },

    async sha256(id, length) {
      const kept = hashes.get(id);
      if (kept && kept.offset === length) return kept.hash.copy().digest('hex');
      const fh = await open(fileOf(id), 'r').catch((err: NodeJS.ErrnoException) => {
        throw err.code === 'ENOENT' ? gone(id) : err;
      });
      try {
        return (await hashAt(id, fh, length)).digest('hex');
      } finally {
        await fh.close();
      }
    },

    read(id) {
      return Readable.toWeb(createReadStream(fileOf(id), { highWaterMark: 1 << 20 })) as ReadableStream<Uint8Array>;
    },

    fileOf,

    forget(id) {
      hashes.delete(id);
    },

    async discard(id) {
      hashes.delete(id);
      await rm(fileOf(id), { force: true });
    },
  };
}

/** Writes every chunk at `position` on, however many calls the kernel needs. */
async function writeAll(fh: FileHandle, chunks: Buffer[], position: number): Promise<void> {
  let at = position;
  let rest = chunks;
  while (rest.length > 0) {
    const { bytesWritten } = await fh.writev(rest, at);
    at += bytesWritten;
    let skip = bytesWritten;
    let i = 0;
    while (i < rest.length && skip >= rest[i]!.byteLength) skip -= rest[i++]!.byteLength;
    rest = rest.slice(i);
    if (skip > 0 && rest.length > 0) rest[0] = rest[0]!.subarray(skip);
  }
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && a.every((v, i) => v === b[i]);
}

async function syncDir(path: string): Promise<void> {
  const fh = await open(path, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
