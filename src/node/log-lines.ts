/**
 * Log lines gathered and written in batches: writes to a pipe or file are synchronous on Linux, and
 * one write per request line cost a quarter of a small GET; one write per event-loop turn still
 * cost a tenth. A batch is written when it reaches `maxBytes` or `maxDelayMs` after its first line,
 * whichever comes first, so a busy service makes a few hundred writes a second and a quiet one
 * shows a line within `maxDelayMs`. Everything pending is written before the process exits
 * (process.exit, an uncaught exception); a SIGKILL loses at most one batch.
 *
 * Each line is encoded into the batch's buffer (outside V8's heap) as it comes, so no string
 * outlives the request that logged it. A batch kept as a string lived through several
 * young-generation collections, each of which copied it, and then filled the old generation: with
 * the small young generation `npm start` runs with, that was most of what the access log cost.
 */
export interface BatchOptions {
  /** Write once this many bytes are waiting. Default 64 KiB. */
  maxBytes?: number;
  /** Write at the latest this long after the batch's first line. Default 50 ms; 0 = at the end of the turn. */
  maxDelayMs?: number;
}

/**
 * `writeChunk` gets a view of the batch's buffer, valid only until it returns: it writes the bytes
 * synchronously or copies them.
 */
export function batchedLines(
  writeChunk: (chunk: Uint8Array) => void,
  { maxBytes = 64 * 1024, maxDelayMs = 50 }: BatchOptions = {},
): (line: string) => void {
  // Room for one more line of up to maxBytes once fewer than maxBytes wait.
  let batch: Buffer | undefined;
  let used = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (used === 0) return;
    const length = used;
    used = 0;
    forgetBeforeExit(flush);
    writeChunk(batch!.subarray(0, length));
  };
  return (line) => {
    // UTF-8 takes at most 3 bytes per UTF-16 unit; the newline one more.
    if (line.length * 3 + 1 > maxBytes) {
      // Longer than a batch: after what waits, on its own.
      flush();
      writeChunk(Buffer.from(`${line}\n`));
      return;
    }
    const first = used === 0;
    batch ??= Buffer.allocUnsafeSlow(2 * maxBytes);
    used += batch.write(line, used);
    batch[used++] = 0x0a;
    if (used >= maxBytes) return flush();
    if (!first) return;
    flushBeforeExit(flush);
    if (maxDelayMs === 0) setImmediate(flush);
    else {
      timer = setTimeout(flush, maxDelayMs);
      // A batch waiting to be written never keeps the process alive: 'exit' writes it.
      timer.unref();
    }
  };
}

const flushOnExit = new Set<() => void>();
let exitHooked = false;
/**
 * Runs `flush` when the process exits, unless it was forgotten (forgetBeforeExit) by then. Added
 * after the exit began (by a flush that logged), it still runs. The exit handler is added by the first
 * line logged, not by importing this module.
 */
export function flushBeforeExit(flush: () => void): void {
  flushOnExit.add(flush);
  if (exitHooked) return;
  exitHooked = true;
  process.on('exit', () => {
    for (const f of flushOnExit) f();
  });
}
export const forgetBeforeExit = (flush: () => void): boolean => flushOnExit.delete(flush);
