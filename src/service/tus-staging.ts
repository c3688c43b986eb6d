/**
 * The port where a resumable (tus) upload's bytes wait until the last one has arrived: one staged
 * file per upload, on the disk of the process that serves it. The service keeps the protocol (who
 * may write, the acknowledged offset, the commit); the runtime keeps the bytes and their running
 * sha256. Node implements it in node/tus-file-staging.ts; Workers have no filesystem and none.
 */

/** The checksum algorithms an Upload-Checksum header may name (tus's checksum extension). */
export const TUS_CHECKSUM_ALGORITHMS = ['sha1', 'sha256', 'md5'] as const;
export type TusChecksumAlgorithm = (typeof TUS_CHECKSUM_ALGORITHMS)[number];

/** What one PATCH's bytes must hash to (the Upload-Checksum header, decoded). */
export interface ChunkChecksum {
  algorithm: TusChecksumAlgorithm;
  digest: Uint8Array;
}

/** What an append kept. */
export interface AppendResult {
  /** Bytes written and made durable from the offset on. */
  written: number;
  /** Set when the body failed before its end (the client went away): the bytes before it are kept. */
  interrupted?: unknown;
}

export interface TusStaging {
  /** Makes the upload's empty staged file, durable before the upload is announced. */
  create(id: string): Promise<void>;
  /**
   * Writes `body` from `offset` on and makes it durable before resolving. Bytes found past `offset`
   * were never acknowledged (a process killed mid-write): they are cut first. More than `maxBytes`
   * is refused (payload_too_large) and nothing of the body is kept. With `checksum` the body counts
   * whole or not at all: other bytes (checksum_mismatch) or a body cut short throw, and nothing of
   * it is kept; without one, a body cut short keeps what arrived (`interrupted`).
   * The upload's running sha256 goes on from `offset`: when this process holds none at that offset
   * (after a restart), the first `offset` bytes are hashed again from the file.
   */
  append(
    id: string,
    offset: number,
    body: ReadableStream<Uint8Array>,
    options: { maxBytes: number; checksum?: ChunkChecksum },
  ): Promise<AppendResult>;
  /** The lowercase hex sha256 of the first `length` bytes: the running hash when it is there. */
  sha256(id: string, length: number): Promise<string>;
  /** The staged bytes, for a blob store that cannot take the file itself. */
  read(id: string): ReadableStream<Uint8Array>;
  /** The staged file's path, for a blob store that adopts files (fs: by rename). */
  fileOf(id: string): string;
  /** Forgets the running hash kept for an upload (another writer moved its offset). */
  forget(id: string): void;
  /** Removes the staged file, if any, and the running hash. */
  discard(id: string): Promise<void>;
}
