/** The service's logger on Node: JSON lines (createJsonLogger) written in batches (batchedLines). */
import { openSync, writeSync } from 'node:fs';
import { createJsonLogger, type Logger, type LogLevel, silentLogger } from '../http/logger.js';
import { batchedLines } from './log-lines.js';

/**
 * Logs at `level` and above to stdout or a file (appended to). Writes are synchronous and batched:
 * see batchedLines.
 */
export function createServiceLogger(level: LogLevel, destination: 'stdout' | string = 'stdout'): Logger {
  if (level === 'silent') return silentLogger;
  let write: (chunk: Uint8Array) => void;
  // A copy for stdout: a stream may keep the chunk after write() returns (a TTY, or any stdout
  // elsewhere than Linux), and the batch's buffer is reused.
  if (destination === 'stdout') write = (chunk) => process.stdout.write(Buffer.from(chunk));
  else {
    const fd = openSync(destination, 'a');
    write = (chunk) => writeSync(fd, chunk);
  }
  return createJsonLogger(level, batchedLines(write));
}
