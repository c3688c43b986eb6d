/**
 * The views of stored artifacts a model reads through: `read` (lines, numbered), `search` (matching
 * lines, as grep -n), `query` (a JSONPath over JSON). One implementation, used by the HTTP routes, the
 * embedded store and so every client and tool. Every answer carries `text`, what a model reads,
 * within its budget, saying how to go on.
 *
 * Which view an artifact has comes from its type, then its first bytes: text of any text/*, JSON,
 * XML, YAML, CSV, source code, and anything else that is valid UTF-8 without NUL bytes; the text of a
 * PDF, page by page; the entries of a ZIP (and the text of one entry); an image's type and pixel
 * size. Anything else answers unsupported_type with its type, and points at artifact_url.
 */
import { formatBytes } from '../../core/bytes.js';
import { errors } from '../../core/errors.js';
import type { ArtifactRef } from '../../core/schemas.js';
import type { BlobStore } from '../../blob/blob-store.js';
import type { Access, ArtifactService } from '../types.js';
import { imageInfo } from './image.js';
import { createInlineViewSandbox } from './inline-sandbox.js';
import { checkJsonPath } from './json-query.js';
import { createLineIndexCache, type LineSource, readLines } from './lines.js';
import { MAX_REGEX_LINE_CHARS, searchLines } from './search.js';
import { compilePattern } from './pattern.js';
import type { ViewSandbox } from './sandbox.js';
import type {
  ByteSource,
  QueryAnswer,
  QueryOptions,
  ReadAnswer,
  ReadOptions,
  SearchAnswer,
  SearchLine,
  SearchOptions,
  ViewHead,
  ViewKind,
} from './types.js';
import { isZipMagic, listZipEntries, openZipEntry, type ZipEntryInfo } from './zip.js';
import {
  byteSourceOf,
  createPdfCache,
  dropBytes,
  label,
  looksLikeText,
  startsWith,
  TEXT_TYPES,
  textSource,
  ZIP_TYPES,
} from './sources.js';

export type * from './types.js';

/** The budget (characters of `text`) when neither the caller nor the configuration says: the guardrail's. */
export const DEFAULT_VIEW_BUDGET = 50_000;
export const MIN_VIEW_BUDGET = 1_000;
export const MAX_VIEW_BUDGET = 1_000_000;
/** Room kept for an answer's first and last lines (what it holds, how to go on). */
const FRAME_CHARS = 420;

export interface ArtifactViewsDeps {
  service: Pick<ArtifactService, 'getRef' | 'downloadUrl'>;
  blobs: BlobStore;
  /** Where PDFs are parsed and JSON is queried; default inline (no PDFs). */
  sandbox?: ViewSandbox;
  /** The default budget of an answer, in characters (ARTIFACT_STORE_VIEW_BUDGET_CHARS). */
  budget?: number;
  /** How long a search may run before it is stopped (default 20 s). */
  searchTimeoutMs?: number;
  /** JSON documents larger than this are not parsed for a query (default 256 MiB). */
  maxQueryBytes?: number;
  now?: () => number;
}

export interface ViewCallOptions {
  /** Public origin of the service, for the link an image answer carries. */
  baseUrl?: string;
}

export interface ArtifactViews {
  read(access: Access, id: string, options?: ReadOptions, call?: ViewCallOptions): Promise<ReadAnswer>;
  search(access: Access, id: string, options: SearchOptions, call?: ViewCallOptions): Promise<SearchAnswer>;
  query(access: Access, id: string, options: QueryOptions, call?: ViewCallOptions): Promise<QueryAnswer>;
  close(): Promise<void>;
}

const count = (n: number) => n.toLocaleString('en-US');
const args = (o: Record<string, unknown>) => JSON.stringify(o);

const isJsonType = (mime: string) => /^application\/([\w.+-]*\+)?json(;|$)/i.test(mime);

/** A blob as lines: streamed, and read into reused buffers where the store can. */
const blobLines = (ref: ArtifactRef, src: ByteSource): LineSource => ({
  key: ref.sha256,
  size: src.size,
  open: (from) => src.stream(from),
  ...(src.openReader ? { openReader: src.openReader } : {}),
});

