/**
 * Text by lines, for a model: read lines N to M, and search them as `grep -n` does, over bytes that
 * stream from a blob and are never held whole.
 *
 * What is kept to seek: a line index per blob (by sha256), made by the first full pass over it (a
 * read needs the line count, and a search passes over everything anyway). It holds the line count
 * and a checkpoint every ~1 MiB: the byte where a line starts and that line's number. A read of line
 * 5,000,000 of a 1 GiB log then starts at the checkpoint before it and scans at most ~1 MiB to the
 * line. A search cuts its spans at the checkpoints, so it knows every span's first line without
 * counting newlines, and counts them only up to the matches it shows. The index of a 1 GiB file is
 * ~1,000 checkpoints (16 KiB); the cache keeps the indexes of the last 256 blobs read.
 */
import { errors } from '../../core/errors.js';
import { concatBytes, countNewlines, type Searchable, searchable } from './bytes.js';
import type { LineMatcher } from './pattern.js';

/** Bytes read as lines: a blob, a ZIP entry, a PDF page's text. */
export interface LineSource {
  /** What the line index is kept under (the blob's sha256, and the entry or page); none: not kept. */
  key?: string;
  size: number;
  /** The bytes from `from` to the end. */
  open(from: number): Promise<ReadableStream<Uint8Array>>;
}

/** Line `lines[i]` starts at byte `bytes[i]`; the first checkpoint is line 1 at byte 0. */
export interface LineIndex {
  totalLines: number;
  lines: number[];
  bytes: number[];
}

const CHECKPOINT_BYTES = 1 << 20;
/** A span (the unit a search scans) ends at a line end after this many bytes, or at a checkpoint. */
const SPAN_BYTES = 1 << 20;
/** Regex spans are smaller: one exec on a span is the longest the event loop waits. */
const REGEX_SPAN_BYTES = 64 << 10;
/** A line longer than this is scanned in pieces of this size (a match across two pieces is missed). */
const MAX_SPAN_BYTES = 8 << 20;

/** Line indexes of recently read sources, and the builds under way. */
export interface LineIndexCache {
  get(src: LineSource): Promise<LineIndex>;
  /** Indexes kept now (for tests and metrics). */
  readonly size: number;
}

export function createLineIndexCache(maxEntries = 256): LineIndexCache {
  const kept = new Map<string, LineIndex>();
  const building = new Map<string, Promise<LineIndex>>();
  return {
    get size() {
      return kept.size;
    },
    async get(src) {
      if (src.key === undefined) return buildIndex(src);
      const key = src.key;
      const hit = kept.get(key);
      if (hit) {
        kept.delete(key);
        kept.set(key, hit);
        return hit;
      }
      let build = building.get(key);
      if (!build) {
        build = buildIndex(src).finally(() => building.delete(key));
        building.set(key, build);
      }
      const index = await build;
      kept.set(key, index);
      if (kept.size > maxEntries) kept.delete(kept.keys().next().value!);
      return index;
    },
  };
}

/** One pass over the bytes: the line count and a checkpoint every ~1 MiB. */
async function buildIndex(src: LineSource): Promise<LineIndex> {
  const index: LineIndex = { totalLines: 0, lines: [1], bytes: [0] };
  if (src.size === 0) return index;
  const reader = (await src.open(0)).getReader();
  let at = 0;
  let newlines = 0;
  let last = -1;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const s = searchable(value);
      for (let i = s.indexOfByte(10, 0); i !== -1; i = s.indexOfByte(10, i + 1)) {
        newlines++;
        const next = at + i + 1;
        if (next - index.bytes[index.bytes.length - 1]! >= CHECKPOINT_BYTES && next < src.size) {
          index.lines.push(newlines + 1);
          index.bytes.push(next);
        }
      }
      at += value.byteLength;
      if (value.byteLength > 0) last = value[value.byteLength - 1]!;
    }
  } finally {
    reader.releaseLock();
  }
  index.totalLines = newlines + (at > 0 && last !== 10 ? 1 : 0);
  return index;
}

/** The checkpoint at or before line `n`. */
function checkpointBefore(index: LineIndex, n: number): { line: number; byte: number } {
  let lo = 0;
  let hi = index.lines.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (index.lines[mid]! <= n) lo = mid;
    else hi = mid - 1;
  }
  return { line: index.lines[lo]!, byte: index.bytes[lo]! };
}

