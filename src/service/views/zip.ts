/**
 * The ZIP view: the entries of an archive (.zip, .twbx, .docx, .jar, ...) and the bytes of one entry.
 * Only the end of the archive and its central directory are read to list it, by ranged reads of the
 * blob, so a 200 MB archive costs a few reads of its tail; an entry is inflated on the fly as it is
 * read, and refused the moment it produces more than the caps allow (the sizes an archive declares
 * can lie, so the caps count what comes out). Web standards only: zip.js runs inline (no workers)
 * over the runtime's DecompressionStream, with its pure-JS inflater where the runtime has none.
 */
import {
  configure,
  type Entry,
  ERR_AMBIGUOUS_ARCHIVE,
  ERR_BAD_FORMAT,
  ERR_CENTRAL_DIRECTORY_NOT_FOUND,
  ERR_ENCRYPTED,
  ERR_ENCRYPTED_CENTRAL_DIRECTORY,
  ERR_ENTRY_DATA_OUT_OF_BOUNDS,
  ERR_EOCDR_LOCATOR_ZIP64_NOT_FOUND,
  ERR_EOCDR_NOT_FOUND,
  ERR_EXTRAFIELD_ZIP64_NOT_FOUND,
  ERR_INVALID_COMPRESSED_DATA,
  ERR_INVALID_UNCOMPRESSED_SIZE,
  ERR_LOCAL_FILE_HEADER_NOT_FOUND,
  ERR_SPLIT_ZIP_FILE,
  ERR_UNSUPPORTED_COMPRESSION,
  ERR_UNSUPPORTED_ENCRYPTION,
  ERR_UNSUPPORTED_UINT64,
  type FileEntry,
  Reader,
  ZipReader,
  type ZipReaderConstructorOptions,
} from '@zip.js/zip.js/lib/zip-core-native.js';
import { formatBytes } from '../../core/bytes.js';
import { type ArtifactError, errors, isArtifactError } from '../../core/errors.js';
import type { ByteSource } from './types.js';

/** One entry of an archive, as its central directory declares it. */
export interface ZipEntryInfo {
  /** The path inside the archive, as stored ("Data/Extracts/sales.hyper"; folders end in "/"). */
  name: string;
  /** Uncompressed size, as declared (reading enforces the caps on what the entry really produces). */
  sizeBytes: number;
  compressedBytes: number;
  /** Last modification (ISO 8601), when the archive records a valid one. */
  modifiedAt?: string;
  directory: boolean;
  encrypted: boolean;
}

export interface ZipListLimits {
  /**
   * Entries an archive may hold to be listed (default 10,000). More is refused as `unprocessable`,
   * with the count, before the directory is read: a part of a listing would read as the whole of it.
   * A caller that only searches the names can afford a higher cap.
   */
  maxEntries?: number;
}

export interface ZipEntryLimits {
  /** Bytes an entry may expand to (default 64 MiB). */
  maxBytes?: number;
  /** How many times its compressed size an entry may expand to, past the first MiB (default 200). */
  maxRatio?: number;
  /** Entries an archive may hold for one of them to be opened by name (default 100,000). */
  maxEntries?: number;
}

export const ZIP_DEFAULT_MAX_ENTRIES = 10_000;
export const ZIP_DEFAULT_MAX_ENTRY_BYTES = 64 * 1024 * 1024;
export const ZIP_DEFAULT_MAX_RATIO = 200;
/** Opening one entry walks the whole directory but keeps no listing, so it allows more entries. */
const OPEN_DEFAULT_MAX_ENTRIES = 100_000;
/** Below this many bytes produced the ratio cap does not apply: small entries of repeated text are fine. */
const RATIO_FLOOR_BYTES = 1024 * 1024;
/** A central directory is read in one piece; past this size it is refused whatever its entry count. */
const MAX_DIRECTORY_BYTES = 64 * 1024 * 1024;
/** The end of central directory record (22 bytes) plus the longest comment it may carry. */
const EOCD_SEARCH_BYTES = 22 + 0xffff;
/** Names offered when an entry is not found. */
const SUGGESTIONS = 5;

const DOWNLOAD_HINT = 'download the archive with artifact_url';

// No web workers (Workers and the service's own runtimes have no use for them), the runtime's own
// DecompressionStream. Set once for the module; every reader below also passes the same options, so
// another module configuring zip.js differently cannot change how archives are read here.
const ZIP_OPTIONS = { useWebWorkers: false, useCompressionStream: true } as const;
configure(ZIP_OPTIONS);

