/**
 * The worker thread's side of the view sandbox (src/node/view-sandbox.ts): it parses PDFs and JSON
 * documents sent by the parent and answers with their text or query results. Everything here runs
 * under the worker's heap limit and the parent's per-job timeout; a document that is too costly ends
 * this thread, never the process.
 *
 * Parsed JSON documents are kept between jobs, keyed by the blob's sha256, least recently used first
 * out, within `cacheBytes` of source bytes; every answer to a JSON job says which keys are kept, so
 * the parent knows when it can leave the bytes out.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import type { ErrorCode } from '../core/errors.js';
import { parseJsonDocument } from '../service/views/inline-sandbox.js';
import type { JsonQueryResult, PdfText } from '../service/views/sandbox.js';

export interface SandboxWorkerData {
  /** Source bytes of parsed JSON documents kept between jobs. */
  cacheBytes: number;
}

export type SandboxJob =
  | { id: number; kind: 'pdf'; bytes: Uint8Array; maxPages: number }
  | {
      id: number;
      kind: 'json';
      key: string;
      /** Absent when the parent believes this worker holds the parsed document already. */
      bytes?: Uint8Array;
      path: string;
      budget: number;
    };

export type SandboxReply =
  /** The job's code is loaded and its work begins: the parent's timeout counts from here. */
  | { id: number; type: 'started' }
  | { id: number; type: 'done'; result: PdfText | JsonQueryResult; held?: string[] }
  | { id: number; type: 'failed'; code: ErrorCode; message: string; held?: string[] }
  /** A JSON job without bytes whose document this worker no longer holds: the parent sends them. */
  | { id: number; type: 'missing'; held: string[] };

/** A refusal the parent turns into an ArtifactError with this code. */
class Refusal extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

// ---- PDF -------------------------------------------------------------------------------------

export type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');
let pdfjs: Promise<PdfJs> | undefined;
/** Imports pdf.js's legacy build (it runs on Node 20.19): `serve` is given how. */
let importPdfJs: () => Promise<PdfJs>;
/** pdf.js, loaded with the first PDF job. */
const loadPdfJs = () => {
  pdfjs ??= importPdfJs();
  return pdfjs;
};

/** pdf.js's data files (character maps, standard font metrics), read from its package folder. */
let pdfjsData: { cMapUrl: string; standardFontDataUrl: string } | undefined;
function pdfjsDataPaths(): { cMapUrl: string; standardFontDataUrl: string } {
  if (!pdfjsData) {
    const root = dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json'));
    pdfjsData = { cMapUrl: `${join(root, 'cmaps')}/`, standardFontDataUrl: `${join(root, 'standard_fonts')}/` };
  }
  return pdfjsData;
}

const UNREADABLE_PDF = 'The file may be damaged; download it with artifact_url instead.';

interface PdfTextItem {
  str: string;
  transform: number[];
  height: number;
  hasEOL: boolean;
}

/**
 * One page's text, a line per visual line: pdf.js marks the end of a line (`hasEOL`) where its
 * layout analysis sees one, and an item that starts more than half a line's height above or below
 * the previous one starts a new line where it did not. Trailing spaces are dropped; the text ends in
 * "\n" (a page without text is one empty line).
 */
export function joinPageText(items: readonly PdfTextItem[]): string {
  const lines: string[] = [];
  let line = '';
  let open = false;
  let lastY = 0;
  let lastHeight = 0;
  for (const item of items) {
    if (item.str !== '') {
      const y = item.transform[5] ?? 0;
      const height = Math.abs(item.height) || Math.hypot(item.transform[2] ?? 0, item.transform[3] ?? 0);
      if (open && Math.abs(y - lastY) > Math.max(height, lastHeight) / 2) {
        lines.push(line);
        line = '';
      }
      line += item.str;
      open = true;
      lastY = y;
      lastHeight = height;
    }
    if (item.hasEOL) {
      lines.push(line);
      line = '';
      open = false;
    }
  }
  if (open) lines.push(line);
  if (lines.length === 0) return '\n';
  return `${lines.map((l) => l.trimEnd()).join('\n')}\n`;
}

async function pdfText(bytes: Uint8Array, maxPages: number, started: () => void): Promise<PdfText> {
  const { getDocument } = await loadPdfJs();
  started();
  const task = getDocument({
    data: bytes,
    // Font programs are parsed but never compiled to JavaScript (CVE-2024-4367 ran a FontMatrix as
    // code through that path), nor handed to a FontFace or the system's fonts.
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    fontExtraProperties: false,
    // No XFA forms, no image decoders: text needs neither. Document JavaScript is never run by
    // getDocument (only pdf.js's viewer runs it, in its own sandbox, which is not loaded here).
    enableXfa: false,
    useWasm: false,
    isOffscreenCanvasSupported: false,
    isImageDecoderSupported: false,
    // Damaged parts of a readable file are skipped, as a viewer would.
    stopAtErrors: false,
    verbosity: 0,
    ...pdfjsDataPaths(),
  });
  let doc: Awaited<typeof task.promise> | undefined;
  try {
    doc = await task.promise;
    const pages: string[] = [];
    const last = Math.min(doc.numPages, maxPages);
    for (let n = 1; n <= last; n++) {
      const page = await doc.getPage(n);
      const content = await page.getTextContent({ includeMarkedContent: false });
      pages.push(joinPageText(content.items as PdfTextItem[]));
      page.cleanup();
    }
    return { pageCount: doc.numPages, pages };
  } catch (err) {
    const name = (err as { name?: unknown } | undefined)?.name;
    if (name === 'PasswordException') {
      throw new Refusal(
        'unprocessable',
        'The PDF is encrypted with a password, so its text cannot be read here; download it with artifact_url instead.',
      );
    }
    const reason = err instanceof Error ? err.message.replace(/\.$/, '') : String(err);
    throw new Refusal('unprocessable', `The PDF could not be parsed: ${reason}. ${UNREADABLE_PDF}`);
  } finally {
    await task.destroy().catch(() => {});
  }
}