/** Reads a stream forward: whole lines, pieces of long ones, skips. */
class ByteCursor {
  private buf: Uint8Array = new Uint8Array(0);
  private s: Searchable = searchable(this.buf);
  private pos = 0;
  private done = false;
  constructor(private readonly reader: ReadableStreamDefaultReader<Uint8Array>) {}

  /** Reads more; false at the end of the stream. */
  private async fill(): Promise<boolean> {
    if (this.done) return false;
    const { done, value } = await this.reader.read();
    if (done) {
      this.done = true;
      return false;
    }
    this.buf = concatBytes(this.buf.subarray(this.pos), value);
    this.s = searchable(this.buf);
    this.pos = 0;
    return true;
  }

  /** Past `n` line ends; how many were passed (fewer at the end of the stream). */
  async skipLines(n: number): Promise<number> {
    let passed = 0;
    while (passed < n) {
      const i = this.s.indexOfByte(10, this.pos);
      if (i !== -1) {
        this.pos = i + 1;
        passed++;
      } else {
        this.pos = this.buf.length;
        if (!(await this.fill())) break;
      }
    }
    return passed;
  }

  /** The next line's bytes in pieces, its line end consumed; undefined when no line is left. */
  async *line(): AsyncGenerator<Uint8Array, void, undefined> {
    if (this.pos >= this.buf.length && !(await this.fill())) return;
    for (;;) {
      const i = this.s.indexOfByte(10, this.pos);
      if (i !== -1) {
        const piece = this.buf.subarray(this.pos, i);
        this.pos = i + 1;
        yield piece;
        return;
      }
      const piece = this.buf.subarray(this.pos);
      this.pos = this.buf.length;
      if (piece.byteLength > 0) yield piece;
      if (!(await this.fill())) return;
    }
  }

  async atEnd(): Promise<boolean> {
    return this.pos >= this.buf.length && !(await this.fill());
  }

  release(): void {
    this.reader.releaseLock();
  }
}

/** Where line `n` starts, and a cursor there. */
async function cursorAt(src: LineSource, index: LineIndex, n: number): Promise<ByteCursor> {
  const cp = checkpointBefore(index, n);
  const cursor = new ByteCursor((await src.open(cp.byte)).getReader());
  await cursor.skipLines(n - cp.line);
  return cursor;
}

/** Cuts `text` to at most `max` characters, never between the halves of a surrogate pair. */
export function cutChars(text: string, max: number): string {
  if (text.length <= max) return text;
  let end = Math.max(0, max);
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return text.slice(0, end);
}

/** One line of a read: its text from `column`, and whether more of it follows. */
interface ReadLine {
  text: string;
  /** Characters of the line after `text` (some more: at least 1; the count is not known past the budget). */
  more: boolean;
}

/**
 * Characters `column` to `column + max - 1` of the next line (1-based), decoded as it streams: a
 * line of 100 MB is never held whole.
 */
async function readLinePart(cursor: ByteCursor, column: number, max: number): Promise<ReadLine | undefined> {
  const decoder = new TextDecoder();
  let skip = column - 1;
  let text = '';
  let more = false;
  let any = false;
  for await (const piece of cursor.line()) {
    any = true;
    if (more) continue;
    let part = decoder.decode(piece, { stream: true });
    if (skip > 0) {
      const dropped = Math.min(skip, part.length);
      part = part.slice(dropped);
      skip -= dropped;
    }
    text += part;
    if (text.length > max) {
      text = cutChars(text, max);
      more = true;
    }
  }
  if (!any && (await cursor.atEnd())) {
    // An empty last line (the bytes end in a line end) is no line; an empty line in the middle is.
    return undefined;
  }
  if (!more) {
    text += decoder.decode();
    if (skip > 0) text = text.slice(Math.min(skip, text.length));
    if (text.length > max) {
      text = cutChars(text, max);
      more = true;
    }
  }
  return { text, more };
}

export interface ReadLinesResult {
  offset: number;
  column?: number;
  lines: string[];
  totalLines: number;
  nextOffset: number | null;
  nextColumn?: number;
}

/**
 * Lines `offset`.. of the source, as many as `limit` allows and fit in `maxChars` (each line costs
 * its length plus `perLine`, the room its number and line end take when rendered).
 */
