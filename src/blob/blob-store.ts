import type { ByteRange } from '../core/schemas.js';

/** What a committed blob looks like. */
export interface BlobInfo {
  sha256: string;
  sizeBytes: number;
}

export interface BlobPutOptions {
  /** Fail with payload_too_large as soon as more than this many bytes arrive. */
  maxBytes?: number;
  /** Fail with checksum_mismatch (and keep nothing) when the bytes hash to something else. */
  expectedSha256?: string;
  /**
   * Called once the hash is known and before the bytes are committed under it (or found already
   * there): the service pins the blob here, so garbage collection cannot remove those bytes between
   * this commit and the metadata commit that references them. A rejection fails the put, keeping
   * nothing.
   */
  beforeCommit?: (blob: { sha256: string }) => Promise<void>;
}

/** Positioned reads of one blob into buffers the caller owns and reuses. */
export interface BlobReader {
  /** Reads up to `target.byteLength` bytes at `position` into `target`; how many (0 at the end). */
  read(target: Uint8Array, position: number): Promise<number>;
  close(): Promise<void>;
}

export interface PresignGetOptions {
  expiresInSeconds: number;
  contentType: string;
  contentDisposition: string;
}

/** Where a client PUTs a direct upload's bytes, and the staging key that completes it. */
export interface StagedUpload {
  stagingKey: string;
  url: string;
  /** Headers the client's PUT must send, every one of them. */
  headers: Record<string, string>;
}

/** A multipart upload in the bucket: its staging key and the bucket's id for it. */
export interface PartsUpload {
  stagingKey: string;
  multipartId: string;
}

/** A part the bucket holds. */
export interface HeldPart {
  partNumber: number;
  sizeBytes: number;
  etag: string;
}

/**
 * Resumable direct uploads in parts (S3 multipart): the client PUTs each part straight to the
 * bucket through its own presigned URL, signed with that part's sha256 where the backend checks
 * payload hashes, so the bucket refuses a part that changed on the way. The bucket says which parts
 * it holds, so a client resumes where it stopped. Nothing is an object until `complete`.
 */
export interface DirectParts {
  /** The backend's limits: every part but the last at least `minPartBytes`, at most `maxParts` parts. */
  readonly minPartBytes: number;
  readonly maxParts: number;
  /** Opens a multipart upload at a fresh staging key. */
  begin(): Promise<PartsUpload>;
  /**
   * A presigned PUT of part `partNumber`: exactly `sizeBytes`, signed with `sha256` as its payload
   * hash where the backend checks those (the bucket then refuses other bytes).
   */
  presignPart(
    upload: PartsUpload,
    part: { partNumber: number; sizeBytes: number; sha256: string; expiresInSeconds: number },
  ): Promise<{ url: string; headers: Record<string, string> }>;
  /** The parts the bucket holds, by part number; null when the upload is no longer open. */
  listParts(upload: PartsUpload): Promise<HeldPart[] | null>;
  /**
   * Assembles `parts` (every part, ascending) into the staging object, then reads it back once,
   * streamed, to check its size and sha256 against `expected` (S3 keeps no sha256 of a multipart
   * object), and commits it under its hash like `commitUpload`. Wrong bytes: checksum_mismatch and
   * nothing kept. An upload assembled already by an earlier call that died is checked and committed.
   */
  complete(
    upload: PartsUpload,
    parts: HeldPart[],
    expected: { sizeBytes: number; sha256: string },
    beforeCommit?: BlobPutOptions['beforeCommit'],
  ): Promise<BlobInfo>;
  /** Aborts the upload (the bucket drops its parts) and removes any assembled staging object. */
  abort(upload: PartsUpload): Promise<void>;
}

/**
 * The client talks to the bucket directly: the bytes skip the service both ways. A driver declares
 * all of it or none (`BlobStore.direct`); uploads in parts (`parts`) are optional within it.
 */
