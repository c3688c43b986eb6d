import type { Logger } from '../core/logger.js';
import { errorText } from '../core/logger.js';

/**
 * Reads refresh last-accessed (for LRU) without one write per read: reference ids are collected and
 * written in one UPDATE every `flushMs`. A crash loses at most that window of access times, which
 * only makes eviction slightly less precise. flushMs = 0 writes through on every read.
 */
export function createTouchBatcher(
  write: (ids: number[], at: number) => Promise<void>,
  flushMs: number,
  now: () => number,
  logger: Logger,
) {
  let pending = new Set<number>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let inFlight: Promise<void> = Promise.resolve();

  async function flush(): Promise<void> {
    if (timer) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (pending.size === 0) return inFlight;
    const ids = [...pending];
    pending = new Set();
    inFlight = inFlight
      .then(() => write(ids, now()))
      .catch((err: unknown) => {
        // Access times are advisory: a failed flush (database busy) is dropped, not retried forever.
        logger.warn('last-access times not written; LRU sees these reads as older', {
          refs: ids.length,
          error: errorText(err),
        });
      });
    return inFlight;
  }

  return {
    add(id: number) {
      if (flushMs === 0) {
        pending.add(id);
        void flush();
        return;
      }
      pending.add(id);
      if (!timer) {
        timer = setTimeout(() => void flush(), flushMs);
        (timer as { unref?: () => void }).unref?.();
      }
    },
    flush,
    async close() {
      await flush();
    },
  };
}
