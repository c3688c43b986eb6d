/**
 * Search by lines, as `grep -n` does: the bytes stream in spans of whole lines, each scanned for the
 * pattern (natively for a fixed string, decoded for a regex); line numbers are counted only up to
 * the matches shown, since the line index (lines.ts) gives every span's first line.
 */
import { errors } from '../../core/errors.js';
import { concatBytes, countNewlines, type Searchable, searchable } from './bytes.js';
import { checkpointBefore, cutChars, type LineIndex, type LineSource, utf8 } from './lines.js';
import type { LineMatcher } from './pattern.js';

/** A span (the unit a search scans) ends at a line end after this many bytes, or at a checkpoint. */
const SPAN_BYTES = 1 << 20;
/** Regex spans are smaller: one exec on a span is the longest the event loop waits. */
const REGEX_SPAN_BYTES = 64 << 10;
/**
 * A line longer than this is scanned in pieces of this size: a match across two pieces is missed, and
 * a regex's `^` or `$` may match at a cut. The line is counted once however many pieces match.
 */
const MAX_SPAN_BYTES = 8 << 20;
/**
 * A regex is tried on lines up to this many characters. One exec cannot be interrupted, and V8's
 * linear engine, where a hostile pattern ends up, takes ~1 µs a character: a longer line could hold
 * the event loop for seconds. Longer lines are left out of a regex search, and the answer says so.
 */
export const MAX_REGEX_LINE_CHARS = 64 << 10;
/** A search that has held the event loop this long lets other work run before its next span. */
const YIELD_EVERY_MS = 20;

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
  /** Regex searches: lines over MAX_REGEX_LINE_CHARS left out, and the first of them. */
  longLinesSkipped?: { count: number; first: number };
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
  /** The sizes of spans (tests set a few bytes, to have many); defaults 1 MiB, 64 KiB for a regex, 8 MiB at most. */
  spanBytes?: number;
  regexSpanBytes?: number;
  maxSpanBytes?: number;
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
    if (line <= lastShown) {
      // A line longer than a span, shown as context by its first piece, matches in a later piece.
      const last = out[out.length - 1];
      if (match && last?.line === line && !last.match) {
        room += last.text.length - text.length;
        out[out.length - 1] = { line, text, match };
      }
      return true;
    }
    const cost = text.length + o.perLine;
    if (cost > room) return false;
    room -= cost;
    out.push({ line, text, match });
    lastShown = line;
    return true;
  };

  const regexSpan = o.matcher.kind === 'regex';
  const spanBytes = o.spanBytes ?? SPAN_BYTES;
  const maxSpan = o.maxSpanBytes ?? MAX_SPAN_BYTES;
  const regexBytes = o.regexSpanBytes ?? REGEX_SPAN_BYTES;
  const spans =
    src.openReader && largestStretch(index, src.size) <= maxSpan
      ? stretchesOf(src, index, o.offset, spanBytes, regexSpan ? regexBytes : undefined)
      : spansOf(src, index, o.offset, regexSpan ? regexBytes : spanBytes, maxSpan);
  const skipped: Skipped = { count: 0, lastLine: 0 };
  /** The span before ended inside a line (one longer than the largest span) that matched already. */
  let carried = false;
  let lastYield = o.now();
  for await (const span of spans) {
    // Spans of one read come without a turn of the event loop between them: give other requests one.
    if (o.now() - lastYield > YIELD_EVERY_MS) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      lastYield = o.now();
    }
    if (o.now() > o.deadline) {
      throw errors.badRequest(
        `The search took longer than allowed and was stopped at line ${span.startLine.toLocaleString('en-US')}. Use a simpler or more distinctive pattern, or search from a later offset.`,
      );
    }
    const lines = spanLines(span);
    /** Stops the answer before line `line` (the first match not shown, if any): no context after it either. */
    const stop = (line: number | null) => {
      full = true;
      afterUntil = 0;
      nextOffset ??= line;
    };
    /** Context after the last match shown, up to (not including) line `upTo`: lines of this span only. */
    const flushAfter = (upTo: number) => {
      for (let n = lastShown + 1; n <= afterUntil && n < upTo; n++) {
        const next = lines.next(n);
        if (!next) return;
        // Context that does not fit ends the answer: what is shown stays a prefix of the whole.
        if (!show(n, clip(next.text, o.maxLineChars, 0), false)) {
          stop(null);
          return;
        }
      }
    };
    let lastHitEnd = -1;
    for (const hit of findMatches(span, o.matcher, (at) => {
      const n = lines.numberAt(at);
      if (n === skipped.lastLine) return;
      skipped.count++;
      skipped.first ??= n;
      skipped.lastLine = n;
    })) {
      const same = carried && hit.lineStart === 0;
      lastHitEnd = hit.lineEnd;
      // The rest of a line counted in the span before.
      if (same) continue;
      total++;
      if (full) {
        if (nextOffset === null) nextOffset = lines.numberAt(hit.lineStart);
        continue;
      }
      const line = lines.numberAt(hit.lineStart);
      // A line after a match is context only when it is not a match itself.
      flushAfter(line);
      if (full) {
        nextOffset = line;
        continue;
      }
      if (returned >= o.maxMatches) {
        stop(line);
        continue;
      }
      const whole = lines.textAt(hit.lineStart, hit.lineEnd);
      // A fixed string's offset is in bytes; the line is cut around it in characters.
      const at =
        o.matcher.kind === 'bytes' && whole.length > o.maxLineChars
          ? lines.textAt(hit.lineStart, hit.lineStart + hit.at).length
          : hit.at;
      const text = clip(whole, o.maxLineChars, at);
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
        stop(line);
        continue;
      }
      for (const c of ctx) show(c.line, c.text, false);
      show(line, text, true);
      returned++;
      afterUntil = line + o.context;
    }
    // The rest of this span holds no match: its lines after the last one are context.
    flushAfter(Number.POSITIVE_INFINITY);
    // The lines before the next span: this span's last ones, and the span before's when this one is short.
    if (o.context > 0) {
      const tail = lines.tail(o.context);
      const first = tail[0]?.line ?? Number.POSITIVE_INFINITY;
      before = [...before.filter((b) => b.line < first), ...tail].slice(-o.context);
    }
    // (In characters once a regex has decoded the span.)
    carried = span.open === true && (lastHitEnd === lines.length() || (carried && lines.isOneLine()));
  }
  return {
    totalMatches: total,
    returnedMatches: returned,
    lines: out,
    nextOffset,
    ...(skipped.first !== undefined ? { longLinesSkipped: { count: skipped.count, first: skipped.first } } : {}),
  };
}

