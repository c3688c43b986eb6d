/**
 * The ZIP and image views over a ByteSource: listing reads only an archive's tail and directory,
 * entries come out exact (checked against Info-ZIP's unzip), ZIP bombs and lying headers are stopped
 * with bounded memory, and an image's type and size come from a bounded prefix of its bytes.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32, deflateRawSync, deflateSync } from 'node:zlib';
import {
  TextReader,
  Uint8ArrayReader,
  Uint8ArrayWriter,
  ZipWriter,
  type ZipWriterAddDataOptions,
} from '@zip.js/zip.js/lib/zip-core-native.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { concatBytes, streamOfBytes } from '../src/core/bytes.js';
import { ArtifactError } from '../src/core/errors.js';
import { imageInfo } from '../src/service/views/image.js';
import { type ZipEntryInfo, isZipMagic, listZipEntries, openZipEntry } from '../src/service/views/zip.js';
import type { ByteSource } from '../src/service/views/types.js';
import { rawZip, zerosDeflated } from './helpers/zip-bomb.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;

/** A ByteSource over bytes in memory that counts what is read of it. */
interface CountingSource extends ByteSource {
  bytesRead: number;
  reads: number;
}

function memorySource(bytes: Uint8Array): CountingSource {
  const src: CountingSource = {
    size: bytes.byteLength,
    sha256: 'test',
    bytesRead: 0,
    reads: 0,
    async read(start, end) {
      if (start < 0 || end >= bytes.byteLength || end < start) throw new RangeError(`bad range ${start}-${end}`);
      src.reads++;
      src.bytesRead += end - start + 1;
      return bytes.slice(start, end + 1);
    },
    async stream(start = 0, end = bytes.byteLength - 1) {
      src.reads++;
      src.bytesRead += end - start + 1;
      return streamOfBytes(bytes.slice(start, end + 1));
    },
  };
  return src;
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  const reader = stream.getReader();
  for (let next = await reader.read(); !next.done; next = await reader.read()) chunks.push(next.value);
  return concatBytes(chunks);
}

/**
 * Reads a stream to its end or its error, keeping nothing: how many bytes came out, the error, and
 * the highest resident set size seen on the way.
 */
async function drain(stream: ReadableStream<Uint8Array>): Promise<{ bytes: number; error?: unknown; peakRss: number }> {
  let bytes = 0;
  let peakRss = process.memoryUsage().rss;
  let chunks = 0;
  const reader = stream.getReader();
  try {
    for (let next = await reader.read(); !next.done; next = await reader.read()) {
      bytes += next.value.byteLength;
      if (++chunks % 16 === 0) peakRss = Math.max(peakRss, process.memoryUsage().rss);
    }
    return { bytes, peakRss: Math.max(peakRss, process.memoryUsage().rss) };
  } catch (error) {
    return { bytes, error, peakRss: Math.max(peakRss, process.memoryUsage().rss) };
  }
}

async function caught(promise: Promise<unknown>): Promise<ArtifactError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(ArtifactError);
    return err as ArtifactError;
  }
  throw new Error('expected an ArtifactError');
}

const text = (s: string) => new TextEncoder().encode(s);

// ---------------------------------------------------------------------------------------------------
// Archives made here: with zip.js's writer, and by hand where the headers must say what zip.js
// would never write (sizes that lie, ZIP64 sizes, a bomb's deflate stream: test/helpers/zip-bomb.ts).

async function zipWith(
  entries: { name: string; data?: Uint8Array | string; options?: ZipWriterAddDataOptions }[],
  { zip64 = false } = {},
): Promise<Uint8Array> {
  const writer = new ZipWriter(new Uint8ArrayWriter(), { useWebWorkers: false, zip64 });
  for (const { name, data, options } of entries) {
    const reader =
      data === undefined ? undefined : typeof data === 'string' ? new TextReader(data) : new Uint8ArrayReader(data);
    await writer.add(name, reader, options);
  }
  return writer.close();
}

// ---------------------------------------------------------------------------------------------------
// A Tableau packaged workbook (.twbx): the workbook XML at the root, an extract, an image.

