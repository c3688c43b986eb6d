/**
 * Log lines gathered and written once per turn of the event loop: writes to a pipe or file are
 * synchronous on Linux, and one write per request line cost a quarter of a small GET. Lines still
 * leave within the turn they were logged in, and everything pending is written before the process
 * exits.
 */
export function batchedLines(writeChunk: (chunk: string) => void, maxPending = 1000): (line: string) => void {
  let pending: string[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    const chunk = `${pending.join('\n')}\n`;
    pending = [];
    flushOnExit.delete(flush);
    writeChunk(chunk);
  };
  return (line) => {
    flushBeforeExit(flush);
    if (pending.push(line) === 1) setImmediate(flush);
    else if (pending.length >= maxPending) flush();
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