/** The first bytes of a ZIP archive: a local file header, or the end record of an empty archive. */
export function isZipMagic(head: Uint8Array): boolean {
  return (
    head.length >= 4 &&
    head[0] === 0x50 &&
    head[1] === 0x4b &&
    ((head[2] === 0x03 && head[3] === 0x04) || (head[2] === 0x05 && head[3] === 0x06))
  );
}

/** The entries of an archive, in central directory order, reading only its tail and its directory. */
export async function listZipEntries(src: ByteSource, limits: ZipListLimits = {}): Promise<ZipEntryInfo[]> {
  const maxEntries = limits.maxEntries ?? ZIP_DEFAULT_MAX_ENTRIES;
  const zip = await openArchive(src, maxEntries, 'list');
  try {
    const out: ZipEntryInfo[] = [];
    for await (const entry of zip.getEntriesGenerator()) {
      // The end record's count can be wrong (it wraps at 65,535 without ZIP64): count again.
      if (out.length >= maxEntries) throw tooManyEntries(`more than ${maxEntries.toLocaleString('en-US')}`, maxEntries);
      out.push(entryInfo(entry));
    }
    return out;
  } catch (err) {
    throw archiveError(err);
  } finally {
    await zip.close();
  }
}

/**
 * One entry's uncompressed bytes as a stream, inflated as the stream is read. The stream errors with
 * `unprocessable` once the entry has produced more than `maxBytes`, or more than `maxRatio` times its
 * compressed size (past the first MiB); inflating stops there, and stops when the stream is cancelled.
 * Three guards, cheapest first: the declared size against the caps (refused here, before any
 * inflating); zip.js, which fails an entry the moment it produces more than its declared size (so a
 * header that says 10 bytes lets 10 bytes out); and the caps again on the bytes that come out.
 */
export async function openZipEntry(
  src: ByteSource,
  name: string,
  limits: ZipEntryLimits = {},
): Promise<{ info: ZipEntryInfo; stream: ReadableStream<Uint8Array> }> {
  const maxBytes = limits.maxBytes ?? ZIP_DEFAULT_MAX_ENTRY_BYTES;
  const maxRatio = limits.maxRatio ?? ZIP_DEFAULT_MAX_RATIO;
  const maxEntries = limits.maxEntries ?? OPEN_DEFAULT_MAX_ENTRIES;
  const zip = await openArchive(src, maxEntries, 'open');
  // The first file of that name (an archive may repeat a name); a folder of that name ("Data" or
  // "Data/") only when no file has it. The names are kept to suggest some when nothing matches.
  let found: FileEntry | undefined;
  let folder: string | undefined;
  const names: string[] = [];
  try {
    for await (const entry of zip.getEntriesGenerator()) {
      if (names.length >= maxEntries)
        throw tooManyEntries(`more than ${maxEntries.toLocaleString('en-US')}`, maxEntries, 'open');
      names.push(entry.filename);
      if (entry.directory) {
        if (folder === undefined && (entry.filename === name || entry.filename === `${name}/`)) folder = entry.filename;
      } else if (entry.filename === name) {
        found = entry;
        break;
      }
    }
  } catch (err) {
    throw archiveError(err);
  } finally {
    await zip.close();
  }
  if (!found && folder !== undefined) {
    const inside = names.filter((n) => n !== folder && n.startsWith(folder)).slice(0, SUGGESTIONS);
    throw errors.badRequest(
      `${JSON.stringify(name)} is a folder in this archive, not a file.${inside.length > 0 ? ` Read one of its entries: ${quoteList(inside)}.` : ' List the archive to see its files.'}`,
    );
  }
  if (!found) throw unknownEntry(name, names);
  const info = entryInfo(found);
  if (found.encrypted)
    throw errors.unprocessable(
      `The entry ${name} is encrypted, and this service holds no password to read it; ${DOWNLOAD_HINT}.`,
    );
  // What the archive declares is checked first (cheap), what the entry produces is checked as it comes.
  const caps = { name, sizeBytes: info.sizeBytes, maxBytes, maxRatio, compressedBytes: info.compressedBytes };
  const declared = overCap(info.sizeBytes, caps);
  if (declared) throw declared;
  return { info, stream: entryStream(found, caps) };
}

interface Caps {
  name: string;
  /** The uncompressed size the archive declares (zip.js holds the entry to it). */
  sizeBytes: number;
  maxBytes: number;
  maxRatio: number;
  compressedBytes: number;
}