export async function readLines(
  src: LineSource,
  index: LineIndex,
  o: { offset: number; limit: number; column: number; maxChars: number; perLine: number },
): Promise<ReadLinesResult> {
  const total = index.totalLines;
  if (total === 0 && o.offset === 1) return { offset: 1, lines: [], totalLines: 0, nextOffset: null };
  if (o.offset > total) {
    throw errors.badRequest(
      `offset ${o.offset} is past the end: there are ${total.toLocaleString('en-US')} lines. Read from an offset between 1 and ${total}.`,
    );
  }
  const cursor = await cursorAt(src, index, o.offset);
  const lines: string[] = [];
  let room = o.maxChars;
  let nextColumn: number | undefined;
  try {
    let n = o.offset;
    while (lines.length < o.limit && n <= total) {
      const column = lines.length === 0 ? o.column : 1;
      const space = room - o.perLine;
      // The first line always shows something; a later one only whole.
      const part = await readLinePart(cursor, column, lines.length === 0 ? Math.max(space, 1) : space);
      if (!part) break;
      if (part.more && lines.length > 0) break;
      lines.push(part.text);
      room -= part.text.length + o.perLine;
      if (part.more) {
        nextColumn = column + part.text.length;
        break;
      }
      n++;
    }
  } finally {
    cursor.release();
  }
  const last = o.offset + lines.length - 1;
  const nextOffset = nextColumn !== undefined ? last : last < total ? last + 1 : null;
  return {
    offset: o.offset,
    ...(o.column > 1 ? { column: o.column } : {}),
    lines,
    totalLines: total,
    nextOffset,
    ...(nextColumn !== undefined ? { nextColumn } : {}),
  };
}

export interface FoundLine {
  line: number;
  text: string;
  match: boolean;
}

export interface SearchLinesResult {
  totalMatches: number;
  returnedMatches: number;
  lines: FoundLine[];
  /** The line of the first match not returned. */
  nextOffset: number | null;
}

export interface SearchLinesOptions {
  matcher: LineMatcher;
  /** Search from this line (1-based). */
  offset: number;
  context: number;
  maxMatches: number;
  maxChars: number;
  perLine: number;
  /** The longest a shown line may be (a long one is cut around its match). */
  maxLineChars: number;
  /** Milliseconds since the epoch after which the search gives up (bad_request: the pattern is too costly). */
  deadline: number;
  now: () => number;
}

/** Matching lines from `offset` on, as `grep -n` finds them, with context, counted to the end. */
export async function searchLines(
  src: LineSource,
  index: LineIndex,
  o: SearchLinesOptions,
): Promise<SearchLinesResult> {
  const out: FoundLine[] = [];
  let total = 0;
  let returned = 0;
  let nextOffset: number | null = null;
  let room = o.maxChars;
  let full = false;
  let lastShown = 0;
  /** The last line of context after the last match shown. */
  let afterUntil = 0;
  /** The last lines of the span before, for the context before a match at a span's start. */
  let before: { line: number; text: string }[] = [];

  if (index.totalLines === 0 || o.offset > index.totalLines) {
    if (o.offset > Math.max(index.totalLines, 1)) {
      throw errors.badRequest(
        `offset ${o.offset} is past the end: there are ${index.totalLines.toLocaleString('en-US')} lines. Search from an offset between 1 and ${Math.max(index.totalLines, 1)}.`,
      );
    }
    return { totalMatches: 0, returnedMatches: 0, lines: [], nextOffset: null };
  }

  const show = (line: number, text: string, match: boolean): boolean => {
    if (line <= lastShown) return true;
    const cost = text.length + o.perLine;
    if (cost > room) return false;
    room -= cost;
    out.push({ line, text, match });
    lastShown = line;
    return true;
  };

  const regexSpan = o.matcher.kind === 'regex';
  for await (const span of spansOf(src, index, o.offset, regexSpan ? REGEX_SPAN_BYTES : SPAN_BYTES)) {
    if (o.now() > o.deadline) {
      throw errors.badRequest(
        `The search took longer than allowed and was stopped at line ${span.startLine.toLocaleString('en-US')}. Use a simpler or more distinctive pattern, or search from a later offset.`,
      );
    }
    const lines = spanLines(span);
    /** Context after the last match shown, up to (not including) line `upTo`: lines of this span only. */
    const flushAfter = (upTo: number) => {
      for (let n = lastShown + 1; n <= afterUntil && n < upTo; n++) {
        const next = lines.next(n);
        if (!next || !show(n, clip(next.text, o.maxLineChars, 0), false)) return;
      }
    };
    for (const hit of findMatches(span, o.matcher)) {
      total++;
      if (full) continue;
      const line = lines.numberAt(hit.lineStart);
      // A line after a match is context only when it is not a match itself.
      flushAfter(line);
      if (returned >= o.maxMatches) {
        full = true;
        nextOffset = line;
        continue;
      }
      const text = clip(lines.textAt(hit.lineStart, hit.lineEnd), o.maxLineChars, hit.at);
      // Context before: from this span, else from the tail of the span before.
      const ctx: { line: number; text: string }[] = [];
      for (let k = o.context; k >= 1; k--) {
        const n = line - k;
        if (n <= lastShown || n < o.offset) continue;
        const got = lines.lineNumbered(n) ?? before.find((b) => b.line === n);
        if (got) ctx.push({ line: n, text: clip(got.text, o.maxLineChars, 0) });
      }
      const cost = ctx.reduce((a, c) => a + c.text.length + o.perLine, 0) + text.length + o.perLine;
      if (cost > room) {
        full = true;
        nextOffset = line;
        continue;
      }
      for (const c of ctx) show(c.line, c.text, false);
      show(line, text, true);
      returned++;
      afterUntil = line + o.context;
    }
    // The rest of this span holds no match: its lines after the last one are context.
    flushAfter(Number.POSITIVE_INFINITY);
    if (o.context > 0) before = lines.tail(o.context);
  }
  return { totalMatches: total, returnedMatches: returned, lines: out, nextOffset };
}

