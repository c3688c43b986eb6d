/**
 * The image view: what kind of image an artifact is and its size in pixels, from a bounded prefix of
 * its bytes (never the whole image, never decoded). The type comes from magic bytes checked here; the
 * size from image-size's parser for that one type, so a file that merely passes a loose check of
 * another format (TGA has no magic at all) is never taken for an image. Web standards only.
 */
import type { ISizeCalculationResult } from 'image-size/types/interface';
import { BMP } from 'image-size/types/bmp';
import { GIF } from 'image-size/types/gif';
import { HEIF } from 'image-size/types/heif';
import { ICO } from 'image-size/types/ico';
import { JPG } from 'image-size/types/jpg';
import { PNG } from 'image-size/types/png';
import { SVG } from 'image-size/types/svg';
import { TIFF } from 'image-size/types/tiff';
import { WEBP } from 'image-size/types/webp';
import { concatBytes } from '../../core/bytes.js';
import type { ByteSource } from './types.js';

export interface ImageInfo {
  mimeType: string;
  /** Pixels as the image is shown: a JPEG whose EXIF orientation turns it a quarter has them swapped. */
  width: number;
  height: number;
}

/** The first read: enough for every header but a JPEG's with large metadata before its frame. */
const FIRST_READ_BYTES = 64 * 1024;
/** The most read: a JPEG's frame header (SOF) after this much metadata is not looked for. */
const MAX_READ_BYTES = 1024 * 1024;

interface Format {
  mimeType: string;
  calculate: (input: Uint8Array) => ISizeCalculationResult;
  /** Its size can sit past the first read (JPEG metadata, an SVG's long preamble, HEIF boxes). */
  grows: boolean;
}

const FORMATS = {
  png: { mimeType: 'image/png', calculate: PNG.calculate, grows: false },
  jpeg: { mimeType: 'image/jpeg', calculate: JPG.calculate, grows: true },
  gif: { mimeType: 'image/gif', calculate: GIF.calculate, grows: false },
  webp: { mimeType: 'image/webp', calculate: WEBP.calculate, grows: false },
  bmp: { mimeType: 'image/bmp', calculate: BMP.calculate, grows: false },
  tiff: { mimeType: 'image/tiff', calculate: TIFF.calculate, grows: true },
  ico: { mimeType: 'image/vnd.microsoft.icon', calculate: ICO.calculate, grows: false },
  avif: { mimeType: 'image/avif', calculate: HEIF.calculate, grows: true },
  heic: { mimeType: 'image/heic', calculate: HEIF.calculate, grows: true },
  heif: { mimeType: 'image/heif', calculate: HEIF.calculate, grows: true },
  svg: { mimeType: 'image/svg+xml', calculate: svgSize, grows: true },
} satisfies Record<string, Format>;

/**
 * The type and pixel size of an image artifact, or undefined when it is not an image this knows or
 * its size cannot be read from its first MiB. Reads 64 KiB first and grows the prefix (to 256 KiB,
 * then 1 MiB) only for formats whose size can come later.
 */
export async function imageInfo(src: ByteSource): Promise<ImageInfo | undefined> {
  if (src.size === 0) return undefined;
  let length = Math.min(src.size, FIRST_READ_BYTES);
  let head = await src.read(0, length - 1);
  const format = sniff(head);
  if (!format) return undefined;
  for (;;) {
    const size = measure(format, head);
    if (size) return size;
    if (!format.grows || length >= src.size || length >= MAX_READ_BYTES) return undefined;
    const next = Math.min(src.size, MAX_READ_BYTES, length * 4);
    head = concatBytes([head, await src.read(length, next - 1)], next);
    length = next;
  }
}

function measure(format: Format, head: Uint8Array): ImageInfo | undefined {
  let result: ISizeCalculationResult;
  try {
    result = format.calculate(head);
  } catch {
    // Cut short (the rest may be in a longer prefix) or malformed.
    return undefined;
  }
  // An icon holds several images: its size is its largest one's.
  const largest = (result.images ?? []).reduce<{ width: number; height: number }>(
    (best, image) => (image.width * image.height > best.width * best.height ? image : best),
    result,
  );
  let { width, height } = largest;
  if (!isPixels(width) || !isPixels(height)) return undefined;
  // EXIF orientations 5 to 8 turn the stored pixels a quarter turn when shown.
  if (result.orientation !== undefined && result.orientation >= 5 && result.orientation <= 8)
    [width, height] = [height, width];
  return { mimeType: format.mimeType, width, height };
}

