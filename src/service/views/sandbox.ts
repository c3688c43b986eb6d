/**
 * Where hostile-input work runs: parsing a PDF and querying a JSON document. Stored files are hostile
 * input, so this work runs off the event loop with time and memory limits where the runtime allows
 * (Node: a worker thread, src/node/view-sandbox.ts) and inline under the platform's own CPU and
 * memory limits where it does not (Workers). A refusal is an ArtifactError: `unprocessable` (422) for
 * a malformed or too costly document, with a message that says what to do.
 */
import type { QueryMatch } from './types.js';

export interface PdfText {
  /** Pages in the document. */
  pageCount: number;
  /** The text of each page, in order (the first `maxPages` pages); lines end in "\n". */
  pages: string[];
}

export interface JsonQueryResult {
  /** Values the path selects (with `totalIsLowerBound`, the count where evaluation stopped). */
  totalMatches: number;
  /**
   * Present (true) when evaluation stopped at the service's cap on nodes counted (100,000), so
   * `totalMatches` is a lower bound: "at least N values match".
   */
  totalIsLowerBound?: boolean;
  /** The first values, each cut to fit, in document order. */
  matches: QueryMatch[];
  /** The matches as a model reads them, within the budget asked for. */
  text: string;
}

export interface ViewSandboxLimits {
  /** Wall-clock time one job may take (default 20 s). */
  timeoutMs: number;
  /** Heap a job may use (default 512 MiB); over it the job is refused, never the process killed. */
  maxHeapBytes: number;
  /** Pages of a PDF whose text is extracted (default 2,000). */
  maxPdfPages: number;
}

export interface ViewSandbox {
  /** The text of a PDF, page by page. Embedded code is never evaluated. */
  pdfText(bytes: Uint8Array): Promise<PdfText>;
  /**
   * Parses a JSON document (UTF-8 bytes) and runs an RFC 9535 JSONPath over it. `key` (the blob's
   * sha256) lets the sandbox keep a parsed document for the next query; `bytes` is called only when
   * it has none.
   */
  jsonQuery(key: string, bytes: () => Promise<Uint8Array>, path: string, budget: number): Promise<JsonQueryResult>;
  close(): Promise<void>;
}
