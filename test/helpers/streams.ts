/** Stream and byte helpers for tests. */
import { createHash } from 'node:crypto';
import { concatBytes } from '../../src/core/bytes.js';

const KiB = 1024;

export function sha256Of(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** A pull-based stream over `bytes`, cut into views (not copies) of `chunkSize` bytes. */
export function bytesStream(bytes: Uint8Array, chunkSize = 64 * KiB): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (offset >= bytes.byteLength) {
          controller.close();
          return;
        }
        controller.enqueue(bytes.subarray(offset, offset + chunkSize));
        offset += chunkSize;
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * A stream that pulls from an (async) iterator one chunk per read request and returns the iterator
 * when the stream is cancelled, so a test can see whether the consumer stopped pulling.
 */
export function iteratorStream(iterator: AsyncIterator<Uint8Array> | Iterator<Uint8Array>): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await iterator.next();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      async cancel() {
        await iterator.return?.();
      },
    },
    { highWaterMark: 0 },
  );
}

/** Emits `chunks`, then errors the stream instead of closing it. */
export function failingStream(chunks: Uint8Array[], error: Error): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (i < chunks.length) controller.enqueue(chunks[i++]!);
        else controller.error(error);
      },
    },
    { highWaterMark: 0 },
  );
}

export async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
  }
  return parts.length === 1 ? parts[0]!.slice() : concatBytes(parts);
}

/** Hashes a stream without holding it in memory. */
export async function hashStream(stream: ReadableStream<Uint8Array>): Promise<{ sha256: string; sizeBytes: number }> {
  const h = createHash('sha256');
  let sizeBytes = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    h.update(value);
    sizeBytes += value.byteLength;
  }
  return { sha256: h.digest('hex'), sizeBytes };
}

/** Lets pending I/O callbacks and timers run (a few event-loop turns). */
export async function settle(turns = 10): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((r) => setTimeout(r, 1));
}