/** Lines a regex search left out for their length. */
interface Skipped {
  count: number;
  first?: number;
  /** The last one counted (a line cut into several spans counts once). */
  lastLine: number;
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
  /** Its last line goes on in the next span (a line longer than the largest span, cut). */
  open?: boolean;
}

/** The most bytes between two checkpoints (or the last one and the end). */
function largestStretch(index: LineIndex, size: number): number {
  let most = 0;
  for (let k = 0; k < index.bytes.length; k++) {
    most = Math.max(most, (index.bytes[k + 1] ?? size) - index.bytes[k]!);
  }
  return most;
}

/**
 * The bytes from line `from` on, a checkpoint's stretch at a time, read into two buffers that take
 * turns: the next stretch is read while this one is searched, and nothing is allocated or copied per
 * MiB. Each span is valid until the next is asked for.
 */
async function* stretchesOf(
  src: LineSource,
  index: LineIndex,
  from: number,
  spanBytes: number,
  pieceBytes?: number,
): AsyncGenerator<Span> {
  const reader = await src.openReader!();
  const buffers = [new Uint8Array(spanBytes * 2), new Uint8Array(spanBytes * 2)];
  const read = async (k: number, which: number): Promise<Uint8Array> => {
    const start = index.bytes[k]!;
    const length = (index.bytes[k + 1] ?? src.size) - start;
    if (buffers[which]!.byteLength < length) buffers[which] = new Uint8Array(length);
    const buf = buffers[which]!;
    let got = 0;
    while (got < length) {
      const n = await reader.read(buf.subarray(got, length), start + got);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got);
  };
  let k = index.bytes.indexOf(checkpointBefore(index, from).byte);
  let which = 0;
  let pending: Promise<Uint8Array> | undefined = read(k, which);
  try {
    for (; k < index.bytes.length; k++) {
      const bytes = await pending!;
      pending = k + 1 < index.bytes.length ? read(k + 1, 1 - which) : undefined;
      let view = bytes;
      let line = index.lines[k]!;
      if (line < from) {
        const s = searchable(view);
        let at = 0;
        for (; line < from; line++) {
          const i = s.indexOfByte(10, at);
          if (i === -1) break;
          at = i + 1;
        }
        view = view.subarray(at);
      }
      if (pieceBytes === undefined) {
        if (view.byteLength > 0) yield { s: searchable(view), startLine: line };
      } else yield* piecesOf(view, line, pieceBytes);
      which = 1 - which;
    }
  } finally {
    await pending?.catch(() => {});
    await reader.close();
  }
}

