import { errors } from './errors.js';
import type { ByteRange } from './schemas.js';

/**
 * Parses a single-range `Range` header against a size. Returns undefined when there is no header
 * or several ranges are asked (then the whole body is served, as RFC 9110 allows). A malformed or
 * unsatisfiable range is an invalid_range error carrying the size for `Content-Range: bytes * /size`.
 */
export function parseRange(header: string | undefined | null, size: number): ByteRange | undefined {
  if (header === undefined || header === null) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m) {
    if (/^bytes=[\d\s,-]+$/.test(header.trim()) && header.includes(',')) return undefined;
    throw errors.invalidRange(
      `Malformed Range header ${JSON.stringify(header)}: use bytes=START-END, bytes=START- or bytes=-SUFFIX.`,
      { details: { sizeBytes: size } },
    );
  }
  const [, a, b] = m;
  let start: number;
  let end: number;
  if (a === '' && b === '') {
    throw errors.invalidRange('Range bytes=- names no bytes: give a start, an end, or both.', {
      details: { sizeBytes: size },
    });
  } else if (a === '') {
    const suffix = Number(b);
    if (suffix === 0) throw unsatisfiable(header, size);
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(a);
    end = b === '' ? size - 1 : Math.min(Number(b), size - 1);
    if (b !== '' && Number(b) < start)
      throw errors.invalidRange(`Range ${header} ends before it starts.`, { details: { sizeBytes: size } });
  }
  if (start >= size || size === 0) throw unsatisfiable(header, size);
  return { start, end };
}

function unsatisfiable(header: string, size: number) {
  return errors.invalidRange(`Range ${header} is outside the artifact (size ${size} bytes).`, {
    details: { sizeBytes: size },
  });
}
