/**
 * What a run does between its transactions: reports progress, then makes way for other work.
 * Repository calls on SQLite finish synchronously, so without a turn of the event loop after each
 * transaction a whole phase would hold the service's requests.
 */

/** The phases that report progress (RetentionDeps.onProgress), by their names in the run's table. */
export type RetentionPhase = 'expire' | 'quotas' | 'artifacts' | 'uploads' | 'blobs' | 'staging';

/** With `busy`: the longest extra wait after a transaction, in multiples of its time, and at least this many ms. */
const YIELD_LIMIT = 3;
const YIELD_MIN_MS = 10;

export interface PacingOptions {
  /** Called as the run moves on, for progress bars. */
  onProgress?: (phase: RetentionPhase, done: number) => void;
  /** After each transaction, wait this many times as long as it took (see RetentionDeps.pause). */
  pause?: number;
  /** Work in the same process that the run makes way for (see RetentionDeps.busy). */
  busy?: () => boolean;
}

export interface Pacer {
  /**
   * After a transaction that held the loop `heldMs`: reports `done` for `phase`, waits `pause` times
   * `heldMs`, then while `busy` says true up to YIELD_LIMIT times `heldMs` (at least YIELD_MIN_MS)
   * more, and always a turn of the event loop.
   */
  after(phase: RetentionPhase, done: number, heldMs?: number): Promise<void>;
  /** A turn of the event loop alone, for phases that report no progress. */
  turn(): Promise<void>;
}

export function createPacer({ onProgress = () => {}, pause = 0, busy }: PacingOptions): Pacer {
  return {
    async after(phase, done, heldMs = 0) {
      onProgress(phase, done);
      const wait = heldMs * pause;
      if (wait >= 1) await sleep(wait);
      if (busy?.()) {
        const until = performance.now() + Math.max(YIELD_MIN_MS, heldMs * YIELD_LIMIT);
        while (busy() && performance.now() < until) await sleep(1);
      }
      // On setImmediate, also after a pause: a checkpoint queued on a timer (db/sqlite/connection.ts)
      // and this batch then run in separate phases of the loop, with requests' I/O between them.
      await nextTurn();
    },
    turn: nextTurn,
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves on the event loop's next turn (setImmediate on Node; a zero timeout where there is none). */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) =>
    typeof setImmediate === 'function' ? setImmediate(resolve) : setTimeout(resolve, 0),
  );
}
