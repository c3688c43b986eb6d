import { errors } from '../core/errors.js';
import type { HashFactory } from '../core/hash.js';
import type { BlobPutOptions } from './blob-store.js';

/**
 * Reads a body chunk by chunk, hashing and counting as it goes, and hands batches of about
 * `batchBytes` to `write`. The next batch is read and hashed while the previous write is in flight.
 * Throws payload_too_large the moment the limit is passed (nothing is buffered past one batch), and
 * checksum_mismatch at the end. The caller cleans up its staging on any throw.
 */
export async function ingest(
  body: ReadableStream<Uint8Array>,
  hash: HashFactory,
  options: BlobPutOptions,
  write: (chunks: Uint8Array[]) => Promise<void>,
  batchBytes = 1 << 20,
): Promise<{ sha256: string; sizeBytes: number }> {
  const hasher = hash();
  const reader = body.getReader();
  const max = options.maxBytes ?? Number.POSITIVE_INFINITY;
  let size = 0;
  let batch: Uint8Array[] = [];
  let batchSize = 0;
  let pending: Promise<void> = Promise.resolve();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (value.byteLength === 0) continue;
      size += value.byteLength;
      if (size > max) throw errors.payloadTooLarge(max);
      hasher.update(value);
      batch.push(value);
      batchSize += value.byteLength;
      if (batchSize >= batchBytes) {
        await pending;
        pending = write(batch);
        // Handled from here on: a failed write surfaces at the next `await pending`, never as an
        // unhandled rejection while the next batch is still being read.
        pending.catch(() => {});
        batch = [];
        batchSize = 0;
      }
    }
    await pending;
    if (batch.length > 0) await write(batch);
  } catch (err) {
    await pending.catch(() => {});
    await reader.cancel(err).catch(() => {});
    throw err;
  } finally {
    reader.releaseLock();
  }
  const sha256 = await hasher.digest();
  if (options.expectedSha256 && options.expectedSha256 !== sha256)
    throw errors.checksumMismatch(options.expectedSha256, sha256);
  return { sha256, sizeBytes: size };
}

/** A staged direct upload whose size is not the declared one (`got` is a count, or 'more'). */
export const uploadSizeMismatch = (declared: number, got: string) =>
  errors.badRequest(
    `The uploaded object is not the declared ${declared} bytes (got ${got}). Nothing was stored; start a new upload.`,
  );