/** The error for an entry that has produced (or declares) `produced` bytes, if that passes a cap. */
function overCap(produced: number, caps: Caps): ArtifactError | undefined {
  if (produced > caps.maxBytes)
    return errors.unprocessable(
      `The entry ${caps.name} expands past ${formatBytes(caps.maxBytes)} (a ZIP bomb, or too large to read here); ${DOWNLOAD_HINT}.`,
      { details: { entry: caps.name, limitBytes: caps.maxBytes } },
    );
  if (produced > RATIO_FLOOR_BYTES && produced > caps.maxRatio * caps.compressedBytes)
    return errors.unprocessable(
      `The entry ${caps.name} expands to more than ${caps.maxRatio} times its compressed size of ${formatBytes(caps.compressedBytes)} (a ZIP bomb, or too large to read here); ${DOWNLOAD_HINT}.`,
      { details: { entry: caps.name, maxRatio: caps.maxRatio, compressedBytes: caps.compressedBytes } },
    );
  return undefined;
}

/**
 * The entry's bytes, pulled through zip.js one chunk at a time: nothing is inflated ahead of what the
 * reader asks for beyond a chunk or two in flight, so memory stays bounded whatever the entry holds.
 */
function entryStream(entry: FileEntry, caps: Caps): ReadableStream<Uint8Array> {
  let pipe!: TransformStreamDefaultController<Uint8Array>;
  const inner = new TransformStream<Uint8Array, Uint8Array>({
    start(controller) {
      pipe = controller;
    },
  });
  const abort = new AbortController();
  entry.getData(inner.writable, { ...ZIP_OPTIONS, signal: abort.signal }).catch((err) => {
    // zip.js errors the writable itself once it has it; a failure before that (the local header is
    // missing, say) reaches the reader through here. Either way the reader sees the first error.
    try {
      pipe.error(err);
    } catch {
      // Already closed or errored.
    }
  });
  const source = inner.readable.getReader();
  let produced = 0;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await source.read();
        } catch (err) {
          controller.error(entryError(err, caps));
          return;
        }
        if (chunk.done) {
          controller.close();
          return;
        }
        produced += chunk.value.byteLength;
        const over = overCap(produced, caps);
        if (over) {
          // Stops the inflater now: the pipe into zip.js's writable breaks and it cancels its source.
          abort.abort(over);
          await source.cancel(over).catch(() => {});
          controller.error(over);
          return;
        }
        controller.enqueue(chunk.value);
      },
      async cancel(reason) {
        abort.abort(reason);
        await source.cancel(reason).catch(() => {});
      },
    },
    { highWaterMark: 0 },
  );
}

function entryInfo(entry: Entry): ZipEntryInfo {
  const info: ZipEntryInfo = {
    name: entry.filename,
    sizeBytes: entry.uncompressedSize,
    compressedBytes: entry.compressedSize,
    directory: entry.directory,
    encrypted: entry.encrypted,
  };
  const modified = entry.lastModDate;
  if (modified instanceof Date && !Number.isNaN(modified.getTime())) info.modifiedAt = modified.toISOString();
  return info;
}

/**
 * A zip.js Reader over a ByteSource. It holds the archive's tail (read once to find the end record),
 * so zip.js's own search for that record costs no second read.
 */
class BlobReader extends Reader<ByteSource> {
  private readonly src: ByteSource;
  private tail: Uint8Array = new Uint8Array(0);
  private tailStart = 0;

  constructor(src: ByteSource) {
    super(src);
    this.src = src;
    this.size = src.size;
  }

  override async init(): Promise<void> {
    this.size = this.src.size;
  }

  /** Reads the last `length` bytes and keeps them. */
  async readTail(length: number): Promise<Uint8Array> {
    const start = Math.max(0, this.size - length);
    this.tail = this.size > 0 ? await this.src.read(start, this.size - 1) : new Uint8Array(0);
    this.tailStart = start;
    return this.tail;
  }

  override async readUint8Array(offset: number, length: number): Promise<Uint8Array> {
    const end = Math.min(offset + length, this.size);
    if (end <= offset) return new Uint8Array(0);
    if (offset >= this.tailStart && end <= this.tailStart + this.tail.byteLength)
      return this.tail.subarray(offset - this.tailStart, end - this.tailStart);
    return this.src.read(offset, end - 1);
  }
}

/** What the end of central directory record says: where the directory is and how many entries it holds. */
interface DirectoryEnd {
  entries: number;
  directoryBytes: number;
}

/**
 * Finds the archive's end record in its tail and reads the entry count from it (and from the ZIP64
 * end record when the 16-bit fields overflowed), so an archive with too many entries or a huge
 * directory is refused before zip.js reads that directory into memory.
 */
