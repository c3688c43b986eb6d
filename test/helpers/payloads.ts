/**
 * Real binary payloads for the MCP tests: each is a well-formed file of its format (built here, not
 * a header stub), so magic-byte detection is tested against what tools actually return.
 */
import { crc32 } from 'node:zlib';
import { PDFDocument, StandardFonts } from 'pdf-lib';

/** A real 1×1 PNG. */
export const PNG_1X1 = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

/** A PNG of `size` bytes or more: the 1×1 image plus an ancillary text chunk (still valid). */
export function png(size = 2048, seed = 0): Buffer {
  const iend = PNG_1X1.subarray(PNG_1X1.length - 12);
  const head = PNG_1X1.subarray(0, PNG_1X1.length - 12);
  const text = Buffer.alloc(Math.max(0, size - PNG_1X1.length - 12), 0x61 + (seed % 26));
  const body = Buffer.concat([Buffer.from('tEXt'), Buffer.from('Comment\0'), text]);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(body.length - 4);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([head, len, body, crc, iend]);
}

/** A multi-page PDF made with pdf-lib. */
export async function pdf(pages = 3, title = 'Sales Dashboard'): Promise<Buffer> {
  const doc = await PDFDocument.create();
  doc.setTitle(title);
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 0; i < pages; i++) {
    const page = doc.addPage([600, 400]);
    page.drawText(`${title}: page ${i + 1} of ${pages}`, { x: 40, y: 340, size: 18, font });
    for (let row = 0; row < 12; row++)
      page.drawText(`Region ${row + 1}: ${(row * 7919 + i * 104729) % 100000} units`, {
        x: 40,
        y: 300 - row * 20,
        size: 11,
        font,
      });
  }
  return Buffer.from(await doc.save());
}

/** A ZIP archive (stored entries) with the given files; OOXML when the right entries are present. */
export function zip(files: Record<string, string | Buffer>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, content] of Object.entries(files)) {
    const data = typeof content === 'string' ? Buffer.from(content) : content;
    const nameBuf = Buffer.from(name);
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBuf.length, 26);
    locals.push(local, nameBuf, data);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBuf.length, 28);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, nameBuf);
    offset += 30 + nameBuf.length + data.length;
  }
  const centralSize = centrals.reduce((n, b) => n + b.length, 0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Object.keys(files).length, 8);
  end.writeUInt16LE(Object.keys(files).length, 10);
  end.writeUInt32LE(centralSize, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, ...centrals, end]);
}

/** A minimal but well-formed .xlsx (file-type tells it from a plain ZIP by its entries). */
export function xlsx(): Buffer {
  return zip({
    '[Content_Types].xml':
      '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/></Types>',
    'xl/workbook.xml':
      '<?xml version="1.0"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheets/></workbook>',
  });
}

/** PCM WAV: 16-bit mono, `samples` samples of a sine. */
export function wav(samples = 4000): Buffer {
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) data.writeInt16LE(Math.round(Math.sin(i / 8) * 12000), i * 2);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVE', 8);
  header.write('fmt ', 12);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(16000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

/** MP3: an ID3v2 tag, then MPEG-1 Layer III frames (128 kbit/s, 44.1 kHz, 417 bytes each). */
export function mp3(frames = 8, withId3 = true): Buffer {
  const frame = Buffer.alloc(417, 0x55);
  frame[0] = 0xff;
  frame[1] = 0xfb;
  frame[2] = 0x90;
  frame[3] = 0x64;
  const body = Buffer.concat(Array.from({ length: frames }, () => frame));
  if (!withId3) return body;
  const id3 = Buffer.from([0x49, 0x44, 0x33, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]);
  return Buffer.concat([id3, body]);
}

/** GIF89a, 1×1. */
export const GIF_1X1 = Buffer.from('R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==', 'base64');

/** A JPEG: SOI, a JFIF APP0 segment and filler (file-type needs only the markers). */
export function jpeg(size = 1024): Buffer {
  const head = Buffer.from([
    0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00,
    0x00,
  ]);
  return Buffer.concat([head, Buffer.alloc(Math.max(0, size - head.length - 2), 0x11), Buffer.from([0xff, 0xd9])]);
}

/** An Ogg page whose first packet is a Vorbis identification header. */
export function ogg(): Buffer {
  const packet = Buffer.concat([Buffer.from([0x01]), Buffer.from('vorbis'), Buffer.alloc(23, 0x01)]);
  const header = Buffer.alloc(28);
  header.write('OggS', 0);
  header[5] = 0x02; // beginning of stream
  header[26] = 1; // one segment
  header[27] = packet.length;
  return Buffer.concat([header, packet, Buffer.alloc(600, 0x22)]);
}

/** An MP4 file: an `ftyp` box (isom) and a free box. */
export function mp4(size = 1024): Buffer {
  const ftyp = Buffer.alloc(24);
  ftyp.writeUInt32BE(24, 0);
  ftyp.write('ftypisom', 4);
  ftyp.writeUInt32BE(0x200, 12);
  ftyp.write('isomiso2', 16);
  const free = Buffer.alloc(Math.max(8, size - 24));
  free.writeUInt32BE(free.length, 0);
  free.write('free', 4);
  return Buffer.concat([ftyp, free]);
}

/** WebP (lossless, 1×1). */
export const WEBP_1X1 = Buffer.from('UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA==', 'base64');

/** base64url without padding, as JWT-style encoders write it. */
export const base64url = (b: Buffer) => b.toString('base64url');
export const dataUrl = (b: Buffer, mime: string) => `data:${mime};base64,${b.toString('base64')}`;
/** GitHub's contents API wraps base64 every 60 characters. */
export const wrapped60 = (b: Buffer) => b.toString('base64').replace(/.{60}/g, '$&\n');
