/**
 * Where blobs live in a bucket, and how to walk one: the key layout the S3 and R2 drivers and the S3
 * backup target share (a blob's key by its sha256, the staging keys, and the inverse), and the
 * pager every listing is read through. No driver builds or parses a key by itself.
 *
 * Web standards only: R2 runs it in a Worker, so it imports no SDK (S3's ListObjectsV2 pager is
 * `s3-listing.ts`).
 */
import { SHA256_PATTERN } from '../core/ids.js';

/**
 * The keys under one prefix of a bucket:
 *
 * - `{prefix}blobs/sha256/ab/cd/{sha256}`: a committed blob (`ab` and `cd`, its hash's first two
 *   bytes, keep any one listing level small);
 * - `{prefix}staging/{uuid}`: a put on its way, or a direct upload whose bytes are checked when it
 *   is completed;
 * - `{prefix}staging/checked/{uuid}`: a direct upload presigned with its sha256 as the payload hash,
 *   which the backend checked when the bytes arrived;
 * - `{prefix}staging/payload-check-{uuid}`: the S3 driver's one-time probe of the backend;
 * - `{prefix}staging/parts/{uuid}`: a direct upload in parts (an S3 multipart upload, then the object
 *   its parts assemble into until it is checked).
 *
 * Everything under `staging/` is reaped once it is older than the grace period, except uploads in
 * parts, which may take a day: theirs is `PARTS_MAX_AGE_MS`.
 */
export interface BlobKeyLayout {
  /** `{prefix}blobs/sha256/`: where every committed blob's key starts. */
  readonly blobsPrefix: string;
  /** `{prefix}staging/`: where every staging key starts. */
  readonly stagingPrefix: string;
  /** The key of the blob whose bytes hash to `sha256`. */
  blobKey(sha256: string): string;
  /** The sha256 of the blob `key` holds; null for any other key (staging, another prefix, not this layout). */
  sha256Of(key: string): string | null;
  /** A fresh staging key. */
  stagingKey(): string;
  /** A fresh staging key for a direct upload the backend checks against its declared sha256. */
  checkedStagingKey(): string;
  /** A fresh staging key for the probe of whether the backend checks payload hashes. */
  probeKey(): string;
  /** Whether `key` is one of this layout's staging keys (and no `..` trick). */
  isStagingKey(key: string): boolean;
  /** Whether `key` is a staging key made by `checkedStagingKey`. */
  isCheckedStagingKey(key: string): boolean;
  /** `{prefix}staging/parts/`: where direct uploads in parts are staged. */
  readonly partsPrefix: string;
  /** A fresh staging key for a direct upload in parts. */
  partsStagingKey(): string;
}

/** How long a direct upload in parts may stay open: its row's lifetime, and the sweep's limit for its parts. */
export const PARTS_MAX_AGE_MS = 24 * 3600 * 1000;

/** The layout under `prefix` ("" or ending in "/"; "artifacts/" puts every key under artifacts/). */
export function blobKeyLayout(prefix = ''): BlobKeyLayout {
  const blobsPrefix = `${prefix}blobs/sha256/`;
  const stagingPrefix = `${prefix}staging/`;
  const checkedPrefix = `${stagingPrefix}checked/`;
  const partsPrefix = `${stagingPrefix}parts/`;
  // ab/cd/{sha256}: two shard folders, then the whole hash.
  const blobKeyLength = blobsPrefix.length + 6 + 64;
  const blobKey = (sha256: string) => `${blobsPrefix}${sha256.slice(0, 2)}/${sha256.slice(2, 4)}/${sha256}`;
  return {
    blobsPrefix,
    stagingPrefix,
    blobKey,
    sha256Of(key) {
      if (key.length !== blobKeyLength || !key.startsWith(blobsPrefix)) return null;
      const sha256 = key.slice(-64);
      return SHA256_PATTERN.test(sha256) && blobKey(sha256) === key ? sha256 : null;
    },
    stagingKey: () => `${stagingPrefix}${crypto.randomUUID()}`,
    checkedStagingKey: () => `${checkedPrefix}${crypto.randomUUID()}`,
    probeKey: () => `${stagingPrefix}payload-check-${crypto.randomUUID()}`,
    isStagingKey: (key) => key.startsWith(stagingPrefix) && !key.includes('..'),
    isCheckedStagingKey: (key) => key.startsWith(checkedPrefix),
    partsPrefix,
    partsStagingKey: () => `${partsPrefix}${crypto.randomUUID()}`,
  };
}

/** One page of a listing: its items, and the token of the next page (undefined after the last). */
export interface Page<T, Token> {
  items: readonly T[];
  next: Token | undefined;
}

/**
 * Every item of a paged listing, fetching a page only once the previous one has been consumed.
 * `pageAt(token)` answers the page at `token` (undefined: the first). Shared by S3's continuation
 * tokens, its multipart-upload markers and R2's cursors.
 */
export async function* paginate<T, Token>(
  pageAt: (token: Token | undefined) => Promise<Page<T, Token>>,
): AsyncGenerator<T, void, undefined> {
  let token: Token | undefined;
  do {
    const page = await pageAt(token);
    yield* page.items;
    token = page.next;
  } while (token !== undefined);
}