/** A stretch in pieces of whole lines of about `size` bytes (a longer line is a piece of its own): a regex's spans. */
function* piecesOf(view: Uint8Array, startLine: number, size: number): Generator<Span> {
  const s = searchable(view);
  let at = 0;
  let line = startLine;
  while (at < view.byteLength) {
    let cut = view.byteLength;
    if (at + size < view.byteLength) {
      const nl = view.lastIndexOf(10, at + size - 1);
      if (nl >= at) cut = nl + 1;
      else {
        const end = s.indexOfByte(10, at + size);
        cut = end === -1 ? view.byteLength : end + 1;
      }
    }
    const piece = view.subarray(at, cut);
    const ps = searchable(piece);
    yield { s: ps, startLine: line };
    line += countNewlines(ps, 0, piece.byteLength);
    at = cut;
  }
}

/**
 * The bytes from line `from` on, in spans of whole lines. With the index complete, spans end at its
 * checkpoints, whose line numbers are known; the first span is counted from the line sought.
 */
async function* spansOf(
  src: LineSource,
  index: LineIndex,
  from: number,
  target: number,
  maxSpan: number,
): AsyncGenerator<Span> {
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
        else if (buf.byteLength >= maxSpan) cut = buf.byteLength;
      }
      if (cut <= 0) {
        carry = buf;
        if (done) return;
        want = buf.byteLength + 1;
        continue;
      }
      const spanBytes = buf.subarray(0, cut);
      const ss = searchable(spanBytes);
      const open = spanBytes[cut - 1] !== 10 && !(done && cut === buf.byteLength);
      yield { s: ss, startLine: line, ...(open ? { open } : {}) };
      line = cutLine ?? line + countNewlines(ss, 0, spanBytes.byteLength);
      byte += cut;
      carry = buf.subarray(cut);
    }
  } finally {
    // A search stopped early (its deadline) lets go of the stream's file or connection.
    await reader.cancel().catch(() => {});
  }
}

interface Hit {
  /** Byte (or, for a regex, character) offset of the match's line, its end, and the match. */
  lineStart: number;
  lineEnd: number;
  at: number;
}

/** Each matching line of a span once, in order. Offsets are bytes, or characters for a regex. */
function* findMatches(span: Span, m: LineMatcher, tooLong: (lineStart: number) => void): Generator<Hit> {
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
  span.text ??= utf8().decode(bytes);
  const text = span.text;
  if (text.length > MAX_REGEX_LINE_CHARS) {
    // Long lines here: each line on its own, and those too long to run a regex over are left out.
    for (let start = 0; start < text.length; ) {
      let end = text.indexOf('\n', start);
      if (end === -1) end = text.length;
      if (end - start > MAX_REGEX_LINE_CHARS) tooLong(start);
      else {
        const own = m.line.exec(text.slice(start, end));
        if (own) yield { lineStart: start, lineEnd: end, at: own.index };
      }
      start = end + 1;
    }
    return;
  }
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
  const decoder = utf8();
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
    length,
    /** Whether the span holds no line end (a piece of one long line). */
    isOneLine: () => nextBreak(0) === -1,
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