/** A long line cut to `max` characters around `at` (where its match starts), with markers. */
function clip(text: string, max: number, at: number): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  const start = Math.max(0, Math.min(at - half, text.length - max));
  let head = start;
  const code = text.charCodeAt(head);
  if (code >= 0xdc00 && code <= 0xdfff) head++;
  const body = cutChars(text.slice(head), max);
  const left = head > 0 ? `[…${head.toLocaleString('en-US')} chars] ` : '';
  const rightCount = text.length - head - body.length;
  const right = rightCount > 0 ? ` […${rightCount.toLocaleString('en-US')} chars]` : '';
  return `${left}${body}${right}`;
}

/** A run of whole lines: its bytes, where it starts, and its first line's number. */
interface Span {
  s: Searchable;
  startLine: number;
  /** Text of the span, decoded once when a regex needs it. */
  text?: string;
}

/**
 * The bytes from line `from` on, in spans of whole lines. With the index complete, spans end at its
 * checkpoints, whose line numbers are known; the first span is counted from the line sought.
 */
async function* spansOf(src: LineSource, index: LineIndex, from: number, target: number): AsyncGenerator<Span> {
  const cp = checkpointBefore(index, from);
  const reader = (await src.open(cp.byte)).getReader();
  let carry: Uint8Array = new Uint8Array(0);
  let byte = cp.byte;
  let line = cp.line;
  let skip = from - cp.line;
  // The next checkpoint past the current position (spans end there: its line number is known).
  let k = index.bytes.findIndex((b) => b > cp.byte);
  let done = false;
  let want = target;
  try {
    while (!done || carry.byteLength > 0) {
      let buf = carry;
      while (!done && buf.byteLength < want) {
        const r = await reader.read();
        if (r.done) done = true;
        else buf = concatBytes(buf, r.value);
      }
      want = target;
      if (skip > 0) {
        const s = searchable(buf);
        let at = 0;
        while (skip > 0) {
          const i = s.indexOfByte(10, at);
          if (i === -1) break;
          at = i + 1;
          skip--;
          line++;
        }
        if (skip > 0) {
          // Still inside the lines to skip: all of this is passed.
          byte += buf.byteLength;
          carry = buf.subarray(buf.byteLength);
          if (done) return;
          continue;
        }
        byte += at;
        buf = buf.subarray(at);
      }
      // Cut at a checkpoint inside the buffer, else after the last line end, else (the end) all.
      let cut = -1;
      let cutLine: number | undefined;
      while (k !== -1 && k < index.bytes.length && index.bytes[k]! <= byte) k++;
      if (k !== -1 && k < index.bytes.length && index.bytes[k]! <= byte + buf.byteLength) {
        cut = index.bytes[k]! - byte;
        cutLine = index.lines[k]!;
      } else if (done) cut = buf.byteLength;
      else {
        const nl = buf.lastIndexOf(10);
        if (nl !== -1) cut = nl + 1;
        else if (buf.byteLength >= MAX_SPAN_BYTES) cut = buf.byteLength;
      }
      if (cut <= 0) {
        carry = buf;
        if (done) return;
        want = buf.byteLength + 1;
        continue;
      }
      const spanBytes = buf.subarray(0, cut);
      const ss = searchable(spanBytes);
      yield { s: ss, startLine: line };
      line = cutLine ?? line + countNewlines(ss, 0, spanBytes.byteLength);
      byte += cut;
      carry = buf.subarray(cut);
    }
  } finally {
    reader.releaseLock();
  }
}