export interface DirectAccess {
  /**
   * A URL a browser can GET without credentials (presigned, or signed by the CDN in front), with
   * the response Content-Type and Content-Disposition set.
   */
  presignGet(sha256: string, options: PresignGetOptions): Promise<string>;
  /**
   * A presigned PUT of exactly `sizeBytes` to a fresh staging key, for a client to upload to without
   * going through the service. `sha256` is the declared hash: a driver whose backend checks payload
   * hashes signs the PUT with it.
   */
  presignUpload(options: { sizeBytes: number; expiresInSeconds: number; sha256?: string }): Promise<StagedUpload>;
  /**
   * Commits a staged upload under its hash only when size and sha256 are what was declared: by
   * re-reading and hashing it, unless its PUT was signed with the declared sha256 on a backend that
   * checks payload hashes (then the backend has checked it). It never trusts S3's newer checksums.
   * The staged object is removed unless nothing was uploaded yet (bad_request, the client may still
   * PUT and complete again).
   */
  commitUpload(
    stagingKey: string,
    expected: { sizeBytes: number; sha256: string },
    beforeCommit?: BlobPutOptions['beforeCommit'],
  ): Promise<BlobInfo>;
  /** Drops a staged upload, if any. */
  discardUpload(stagingKey: string): Promise<void>;
  /** Resumable uploads in parts; absent where the driver has none (r2's binding). */
  readonly parts?: DirectParts;
}

/** A CDN in front of the bucket. */
export interface CdnAccess {
  /** Drops the CDN's cached copies of a blob (after a purge deleted it). */
  invalidate(sha256: string): Promise<void>;
}

/**
 * Immutable bytes keyed by their sha256. Drivers: fs, memory, s3, r2. One contract suite
 * (test/blob-store.contract.ts) runs against every driver.
 *
 * `put` streams the body to a staging place while hashing it, verifies size and hash, then commits
 * atomically under the hash. A reader never sees a partial blob; a failed put leaves nothing behind.
 *
 * What a driver offers as a whole is a group (`direct`, `cdn`): a caller asks `if (blobs.direct)`
 * once. The other optional members stand alone: `readSmall` and `openReader` are fast paths whose
 * callers fall back to `get`, `adoptFile` one whose callers fall back to `put`, and `sweepStaging` and `list` each serve one maintenance job
 * (retention, fsck) that a driver supports on its own (memory lists its blobs but stages nothing).
 */
export interface BlobStore {
  readonly driver: string;
  put(body: ReadableStream<Uint8Array>, options?: BlobPutOptions): Promise<BlobInfo>;
  /** The bytes (or a range of them, inclusive ends); null when the blob does not exist. */
  get(sha256: string, range?: ByteRange): Promise<ReadableStream<Uint8Array> | null>;
  /**
   * Optional fast path for small reads (the HTTP layer asks for bodies up to 64 KiB): the bytes in
   * one buffer, or null when the blob does not exist. Drivers without a cheaper way leave it out.
   */
  readSmall?(sha256: string, range: ByteRange): Promise<Uint8Array | null>;
  /**
   * Optional, for drivers with positioned reads (fs): a reader that fills the caller's buffers, so a
   * scan of a large blob (a view's search or line index) reuses two buffers instead of allocating a
   * chunk per read. Null when the blob does not exist.
   */
  openReader?(sha256: string): Promise<BlobReader | null>;
  /**
   * Optional, for drivers that keep blobs as local files (fs): takes a file whose sha256 and size the
   * caller has already established (a resumable upload's staged file, hashed as it arrived) as that
   * blob's bytes, by rename where it can (no copy, no second hash), and removes it from `path`. The
   * size is checked; the hash is the caller's word. `beforeCommit` as for `put`. Callers without it
   * stream the file into `put`.
   */
  adoptFile?(path: string, blob: BlobInfo, beforeCommit?: BlobPutOptions['beforeCommit']): Promise<BlobInfo>;
  /** Size of a committed blob, or null. */
  stat(sha256: string): Promise<BlobInfo | null>;
  exists(sha256: string): Promise<boolean>;
  /** Removes a blob; false when it was not there. */
  delete(sha256: string): Promise<boolean>;
  /**
   * Drivers whose clients can talk to the bucket directly (S3; R2 with its S3 API): presigned links
   * and direct uploads. Absent: downloads go through the service and direct uploads are refused.
   */
  readonly direct?: DirectAccess;
  /** With a CDN in front that can drop cached copies (CloudFront with its distribution id). */
  readonly cdn?: CdnAccess;
  /**
   * Removes staging leftovers (puts that died mid-stream, direct uploads never completed) last
   * modified before `before` (ms since the epoch). Drivers that stage nothing (memory) leave it out.
   */
  sweepStaging?(before: number): Promise<{ removed: number; bytes: number }>;
  /** Every committed blob (for fsck), in no particular order. */
  list?(): AsyncIterable<{ sha256: string; sizeBytes: number; modifiedAt: number }>;
  /** Releases handles (timers, sockets). */
  close?(): Promise<void>;
}
