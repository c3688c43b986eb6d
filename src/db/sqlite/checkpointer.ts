/**
 * WAL checkpoints on a thread of their own. A checkpoint copies the pages written since the last one
 * into the database file and fsyncs it: about 50 ms after a batch of retention work, longer on a
 * slow disk. On the thread that serves requests, every request waited that long. Here a worker
 * thread with its own connection to the same file runs them, and the service's thread only posts a
 * message. SQLite lets a checkpoint run beside the writers: they go on appending to the WAL.
 *
 * The worker starts with the first checkpoint (an idle process never pays for it) and
 * leaves IDLE_MS (30 s) after its last one. It costs 9-13 MiB of memory while it lives. Where it cannot
 * start, checkpoints run on the caller's thread as before.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** The worker leaves after this long without a checkpoint (default). */
const IDLE_MS = 30_000;

// CommonJS run by the worker: no file of its own, so it works from src/ under tsx and vitest as from dist/.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.lib);
const db = new Database(workerData.path, { fileMustExist: true });
// As the service's connection: the database file is fsynced before the WAL can be reused.
db.pragma('synchronous = FULL');
db.pragma('wal_autocheckpoint = 0');
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  const began = performance.now();
  try {
    const [row] = db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ ok: true, ms: performance.now() - began, ...row });
  } catch (err) {
    parentPort.postMessage({ ok: false, message: String((err && err.message) || err) });
  }
});
`;

/**
 * Where checkpoints run: a worker thread, for a process that serves requests (off its event loop), or
 * the process's own thread, for a one-shot command (no thread to start: 9-13 MiB less at its peak).
 */
export type CheckpointThread = 'worker' | 'main';

export interface CheckpointResult {
  /** Where it ran: the worker, or the caller's thread when the worker could not start. */
  thread: CheckpointThread;
  /** The worker's thread id (a worker that left and was started again has a new one). */
  workerThreadId?: number;
  ms: number;
  /** SQLite's answer: 1 when another checkpoint held the lock. */
  busy: number;
  /** Frames in the WAL, and how many of them are now in the database file. */
  log: number;
  checkpointed: number;
}

export interface Checkpointer {
  /** Runs one PASSIVE checkpoint; resolves when it is done (it never rejects: an I/O error leaves the pages in the WAL for the next one). */
  checkpoint(): Promise<CheckpointResult | undefined>;
  /** Stops the worker (after its checkpoint in progress) and closes its connection. */
  close(): Promise<void>;
}

/**
 * `onMainThread` runs a checkpoint on the caller's connection: the fallback when the worker cannot
 * start (or `thread: 'main'`). The worker leaves after `idleMs` without a checkpoint.
 */
export function createCheckpointer(
  path: string,
  onMainThread: () => Omit<CheckpointResult, 'thread' | 'ms' | 'workerThreadId'>,
  thread: CheckpointThread = 'worker',
  idleMs = IDLE_MS,
): Checkpointer {
  let worker: Worker | undefined;
  let exited: Promise<void> | undefined;
  let workerFailed = thread === 'main';
  // The checkpoint in progress: the worker it was sent to, and who waits for it.
  let pending: { worker: Worker; resolve: (r: CheckpointResult | undefined) => void } | undefined;
  /** Takes the checkpoint in progress if `w` runs it. */
  const takePending = (w: Worker) => {
    if (pending?.worker !== w) return undefined;
    const { resolve } = pending;
    pending = undefined;
    return resolve;
  };
  let idle: ReturnType<typeof setTimeout> | undefined;
  let closed = false;

  // On the caller's thread, on a turn of its own (a timer: requests get the poll phase between a
  // long run of writes and the checkpoint); unref'd, since closing the connection checkpoints too.
  const runHereLater = () =>
    new Promise<CheckpointResult | undefined>((resolve) => setTimeout(() => resolve(runHere()), 0).unref());
  const runHere = (): CheckpointResult | undefined => {
    const began = performance.now();
    try {
      return { thread: 'main', ...onMainThread(), ms: performance.now() - began };
    } catch {
      return undefined;
    }
  };

  // The worker's idle time counts from the end of its last checkpoint.
  const idleFromNow = () => {
    if (idle) clearTimeout(idle);
    idle = undefined;
    if (closed || !worker) return;
    idle = setTimeout(() => void stop(), idleMs);
    idle.unref();
  };

  const stop = async () => {
    if (idle) clearTimeout(idle);
    idle = undefined;
    const w = worker;
    if (!w) return;
    worker = undefined;
    w.postMessage('close');
    const timer = setTimeout(() => void w.terminate(), 5000);
    await exited;
    clearTimeout(timer);
  };

  const start = (): Worker => {
    const w = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { lib: createRequire(import.meta.url).resolve('better-sqlite3'), path },
      // Not the parent's --import tsx and the like: the worker runs plain CommonJS.
      execArgv: [],
      resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 },
    });
    // A worker waiting for work never keeps the process alive.
    w.unref();
    exited = new Promise((resolve) =>
      w.once('exit', () => {
        if (worker === w) worker = undefined;
        takePending(w)?.(undefined);
        resolve();
      }),
    );
    w.on('message', (m: { ok: boolean } & Partial<CheckpointResult>) => {
      const done = takePending(w);
      done?.(
        m.ok
          ? {
              thread: 'worker',
              workerThreadId: w.threadId,
              ms: m.ms ?? 0,
              busy: m.busy ?? 0,
              log: m.log ?? 0,
              checkpointed: m.checkpointed ?? 0,
            }
          : undefined,
      );
    });
    w.on('error', () => {
      // It could not start (or died): from now on checkpoints run on the caller's thread.
      workerFailed = true;
      if (worker === w) worker = undefined;
      const done = takePending(w);
      if (done) void runHereLater().then(done);
    });
    return w;
  };

  return {
    checkpoint() {
      if (closed) return Promise.resolve(undefined);
      if (workerFailed) return runHereLater();
      if (pending) throw new Error('a checkpoint is already running');
      if (idle) clearTimeout(idle);
      idle = undefined;
      let w: Worker;
      try {
        worker ??= start();
        w = worker;
      } catch {
        workerFailed = true;
        return runHereLater();
      }
      return new Promise((resolve) => {
        pending = {
          worker: w,
          resolve: (result) => {
            idleFromNow();
            resolve(result);
          },
        };
        w.postMessage('checkpoint');
      });
    },
    close() {
      closed = true;
      return stop();
    },
  };
}