function isPixels(n: unknown): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n > 0;
}

const ascii = (bytes: Uint8Array, start: number, end: number) => String.fromCharCode(...bytes.subarray(start, end));

/** The format the magic bytes name, checked strictly enough that text or other binaries do not pass. */
function sniff(head: Uint8Array): Format | undefined {
  const b = head;
  if (b.length >= 24 && ascii(b, 0, 8) === '\x89PNG\r\n\x1a\n') return FORMATS.png;
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return FORMATS.jpeg;
  if (b.length >= 10 && /^GIF8[79]a$/.test(ascii(b, 0, 6))) return FORMATS.gif;
  if (b.length >= 30 && ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 15) === 'WEBPVP8') return FORMATS.webp;
  if (b.length >= 26 && ascii(b, 0, 2) === 'BM' && BMP_HEADER_SIZES.has(readUint32LE(b, 14))) return FORMATS.bmp;
  if (b.length >= 8 && (ascii(b, 0, 4) === 'II*\0' || ascii(b, 0, 4) === 'MM\0*')) return FORMATS.tiff;
  if (b.length >= 22 && b[0] === 0 && b[1] === 0 && b[2] === 1 && b[3] === 0 && (b[4]! | b[5]!) !== 0)
    return FORMATS.ico;
  if (b.length >= 16 && ascii(b, 4, 8) === 'ftyp') return heifFormat(b);
  return svgStart(b) === undefined ? undefined : FORMATS.svg;
}

/** The sizes of the BMP info headers (core, v1 to v5, OS/2): "BM" alone starts plenty of text. */
const BMP_HEADER_SIZES = new Set([12, 16, 40, 52, 56, 64, 108, 124]);

function readUint32LE(b: Uint8Array, at: number): number {
  return new DataView(b.buffer, b.byteOffset, b.byteLength).getUint32(at, true);
}

/**
 * AVIF, HEIC or HEIF by the ftyp box's brands (an AVIF often names mif1 first and avif among its
 * compatible brands). Other ISO media files (MP4, MOV) are not images.
 */
function heifFormat(b: Uint8Array): Format | undefined {
  const boxSize = new DataView(b.buffer, b.byteOffset, b.byteLength).getUint32(0, false);
  const end = Math.min(b.length, Math.max(boxSize, 16));
  const brands = [ascii(b, 8, 12)];
  for (let at = 16; at + 4 <= end; at += 4) brands.push(ascii(b, at, at + 4));
  if (brands.includes('avif') || brands.includes('avis')) return FORMATS.avif;
  if (brands.some((x) => x === 'heic' || x === 'heix' || x === 'hevc' || x === 'hevx')) return FORMATS.heic;
  if (brands.includes('mif1') || brands.includes('msf1')) return FORMATS.heif;
  return undefined;
}

/**
 * Where an SVG's root element starts, when the text before it is only what may precede a root
 * element: a byte order mark, the XML declaration, comments, processing instructions, a doctype and
 * white space.
 */
function svgStart(head: Uint8Array): number | undefined {
  const text = new TextDecoder('utf-8', { fatal: false }).decode(head);
  const prolog = /^\uFEFF?(?:\s+|<\?[\s\S]*?\?>|<!--[\s\S]*?-->|<!DOCTYPE[^[>]*(?:\[[\s\S]*?\])?\s*>)*/i.exec(text);
  const at = prolog?.[0].length ?? 0;
  const rest = text.slice(at, at + 9);
  if (/^<svg[\s>/]/.test(rest)) return at;
  // The prefix ends inside a long comment or doctype: the root element may follow (a longer read tells).
  return /^(?:<!--|<\?|<!DOCTYPE)/i.test(rest) ? at : undefined;
}

/** An SVG's size: its width and height attributes, or its viewBox (image-size's rules for both). */
function svgSize(head: Uint8Array): ISizeCalculationResult {
  const at = svgStart(head);
  if (at === undefined) throw new TypeError('Not an SVG');
  const text = new TextDecoder().decode(head);
  return SVG.calculate(new TextEncoder().encode(text.slice(at)));
}
