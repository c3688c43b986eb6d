/**
 * A blob's bytes written to a Node writable (an http.ServerResponse) without a web stream in between.
 *
 * `BlobStore.get` answers a web ReadableStream, which every runtime reads. The drivers that read
 * through Node (fs, S3 on Node) also attach a writer to the stream they return: the Node server
 * (node/body-writer.ts) finds it and hands the response to it, and the web stream is never read.
 * On fs the writer reads into two buffers that take turns, so a download allocates no memory per
 * read; on S3 it pipes the SDK's response into the client's (as a plain Node proxy does).
 * A stream is read one way or the other, never both: whichever starts first takes the bytes.
 */
import { Readable, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * Writes the bytes to `out` and ends it; resolves when the last byte is handed to it or the client
 * went away (then `out` is destroyed), rejects when the bytes could not be read (`out` destroyed
 * with the error).
 */
export type NodeBodyWriter = (out: Writable) => Promise<void>;

const writers = new WeakMap<ReadableStream<Uint8Array>, NodeBodyWriter>();

/** The writer a driver attached to one of its streams, if any. */
export function nodeWriterOf(stream: ReadableStream<Uint8Array>): NodeBodyWriter | undefined {
  return writers.get(stream);
}

/** Which way a body is read: not yet, through the web stream, or by the Node writer. */
type Taken = 'no' | 'web' | 'node';

/**
 * A web stream over a source that can also be written to a Node writable. Nothing is read until one
 * of the two starts (highWaterMark 0): `pull` reads ahead itself where it wants to.
 */
function dualStream(
  source: UnderlyingDefaultSource<Uint8Array> & { pull: NonNullable<UnderlyingDefaultSource<Uint8Array>['pull']> },
  writeTo: NodeBodyWriter,
  release: () => Promise<void> | void,
): ReadableStream<Uint8Array> {
  let taken: Taken = 'no';
  const stream = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (taken === 'node') throw new Error('This body is already being written to a Node stream.');
        taken = 'web';
        return source.pull(controller);
      },
      cancel(reason) {
        // A stream handed to the Node writer is cancelled by no one but its reader, which it has not.
        if (taken !== 'node') return source.cancel ? source.cancel(reason) : release();
      },
    },
    { highWaterMark: 0 },
  );
  writers.set(stream, (out) => {
    if (taken !== 'no') return Promise.reject(new Error('This body is already being read.'));
    taken = 'node';
    return writeTo(out);
  });
  return stream;
}

/** The chunk size of file reads (1 MiB: 2.5x faster downloads than the 64 KiB default). */
export const FILE_READ_CHUNK = 1 << 20;

/** What the fs driver reads from: an open file (closed once, after the last read or on cancel). */
export interface FileRangeSource {
  read(target: Uint8Array, position: number): Promise<number>;
  close(): Promise<void>;
}

/**
 * Bytes [start, end) of an open file, as a web stream (a new 1 MiB buffer per read, the next read
 * in flight while the consumer has the last) with a Node writer attached (two buffers reused, so a
 * download of any size allocates 2 MiB).
 */
export function fileRangeStream(file: FileRangeSource, start: number, end: number): ReadableStream<Uint8Array> {
  let closed = false;
  const close = async () => {
    if (!closed) {
      closed = true;
      await file.close();
    }
  };
  let position = start;
  /** One read of up to 1 MiB at `position` into a new buffer; null at the end. */
  const readChunk = async (): Promise<Uint8Array | null> => {
    const want = Math.min(FILE_READ_CHUNK, end - position);
    if (want <= 0) return null;
    const buf = uninitialized(want);
    const n = await file.read(buf, position);
    if (n === 0) return null;
    position += n;
    return n === want ? buf : buf.subarray(0, n);
  };
  let ahead: Promise<Uint8Array | null> | undefined;
  return dualStream(
    {
      async pull(controller) {
        try {
          const chunk = await (ahead ?? readChunk());
          ahead = undefined;
          if (chunk === null) {
            await close();
            controller.close();
            return;
          }
          // The next read goes while the consumer writes this one (what highWaterMark 1 did).
          ahead = readChunk();
          ahead.catch(() => {});
          controller.enqueue(chunk);
        } catch (err) {
          await close().catch(() => {});
          controller.error(err);
        }
      },
      async cancel() {
        await ahead?.catch(() => {});
        await close();
      },
    },
    (out) => writeFileRange(file, start, end, out).finally(close),
    close,
  );
}

