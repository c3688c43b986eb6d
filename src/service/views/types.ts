/** The service's side of the views: how it reads a blob. The answers' shapes are core/views.ts. */
export type * from '../../core/views.js';
import type { BlobReader } from '../../blob/blob-store.js';

/** Random access to one artifact's bytes (a blob, read by ranges). Ends are inclusive. */
export interface ByteSource {
  readonly size: number;
  /** The blob's sha256: what caches of derived data (line indexes, PDF text) are keyed by. */
  readonly sha256: string;
  /** The bytes from `start` (default 0) to `end` (default the last), as a stream. */
  stream(start?: number, end?: number): Promise<ReadableStream<Uint8Array>>;
  /** The bytes from `start` to `end` in one buffer; callers keep the span small or bounded. */
  read(start: number, end: number): Promise<Uint8Array>;
  /** Positioned reads into the caller's buffers, where the blob store has them (fs). */
  openReader?(): Promise<BlobReader>;
}