async function readDirectoryEnd(reader: BlobReader): Promise<DirectoryEnd | undefined> {
  const tail = await reader.readTail(EOCD_SEARCH_BYTES);
  const view = new DataView(tail.buffer, tail.byteOffset, tail.byteLength);
  for (let at = tail.byteLength - 22; at >= 0; at--) {
    if (view.getUint32(at, true) !== 0x06054b50) continue;
    // A comment cannot run past the end of the file: the signature inside a comment is no record.
    if (at + 22 + view.getUint16(at + 20, true) > tail.byteLength) continue;
    let entries = view.getUint16(at + 10, true);
    let directoryBytes = view.getUint32(at + 12, true);
    const zip64 = entries === 0xffff || directoryBytes === 0xffffffff || view.getUint32(at + 16, true) === 0xffffffff;
    if (zip64) {
      const record = await zip64DirectoryEnd(reader, view, at);
      if (record) ({ entries, directoryBytes } = record);
    }
    return { entries, directoryBytes };
  }
  return undefined;
}

/** The ZIP64 end record, found through its locator just before the end record (at `eocd` in `view`). */
async function zip64DirectoryEnd(reader: BlobReader, view: DataView, eocd: number): Promise<DirectoryEnd | undefined> {
  const locator = eocd - 20;
  if (locator < 0 || view.getUint32(locator, true) !== 0x07064b50) return undefined;
  const recordOffset = Number(view.getBigUint64(locator + 8, true));
  if (!Number.isSafeInteger(recordOffset) || recordOffset + 56 > reader.size) return undefined;
  const record = await reader.readUint8Array(recordOffset, 56);
  const rv = new DataView(record.buffer, record.byteOffset, record.byteLength);
  if (record.byteLength < 56 || rv.getUint32(0, true) !== 0x06064b50) return undefined;
  return { entries: Number(rv.getBigUint64(32, true)), directoryBytes: Number(rv.getBigUint64(40, true)) };
}

async function openArchive(
  src: ByteSource,
  maxEntries: number,
  purpose: 'list' | 'open',
): Promise<ZipReader<ByteSource>> {
  const reader = new BlobReader(src);
  const end = src.size >= 22 ? await readDirectoryEnd(reader) : undefined;
  if (!end) throw notZip();
  if (end.entries > maxEntries) throw tooManyEntries(end.entries.toLocaleString('en-US'), maxEntries, purpose);
  if (end.directoryBytes > MAX_DIRECTORY_BYTES)
    throw errors.unprocessable(
      `The archive's table of contents is ${formatBytes(end.directoryBytes)}, more than the ${formatBytes(MAX_DIRECTORY_BYTES)} read here; ${DOWNLOAD_HINT}.`,
    );
  const options: ZipReaderConstructorOptions = {
    ...ZIP_OPTIONS,
    // Names are shown, never extracted to a disk: list "../x" or "/etc/x" as the archive stores them.
    filenameValidation: 'tolerant',
  };
  return new ZipReader(reader, options);
}

function tooManyEntries(count: string, maxEntries: number, purpose: 'list' | 'open' = 'list'): ArtifactError {
  const limit = maxEntries.toLocaleString('en-US');
  return errors.unprocessable(
    purpose === 'list'
      ? `The archive holds ${count} entries, more than the ${limit} listed here. Search the listing for the names you need, or ${DOWNLOAD_HINT}.`
      : `The archive holds ${count} entries, more than the ${limit} read here; ${DOWNLOAD_HINT}.`,
    { details: { limitEntries: maxEntries } },
  );
}

function notZip(detail = 'it has no ZIP end of central directory record'): ArtifactError {
  return errors.unprocessable(
    `This artifact is not a readable ZIP archive (${detail}). Read it as text if it is text, or ${DOWNLOAD_HINT}.`,
  );
}

const NOT_ZIP = new Set<string>([
  ERR_BAD_FORMAT,
  ERR_EOCDR_NOT_FOUND,
  ERR_EOCDR_LOCATOR_ZIP64_NOT_FOUND,
  ERR_CENTRAL_DIRECTORY_NOT_FOUND,
  ERR_EXTRAFIELD_ZIP64_NOT_FOUND,
  ERR_UNSUPPORTED_UINT64,
  ERR_AMBIGUOUS_ARCHIVE,
]);

