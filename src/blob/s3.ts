/**
 * The S3 driver: blobs in an S3-compatible bucket (AWS, MinIO, Ceph RGW, R2's S3 API). This module
 * holds the put paths and the reads; its parts are given the bucket's requests and key layout:
 * `s3-objects.ts` (single-object requests), `s3-multipart.ts` (long puts, copies, stale uploads),
 * `s3-direct.ts` (links and direct uploads), `s3-cdn.ts` (CloudFront) and `s3-presign.ts`.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { concatBytes } from '../core/bytes.js';
import { errors } from '../core/errors.js';
import type { HashFactory } from '../core/hash.js';
import { SHA256_PATTERN } from '../core/ids.js';
import type { ByteRange } from '../core/schemas.js';
import { blobKeyLayout, PARTS_MAX_AGE_MS } from './blob-keys.js';
import type { BlobInfo, BlobPutOptions, BlobStore, DirectAccess } from './blob-store.js';
import { nodeSha256 } from './node-hash.js';
import { type CdnSigning, createCloudFrontCdn } from './s3-cdn.js';
import { isPayloadMismatch, s3Failure } from './s3-client.js';
import { createS3Direct } from './s3-direct.js';
import { createS3Multipart } from './s3-multipart.js';
import { createS3Parts } from './s3-parts.js';
import { createS3Objects } from './s3-objects.js';
import { s3Presigner } from './s3-presign.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/** Keys per DeleteObjects request: S3's maximum. */
const DELETE_BATCH = 1000;

export interface S3BlobStoreOptions {
  client: S3Client;
  bucket: string;
  /** Prepended to every key, e.g. "artifacts/" (default none). */
  prefix?: string;
  hash?: HashFactory;
  /** Multipart part size of uploads (default 8 MiB; S3's minimum is 5 MiB). */
  partSize?: number;
  /** Parts uploaded at once (default 4). Memory held per upload is about partSize × queueSize. */
  queueSize?: number;
  /** Above this size the staging → final copy is a multipart copy (default and S3 maximum: 5 GiB). */
  maxSingleCopyBytes?: number;
  /** Part size of a multipart copy (default 512 MiB). */
  copyPartBytes?: number;
  /** Destroy the client on close (default false: the caller owns it). */
  ownsClient?: boolean;
  /**
   * A CloudFront distribution in front of the bucket (origin access control): direct links are then
   * CloudFront signed URLs instead of S3 presigned ones.
   */
  cdn?: CdnSigning;
}

/** The S3 driver's store: always direct, and it says where its blobs live. */
export interface S3BlobStore extends BlobStore {
  readonly direct: DirectAccess;
  readonly bucket: string;
  /** The key of a blob in the bucket. */
  keyOf(sha256: string): string;
}

/**
 * Blobs in an S3 bucket: `{prefix}blobs/sha256/ab/cd/{hex}`. A body of one part or less is one
 * PutObject to its final key, signed with its sha256 (declared, or the service's): the backend checks
 * the bytes against it. A longer one is a multipart upload, hashed by the service on the way: to the
 * final key when the sha256 is declared (completed only once the bytes hashed to it), else to
 * `{prefix}staging/{uuid}` and copied server-side under its hash. S3 makes an object visible only
 * when its upload completes, so a reader never sees a partial blob, and bytes that fail a check
 * never reach a final key. docs/s3-and-cdn.md has the table of who checks what.
 */