// ---- JSON ------------------------------------------------------------------------------------

type JsonQueryModule = typeof import('../service/views/json-query.js');
let jsonQueryModule: Promise<JsonQueryModule> | undefined;
const loadJsonQuery = () => {
  jsonQueryModule ??= import('../service/views/json-query.js');
  return jsonQueryModule;
};

/** Parsed documents by key, least recently used first, and the source bytes they came from. */
const docs = new Map<string, { doc: unknown; size: number }>();
let cacheUsedBytes = 0;
const held = () => [...docs.keys()];

function forget(key: string): void {
  const entry = docs.get(key);
  if (!entry) return;
  docs.delete(key);
  cacheUsedBytes -= entry.size;
}

/** The document for `key`: kept, or parsed from `bytes` (and kept when it fits). */
function documentFor(key: string, bytes: Uint8Array | undefined, cacheBytes: number): unknown {
  const kept = docs.get(key);
  if (kept) {
    // Most recently used goes last.
    docs.delete(key);
    docs.set(key, kept);
    return kept.doc;
  }
  if (!bytes) return undefined;
  // Room first: the documents kept give way (oldest first) before this one is parsed beside them.
  for (const oldest of docs.keys()) {
    if (cacheUsedBytes + bytes.byteLength <= cacheBytes) break;
    forget(oldest);
  }
  const doc = parseJsonDocument(new TextDecoder().decode(bytes));
  if (bytes.byteLength <= cacheBytes) {
    docs.set(key, { doc, size: bytes.byteLength });
    cacheUsedBytes += bytes.byteLength;
  }
  return doc;
}

// ---- The loop --------------------------------------------------------------------------------

function describe(err: unknown): { code: ErrorCode; message: string } {
  if (err instanceof Refusal) return { code: err.code, message: err.message };
  // An ArtifactError from the query (a bad path): its code and message as they are.
  const e = err as { name?: unknown; code?: unknown; message?: unknown } | undefined;
  if (e?.name === 'ArtifactError' && typeof e.code === 'string' && typeof e.message === 'string') {
    return { code: e.code as ErrorCode, message: e.message };
  }
  if (err instanceof RangeError) {
    return {
      code: 'unprocessable',
      message: `The document is too deeply nested or too large to process here (${err.message}).`,
    };
  }
  return { code: 'unprocessable', message: err instanceof Error ? err.message : String(err) };
}

/**
 * Answers jobs from the parent, one at a time, in order. `loadPdf` imports pdf.js and its parser
 * (pdf.worker.mjs, which pdf.js runs on this thread): from the worker's bootstrap, so that when this
 * module runs through tsx, pdf.js's 3 MB of JavaScript is loaded by Node as it is and not passed
 * through tsx's transform, and before a job's timeout starts.
 */
export function serve(loadPdf: () => Promise<PdfJs>): void {
  importPdfJs = loadPdf;
  const port = parentPort;
  if (!port) throw new Error('view-sandbox-worker runs only on a worker thread');
  const { cacheBytes } = workerData as SandboxWorkerData;
  let chain = Promise.resolve();
  const reply = (message: SandboxReply) => port.postMessage(message);

  const run = async (job: SandboxJob) => {
    let begun = false;
    const started = () => {
      begun = true;
      reply({ id: job.id, type: 'started' });
    };
    /** A failure before the job's work began is this worker's (its code did not load), not the document's. */
    const failure = (err: unknown) =>
      begun
        ? describe(err)
        : {
            code: 'backend_unavailable' as const,
            message: `The view sandbox could not load its code (${err instanceof Error ? err.message : String(err)}).`,
          };
    if (job.kind === 'pdf') {
      try {
        reply({ id: job.id, type: 'done', result: await pdfText(job.bytes, job.maxPages, started) });
      } catch (err) {
        reply({ id: job.id, type: 'failed', ...failure(err) });
      }
      return;
    }
    try {
      const { queryJson } = await loadJsonQuery();
      started();
      const doc = documentFor(job.key, job.bytes, cacheBytes);
      if (doc === undefined && !docs.has(job.key)) {
        reply({ id: job.id, type: 'missing', held: held() });
        return;
      }
      reply({ id: job.id, type: 'done', result: queryJson(doc, job.path, job.budget), held: held() });
    } catch (err) {
      reply({ id: job.id, type: 'failed', ...failure(err), held: held() });
    }
  };

  port.on('message', (job: SandboxJob) => {
    chain = chain.then(() => run(job));
  });
}
