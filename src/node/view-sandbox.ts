/**
 * The view sandbox on Node: PDF text and JSONPath queries run on a worker thread with a heap limit
 * and a wall-clock timeout per job, so a hostile document costs at most one job's refusal, never the
 * event loop or the process.
 *
 * One worker, one job at a time, the others queued in order. A pool would let a slow document hold
 * one thread while others run, but each worker costs its own heap (up to `maxHeapBytes`) and its own
 * copy of pdf.js and of the parsed JSON documents; with one, the memory the sandbox can take is one
 * limit, and the cache of parsed documents is one cache. A job that times out or runs out of memory
 * ends the worker; the next job starts a fresh one.
 *
 * The worker starts with the first job, is unref'd while it waits (it never keeps the process alive)
 * and ends after `idleMs` (30 s) without a job, giving back its heap and the documents it kept.
 *
 * How it starts: a few lines of CommonJS, eval'd (no file of their own, as in
 * src/db/sqlite/checkpointer.ts), import the worker's module, view-sandbox-worker. From dist/ that is
 * the compiled .js; from src/ (tsx, vitest) it is the .ts file, loaded through tsx's `tsImport`,
 * whose path the parent resolves: workers do not share the parent's loader (vitest's is not Node's
 * at all), so the worker brings its own.
 */
import { Worker } from 'node:worker_threads';
import { ArtifactError, errors } from '../core/errors.js';
import { checkJsonPath } from '../service/views/json-query.js';
import type { JsonQueryResult, PdfText, ViewSandbox, ViewSandboxLimits } from '../service/views/sandbox.js';
import type { SandboxJob, SandboxReply, SandboxWorkerData } from './view-sandbox-worker.js';

const MiB = 1024 * 1024;

export const DEFAULT_VIEW_SANDBOX_LIMITS: ViewSandboxLimits = {
  timeoutMs: 20_000,
  maxHeapBytes: 512 * MiB,
  maxPdfPages: 2_000,
};

/** The worker ends after this long without a job. */
const IDLE_MS = 30_000;
/** Source bytes of parsed JSON documents the worker keeps, at most (less with a small heap: see below). */
const MAX_CACHE_BYTES = 256 * MiB;
/** Loading a job's code (pdf.js, the query module) may take this long before its own timeout starts. */
const LOAD_TIMEOUT_MS = 30_000;
/** Bytes smaller than this are copied to the worker; larger ones are moved (their buffer transferred). */
const TRANSFER_MIN_BYTES = 64 * 1024;

// CommonJS run by the worker: it imports the worker's module, through tsx when that is a .ts file.
const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
const loading = workerData.tsx
  ? import(workerData.tsx).then((tsx) => tsx.tsImport(workerData.main, workerData.parent))
  : import(workerData.main);