export function createS3BlobStore(options: S3BlobStoreOptions): S3BlobStore {
  const { client, bucket } = options;
  const hash = options.hash ?? nodeSha256;
  const partSize = Math.max(5 * MiB, options.partSize ?? 8 * MiB);
  const layout = blobKeyLayout(options.prefix ?? '');
  const objects = createS3Objects({ client, bucket, layout });
  const multipart = createS3Multipart({
    objects,
    hash,
    partSize,
    queueSize: Math.max(1, options.queueSize ?? 4),
    maxSingleCopyBytes: options.maxSingleCopyBytes ?? 5 * GiB,
    copyPartBytes: Math.max(5 * MiB, options.copyPartBytes ?? 512 * MiB),
  });
  const cdn = options.cdn ? createCloudFrontCdn(options.cdn, layout) : undefined;
  const check = (sha: string) => SHA256_PATTERN.test(sha);

  async function hashOf(bytes: Uint8Array): Promise<string> {
    const hasher = hash();
    hasher.update(bytes);
    return hasher.digest();
  }

  /**
   * A body of at most one part, in memory. With a declared sha256 the service does not hash it: the
   * declared hash is the request's signed payload hash, and the backend refuses bytes that do not
   * match (once objects.checksPayload has said it does). The service hashes where nothing is
   * uploaded (the blob is already there) and for an empty body (RGW 16 does not check those).
   * Without one, the service hashes once and signs the PutObject with that hash: no staging object,
   * no copy, and the backend checks the bytes it received against the hash the key is named by.
   */
  async function putOne(bytes: Uint8Array, putOptions: BlobPutOptions, declared: string | undefined) {
    const sizeBytes = bytes.byteLength;
    let sha256: string;
    let verified = false;
    if (declared) {
      sha256 = declared;
    } else {
      sha256 = await hashOf(bytes);
      if (putOptions.expectedSha256 !== undefined) throw errors.checksumMismatch(putOptions.expectedSha256, sha256);
      verified = true;
    }
    const verify = async () => {
      if (verified) return;
      const actual = await hashOf(bytes);
      if (actual !== sha256) throw errors.checksumMismatch(sha256, actual);
      verified = true;
    };
    if (!verified && (sizeBytes === 0 || !(await objects.checksPayload()))) await verify();
    await putOptions.beforeCommit?.({ sha256 });
    const final = layout.blobKey(sha256);
    const existing = await objects.head(final);
    if (existing !== null && (declared || existing === sizeBytes)) {
      // Nothing is uploaded, so nothing is checked by the backend: the service checks.
      await verify();
      return { sha256, sizeBytes };
    }
    try {
      await objects.putSigned(final, bytes, sha256);
    } catch (err) {
      // Under a declared hash: the caller's bytes are not the ones declared. Under the service's own
      // hash, bytes changed on the way to the backend: a backend fault, retried like one.
      if (declared && isPayloadMismatch(err)) throw errors.checksumMismatch(sha256, await hashOf(bytes));
      throw s3Failure(err, objects.where('PutObject', final));
    }
    return { sha256, sizeBytes };
  }

  return {
    driver: 's3',
    bucket,
    keyOf: layout.blobKey,

    async put(body: ReadableStream<Uint8Array>, putOptions: BlobPutOptions = {}): Promise<BlobInfo> {
      const max = putOptions.maxBytes ?? Number.POSITIVE_INFINITY;
      const declared =
        putOptions.expectedSha256 !== undefined && check(putOptions.expectedSha256)
          ? putOptions.expectedSha256
          : undefined;
      const reader = body.getReader();
      // Reads ahead one part. A body that ends within it (most artifacts: screenshots, PDFs, JSON)
      // is one signed PutObject to its final key; a longer one is a multipart upload.
      const first: Uint8Array[] = [];
      let size = 0;
      let ended = false;
      while (size <= partSize) {
        // A body that fails here (the client went away) rejects with its own error.
        const next = await reader.read();
        if (next.done) {
          ended = true;
          break;
        }
        if (next.value.byteLength === 0) continue;
        size += next.value.byteLength;
        if (size > max) {
          const refusal = errors.payloadTooLarge(max);
          // The refusal is what the caller gets; a body that fails to cancel changes nothing.
          await reader.cancel(refusal).catch(() => {});
          throw refusal;
        }
        first.push(next.value);
      }
      if (ended) return putOne(concatBytes(first, size), putOptions, declared);
      return multipart.put(reader, first, size, putOptions, declared);
    },

    async get(sha256: string, range?: ByteRange) {
      if (!check(sha256)) return null;
      return objects.read(layout.blobKey(sha256), range);
    },

    async stat(sha256: string) {
      if (!check(sha256)) return null;
      const size = await objects.head(layout.blobKey(sha256));
      return size === null ? null : { sha256, sizeBytes: size };
    },

    async exists(sha256: string) {
      if (!check(sha256)) return false;
      return (await objects.head(layout.blobKey(sha256))) !== null;
    },

    async delete(sha256: string) {
      if (!check(sha256)) return false;
      const key = layout.blobKey(sha256);
      // S3 deletes are idempotent and do not say whether anything was there: ask first.
      if ((await objects.head(key)) === null) return false;
      await objects.remove(key);
      return true;
    },

    async *list() {
      for await (const o of objects.list(layout.blobsPrefix)) {
        const sha256 = layout.sha256Of(o.key);
        if (sha256) yield { sha256, sizeBytes: o.sizeBytes, modifiedAt: o.modifiedAt ?? 0 };
      }
    },

    direct: createS3Direct({
      objects,
      copy: multipart.copy,
      hash,
      presigner: s3Presigner(client, bucket),
      cdn,
      parts: createS3Parts({ objects, copy: multipart.copy, hash }),
    }),
    ...(cdn?.access ? { cdn: cdn.access } : {}),

    async sweepStaging(before: number) {
      let removed = 0;
      let bytes = 0;
      let stale: { key: string; sizeBytes: number }[] = [];
      const removeStale = async () => {
        if (stale.length === 0) return;
        await objects.removeMany(
          stale.map((o) => o.key),
          layout.stagingPrefix,
        );
        removed += stale.length;
        bytes += stale.reduce((sum, o) => sum + o.sizeBytes, 0);
        stale = [];
      };
      for await (const o of objects.list(layout.stagingPrefix)) {
        if (o.modifiedAt === undefined || o.modifiedAt >= before) continue;
        stale.push(o);
        if (stale.length === DELETE_BATCH) await removeStale();
      }
      await removeStale();
      // Multipart uploads of puts that died mid-stream: their parts take space but are no objects.
      removed += await multipart.abortStale(layout.stagingPrefix, before, layout.partsPrefix);
      // Direct uploads in parts are ended by retention when their row expires; these have no row left.
      removed += await multipart.abortStale(layout.partsPrefix, before - PARTS_MAX_AGE_MS);
      return { removed, bytes };
    },

    async close() {
      if (options.ownsClient) client.destroy();
    },
  };
}