const MODIFIED = new Date('2024-05-01T12:34:56Z');
const TWB = [
  "<?xml version='1.0' encoding='utf-8' ?>",
  "<workbook source-build='2024.1.0' version='18.1' xmlns:user='http://www.tableausoftware.com/xml/user'>",
  '  <datasources>',
  "    <datasource caption='Sales' inline='true' name='federated.sales' version='18.1'>",
  ...Array.from(
    { length: 300 },
    (_, i) =>
      `      <column caption='Measure ${i}' datatype='real' name='[Sales ${i}]' role='measure' type='quantitative' />`,
  ),
  '    </datasource>',
  '  </datasources>',
  '</workbook>',
  '',
].join('\n');
const HYPER = new Uint8Array(randomBytes(20 * MiB));
const LOGO = png(40, 20);

let twbx: Uint8Array;
let work: string;

beforeAll(async () => {
  twbx = await zipWith([
    { name: 'Sales.twb', data: TWB, options: { lastModDate: MODIFIED } },
    { name: 'Data/', options: { directory: true, lastModDate: MODIFIED } },
    { name: 'Data/Extracts/sales.hyper', data: HYPER, options: { level: 0, lastModDate: MODIFIED } },
    { name: 'Image/logo.png', data: LOGO, options: { lastModDate: MODIFIED } },
  ]);
  work = mkdtempSync(join(tmpdir(), 'views-zip-'));
});

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

