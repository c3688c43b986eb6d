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
import type { BlobReader } from '../../blob/blob-store.js';
import { concatBytes, type Searchable, searchable } from './bytes.js';

/** Bytes read as lines: a blob, a ZIP entry, a PDF page's text. */
export interface LineSource {
  /** What the line index is kept under (the blob's sha256, and the entry or page); none: not kept. */
  key?: string;
  size: number;
  /** The bytes from `from` to the end. */
  open(from: number): Promise<ReadableStream<Uint8Array>>;
  /** Positioned reads into the caller's buffers, where the bytes are a file (fs blobs). */
  openReader?(): Promise<BlobReader>;
}

/** Line `lines[i]` starts at byte `bytes[i]`; the first checkpoint is line 1 at byte 0. */
export interface LineIndex {
  totalLines: number;
  lines: number[];
  bytes: number[];
}

const CHECKPOINT_BYTES = 1 << 20;

/** How an index is made: the spacing of its checkpoints (tests set a few bytes, to have many). */
export interface LineIndexOptions {
  /** A checkpoint at the first line that starts this many bytes past the one before (default 1 MiB). */
  checkpointBytes?: number;
}

/** Decodes UTF-8 keeping a U+FEFF at the start of a piece: it is a character of the line, as grep sees it. */
export const utf8 = () => new TextDecoder('utf-8', { ignoreBOM: true });

/** Line indexes of recently read sources, and the builds under way. */
export interface LineIndexCache {
  get(src: LineSource): Promise<LineIndex>;
  /** Indexes kept now (for tests and metrics). */
  readonly size: number;
}

export function createLineIndexCache(maxEntries = 256, options: LineIndexOptions = {}): LineIndexCache {
  const kept = new Map<string, LineIndex>();
  const building = new Map<string, Promise<LineIndex>>();
  return {
    get size() {
      return kept.size;
    },
    async get(src) {
      if (src.key === undefined) return buildIndex(src, options);
      const key = src.key;
      const hit = kept.get(key);
      if (hit) {
        kept.delete(key);
        kept.set(key, hit);
        return hit;
      }
      let build = building.get(key);
      if (!build) {
        build = buildIndex(src, options).finally(() => building.delete(key));
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
export async function buildIndex(src: LineSource, options: LineIndexOptions = {}): Promise<LineIndex> {
  const spacing = options.checkpointBytes ?? CHECKPOINT_BYTES;
  const index: LineIndex = { totalLines: 0, lines: [1], bytes: [0] };
  if (src.size === 0) return index;
  const reader = await chunksOf(src, spacing);
  let at = 0;
  let newlines = 0;
  let last = -1;
  try {
    for (;;) {
      const value = await reader.next();
      if (!value) break;
      const s = searchable(value);
      for (let i = s.indexOfByte(10, 0); i !== -1; i = s.indexOfByte(10, i + 1)) {
        newlines++;
        const next = at + i + 1;
        if (next - index.bytes[index.bytes.length - 1]! >= spacing && next < src.size) {
          index.lines.push(newlines + 1);
          index.bytes.push(next);
        }
      }
      at += value.byteLength;
      if (value.byteLength > 0) last = value[value.byteLength - 1]!;
    }
  } finally {
    await reader.close();
  }
  index.totalLines = newlines + (at > 0 && last !== 10 ? 1 : 0);
  return index;
}

/**
 * The bytes in order, each chunk valid until the next is asked for: one reused buffer where the
 * source has positioned reads (no allocation per MiB), else the stream's chunks.
 */
async function chunksOf(
  src: LineSource,
  bufferBytes: number,
): Promise<{ next(): Promise<Uint8Array | undefined>; close(): Promise<void> }> {
  if (src.openReader) {
    const reader = await src.openReader();
    const buf = new Uint8Array(bufferBytes);
    let position = 0;
    return {
      async next() {
        const n = await reader.read(buf, position);
        position += n;
        return n > 0 ? buf.subarray(0, n) : undefined;
      },
      close: () => reader.close(),
    };
  }
  const reader = (await src.open(0)).getReader();
  return {
    async next() {
      const r = await reader.read();
      return r.done ? undefined : r.value;
    },
    // A pass that stopped early (an error) lets go of the stream's file or connection.
    close: () => reader.cancel().catch(() => {}),
  };
}

/** The checkpoint at or before line `n`. */
export function checkpointBefore(index: LineIndex, n: number): { line: number; byte: number } {
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

  /** Done reading: the rest of the stream is not wanted, so its file or connection is let go now, not when collected. */
  async release(): Promise<void> {
    await this.reader.cancel().catch(() => {});
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
  const decoder = utf8();
  let skip = column - 1;
  let text = '';
  let more = false;
  let any = false;
  const cut = () => {
    if (text.length <= max) return;
    let kept = cutChars(text, max);
    // One character is the least a read shows, though it be a surrogate pair: else a read at this
    // column would show nothing and send the caller back to the same column.
    if (kept.length === 0 && max > 0) kept = text.slice(0, 2);
    // No room at all (a later line, max < 0): not even an empty line fits.
    if (kept.length < text.length || max < 0) more = true;
    text = kept;
  };
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
    cut();
  }
  if (!any && (await cursor.atEnd())) {
    // An empty last line (the bytes end in a line end) is no line; an empty line in the middle is.
    return undefined;
  }
  if (!more) {
    text += decoder.decode();
    if (skip > 0) text = text.slice(Math.min(skip, text.length));
    cut();
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
    await cursor.release();
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