export function createArtifactViews(deps: ArtifactViewsDeps): ArtifactViews {
  const sandbox = deps.sandbox ?? createInlineViewSandbox();
  const defaultBudget = deps.budget ?? DEFAULT_VIEW_BUDGET;
  const now = deps.now ?? Date.now;
  const indexes = createLineIndexCache();
  const pdfs = createPdfCache(sandbox);

  function budgetOf(asked: number | undefined): number {
    if (asked === undefined) return defaultBudget;
    if (!Number.isInteger(asked) || asked < MIN_VIEW_BUDGET || asked > MAX_VIEW_BUDGET) {
      throw errors.badRequest(
        `budget must be a whole number of characters from ${count(MIN_VIEW_BUDGET)} to ${count(MAX_VIEW_BUDGET)}; got ${asked}.`,
      );
    }
    return asked;
  }

  async function open(access: Access, id: string) {
    const ref = await deps.service.getRef(access, id);
    const src = byteSourceOf(deps.blobs, ref);
    const head = await src.read(0, 8191);
    return { ref, src, head, kind: kindOf(ref, head) };
  }

  function kindOf(ref: ArtifactRef, head: Uint8Array): ViewKind | undefined {
    const mime = ref.mimeType;
    if (/^application\/pdf(;|$)/i.test(mime) || startsWith(head, '%PDF-')) return 'pdf';
    if (/^image\//i.test(mime) && !/^image\/svg\+xml/i.test(mime)) return 'image';
    if (ZIP_TYPES.test(mime) || isZipMagic(head)) return 'zip';
    if (TEXT_TYPES.test(mime) || /^image\/svg\+xml/i.test(mime)) return 'text';
    if (looksLikeText(head)) return 'text';
    return undefined;
  }

  function noView(ref: ArtifactRef, what: string): never {
    throw errors.unsupportedType(
      `${label(ref)} has no ${what}: it is binary. artifact_url gives a download link for a person.`,
    );
  }

  function head(ref: ArtifactRef, view: ViewKind, text: string, extra: Partial<ViewHead> = {}): ViewHead {
    return {
      id: ref.id,
      mimeType: ref.mimeType,
      sizeBytes: ref.sizeBytes,
      ...(ref.filename !== undefined ? { filename: ref.filename } : {}),
      view,
      ...extra,
      text,
    };
  }

  function checkWhole(name: string, value: number | undefined, min: number, max?: number) {
    if (value === undefined) return;
    if (!Number.isInteger(value) || value < min || (max !== undefined && value > max)) {
      throw errors.badRequest(
        `${name} must be a whole number ${max !== undefined ? `from ${min} to ${count(max)}` : `of at least ${min}`}; got ${value}.`,
      );
    }
  }

  /** The entry of a ZIP as a line source, or the archive's listing when no entry is named. */
  async function zipText(ref: ArtifactRef, src: ByteSource, entry: string | undefined) {
    if (entry === undefined) {
      const entries = await listZipEntries(src);
      return { source: textSource(listing(entries), `${ref.sha256}#entries`), entries };
    }
    const probe = await openZipEntry(src, entry);
    const reader = probe.stream.getReader();
    const first = await reader.read();
    await reader.cancel().catch(() => {});
    const sample = first.value?.subarray(0, 8192) ?? new Uint8Array(0);
    if (!looksLikeText(sample)) {
      throw errors.unsupportedType(
        `The entry ${JSON.stringify(entry)} of ${label(ref)} is binary (${formatBytes(probe.info.sizeBytes)}), so it has no text to read. artifact_url gives a download link for the archive.`,
      );
    }
    const source: LineSource = {
      key: `${ref.sha256}!${entry}`,
      size: probe.info.sizeBytes,
      open: async (from) => dropBytes((await openZipEntry(src, entry)).stream, from),
    };
    return { source, info: probe.info };
  }

  function listing(entries: ZipEntryInfo[]): string {
    return entries
      .map(
        (e) =>
          `${e.name}${e.directory ? '' : `  (${formatBytes(e.sizeBytes)}${e.compressedBytes < e.sizeBytes ? `, ${formatBytes(e.compressedBytes)} packed` : ''}${e.encrypted ? ', encrypted' : ''})`}`,
      )
      .join('\n');
  }

  /** The numbered lines with the answer's first and last lines, as the model reads them. */
  function renderLines(
    title: string,
    r: { offset: number; column?: number; lines: string[]; totalLines: number },
    numberWidth: number,
    footer: string,
  ): string {
    const body = r.lines
      .map(
        (l, i) =>
          `${String(r.offset + i).padStart(numberWidth)}\t${i === 0 && r.column ? `[from char ${count(r.column)}] ` : ''}${l}`,
      )
      .join('\n');
    return `${title}\n${body}${body ? '\n' : ''}${footer}`;
  }

  const widthFor = (total: number) => Math.max(6, String(total).length);

  async function readSource(
    ref: ArtifactRef,
    view: ViewKind,
    source: LineSource,
    o: ReadOptions,
    budget: number,
    describe: { what: string; extra: Partial<ViewHead>; more: (next: Record<string, unknown>) => string; end: string },
  ): Promise<ReadAnswer> {
    const index = await indexes.get(source);
    const width = widthFor(index.totalLines);
    const r = await readLines(source, index, {
      offset: o.offset ?? 1,
      limit: o.limit ?? Number.MAX_SAFE_INTEGER,
      column: o.column ?? 1,
      maxChars: budget - FRAME_CHARS,
      perLine: width + 2,
    });
    const last = r.offset + r.lines.length - 1;
    const title =
      r.totalLines === 0
        ? `${describe.what}: no lines (empty).`
        : `${describe.what}: line${r.lines.length === 1 ? '' : 's'} ${count(r.offset)}${r.lines.length > 1 ? `–${count(last)}` : ''} of ${count(r.totalLines)}${r.nextColumn ? ` (line ${count(last)} goes on past char ${count(r.nextColumn - 1)})` : ''}`;
    let footer: string;
    if (r.nextOffset === null) footer = describe.end;
    else if (r.nextColumn !== undefined)
      footer = `[Line ${count(r.nextOffset)} continues. ${describe.more({ offset: r.nextOffset, column: r.nextColumn })}${isJsonType(ref.mimeType) && view === 'text' ? `. JSON reads better by its structure: artifact_query ${args({ id: ref.id, path: '$' })} shows its top level` : ''}]`;
    else
      footer = `[Lines ${count(r.nextOffset)}–${count(r.totalLines)} not shown. ${describe.more({ offset: r.nextOffset })}]`;
    return {
      ...head(ref, view, renderLines(title, r, width, footer), describe.extra),
      offset: r.offset,
      ...(r.column !== undefined ? { column: r.column } : {}),
      lines: r.lines,
      totalLines: r.totalLines,
      nextOffset: r.nextOffset,
      ...(r.nextColumn !== undefined ? { nextColumn: r.nextColumn } : {}),
    };
  }

  async function read(
    access: Access,
    id: string,
    o: ReadOptions = {},
    call: ViewCallOptions = {},
  ): Promise<ReadAnswer> {
    checkWhole('offset', o.offset, 1);
    checkWhole('limit', o.limit, 1);
    checkWhole('column', o.column, 1);
    checkWhole('page', o.page, 1);
    const budget = budgetOf(o.budget);
    const { ref, src, kind } = await open(access, id);
    const call1 = (extra: Record<string, unknown>) => `Continue: artifact_read ${args({ id: ref.id, ...extra })}`;
    if (kind === undefined) noView(ref, 'text view');
    if (o.page !== undefined && kind !== 'pdf')
      throw errors.badRequest(`page is for PDFs; ${label(ref)} is not one. Leave page out.`);
    if (o.entry !== undefined && kind !== 'zip')
      throw errors.badRequest(`entry is for ZIP archives; ${label(ref)} is not one. Leave entry out.`);
    if (kind === 'image') return readImage(access, ref, src, call);
    if (kind === 'text') {
      return readSource(ref, 'text', blobLines(ref, src), o, budget, {
        what: label(ref),
        extra: {},
        more: call1,
        end: '[End of the artifact.]',
      });
    }
    if (kind === 'pdf') {
      const pdf = await pdfs.get(ref, src);
      const page = o.page ?? 1;
      if (page > pdf.pages.length) {
        throw errors.badRequest(
          `page ${page} does not exist: ${label(ref)} has ${count(pdf.pageCount)} page${pdf.pageCount === 1 ? '' : 's'}${pdf.pages.length < pdf.pageCount ? ` (text is read from the first ${count(pdf.pages.length)})` : ''}. Ask for a page from 1 to ${pdf.pages.length}.`,
        );
      }
      const next =
        page < pdf.pages.length
          ? ` Next page: artifact_read ${args({ id: ref.id, page: page + 1 })}`
          : ' That is the last page.';
      return readSource(ref, 'pdf', textSource(pdf.pages[page - 1]!, `${ref.sha256}#p${page}`), o, budget, {
        what: `${label(ref)}, page ${page} of ${count(pdf.pageCount)}`,
        extra: { page, pageCount: pdf.pageCount },
        more: (extra) => `Continue: artifact_read ${args({ id: ref.id, page, ...extra })}`,
        end: `[End of page ${page}.${next}]`,
      });
    }
    // A ZIP: the listing, or one entry's text.
    const zip = await zipText(ref, src, o.entry);
    if (o.entry === undefined) {
      const entries = zip.entries!;
      const firstText = entries.find(
        (e) => !e.directory && /\.(twb|tds|xml|json|csv|txt|md|ya?ml|html?|js|ts|py)$/i.test(e.name),
      );
      return readSource(ref, 'zip', zip.source, o, budget, {
        what: `${label(ref)}, ${count(entries.length)} entr${entries.length === 1 ? 'y' : 'ies'}`,
        extra: {},
        more: call1,
        end: `[End of the listing. Read an entry: artifact_read ${args({ id: ref.id, entry: firstText?.name ?? entries.find((e) => !e.directory)?.name ?? '…' })}]`,
      });
    }
    return readSource(ref, 'zip', zip.source, o, budget, {
      what: `${label(ref)}, entry ${JSON.stringify(o.entry)}`,
      extra: { entry: o.entry },
      more: (extra) => `Continue: artifact_read ${args({ id: ref.id, entry: o.entry, ...extra })}`,
      end: '[End of the entry.]',
    });
  }

  async function readImage(
    access: Access,
    ref: ArtifactRef,
    src: ByteSource,
    call: ViewCallOptions,
  ): Promise<ReadAnswer> {
    const info = await imageInfo(src);
    let url: string | undefined;
    if (call.baseUrl) {
      try {
        url = (await deps.service.downloadUrl(access, ref.id, { baseUrl: call.baseUrl, disposition: 'inline' })).url;
      } catch {
        // A service that cannot sign links still describes the image.
      }
    }
    const size = info ? `${count(info.width)}×${count(info.height)} px, ` : '';
    const text = `${label(ref)} is an image (${info?.mimeType ?? ref.mimeType}, ${size}${formatBytes(ref.sizeBytes)}). Its pixels are not text, so there are no lines to read.${url ? ` A person can open it at ${url}` : ''} artifact_url makes a download link.`;
    return {
      ...head(ref, 'image', text),
      offset: 1,
      lines: [],
      totalLines: 0,
      nextOffset: null,
      ...(info ? { width: info.width, height: info.height } : {}),
      ...(url ? { url } : {}),
    };
  }

  async function search(
    access: Access,
    id: string,
    o: SearchOptions,
    _call: ViewCallOptions = {},
  ): Promise<SearchAnswer> {
    if (typeof o.pattern !== 'string') throw errors.badRequest('pattern is required: the text (or regex) to look for.');
    checkWhole('offset', o.offset, 1);
    checkWhole('page', o.page, 1);
    checkWhole('context', o.context, 0, 20);
    checkWhole('maxMatches', o.maxMatches, 1, 500);
    const budget = budgetOf(o.budget);
    const regex = o.regex ?? false;
    const ignoreCase = o.ignoreCase ?? false;
    const matcher = compilePattern(o.pattern, regex, ignoreCase);
    const { ref, src, kind } = await open(access, id);
    if (kind === undefined || kind === 'image') noView(ref, 'text to search');
    if (o.page !== undefined && kind !== 'pdf')
      throw errors.badRequest(`page is for PDFs; ${label(ref)} is not one. Leave page out.`);
    if (o.entry !== undefined && kind !== 'zip')
      throw errors.badRequest(`entry is for ZIP archives; ${label(ref)} is not one. Leave entry out.`);
    const deadline = now() + (deps.searchTimeoutMs ?? 20_000);
    const maxMatches = o.maxMatches ?? 20;
    const context = o.context ?? 0;
    const base = { id: ref.id, pattern: o.pattern, ...(regex ? { regex } : {}), ...(ignoreCase ? { ignoreCase } : {}) };

    // The line sources to search, in order: one for text and ZIP entries, a page each for a PDF.
    let parts: { source: LineSource; page?: number }[];
    let what = label(ref);
    const extra: Partial<ViewHead> = {};
    if (kind === 'pdf') {
      const pdf = await pdfs.get(ref, src);
      const from = o.page ?? 1;
      if (from > pdf.pages.length) {
        throw errors.badRequest(
          `page ${from} does not exist: ${label(ref)} has ${count(pdf.pageCount)} pages. Search from a page between 1 and ${pdf.pages.length}.`,
        );
      }
      parts = pdf.pages
        .slice(from - 1)
        .map((t, i) => ({ source: textSource(t, `${ref.sha256}#p${from + i}`), page: from + i }));
      extra.pageCount = pdf.pageCount;
    } else if (kind === 'zip') {
      const zip = await zipText(ref, src, o.entry);
      parts = [{ source: zip.source }];
      if (o.entry !== undefined) {
        extra.entry = o.entry;
        what += `, entry ${JSON.stringify(o.entry)}`;
      } else what += ', its listing of entries';
    } else parts = [{ source: blobLines(ref, src) }];

    let total = 0;
    let returned = 0;
    let skippedLines = 0;
    let firstSkipped: { line: number; page?: number } | undefined;
    const lines: SearchLine[] = [];
    let room = budget - FRAME_CHARS;
    let nextOffset: number | null = null;
    let nextPage: number | undefined;
    let width = 6;
    for (const [i, part] of parts.entries()) {
      const index = await indexes.get(part.source);
      width = Math.max(width, widthFor(index.totalLines));
      const perLine = width + 3 + (part.page !== undefined ? String(part.page).length + 3 : 0);
      const full = returned >= maxMatches || room <= perLine;
      const r = await searchLines(part.source, index, {
        matcher,
        offset: i === 0 ? (o.offset ?? 1) : 1,
        context,
        maxMatches: full ? 0 : maxMatches - returned,
        maxChars: full ? 0 : room,
        perLine,
        maxLineChars: Math.max(200, Math.min(2_000, Math.floor(budget / 8))),
        deadline,
        now,
      });
      total += r.totalMatches;
      if (r.longLinesSkipped) {
        skippedLines += r.longLinesSkipped.count;
        firstSkipped ??= { line: r.longLinesSkipped.first, ...(part.page !== undefined ? { page: part.page } : {}) };
      }
      returned += r.returnedMatches;
      for (const l of r.lines) {
        lines.push({
          line: l.line,
          ...(part.page !== undefined ? { page: part.page } : {}),
          text: l.text,
          match: l.match,
        });
        room -= l.text.length + perLine;
      }
      if (nextOffset === null && r.nextOffset !== null) {
        nextOffset = r.nextOffset;
        if (part.page !== undefined) nextPage = part.page;
      }
    }

    const shown = lines
      .map((l, k) => {
        const prev = lines[k - 1];
        const gap = prev && (prev.page !== l.page || prev.line + 1 !== l.line) ? '--\n' : '';
        const where = `${l.page !== undefined ? `p${l.page} ` : ''}${String(l.line).padStart(width)}`;
        return `${gap}${where}${l.match ? ':' : '-'} ${l.text}`;
      })
      .join('\n');
    const kindWord = regex ? 'regex' : 'text';
    const title =
      total === 0
        ? `No line of ${what} matches the ${kindWord} ${JSON.stringify(o.pattern)}${ignoreCase ? ' (ignoring case)' : ''}${(o.offset ?? 1) > 1 ? ` from line ${count(o.offset!)}` : ''}.`
        : `${count(total)} line${total === 1 ? '' : 's'} of ${what} match${total === 1 ? 'es' : ''} the ${kindWord} ${JSON.stringify(o.pattern)}${ignoreCase ? ' (ignoring case)' : ''}${returned < total ? `; showing the first ${count(returned)}` : ''}:`;
    let footer = '';
    if (nextOffset !== null) {
      footer = `\n[${count(total - returned)} more. Next: artifact_search ${args({ ...base, offset: nextOffset, ...(nextPage !== undefined ? { page: nextPage } : {}), ...(o.entry !== undefined ? { entry: o.entry } : {}) })}; or read around a line: artifact_read ${args({ id: ref.id, offset: Math.max(1, (lines.at(-1)?.line ?? 1) - 5), ...(nextPage !== undefined ? { page: nextPage } : {}), ...(o.entry !== undefined ? { entry: o.entry } : {}) })}]`;
    } else if (total === 0 && !regex) {
      footer = '\n[Try ignoreCase: true, a shorter part of the text, or regex: true with a pattern.]';
    }
    if (firstSkipped) {
      footer += `\n[${count(skippedLines)} line${skippedLines === 1 ? ' was' : 's were'} left out, the first line ${count(firstSkipped.line)}${firstSkipped.page !== undefined ? ` of page ${firstSkipped.page}` : ''}: a regex is not run over lines longer than ${count(MAX_REGEX_LINE_CHARS)} characters. Search them for a fixed string (regex: false), which has no such limit.]`;
    }
    return {
      ...head(ref, kind, `${title}${shown ? `\n${shown}` : ''}${footer}`, extra),
      pattern: o.pattern,
      regex,
      ignoreCase,
      totalMatches: total,
      returnedMatches: returned,
      lines,
      nextOffset,
      ...(nextPage !== undefined ? { nextPage } : {}),
      ...(firstSkipped
        ? {
            longLinesSkipped: {
              count: skippedLines,
              first: firstSkipped.line,
              ...(firstSkipped.page !== undefined ? { page: firstSkipped.page } : {}),
            },
          }
        : {}),
    };
  }

  async function query(access: Access, id: string, o: QueryOptions, _call: ViewCallOptions = {}): Promise<QueryAnswer> {
    if (typeof o.path !== 'string' || o.path.length === 0)
      throw errors.badRequest('path is required: an RFC 9535 JSONPath such as $.items[0].name or $..title.');
    checkJsonPath(o.path);
    const budget = budgetOf(o.budget);
    const { ref, src, kind } = await open(access, id);
    const maxBytes = deps.maxQueryBytes ?? 256 * 1024 * 1024;
    let key = ref.sha256;
    let bytes: () => Promise<Uint8Array>;
    let what = label(ref);
    if (kind === 'zip' && o.entry !== undefined) {
      const zip = await zipText(ref, src, o.entry);
      key = `${ref.sha256}!${o.entry}`;
      what += `, entry ${JSON.stringify(o.entry)}`;
      bytes = async () => new Uint8Array(await new Response(await zip.source.open(0)).arrayBuffer());
    } else {
      if (o.entry !== undefined)
        throw errors.badRequest(`entry is for ZIP archives; ${label(ref)} is not one. Leave entry out.`);
      if (kind === undefined) noView(ref, 'text to query');
      if (kind !== 'text') {
        throw errors.unsupportedType(
          `${label(ref)} is not JSON, so a JSONPath cannot run over it.${kind === 'zip' ? ` Name a JSON entry with entry, e.g. artifact_query ${args({ id: ref.id, entry: '…', path: o.path })}.` : ' artifact_read or artifact_search read text.'}`,
        );
      }
      if (ref.sizeBytes > maxBytes) {
        throw errors.unprocessable(
          `${label(ref)} is over the ${formatBytes(maxBytes)} a JSONPath query parses. Use artifact_search to find the part you need.`,
        );
      }
      bytes = () => src.read(0, ref.sizeBytes - 1);
    }
    const r = await sandbox.jsonQuery(key, bytes, o.path, budget - FRAME_CHARS);
    const title = `${what}${isJsonType(ref.mimeType) || o.entry ? '' : ' (read as JSON)'}:`;
    return {
      ...head(ref, 'text', `${title}\n${r.text}`, o.entry !== undefined ? { entry: o.entry } : {}),
      path: o.path,
      totalMatches: r.totalMatches,
      ...(r.totalIsLowerBound ? { totalIsLowerBound: true } : {}),
      matches: r.matches,
    };
  }

  return {
    read,
    search,
    query,
    close: () => sandbox.close(),
  };
}