// pdf.js and its parser, which pdf.js runs on this same thread when it finds it on globalThis.
// Loading, pdf.js warns (on stdout) of optional packages it does without (a canvas for rendering);
// those lines are dropped. Its jobs run with verbosity 0: no output.
const importPdfJs = () => {
  const log = console.log;
  console.log = () => {};
  return Promise.all([import(workerData.pdfjs), import(workerData.pdfjsWorker)]).then(
    ([pdfjs, parser]) => {
      console.log = log;
      globalThis.pdfjsWorker = parser;
      return pdfjs;
    },
    (err) => {
      console.log = log;
      throw err;
    },
  );
};
loading.then((module) => module.serve(importPdfJs));
`;

export interface NodeViewSandboxOptions {
  /** The worker ends after this long without a job (default 30 s). */
  idleMs?: number;
}

/** One job as the parent holds it: what to send, and who waits for the answer. */
interface QueuedJob {
  kind: 'pdf' | 'json';
  /** The message for the worker; `bytes` is called for a JSON document the worker does not hold. */
  message(bytes: boolean): Promise<{ job: SandboxJob; transfer: ArrayBuffer[] }>;
  key?: string;
  resolve(result: PdfText | JsonQueryResult): void;
  reject(err: unknown): void;
  /** Bytes must be sent (the worker said it no longer holds the document). */
  forceBytes?: boolean;
  /** Run once more after the worker ran out of memory holding kept documents. */
  retried?: boolean;
}

/** A live worker and what the parent knows of it. */
interface Slot {
  worker: Worker;
  /** The JSON documents it holds, by key, as its last answer said. */
  held: Set<string>;
  /** Why it is being ended, when the parent ends it. */
  ending?: 'timeout' | 'idle' | 'close';
  /** The error it died of. */
  error?: Error & { code?: string };
  exited: Promise<void>;
}

const pdfRefusal = (reason: string) =>
  errors.unprocessable(
    `The PDF could not be parsed: ${reason}. The file may be damaged; download it with artifact_url instead.`,
  );

/** Where the worker's module and pdf.js are, and how to load them (see the file's comment). */
function workerEntry(): Pick<WorkerData, 'main' | 'pdfjs' | 'pdfjsWorker' | 'tsx' | 'parent'> {
  const fromSource = import.meta.url.endsWith('.ts');
  const main = new URL(`./view-sandbox-worker.${fromSource ? 'ts' : 'js'}`, import.meta.url).href;
  const pdfjs = import.meta.resolve('pdfjs-dist/legacy/build/pdf.mjs');
  const pdfjsWorker = import.meta.resolve('pdfjs-dist/legacy/build/pdf.worker.mjs');
  if (!fromSource) return { main, pdfjs, pdfjsWorker };
  // tsx's ESM entry (its CommonJS one cannot register hooks from a worker).
  return { main, pdfjs, pdfjsWorker, tsx: import.meta.resolve('tsx/esm/api'), parent: import.meta.url };
}

/**
 * Bytes to move to the worker: the buffer from a JSON job's `bytes()` is the sandbox's to take, so
 * a large one that spans its whole buffer goes as it is (zero-copy, detached here); anything else is
 * copied once (a view's bytes only, never the rest of the buffer it sits in).
 */
function movable(data: Uint8Array): Uint8Array<ArrayBuffer> {
  const whole =
    data.byteLength >= TRANSFER_MIN_BYTES &&
    data.buffer instanceof ArrayBuffer &&
    data.byteOffset === 0 &&
    data.byteLength === data.buffer.byteLength;
  return whole ? (data as Uint8Array<ArrayBuffer>) : copyOf(data);
}

/** A copy of a view's bytes (a Buffer's `slice` would share them). */
function copyOf(data: Uint8Array): Uint8Array<ArrayBuffer> {
  const copy = new Uint8Array(data.byteLength);
  copy.set(data);
  return copy;
}

interface WorkerData extends SandboxWorkerData {
  main: string;
  pdfjs: string;
  pdfjsWorker: string;
  tsx?: string;
  parent?: string;
}

export function createNodeViewSandbox(
  limits: Partial<ViewSandboxLimits> = {},
  options: NodeViewSandboxOptions = {},
): ViewSandbox {
  const { timeoutMs, maxHeapBytes, maxPdfPages } = { ...DEFAULT_VIEW_SANDBOX_LIMITS, ...limits };
  const idleMs = options.idleMs ?? IDLE_MS;
  const heapMb = Math.max(8, Math.floor(maxHeapBytes / MiB));
  // Parsed JSON takes several times its source size; kept documents leave most of the heap to the
  // job at hand (512 MiB of heap keeps up to 64 MiB of source).
  const cacheBytes = Math.min(MAX_CACHE_BYTES, Math.floor(maxHeapBytes / 8));

  const queue: QueuedJob[] = [];
  let slot: Slot | undefined;
  let running:
    | { job: QueuedJob; slot: Slot; id: number; started?: boolean; timer?: ReturnType<typeof setTimeout> }
    | undefined;
  let nextId = 1;
  let idle: ReturnType<typeof setTimeout> | undefined;
  let closed = false;

  const start = (): Slot => {
    const workerData: WorkerData = { ...workerEntry(), cacheBytes };
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData,
      // Not the parent's flags (--import tsx and the like): the worker loads what it needs itself.
      execArgv: [],
      resourceLimits: {
        maxOldGenerationSizeMb: heapMb,
        maxYoungGenerationSizeMb: Math.min(32, Math.max(2, Math.floor(heapMb / 16))),
      },
      // Its stdout and stderr are the process's own (as streams read here they would keep the
      // process alive while it waits); pdf.js runs with verbosity 0 and prints nothing.
    });
    let exited!: () => void;
    const s: Slot = { worker, held: new Set(), exited: new Promise((resolve) => (exited = resolve)) };
    worker.on('message', (reply: SandboxReply) => onReply(s, reply));
    worker.on('error', (err) => {
      s.error = err;
    });
    worker.once('exit', (code) => {
      exited();
      onExit(s, code);
    });
    return s;
  };

  const onReply = (s: Slot, reply: SandboxReply) => {
    if (running?.slot !== s || running.id !== reply.id) return;
    if ('held' in reply && reply.held) s.held = new Set(reply.held);
    const { job } = running;
    switch (reply.type) {
      case 'started':
        // The document's work begins: from here the job's own timeout counts.
        running.started = true;
        clearTimeout(running.timer);
        running.timer = setTimeout(() => timeOut(s), timeoutMs);
        return;
      case 'done':
        finish();
        job.resolve(reply.result);
        return;
      case 'failed':
        finish();
        job.reject(new ArtifactError(reply.code, reply.message));
        return;
      case 'missing':
        finish();
        queue.unshift({ ...job, forceBytes: true });
        pump();
        return;
    }
  };

  const timeOut = (s: Slot) => {
    if (running?.slot !== s) return;
    const { job, started } = running;
    end(s, 'timeout');
    finish();
    if (!started) {
      job.reject(errors.backendUnavailable("The view sandbox's worker did not load its code in time; try again."));
      return;
    }
    job.reject(
      errors.unprocessable(
        job.kind === 'pdf'
          ? `Extracting the text of this PDF took longer than ${timeoutMs} ms, the limit here, and was stopped. Download it with artifact_url instead.`
          : `The JSONPath query took longer than ${timeoutMs} ms, the limit here, and was stopped. Try a narrower path, or read the document as text.`,
      ),
    );
  };

  const onExit = (s: Slot, code: number) => {
    if (slot === s) slot = undefined;
    if (running?.slot !== s) return;
    const { job, started } = running;
    finish();
    const outOfMemory = s.error?.code === 'ERR_WORKER_OUT_OF_MEMORY';
    const why = s.error?.message ?? `exit code ${code}`;
    if (s.ending === 'close') {
      job.reject(
        errors.backendUnavailable('The view sandbox was closed while this job ran (the service is stopping).'),
      );
    } else if (!started) {
      // It died before the job's work began: its own code failed to load, not the document.
      job.reject(errors.backendUnavailable(`The view sandbox's worker could not start (${why}).`, { cause: s.error }));
    } else if (outOfMemory && s.held.size > 0 && !job.retried) {
      // It may have died of the documents kept for other queries: once more, on an empty worker.
      queue.unshift({ ...job, retried: true, forceBytes: true });
    } else if (outOfMemory) {
      const limit = `${Math.round(maxHeapBytes / MiB)} MiB`;
      job.reject(
        errors.unprocessable(
          job.kind === 'pdf'
            ? `Extracting the text of this PDF needed more memory than the ${limit} allowed here, and was stopped. Download it with artifact_url instead.`
            : `Querying this JSON document needed more memory than the ${limit} allowed here, and was stopped. Read it as text instead, or query a smaller document.`,
        ),
      );
    } else {
      job.reject(
        job.kind === 'pdf'
          ? pdfRefusal(`the text extractor stopped (${why})`)
          : errors.unprocessable(`The JSONPath query stopped (${why}). Read the document as text instead.`),
      );
    }
    pump();
  };

  /** The running job is over (answered, timed out or its worker gone): the worker waits, or takes the next. */
  const finish = () => {
    if (running) clearTimeout(running.timer);
    running = undefined;
    if (queue.length > 0) {
      queueMicrotask(pump);
      return;
    }
    if (!slot) return;
    // Waiting for work: the worker never keeps the process alive, and leaves after idleMs.
    slot.worker.unref();
    const waiting = slot;
    idle = setTimeout(() => end(waiting, 'idle'), idleMs);
    idle.unref();
  };

  const end = (s: Slot, why: NonNullable<Slot['ending']>) => {
    if (slot === s) slot = undefined;
    s.ending ??= why;
    s.held.clear();
    void s.worker.terminate();
  };

  const pump = () => {
    if (running || closed) return;
    const job = queue.shift();
    if (!job) return;
    if (idle) clearTimeout(idle);
    idle = undefined;
    let s: Slot;
    try {
      slot ??= start();
      s = slot;
    } catch (err) {
      job.reject(errors.backendUnavailable('The view sandbox could not start a worker thread.', { cause: err }));
      pump();
      return;
    }
    // Busy: the job's answer is awaited, so the worker keeps the process alive until it comes.
    s.worker.ref();
    const id = nextId++;
    running = { job, slot: s, id };
    const current = running;
    const sendBytes = job.forceBytes || job.key === undefined || !s.held.has(job.key);
    job.message(sendBytes).then(
      ({ job: message, transfer }) => {
        if (running !== current) return;
        message.id = id;
        // Loading pdf.js or the query module on a fresh worker has a timeout of its own.
        current.timer = setTimeout(() => timeOut(s), Math.max(LOAD_TIMEOUT_MS, timeoutMs));
        try {
          s.worker.postMessage(message, transfer);
        } catch {
          // A buffer that cannot be moved (marked untransferable) is copied instead.
          s.worker.postMessage(message);
        }
      },
      (err) => {
        if (running !== current) return;
        finish();
        job.reject(err);
      },
    );
  };

  const enqueue = <T extends PdfText | JsonQueryResult>(job: Omit<QueuedJob, 'resolve' | 'reject'>) =>
    new Promise<T>((resolve, reject) => {
      if (closed) {
        reject(errors.backendUnavailable('The view sandbox is closed (the service is stopping).'));
        return;
      }
      queue.push({ ...job, resolve: resolve as QueuedJob['resolve'], reject });
      pump();
    });

  return {
    pdfText(bytes) {
      return enqueue<PdfText>({
        kind: 'pdf',
        message: async () => {
          // A copy, moved to the worker: the caller's buffer stays theirs.
          const copy = copyOf(bytes);
          return { job: { id: 0, kind: 'pdf', bytes: copy, maxPages: maxPdfPages }, transfer: [copy.buffer] };
        },
      });
    },

    async jsonQuery(key, bytes, path, budget) {
      // A bad path is refused here, before any bytes are read.
      checkJsonPath(path);
      return enqueue<JsonQueryResult>({
        kind: 'json',
        key,
        message: async (send) => {
          if (!send) return { job: { id: 0, kind: 'json', key, path, budget }, transfer: [] };
          const data = movable(await bytes());
          return { job: { id: 0, kind: 'json', key, bytes: data, path, budget }, transfer: [data.buffer] };
        },
      });
    },

    async close() {
      closed = true;
      if (idle) clearTimeout(idle);
      idle = undefined;
      for (const job of queue.splice(0)) {
        job.reject(errors.backendUnavailable('The view sandbox is closed (the service is stopping).'));
      }
      const s = slot;
      if (!s) return;
      end(s, 'close');
      await s.exited;
    },
  };
}
