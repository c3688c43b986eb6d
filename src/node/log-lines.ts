/**
 * Log lines gathered and written in batches: writes to a pipe or file are synchronous on Linux, and
 * one write per request line cost a quarter of a small GET; one write per event-loop turn still
 * cost a tenth. A batch is written when it reaches `maxBytes` or `maxDelayMs` after its first line,
 * whichever comes first, so a busy service makes a few hundred writes a second and a quiet one
 * shows a line within `maxDelayMs`. Everything pending is written before the process exits
 * (process.exit, an uncaught exception); a SIGKILL loses at most one batch.
 */
export interface BatchOptions {
  /** Write once this many bytes (UTF-16 units, near enough) are waiting. Default 64 KiB. */
  maxBytes?: number;
  /** Write at the latest this long after the batch's first line. Default 50 ms; 0 = at the end of the turn. */
  maxDelayMs?: number;
}

export function batchedLines(
  writeChunk: (chunk: string) => void,
  { maxBytes = 64 * 1024, maxDelayMs = 50 }: BatchOptions = {},
): (line: string) => void {
  let pending = '';
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (pending === '') return;
    const chunk = pending;
    pending = '';
    flushOnExit.delete(flush);
    writeChunk(chunk);
  };
  return (line) => {
    const first = pending === '';
    pending += `${line}\n`;
    if (pending.length >= maxBytes) return flush();
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
/** The exit handler is added by the first line logged, not by importing this module. */
function flushBeforeExit(flush: () => void): void {
  flushOnExit.add(flush);
  if (exitHooked) return;
  exitHooked = true;
  process.on('exit', () => {
    for (const f of flushOnExit) f();
  });
}
