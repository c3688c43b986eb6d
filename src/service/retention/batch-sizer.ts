/**
 * How many rows a retention transaction takes: a fixed number, or one that follows how long each
 * full batch took (see RetentionDeps.batchSize).
 */

/** The longest a retention transaction should hold the write lock (and, on SQLite, the event loop). */
export const BATCH_TARGET_MS = 50;
/** Rows per transaction where batches are fixed and no size is given, and the first of those that follow their time. */
export const DEFAULT_BATCH = 500;
const MIN_BATCH = 100;
const MAX_BATCH = 10_000;

export interface BatchSizer {
  /** Rows for the next transaction. */
  readonly size: number;
  /** Tells how long the last transaction took (`ms`) and how many rows it found. */
  took(ms: number, rows: number): void;
}

/**
 * `fixed` rows every time when given; otherwise DEFAULT_BATCH to start, doubled after a full batch
 * that took under half of `targetMs`, halved after one that took longer, within 100-10,000 rows.
 */
export function createBatchSizer(fixed: number | undefined, targetMs: number): BatchSizer {
  let size = Math.max(1, fixed ?? DEFAULT_BATCH);
  return {
    get size() {
      return size;
    },
    took(ms, rows) {
      // A short batch (the last one) says little about the next.
      if (fixed !== undefined || rows < size) return;
      if (ms < targetMs / 2) size = Math.min(MAX_BATCH, size * 2);
      else if (ms > targetMs) size = Math.max(MIN_BATCH, Math.floor(size / 2));
    },
  };
}
