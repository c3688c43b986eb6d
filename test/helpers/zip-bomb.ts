/**
 * ZIP archives written byte by byte, for tests whose headers must say what no ZIP writer would
 * write (sizes that lie, ZIP64 sizes), and bombs: deflate streams of gigabytes of repeated bytes
 * made in a few megabytes without the gigabytes ever being held.
 */
import { constants, deflateRawSync } from 'node:zlib';
import { concatBytes } from '../../src/core/bytes.js';

const MiB = 1024 * 1024;
const text = (s: string) => new TextEncoder().encode(s);

export interface RawEntry {
  name: string;
  /** The stored bytes (deflated when `method` is 8). */
  data: Uint8Array;
  method: 0 | 8;
  /** The uncompressed size the headers declare. */
  declaredSize: number;
  crc?: number;
}

/** A ZIP written byte by byte; sizes past 4 GiB get ZIP64 extra fields. */
export function rawZip(entries: RawEntry[]): Uint8Array {
  const parts: Uint8Array[] = [];
  const central: Uint8Array[] = [];
  let offset = 0;
  const dosTime = 12 << 11;
  const dosDate = ((2024 - 1980) << 9) | (5 << 5) | 1;
  for (const e of entries) {
    const name = text(e.name);
    const zip64 = e.declaredSize >= 0xffffffff || e.data.byteLength >= 0xffffffff;
    const extra = new Uint8Array(zip64 ? 20 : 0);
    if (zip64) {
      const x = new DataView(extra.buffer);
      x.setUint16(0, 1, true);
      x.setUint16(2, 16, true);
      x.setBigUint64(4, BigInt(e.declaredSize), true);
      x.setBigUint64(12, BigInt(e.data.byteLength), true);
    }
    const header = (central: boolean) => {
      const h = new Uint8Array(central ? 46 : 30);
      const v = new DataView(h.buffer);
      let at = 0;
      v.setUint32(at, central ? 0x02014b50 : 0x04034b50, true);
      at += 4;
      if (central) {
        v.setUint16(at, zip64 ? 45 : 20, true);
        at += 2;
      }
      v.setUint16(at, zip64 ? 45 : 20, true);
      v.setUint16(at + 2, 0x0800, true);
      v.setUint16(at + 4, e.method, true);
      v.setUint16(at + 6, dosTime, true);
      v.setUint16(at + 8, dosDate, true);
      v.setUint32(at + 10, e.crc ?? 0, true);
      v.setUint32(at + 14, zip64 ? 0xffffffff : e.data.byteLength, true);
      v.setUint32(at + 18, zip64 ? 0xffffffff : e.declaredSize, true);
      v.setUint16(at + 22, name.byteLength, true);
      v.setUint16(at + 24, extra.byteLength, true);
      if (central) v.setUint32(at + 36, offset, true);
      return h;
    };
    central.push(header(true), name, extra);
    const local = [header(false), name, extra, e.data];
    parts.push(...local);
    offset += local.reduce((n, p) => n + p.byteLength, 0);
  }
  const directory = concatBytes(central);
  const end = new Uint8Array(22);
  const v = new DataView(end.buffer);
  v.setUint32(0, 0x06054b50, true);
  v.setUint16(8, entries.length, true);
  v.setUint16(10, entries.length, true);
  v.setUint32(12, directory.byteLength, true);
  v.setUint32(16, offset, true);
  return concatBytes([...parts, directory, end]);
}

/**
 * A raw deflate stream of `mib` MiB of zeros, without ever holding them: one MiB compressed once
 * with a sync flush (byte-aligned, not final) repeated, then a final empty block. A back-reference
 * never reaches before its own copy, so the copies chain into one valid stream (~1 KiB per MiB).
 */
export function zerosDeflated(mib: number): Uint8Array {
  return repeatedDeflated(new Uint8Array(MiB), mib);
}

/**
 * The same for any MiB of content (`piece`, exactly 1 MiB): a raw deflate stream that inflates to
 * `mib` copies of it. Text that repeats (a log line) makes a bomb whose first bytes read as text.
 */
export function repeatedDeflated(piece: Uint8Array, mib: number): Uint8Array {
  if (piece.byteLength !== MiB) throw new RangeError(`the piece must be 1 MiB, not ${piece.byteLength} bytes`);
  const block = deflateRawSync(piece, { finishFlush: constants.Z_SYNC_FLUSH });
  const last = deflateRawSync(new Uint8Array(0));
  const out = new Uint8Array(block.byteLength * mib + last.byteLength);
  for (let i = 0; i < mib; i++) out.set(block, i * block.byteLength);
  out.set(last, block.byteLength * mib);
  return out;
}

/** 1 MiB of `line` repeated (cut at 1 MiB exactly), for repeatedDeflated. */
export function mibOfText(line: string): Uint8Array {
  const one = new TextEncoder().encode(line);
  const out = new Uint8Array(MiB);
  for (let at = 0; at < MiB; at += one.byteLength) out.set(one.subarray(0, Math.min(one.byteLength, MiB - at)), at);
  return out;
}