/**
 * Writes bytes [start, end) of `file` to `out` through two reused buffers: one is read into while the
 * other is written; a buffer is read into again only once `out` has called back for its write (the
 * socket no longer holds it).
 */
async function writeFileRange(file: FileRangeSource, start: number, end: number, out: Writable): Promise<void> {
  const size = Math.min(FILE_READ_CHUNK, Math.max(1, end - start));
  const free: Uint8Array[] = [uninitialized(size), uninitialized(size)];
  let waiting: (() => void) | undefined;
  let gone = false;
  const wake = () => {
    const w = waiting;
    waiting = undefined;
    w?.();
  };
  const onClose = () => {
    gone = true;
    wake();
  };
  out.once('close', onClose);
  /** A buffer whose last write has been handed on; waits for one (or for the client to go). */
  const nextFree = async (): Promise<Uint8Array | undefined> => {
    while (free.length === 0 && !gone) await new Promise<void>((ok) => (waiting = ok));
    return gone ? undefined : free.pop();
  };
  try {
    let position = start;
    let next = position < end ? readInto(file, await nextFree(), position, end) : undefined;
    while (next) {
      const chunk = await next;
      if (!chunk) break;
      position += chunk.byteLength;
      const whole = bufferOf(chunk);
      const fits = out.write(chunk, () => {
        free.push(whole);
        wake();
      });
      // The next read is in flight while this write drains.
      next = position < end && !gone ? readInto(file, await nextFree(), position, end) : undefined;
      if (!fits && !gone) await drained(out);
    }
    if (!gone) out.end();
  } catch (err) {
    out.destroy(err as Error);
    throw err;
  } finally {
    out.off('close', onClose);
  }
}

/** New memory that is about to be read into (not zeroed first), as a plain Uint8Array. */
function uninitialized(size: number): Uint8Array {
  const b = Buffer.allocUnsafeSlow(size);
  return new Uint8Array(b.buffer, b.byteOffset, size);
}

/** The whole reused buffer a chunk is a view of. */
const bufferOf = (chunk: Uint8Array) =>
  chunk.byteOffset === 0 && chunk.byteLength === chunk.buffer.byteLength
    ? chunk
    : new Uint8Array(chunk.buffer, 0, chunk.buffer.byteLength);

/** One read into `target` at `position` (up to `end`): the bytes read, or undefined at the end or with no buffer. */
async function readInto(
  file: FileRangeSource,
  target: Uint8Array | undefined,
  position: number,
  end: number,
): Promise<Uint8Array | undefined> {
  if (!target) return undefined;
  const want = Math.min(target.byteLength, end - position);
  const n = await file.read(want === target.byteLength ? target : target.subarray(0, want), position);
  if (n === 0) return undefined;
  return n === target.byteLength ? target : target.subarray(0, n);
}

/** Resolves on 'drain' or when `out` closes. */
function drained(out: Writable): Promise<void> {
  return new Promise((ok) => {
    const done = () => {
      out.off('drain', done);
      out.off('close', done);
      ok();
    };
    out.on('drain', done);
    out.on('close', done);
  });
}

/**
 * A Node readable (the SDK's IncomingMessage) as a web stream that starts reading only when read,
 * with a Node writer that pipes it into the response.
 */
export function nodeReadableStream(body: Readable): ReadableStream<Uint8Array> {
  let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  return dualStream(
    {
      async pull(controller) {
        // Readable.toWeb starts the flow at once, so it is made at the first read.
        reader ??= (Readable.toWeb(body) as ReadableStream<Uint8Array>).getReader();
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      async cancel(reason) {
        if (reader) await reader.cancel(reason);
        else body.destroy();
      },
    },
    async (out) => {
      try {
        await pipeline(body, out);
      } catch (err) {
        // The client went away: not a failure of the read. pipeline has destroyed both sides.
        if ((err as NodeJS.ErrnoException).code === 'ERR_STREAM_PREMATURE_CLOSE' || out.destroyed) return;
        throw err;
      }
    },
    () => {
      body.destroy();
    },
  );
}