interface Hit {
  /** Byte (or, for a regex, character) offset of the match's line, its end, and the match. */
  lineStart: number;
  lineEnd: number;
  at: number;
}

/** Each matching line of a span once, in order. Offsets are bytes, or characters for a regex. */
function* findMatches(span: Span, m: LineMatcher): Generator<Hit> {
  const bytes = span.s.bytes;
  if (m.kind === 'bytes') {
    let from = 0;
    for (;;) {
      const p = span.s.indexOf(m.needle, from);
      if (p === -1) return;
      const lineStart = p === 0 ? 0 : bytes.lastIndexOf(10, p - 1) + 1;
      let lineEnd = span.s.indexOfByte(10, p);
      if (lineEnd === -1) lineEnd = bytes.byteLength;
      // A needle that runs into the next line does not match this one (it holds no line end, so it cannot).
      yield { lineStart, lineEnd, at: p - lineStart };
      from = lineEnd + 1;
      if (from >= bytes.byteLength) return;
    }
  }
  span.text ??= new TextDecoder().decode(bytes);
  const text = span.text;
  // Past the last line end there is no line (the next span starts there).
  const phantom = text.endsWith('\n') ? text.length : text.length + 1;
  let pos = 0;
  while (pos < phantom) {
    m.scan.lastIndex = pos;
    const found = m.scan.exec(text);
    if (!found || found.index >= phantom) return;
    const lineStart = found.index === 0 ? 0 : text.lastIndexOf('\n', found.index - 1) + 1;
    let lineEnd = text.indexOf('\n', found.index);
    if (lineEnd === -1) lineEnd = text.length;
    // The candidate may run across lines: the line must match on its own, as grep sees it.
    const own = m.line.exec(text.slice(lineStart, lineEnd));
    if (own) yield { lineStart, lineEnd, at: own.index };
    pos = lineEnd + 1;
  }
}

/** Line numbers and texts of a span, counted lazily from its start. */
function spanLines(span: Span) {
  const bytes = span.s.bytes;
  const isText = () => span.text !== undefined;
  const decoder = new TextDecoder();
  // Counting state: line `countedLine` starts at offset `countedAt`.
  let countedAt = 0;
  let countedLine = span.startLine;
  const length = () => (isText() ? span.text!.length : bytes.byteLength);
  const nextBreak = (from: number) => (isText() ? span.text!.indexOf('\n', from) : span.s.indexOfByte(10, from));
  const textOf = (a: number, b: number) => (isText() ? span.text!.slice(a, b) : decoder.decode(bytes.subarray(a, b)));
  const numberAt = (offset: number): number => {
    if (offset < countedAt) {
      countedAt = 0;
      countedLine = span.startLine;
    }
    for (let i = nextBreak(countedAt); i !== -1 && i < offset; i = nextBreak(i + 1)) {
      countedLine++;
      countedAt = i + 1;
    }
    return countedLine;
  };
  /** Start offset of line `n` in this span, if the span holds it. */
  const startOf = (n: number): number | undefined => {
    if (n < span.startLine) return undefined;
    let at = 0;
    let line = span.startLine;
    if (countedLine <= n) {
      at = countedAt;
      line = countedLine;
    }
    while (line < n) {
      const i = nextBreak(at);
      if (i === -1) return undefined;
      at = i + 1;
      line++;
    }
    return at < length() ? at : undefined;
  };
  const lineNumbered = (n: number): { text: string } | undefined => {
    const a = startOf(n);
    if (a === undefined) return undefined;
    let b = nextBreak(a);
    if (b === -1) b = length();
    return { text: textOf(a, b) };
  };
  return {
    numberAt,
    textAt: (a: number, b: number) => textOf(a, b),
    lineNumbered,
    next(n: number): { line: number; text: string } | undefined {
      const got = lineNumbered(n);
      return got ? { line: n, text: got.text } : undefined;
    },
    /** The last `k` lines of the span. */
    tail(k: number): { line: number; text: string }[] {
      const out: { line: number; text: string }[] = [];
      let end = length();
      if (end > 0 && (isText() ? span.text!.charCodeAt(end - 1) === 10 : bytes[end - 1] === 10)) end--;
      const total = numberAt(end);
      for (let n = total; n > total - k && n >= span.startLine; n--) {
        const got = lineNumbered(n);
        if (got) out.unshift({ line: n, text: got.text });
      }
      return out;
    },
  };
}
