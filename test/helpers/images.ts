/**
 * Real images of a chosen pixel size and byte size, for the image policy's tests: a PNG encoded here
 * (IHDR, deflated scanlines, IEND, and a text chunk to reach a size), and a baseline JPEG made by
 * libjpeg (16×9) grown with comment segments. Both decode in any viewer.
 */
import { crc32, deflateSync } from 'node:zlib';

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A `width`×`height` RGB PNG (one colour), at least `minBytes` long. */
export function pngOf(width: number, height: number, minBytes = 0): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  const row = Buffer.alloc(1 + width * 3, 0x66);
  row[0] = 0; // filter: none
  const raw = Buffer.alloc(row.length * height);
  for (let y = 0; y < height; y++) row.copy(raw, y * row.length);
  const parts = [
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
  ];
  const size = parts.reduce((n, p) => n + p.length, 0) + 12;
  if (minBytes > size + 12) parts.push(chunk('tEXt', Buffer.alloc(minBytes - size - 12, 0x61)));
  parts.push(chunk('IEND', Buffer.alloc(0)));
  return Buffer.concat(parts);
}

/** A 16×9 baseline JPEG (libjpeg, quality 80). */
const JPEG_16X9 = Buffer.from(
  '/9j/2wBDAAYEBQYFBAYGBQYHBwYIChAKCgkJChQODwwQFxQYGBcUFhYaHSUfGhsjHBYWICwgIyYnKSopGR8tMC0oMCUoKSj/2wBDAQcHBwoIChMKChMoGhYaKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCj/wAARCAAJABADASIAAhEBAxEB/8QAFQABAQAAAAAAAAAAAAAAAAAAAAT/xAAUEAEAAAAAAAAAAAAAAAAAAAAA/8QAFQEBAQAAAAAAAAAAAAAAAAAABAf/xAAUEQEAAAAAAAAAAAAAAAAAAAAA/9oADAMBAAIRAxEAPwCcAJOH/9k=',
  'base64',
);

/** The 16×9 JPEG, at least `minBytes` long: comment (COM) segments after the start of image. */
export function jpeg16x9(minBytes = 0): Buffer {
  const comments: Buffer[] = [];
  let missing = minBytes - JPEG_16X9.length;
  while (missing > 0) {
    const data = Math.min(65_533, Math.max(1, missing - 4));
    const seg = Buffer.alloc(4 + data, 0x20);
    seg[0] = 0xff;
    seg[1] = 0xfe;
    seg.writeUInt16BE(data + 2, 2);
    comments.push(seg);
    missing -= seg.length;
  }
  return Buffer.concat([JPEG_16X9.subarray(0, 2), ...comments, JPEG_16X9.subarray(2)]);
}
