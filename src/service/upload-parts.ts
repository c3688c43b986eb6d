/**
 * The arithmetic of direct uploads in parts: the part size a file gets, each part's size, and which
 * parts the bucket lacks.
 */
import type { DirectParts, HeldPart } from '../blob/blob-store.js';
import type { UploadRecord } from '../db/repository.js';

const MiB = 1024 * 1024;

/** The part size for `sizeBytes`: `wanted`, raised to the backend's minimum and to fit its part count. */
export function partSizeFor(sizeBytes: number, wanted: number, parts: Pick<DirectParts, 'minPartBytes' | 'maxParts'>) {
  const fit = Math.ceil(sizeBytes / parts.maxParts / MiB) * MiB;
  return Math.max(parts.minPartBytes, wanted, fit);
}

/** Which of parts 1..count the bucket lacks, or holds at another size than the ticket says. */
export function partsShort(up: UploadRecord, held: HeldPart[]): { missing: number[]; wrongSize: number[] } {
  const partSize = up.partSize ?? up.sizeBytes;
  const count = partCountOf(up);
  const byNumber = new Map(held.map((p) => [p.partNumber, p]));
  const missing: number[] = [];
  const wrongSize: number[] = [];
  for (let n = 1; n <= count; n++) {
    const part = byNumber.get(n);
    if (!part) missing.push(n);
    else if (part.sizeBytes !== partBytes(up.sizeBytes, partSize, n)) wrongSize.push(n);
  }
  return { missing, wrongSize };
}

export const partCountOf = (up: Pick<UploadRecord, 'sizeBytes' | 'partSize'>) =>
  Math.ceil(up.sizeBytes / (up.partSize ?? up.sizeBytes));
export const partBytes = (size: number, partSize: number, n: number) => Math.min(partSize, size - (n - 1) * partSize);

/** A list of part numbers for a message: the first few, and how many more. */
export function numbers(list: number[]): string {
  return list.length <= 10 ? list.join(', ') : `${list.slice(0, 10).join(', ')} and ${list.length - 10} more`;
}