/** A failure while reading the directory, as an ArtifactError; the blob's own errors pass through. */
function archiveError(err: unknown): unknown {
  if (isArtifactError(err)) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (message === ERR_SPLIT_ZIP_FILE) return notZip('it is one part of a split archive');
  if (message === ERR_ENCRYPTED_CENTRAL_DIRECTORY) return notZip('its table of contents is encrypted');
  if (NOT_ZIP.has(message) || err instanceof RangeError)
    return notZip(`its table of contents is damaged or cut short: ${message.toLowerCase()}`);
  return err;
}

/** A failure while inflating an entry, as an ArtifactError; the blob's own errors pass through. */
function entryError(err: unknown, caps: Caps): unknown {
  const name = caps.name;
  if (isArtifactError(err)) return err;
  const message = err instanceof Error ? err.message : String(err);
  // zip.js stops an entry the moment it produces more than its declared size, and fails one that
  // ends short of it; which of the two it was is not told apart.
  if (message === ERR_INVALID_UNCOMPRESSED_SIZE)
    return errors.unprocessable(
      `The entry ${name} does not expand to the ${formatBytes(caps.sizeBytes)} the archive declares for it (a ZIP bomb, or a damaged archive); ${DOWNLOAD_HINT}.`,
    );
  if (message === ERR_UNSUPPORTED_COMPRESSION)
    return errors.unprocessable(
      `The entry ${name} is compressed with a method this service does not read; ${DOWNLOAD_HINT}.`,
    );
  if (message === ERR_ENCRYPTED || message === ERR_UNSUPPORTED_ENCRYPTION)
    return errors.unprocessable(
      `The entry ${name} is encrypted, and this service holds no password to read it; ${DOWNLOAD_HINT}.`,
    );
  if (
    message === ERR_INVALID_COMPRESSED_DATA ||
    message === ERR_LOCAL_FILE_HEADER_NOT_FOUND ||
    message === ERR_ENTRY_DATA_OUT_OF_BOUNDS ||
    message === ERR_AMBIGUOUS_ARCHIVE ||
    err instanceof TypeError
  )
    return errors.unprocessable(`The entry ${name} is damaged (${message.toLowerCase()}); ${DOWNLOAD_HINT}.`, {
      cause: err,
    });
  return archiveError(err);
}

function unknownEntry(name: string, names: string[]): ArtifactError {
  const closest = closestNames(name, names, SUGGESTIONS);
  const offer =
    closest.length > 0
      ? ` The closest names: ${quoteList(closest)}.`
      : names.length > 0
        ? ` Its first entries: ${quoteList(names.slice(0, SUGGESTIONS))}.`
        : ' The archive is empty.';
  return errors.badRequest(
    `No entry ${JSON.stringify(name)} in this archive.${offer} List the archive (no entry) to see every name.`,
    { details: { entry: name, suggestions: closest } },
  );
}

function quoteList(names: string[]): string {
  return names.map((n) => JSON.stringify(n)).join(', ');
}

/**
 * The names closest to `wanted`, best first: the same path but for case, then the same file name in
 * another folder, then by edit distance (within about a third of the name's length).
 */
function closestNames(wanted: string, names: readonly string[], count: number): string[] {
  const lower = wanted.toLowerCase();
  const base = baseName(lower);
  const limit = Math.max(2, Math.floor(wanted.length / 3));
  const scored: { name: string; score: number }[] = [];
  for (const name of new Set(names)) {
    const other = name.toLowerCase();
    let score: number;
    if (other === lower) score = 0;
    else if (baseName(other) === base) score = 1;
    else if (other.startsWith(lower) || lower.startsWith(other.replace(/\/$/, ''))) score = 2;
    else {
      const d = boundedDistance(lower, other, limit);
      if (d > limit) {
        // A file name close to the wanted one's, wherever it sits ("Data/sales.csv" for "sale.csv").
        const b = boundedDistance(base, baseName(other), Math.max(1, Math.floor(base.length / 3)));
        if (b > Math.max(1, Math.floor(base.length / 3))) continue;
        score = 3 + limit + b;
      } else score = 3 + d;
    }
    scored.push({ name, score });
  }
  scored.sort((a, b) => a.score - b.score || a.name.localeCompare(b.name));
  return scored.slice(0, count).map((s) => s.name);
}

function baseName(path: string): string {
  const trimmed = path.endsWith('/') ? path.slice(0, -1) : path;
  return trimmed.slice(trimmed.lastIndexOf('/') + 1);
}

/** Edit distance, or `limit + 1` as soon as it is known to pass `limit` (names can be long). */
function boundedDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      best = Math.min(best, row[j]!);
    }
    if (best > limit) return limit + 1;
    prev = row;
  }
  return prev[b.length]!;
}
