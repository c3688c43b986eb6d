/** Web Stream helpers of the HTTP store: a stoppable upload body, and cutting a range out of a whole body. */
import type { ByteRange } from '../core/schemas.js';

export interface StoppableStream {
  stream: ReadableStream<Uint8Array>;
  /** Errors the copy and cancels the source (once the server has answered, or the request failed). */
  stop(reason: unknown): void;
  /** The source's own read error, when that is what ended the upload. */
  sourceFailure(): { error: unknown } | undefined;
}

/** Passes a stream through, pulling only on demand, and can be stopped: errors the copy, cancels the source. */
export function stoppableStream(source: ReadableStream<Uint8Array>): StoppableStream {
  const reader = source.getReader();
  let failure: { error: unknown } | undefined;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let finished = false;
  const stream = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
      },
      async pull(c) {
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch (error) {
          failure = { error };
          throw error;
        }
        const { done, value } = chunk;
        if (done) {
          finished = true;
          c.close();
        } else {
          c.enqueue(value);
        }
      },
      cancel(reason) {
        finished = true;
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
  return {
    stream,
    sourceFailure: () => failure,
    stop(reason) {
      if (finished) return;
      finished = true;
      try {
        controller.error(reason);
      } catch {
        // Already closed or errored.
      }
      reader.cancel(reason).catch(() => {});
    },
  };
}

export function emptyStream(): ReadableStream<Uint8Array> {
  return new ReadableStream({ start: (c) => c.close() });
}

/** Bytes `range.start..range.end` (inclusive) of a whole-body stream. */
export function sliceStream(body: ReadableStream<Uint8Array>, range: ByteRange): ReadableStream<Uint8Array> {
  let offset = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        const from = Math.max(0, range.start - offset);
        const to = Math.min(chunk.byteLength, range.end + 1 - offset);
        offset += chunk.byteLength;
        if (to > from) controller.enqueue(chunk.subarray(from, to));
        if (offset > range.end) controller.terminate();
      },
    }),
  );
}