function hasUnzip(): boolean {
  try {
    execFileSync('unzip', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
if (process.env.CI && !hasUnzip())
  throw new Error('CI needs unzip, the reference for the ZIP reader: .ci/run installs it');

describe('listZipEntries', () => {
  it('lists a .twbx as written, reading only its tail and directory', async () => {
    const src = memorySource(twbx);
    const entries = await listZipEntries(src);
    expect(entries.map((e) => e.name)).toEqual(['Sales.twb', 'Data/', 'Data/Extracts/sales.hyper', 'Image/logo.png']);
    const byName = new Map(entries.map((e) => [e.name, e]));
    expect(byName.get('Sales.twb')).toMatchObject({
      sizeBytes: text(TWB).byteLength,
      directory: false,
      encrypted: false,
      modifiedAt: MODIFIED.toISOString(),
    });
    expect(byName.get('Sales.twb')!.compressedBytes).toBeLessThan(text(TWB).byteLength / 4);
    expect(byName.get('Data/')).toMatchObject({ directory: true, sizeBytes: 0 });
    expect(byName.get('Data/Extracts/sales.hyper')).toMatchObject({
      sizeBytes: HYPER.byteLength,
      compressedBytes: HYPER.byteLength,
    });
    expect(byName.get('Image/logo.png')!.sizeBytes).toBe(LOGO.byteLength);
    // A 20 MiB archive listed from its last 64 KiB (which holds the directory here) in one read.
    expect(src.bytesRead).toBeLessThanOrEqual(22 + 0xffff);
    expect(src.reads).toBe(1);
  });

  it('agrees with Info-ZIP unzip on names and content', async (ctx) => {
    if (!hasUnzip()) {
      ctx.skip(true, 'Info-ZIP unzip is not installed (apt-get install -y unzip)');
      return;
    }
    const path = join(work, 'sales.twbx');
    writeFileSync(path, twbx);
    const names = execFileSync('unzip', ['-Z1', path], { encoding: 'utf8' }).trim().split('\n');
    expect((await listZipEntries(memorySource(twbx))).map((e) => e.name)).toEqual(names);
    for (const name of ['Sales.twb', 'Image/logo.png']) {
      const expected = execFileSync('unzip', ['-p', path, name], { maxBuffer: 64 * MiB });
      const { stream } = await openZipEntry(memorySource(twbx), name);
      expect(Buffer.from(await readAll(stream)).equals(expected)).toBe(true);
    }
  });

  it('lists an empty archive as no entries', async () => {
    const empty = await zipWith([]);
    expect(isZipMagic(empty)).toBe(true);
    expect(await listZipEntries(memorySource(empty))).toEqual([]);
  });

  it('refuses what is not a ZIP, with a message that says what to do', async () => {
    for (const bytes of [text('{"not": "a zip"}\n'.repeat(100)), new Uint8Array(0), text('PK')]) {
      const err = await caught(listZipEntries(memorySource(bytes)));
      expect(err.code).toBe('unprocessable');
      expect(err.status).toBe(422);
      expect(err.message).toMatch(/not a readable ZIP archive/);
      expect(err.message).toMatch(/artifact_url/);
    }
  });

  it('refuses a truncated or damaged archive', async () => {
    // Cut anywhere: the end record is gone.
    for (const cut of [twbx.byteLength / 2, twbx.byteLength - 10]) {
      const err = await caught(listZipEntries(memorySource(twbx.slice(0, Math.floor(cut)))));
      expect(err.code).toBe('unprocessable');
      expect(err.message).toMatch(/not a readable ZIP archive/);
    }
    // The end record intact, the directory it points at overwritten.
    const damaged = twbx.slice();
    const view = new DataView(damaged.buffer);
    const directoryAt = view.getUint32(damaged.byteLength - 22 + 16, true);
    damaged.fill(0x41, directoryAt, directoryAt + 8);
    const err = await caught(listZipEntries(memorySource(damaged)));
    expect(err.code).toBe('unprocessable');
    expect(err.message).toMatch(/damaged or cut short/);
  });

  it('refuses an archive of more entries than the cap before reading its directory', async () => {
    const many = rawZip(
      Array.from({ length: 20_000 }, (_, i) => ({
        name: `files/part-${String(i).padStart(5, '0')}.csv`,
        data: text(`${i}\n`),
        method: 0 as const,
        declaredSize: `${i}\n`.length,
        crc: crc32(`${i}\n`),
      })),
    );
    const src = memorySource(many);
    const err = await caught(listZipEntries(src));
    expect(err.code).toBe('unprocessable');
    expect(err.message).toMatch(/holds 20,000 entries, more than the 10,000 listed here/);
    expect(err.message).toMatch(/Search the listing/);
    expect(err.details).toEqual({ limitEntries: 10_000 });
    expect(src.bytesRead).toBeLessThanOrEqual(22 + 0xffff);

    const all = await listZipEntries(memorySource(many), { maxEntries: 25_000 });
    expect(all).toHaveLength(20_000);
    expect(all[19_999]!.name).toBe('files/part-19999.csv');
    // Opening one entry by name allows more entries than listing does.
    const { stream } = await openZipEntry(memorySource(many), 'files/part-12345.csv');
    expect(new TextDecoder().decode(await readAll(stream))).toBe('12345\n');
  });

  it('reads the entry count of a ZIP64 end record', async () => {
    const archive = await zipWith(
      ['a.txt', 'b.txt', 'c.txt'].map((name) => ({ name, data: name })),
      { zip64: true },
    );
    expect((await listZipEntries(memorySource(archive))).map((e) => [e.name, e.sizeBytes])).toEqual([
      ['a.txt', 5],
      ['b.txt', 5],
      ['c.txt', 5],
    ]);
    const err = await caught(listZipEntries(memorySource(archive), { maxEntries: 2 }));
    expect(err.message).toMatch(/holds 3 entries, more than the 2 listed here/);
  });

  it('reads ZIP64 sizes', async () => {
    const bomb = rawZip([{ name: 'zeros.bin', data: zerosDeflated(1), method: 8, declaredSize: 10 * GiB }]);
    const [entry] = await listZipEntries(memorySource(bomb));
    expect(entry).toMatchObject({ name: 'zeros.bin', sizeBytes: 10 * GiB, directory: false });
  });
});

describe('openZipEntry', () => {
  it('gives an entry its exact bytes, reading little more than the entry', async () => {
    const src = memorySource(twbx);
    const { info, stream } = await openZipEntry(src, 'Sales.twb');
    expect(info).toMatchObject<Partial<ZipEntryInfo>>({ name: 'Sales.twb', sizeBytes: text(TWB).byteLength });
    expect(new TextDecoder().decode(await readAll(stream))).toBe(TWB);
    expect(src.bytesRead).toBeLessThan(200 * KiB);

    const logo = await openZipEntry(memorySource(twbx), 'Image/logo.png');
    expect(await readAll(logo.stream)).toEqual(LOGO);
    const hyper = await openZipEntry(memorySource(twbx), 'Data/Extracts/sales.hyper');
    // Compared as buffers: a deep equality over 20 MiB would take minutes.
    expect(Buffer.from(await readAll(hyper.stream)).equals(HYPER)).toBe(true);
  });

  it('names the closest entries when asked for one that is not there', async () => {
    const typo = await caught(openZipEntry(memorySource(twbx), 'Sales.twbb'));
    expect(typo.code).toBe('bad_request');
    expect(typo.message).toMatch(/No entry "Sales.twbb" in this archive/);
    expect(typo.message).toMatch(/"Sales.twb"/);

    const folderless = await caught(openZipEntry(memorySource(twbx), 'logo.png'));
    expect(folderless.message).toMatch(/The closest names: "Image\/logo.png"/);

    const nothingClose = await caught(openZipEntry(memorySource(twbx), 'zzzzzzzzzzzzzzzz'));
    expect(nothingClose.message).toMatch(/Its first entries: "Sales.twb", "Data\/"/);
  });

  it('refuses a folder and an encrypted entry', async () => {
    const folder = await caught(openZipEntry(memorySource(twbx), 'Data/'));
    expect(folder.code).toBe('bad_request');
    expect(folder.message).toMatch(/is a folder in this archive/);
    expect(folder.message).toMatch(/"Data\/Extracts\/sales.hyper"/);
    expect((await caught(openZipEntry(memorySource(twbx), 'Data'))).message).toMatch(/folder/);

    const locked = await zipWith([
      { name: 'secret.txt', data: 'the password is not here', options: { password: 'hunter2' } },
      { name: 'legacy.txt', data: 'zip crypto', options: { password: 'hunter2', zipCrypto: true } },
    ]);
    const entries = await listZipEntries(memorySource(locked));
    expect(entries.map((e) => e.encrypted)).toEqual([true, true]);
    for (const name of ['secret.txt', 'legacy.txt']) {
      const err = await caught(openZipEntry(memorySource(locked), name));
      expect(err.code).toBe('unprocessable');
      expect(err.message).toMatch(/is encrypted/);
    }
  });

  it('errors the stream when an entry ends short of its declared size', async () => {
    const short = rawZip([
      { name: 'short.txt', data: deflateRawSync(text('only this')), method: 8, declaredSize: 100 },
    ]);
    const { stream } = await openZipEntry(memorySource(short), 'short.txt');
    const out = await drain(stream);
    expect((out.error as ArtifactError).code).toBe('unprocessable');
    expect((out.error as ArtifactError).message).toMatch(/does not expand to the 100 B the archive declares/);
  });

  it('errors the stream when an entry is damaged', async () => {
    const damaged = twbx.slice();
    // The local header is 30 bytes plus the name; the deflate stream follows.
    damaged.fill(0xff, 30 + 'Sales.twb'.length + 10, 30 + 'Sales.twb'.length + 200);
    const { stream } = await openZipEntry(memorySource(damaged), 'Sales.twb');
    const out = await drain(stream);
    expect(out.error).toBeInstanceOf(ArtifactError);
    expect((out.error as ArtifactError).code).toBe('unprocessable');
  });

  it('stops a 10 GiB ZIP bomb at the cap with bounded memory', async () => {
    // Declares 64 MiB (within the default cap, so opening it succeeds) and holds 10 GiB of zeros
    // in ~10 MB of deflate. The stream must fail once 64 MiB has come out, inflating nothing more.
    const compressed = zerosDeflated(10 * 1024);
    const bomb = rawZip([{ name: 'Data/x.csv', data: compressed, method: 8, declaredSize: 64 * MiB }]);
    const src = memorySource(bomb);
    const before = process.memoryUsage().rss;
    const { info, stream } = await openZipEntry(src, 'Data/x.csv');
    expect(info.sizeBytes).toBe(64 * MiB);
    const out = await drain(stream);
    expect(out.error).toBeInstanceOf(ArtifactError);
    expect((out.error as ArtifactError).code).toBe('unprocessable');
    expect((out.error as ArtifactError).message).toMatch(
      /^The entry Data\/x.csv does not expand to the 64 MiB the archive declares .*artifact_url\.$/,
    );
    expect(out.bytes).toBeLessThanOrEqual(64 * MiB);
    expect(out.bytes).toBeGreaterThan(60 * MiB);
    // What 64 MiB of zeros takes (~64 KiB) plus zip.js's read-ahead of a few 256 KiB chunks.
    expect(src.bytesRead).toBeLessThan(4 * MiB);
    expect(out.peakRss - before).toBeLessThan(512 * MiB);
  });

  it('stops a 1 GiB bomb at a lowered cap, the message naming the cap', async () => {
    // Declares 1 GiB honestly: the declared size alone is refused before anything is inflated.
    const honest = rawZip([{ name: 'Data/x.csv', data: zerosDeflated(1024), method: 8, declaredSize: GiB }]);
    const refused = await caught(openZipEntry(memorySource(honest), 'Data/x.csv', { maxBytes: 16 * MiB }));
    expect(refused.code).toBe('unprocessable');
    expect(refused.message).toBe(
      'The entry Data/x.csv expands past 16 MiB (a ZIP bomb, or too large to read here); download the archive with artifact_url.',
    );
    expect(refused.details).toMatchObject({ limitBytes: 16 * MiB });
    const tenGiB = rawZip([{ name: 'Data/x.csv', data: zerosDeflated(1), method: 8, declaredSize: 10 * GiB }]);
    expect((await caught(openZipEntry(memorySource(tenGiB), 'Data/x.csv'))).message).toMatch(/expands past 64 MiB/);

    // Declares exactly the cap and expands to 1 GiB: stopped after 16 MiB has come out.
    const lying = rawZip([{ name: 'Data/x.csv', data: zerosDeflated(1024), method: 8, declaredSize: 16 * MiB }]);
    const before = process.memoryUsage().rss;
    const { stream } = await openZipEntry(memorySource(lying), 'Data/x.csv', { maxBytes: 16 * MiB, maxRatio: 1e6 });
    const out = await drain(stream);
    expect((out.error as ArtifactError).code).toBe('unprocessable');
    expect(out.bytes).toBeLessThanOrEqual(16 * MiB);
    expect(out.bytes).toBeGreaterThan(12 * MiB);
    expect(out.peakRss - before).toBeLessThan(256 * MiB);
  });

  it('applies the ratio cap past the first MiB', async () => {
    const zeros = (mib: number) => ({ data: zerosDeflated(mib), method: 8 as const, declaredSize: mib * MiB });
    const archive = rawZip([{ name: 'eight.bin', ...zeros(8) }]);
    const err = await caught(openZipEntry(memorySource(archive), 'eight.bin'));
    expect(err.code).toBe('unprocessable');
    expect(err.message).toMatch(/expands to more than 200 times its compressed size/);
    // Allowed a higher ratio, the same entry reads in full.
    const { stream } = await openZipEntry(memorySource(archive), 'eight.bin', { maxRatio: 5000 });
    expect((await drain(stream)).bytes).toBe(8 * MiB);

    // Small entries of repeated text compress far past 200:1 and are fine.
    const repeated = 'the same line again\n'.repeat(40_000);
    const small = await zipWith([{ name: 'log.txt', data: repeated }]);
    const [info] = await listZipEntries(memorySource(small));
    expect(info!.sizeBytes / info!.compressedBytes).toBeGreaterThan(200);
    const log = await openZipEntry(memorySource(small), 'log.txt');
    expect(new TextDecoder().decode(await readAll(log.stream))).toBe(repeated);
  });

  it('stops an entry whose header says 10 bytes and holds 100 MB', async () => {
    const lie = rawZip([{ name: 'tiny.txt', data: zerosDeflated(100), method: 8, declaredSize: 10 }]);
    const [listed] = await listZipEntries(memorySource(lie));
    expect(listed!.sizeBytes).toBe(10);
    const before = process.memoryUsage().rss;
    const { stream } = await openZipEntry(memorySource(lie), 'tiny.txt');
    const out = await drain(stream);
    expect((out.error as ArtifactError).code).toBe('unprocessable');
    expect((out.error as ArtifactError).message).toBe(
      'The entry tiny.txt does not expand to the 10 B the archive declares for it (a ZIP bomb, or a damaged archive); download the archive with artifact_url.',
    );
    expect(out.bytes).toBeLessThanOrEqual(10);
    expect(out.peakRss - before).toBeLessThan(128 * MiB);
  });

  it('reads no further once the reader cancels', async () => {
    // Caps raised past the entry's 10 GiB: only the cancel can stop it.
    const bomb = rawZip([{ name: 'zeros.bin', data: zerosDeflated(10 * 1024), method: 8, declaredSize: 10 * GiB }]);
    const src = memorySource(bomb);
    const { stream } = await openZipEntry(src, 'zeros.bin', { maxBytes: 20 * GiB, maxRatio: 1e6 });
    const reader = stream.getReader();
    expect((await reader.read()).done).toBe(false);
    await reader.cancel();
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Of ~10 MB of deflate, the first chunks and zip.js's read-ahead.
    expect(src.bytesRead).toBeLessThan(4 * MiB);
  });
});

describe('isZipMagic', () => {
  it('knows a local file header and an empty archive', () => {
    expect(isZipMagic(twbx.subarray(0, 4))).toBe(true);
    expect(isZipMagic(Uint8Array.of(0x50, 0x4b, 0x05, 0x06))).toBe(true);
    expect(isZipMagic(Uint8Array.of(0x50, 0x4b, 0x07, 0x08))).toBe(false);
    expect(isZipMagic(text('PK'))).toBe(false);
    expect(isZipMagic(png(1, 1))).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------------
// Images, each built here to a known size.

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.byteLength);
  const v = new DataView(out.buffer);
  v.setUint32(0, data.byteLength);
  out.set(text(type), 4);
  out.set(data, 8);
  v.setUint32(8 + data.byteLength, crc32(out.subarray(4, 8 + data.byteLength)));
  return out;
}

/** A real PNG (8-bit grey), decodable by any viewer. */
function png(width: number, height: number): Uint8Array {
  const ihdr = new Uint8Array(13);
  const v = new DataView(ihdr.buffer);
  v.setUint32(0, width);
  v.setUint32(4, height);
  ihdr.set([8, 0, 0, 0, 0], 8);
  const rows = new Uint8Array((width + 1) * height);
  return concatBytes([
    Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(rows)),
    chunk('IEND', new Uint8Array(0)),
  ]);
}

/** A JPEG segment: marker and big-endian length (which counts itself). */
function segment(marker: number, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(4 + body.byteLength);
  out[0] = 0xff;
  out[1] = marker;
  new DataView(out.buffer).setUint16(2, body.byteLength + 2);
  out.set(body, 4);
  return out;
}

/**
 * A JPEG's structure up to its frame header: APP0, an EXIF APP1 (with an orientation when given)
 * padded to `exifBytes`, `iccSegments` APP2 segments of 64,000 bytes, the SOF0 and a fake scan.
 */
function jpeg(
  width: number,
  height: number,
  { exifBytes = 0, iccSegments = 0, orientation, scanBytes = 1024 } = {} as {
    exifBytes?: number;
    iccSegments?: number;
    orientation?: number;
    scanBytes?: number;
  },
): Uint8Array {
  const parts = [Uint8Array.of(0xff, 0xd8), segment(0xe0, text('JFIF\0\x01\x01\0\0\x01\0\x01\0\0'))];
  if (exifBytes > 0 || orientation !== undefined) {
    const exif = new Uint8Array(Math.max(exifBytes, 32));
    exif.set(text('Exif\0\0MM\0*'));
    const v = new DataView(exif.buffer);
    v.setUint32(10, 8); // IFD0 right after the TIFF header
    v.setUint16(14, orientation === undefined ? 0 : 1);
    if (orientation !== undefined) {
      v.setUint16(16, 0x0112); // Orientation
      v.setUint16(18, 3); // SHORT
      v.setUint32(20, 1);
      v.setUint16(24, orientation);
    }
    parts.push(segment(0xe1, exif));
  }
  for (let i = 0; i < iccSegments; i++) parts.push(segment(0xe2, new Uint8Array(64_000).fill(0x20)));
  const sof = new Uint8Array(15);
  const s = new DataView(sof.buffer);
  s.setUint8(0, 8);
  s.setUint16(1, height);
  s.setUint16(3, width);
  sof.set([3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1], 5);
  parts.push(segment(0xc0, sof), new Uint8Array(scanBytes).fill(0x55), Uint8Array.of(0xff, 0xd9));
  return concatBytes(parts);
}

function gif(width: number, height: number): Uint8Array {
  const out = new Uint8Array(32);
  out.set(text('GIF89a'));
  const v = new DataView(out.buffer);
  v.setUint16(6, width, true);
  v.setUint16(8, height, true);
  out[31] = 0x3b;
  return out;
}

function webpLossless(width: number, height: number): Uint8Array {
  const out = new Uint8Array(40);
  out.set(text('RIFF'));
  const v = new DataView(out.buffer);
  v.setUint32(4, out.byteLength - 8, true);
  out.set(text('WEBPVP8L'), 8);
  v.setUint32(16, 20, true);
  out[20] = 0x2f;
  v.setUint32(21, (width - 1) | ((height - 1) << 14), true);
  return out;
}

function webpExtended(width: number, height: number): Uint8Array {
  const out = new Uint8Array(40);
  out.set(text('RIFF'));
  const v = new DataView(out.buffer);
  v.setUint32(4, out.byteLength - 8, true);
  out.set(text('WEBPVP8X'), 8);
  v.setUint32(16, 10, true);
  const w = width - 1;
  const h = height - 1;
  out.set([w & 0xff, (w >> 8) & 0xff, (w >> 16) & 0xff, h & 0xff, (h >> 8) & 0xff, (h >> 16) & 0xff], 24);
  return out;
}

/** A Windows icon with two images, 16×16 and 48×32: its size is the largest one's. */
function ico(): Uint8Array {
  const out = new Uint8Array(6 + 2 * 16 + 64);
  const v = new DataView(out.buffer);
  v.setUint16(2, 1, true);
  v.setUint16(4, 2, true);
  out.set([16, 16], 6);
  out.set([48, 32], 22);
  return out;
}

function bmp(width: number, height: number): Uint8Array {
  const out = new Uint8Array(54 + 4 * width * height);
  out.set(text('BM'));
  const v = new DataView(out.buffer);
  v.setUint32(2, out.byteLength, true);
  v.setUint32(10, 54, true);
  v.setUint32(14, 40, true);
  v.setInt32(18, width, true);
  v.setInt32(22, height, true);
  v.setUint16(26, 1, true);
  v.setUint16(28, 32, true);
  return out;
}

/** An ISO BMFF box. */
function box(type: string, ...body: Uint8Array[]): Uint8Array {
  const content = concatBytes(body);
  const out = new Uint8Array(8 + content.byteLength);
  new DataView(out.buffer).setUint32(0, out.byteLength);
  out.set(text(type), 4);
  out.set(content, 8);
  return out;
}

/** An AVIF's boxes as far as its size: ftyp, meta > iprp > ipco > ispe. */
function avif(width: number, height: number): Uint8Array {
  const ispe = new Uint8Array(12);
  new DataView(ispe.buffer).setUint32(4, width);
  new DataView(ispe.buffer).setUint32(8, height);
  return concatBytes([
    box('ftyp', text('avif'), new Uint8Array(4), text('avifmif1miaf')),
    box('meta', new Uint8Array(4), box('iprp', box('ipco', box('ispe', ispe)))),
    box('mdat', new Uint8Array(64)),
  ]);
}

describe('imageInfo', () => {
  it('reads the type and size of PNG, JPEG, GIF, WebP, BMP, ICO and AVIF from their first bytes', async () => {
    const cases: [Uint8Array, string, number, number][] = [
      [png(37, 19), 'image/png', 37, 19],
      [jpeg(640, 480), 'image/jpeg', 640, 480],
      [gif(320, 200), 'image/gif', 320, 200],
      [webpLossless(123, 45), 'image/webp', 123, 45],
      [webpExtended(1920, 1080), 'image/webp', 1920, 1080],
      [bmp(7, 5), 'image/bmp', 7, 5],
      [ico(), 'image/vnd.microsoft.icon', 48, 32],
      [avif(800, 600), 'image/avif', 800, 600],
    ];
    for (const [bytes, mimeType, width, height] of cases) {
      const src = memorySource(bytes);
      expect(await imageInfo(src), mimeType).toEqual({ mimeType, width, height });
      expect(src.bytesRead).toBeLessThanOrEqual(64 * KiB);
    }
  });

  it('reads a JPEG whose frame comes after 250 KB of metadata, and no more than 1 MiB', async () => {
    const bytes = jpeg(4000, 3000, { exifBytes: 60_000, iccSegments: 3, scanBytes: 3 * MiB });
    const src = memorySource(bytes);
    expect(await imageInfo(src)).toEqual({ mimeType: 'image/jpeg', width: 4000, height: 3000 });
    expect(src.bytesRead).toBeGreaterThan(64 * KiB);
    expect(src.bytesRead).toBeLessThanOrEqual(MiB);

    // Past 1 MiB of metadata the frame is not looked for.
    const late = memorySource(jpeg(4000, 3000, { iccSegments: 20 }));
    expect(await imageInfo(late)).toBeUndefined();
    expect(late.bytesRead).toBe(MiB);
  });

  it('gives a rotated JPEG its shown size', async () => {
    expect(await imageInfo(memorySource(jpeg(4000, 3000, { orientation: 6 })))).toEqual({
      mimeType: 'image/jpeg',
      width: 3000,
      height: 4000,
    });
    expect(await imageInfo(memorySource(jpeg(4000, 3000, { orientation: 3 })))).toMatchObject({ width: 4000 });
  });

  it('reads an SVG by its width and height, or its viewBox', async () => {
    const svg = (root: string, preamble = '') =>
      text(`<?xml version="1.0" encoding="UTF-8"?>\n${preamble}<svg xmlns="http://www.w3.org/2000/svg" ${root}>
  <rect width="10" height="10"/>\n</svg>\n`);
    expect(await imageInfo(memorySource(svg('width="120" height="80"')))).toEqual({
      mimeType: 'image/svg+xml',
      width: 120,
      height: 80,
    });
    expect(await imageInfo(memorySource(svg('viewBox="0 0 300 150"')))).toMatchObject({ width: 300, height: 150 });
    expect(await imageInfo(memorySource(svg('width="2in" height="1in"')))).toMatchObject({ width: 192, height: 96 });
    const doctype =
      '<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\n';
    expect(await imageInfo(memorySource(svg('width="1" height="2"', doctype)))).toMatchObject({ width: 1 });
    // A licence comment longer than the first read: the prefix grows to find the root element.
    const long = memorySource(svg('width="64" height="32"', `<!--${' licence text'.repeat(10_000)} -->\n`));
    expect(await imageInfo(long)).toMatchObject({ width: 64, height: 32 });
    expect(long.bytesRead).toBeLessThanOrEqual(MiB);
    // Sizes in percent and no viewBox: no pixel size to give.
    expect(await imageInfo(memorySource(svg('width="100%" height="100%"')))).toBeUndefined();
  });

  it('answers undefined for what is not an image, reading only the first bytes', async () => {
    const notImages = [
      text('{"rows": [1, 2, 3]}\n'.repeat(10_000)),
      text('<!DOCTYPE html><html><body><svg width="10" height="10"></svg></body></html>'),
      text('<?xml version="1.0"?><feed><title>svg</title></feed>'),
      text('BMW 320i, 2012, 84,000 km\n'),
      new Uint8Array(4096), // would pass a TGA check (zeros where its header has them)
      box('ftyp', text('isom'), new Uint8Array(4), text('isomiso2mp41')), // an MP4
      twbx,
      new Uint8Array(0),
      Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a), // a PNG signature and nothing else
    ];
    for (const bytes of notImages) {
      const src = memorySource(bytes);
      expect(await imageInfo(src)).toBeUndefined();
      expect(src.bytesRead).toBeLessThanOrEqual(64 * KiB);
    }
  });
});
