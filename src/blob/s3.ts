import { randomUUID } from 'node:crypto';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCopyCommand,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { CreateInvalidationCommand, type CloudFrontClient } from '@aws-sdk/client-cloudfront';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl as signCloudFrontUrl } from '@aws-sdk/cloudfront-signer';
import { concatBytes } from '../core/bytes.js';
import { errors, isArtifactError } from '../core/errors.js';
import type { HashFactory } from '../core/hash.js';
import { SHA256_PATTERN } from '../core/ids.js';
import type { ByteRange } from '../core/schemas.js';
import { blobKeyLayout, type ListedObject, listAll } from './blob-keys.js';
import type { BlobInfo, BlobPutOptions, BlobStore, DirectAccess, PresignGetOptions } from './blob-store.js';
import { nodeSha256 } from './node-hash.js';
import { uploadSizeMismatch as sizeMismatch } from './ingest.js';
import { s3Presigner, withPayloadHash } from './s3-presign.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

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

export interface CdnSigning {
  /** https://dxxxx.cloudfront.net (or a custom domain), without a trailing slash. */
  url: string;
  /** The id of the CloudFront public key whose private key is below. */
  keyPairId: string;
  /** PEM of the private key (RSA 2048). */
  privateKey: string;
  /** Drops cached copies of these paths (CloudFront CreateInvalidation); set when the distribution id is known. */
  invalidate?: (paths: string[]) => Promise<void>;
}

/**
 * CloudFront invalidation of paths, for purges. CloudFront is global (its API lives in us-east-1);
 * `client` takes the same credentials as the bucket's.
 */
export function cloudFrontInvalidator(
  client: CloudFrontClient,
  distributionId: string,
): (paths: string[]) => Promise<void> {
  return async (paths) => {
    try {
      await client.send(
        new CreateInvalidationCommand({
          DistributionId: distributionId,
          InvalidationBatch: {
            CallerReference: `artifact-store-${randomUUID()}`,
            Paths: { Quantity: paths.length, Items: paths },
          },
        }),
      );
    } catch (err) {
      throw s3Failure(err, `CloudFront invalidation of ${paths.join(', ')}`);
    }
  };
}

/** Connection settings, as the service's configuration gives them. */
export interface S3ConnectionOptions {
  region: string;
  /** Custom endpoint (MinIO, Ceph RGW, R2); AWS when unset. */
  endpoint?: string;
  forcePathStyle?: boolean;
  /** Static credentials; the AWS default chain (env, profile, instance role) when unset. */
  accessKeyId?: string;
  secretAccessKey?: string;
}

/**
 * An S3 client for any S3-compatible backend. Checksums are only sent and checked where the API
 * requires them: S3-compatible servers (Ceph RGW 16, older MinIO) reject or ignore the newer
 * default CRC headers, and the driver verifies every byte with its own sha256 anyway.
 */
export function createS3Client(options: S3ConnectionOptions, extra: Partial<S3ClientConfig> = {}): S3Client {
  return new S3Client({
    region: options.region,
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    forcePathStyle: options.forcePathStyle ?? Boolean(options.endpoint),
    ...(options.accessKeyId && options.secretAccessKey
      ? { credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey } }
      : {}),
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // A backend that stops answering (down, or full and blocking writes) fails the request instead of
    // holding it forever: 5 s to connect, 60 s without a byte moving on the socket.
    requestHandler: { connectionTimeout: 5000, requestTimeout: 60_000 },
    ...extra,
  });
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
export function createS3BlobStore(
  options: S3BlobStoreOptions,
): BlobStore & { readonly direct: DirectAccess; readonly bucket: string; keyOf(sha256: string): string } {
  const { client, bucket } = options;
  const prefix = options.prefix ?? '';
  const hash = options.hash ?? nodeSha256;
  const partSize = Math.max(5 * MiB, options.partSize ?? 8 * MiB);
  const queueSize = Math.max(1, options.queueSize ?? 4);
  const maxSingleCopy = options.maxSingleCopyBytes ?? 5 * GiB;
  const copyPart = Math.max(5 * MiB, options.copyPartBytes ?? 512 * MiB);

  const layout = blobKeyLayout(prefix);
  const keyOf = layout.blobKey;
  const presigner = s3Presigner(client, bucket);
  const check = (sha: string) => SHA256_PATTERN.test(sha);
  const where = (action: string, key: string) => `${action} s3://${bucket}/${key}`;
  /** Every object under `under`, ListObjectsV2 page after page. */
  const listUnder = (under: string) =>
    listAll(client, { bucket, prefix: under, fail: (err) => s3Failure(err, where('ListObjectsV2', under)) });

  async function head(key: string): Promise<number | null> {
    try {
      const out = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
      return out.ContentLength ?? 0;
    } catch (err) {
      if (isNotFound(err)) return null;
      throw s3Failure(err, where('HeadObject', key));
    }
  }

  async function removeQuietly(key: string): Promise<void> {
    // Best effort: a staging object left behind is reaped by retention (and a bucket lifecycle rule).
    await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key })).catch(() => {});
  }

  async function copy(from: string, to: string, size: number): Promise<void> {
    const source = `${bucket}/${from.split('/').map(encodeURIComponent).join('/')}`;
    if (size <= maxSingleCopy) {
      try {
        await client.send(new CopyObjectCommand({ Bucket: bucket, Key: to, CopySource: source }));
      } catch (err) {
        throw s3Failure(err, where('CopyObject', to));
      }
      return;
    }
    let uploadId: string | undefined;
    try {
      uploadId = (await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: to }))).UploadId;
      if (!uploadId) throw new Error('CreateMultipartUpload returned no UploadId');
      const parts: { ETag: string; PartNumber: number }[] = [];
      for (let start = 0, n = 1; start < size; start += copyPart, n++) {
        const end = Math.min(size, start + copyPart) - 1;
        const out = await client.send(
          new UploadPartCopyCommand({
            Bucket: bucket,
            Key: to,
            UploadId: uploadId,
            PartNumber: n,
            CopySource: source,
            CopySourceRange: `bytes=${start}-${end}`,
          }),
        );
        parts.push({ ETag: out.CopyPartResult?.ETag ?? '', PartNumber: n });
      }
      await client.send(
        new CompleteMultipartUploadCommand({
          Bucket: bucket,
          Key: to,
          UploadId: uploadId,
          MultipartUpload: { Parts: parts },
        }),
      );
    } catch (err) {
      if (uploadId)
        await client
          .send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: to, UploadId: uploadId }))
          .catch(() => {});
      throw s3Failure(err, where('multipart copy to', to));
    }
  }

  const declaredOf = (o: BlobPutOptions) =>
    o.expectedSha256 !== undefined && check(o.expectedSha256) ? o.expectedSha256 : undefined;

  async function hashOf(bytes: Uint8Array): Promise<string> {
    const hasher = hash();
    hasher.update(bytes);
    return hasher.digest();
  }

  /**
   * Whether the backend refuses a body that does not match its signed x-amz-content-sha256. AWS,
   * MinIO and Ceph RGW do; a backend that did not would let wrong bytes in under a declared hash, so
   * this is asked once, of the backend itself: a small PutObject with a wrong payload hash to a
   * staging key. Accepted means the service hashes every body itself. A failed probe is not kept.
   */
  let payloadChecked: Promise<boolean> | undefined;
  function backendChecksPayload(): Promise<boolean> {
    payloadChecked ??= (async () => {
      const key = layout.probeKey();
      const probe = new TextEncoder().encode('artifact-store: does the backend check x-amz-content-sha256?');
      try {
        await client.send(signedPut(key, probe, EMPTY_SHA256));
      } catch (err) {
        if (isPayloadMismatch(err)) return true;
        throw s3Failure(err, where('PutObject (payload check)', key));
      }
      await removeQuietly(key);
      return false;
    })();
    payloadChecked.catch(() => {
      payloadChecked = undefined;
    });
    return payloadChecked;
  }

  /** PutObject whose SigV4 payload hash is `sha256`: the SDK does not hash the body again. */
  function signedPut(key: string, bytes: Uint8Array, sha256: string): PutObjectCommand {
    const command = new PutObjectCommand({
      Bucket: bucket,
      Key: key,
      Body: bytes,
      ContentLength: bytes.byteLength,
      ContentType: 'application/octet-stream',
    });
    return withPayloadHash(command, sha256);
  }

  /**
   * A body of at most one part, in memory. With a declared sha256 the service does not hash it: the
   * declared hash is the request's signed payload hash, and the backend refuses bytes that do not
   * match (once backendChecksPayload has said it does). The service hashes where nothing is
   * uploaded (the blob is already there) and for an empty body (RGW 16 does not check those).
   * Without one, the service hashes once and signs the PutObject with that hash: no staging object,
   * no copy, and the backend checks the bytes it received against the hash the key is named by.
   */
  async function putOne(bytes: Uint8Array, putOptions: BlobPutOptions): Promise<BlobInfo> {
    const sizeBytes = bytes.byteLength;
    const declared = declaredOf(putOptions);
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
    if (!verified && (sizeBytes === 0 || !(await backendChecksPayload()))) await verify();
    await putOptions.beforeCommit?.({ sha256 });
    const final = keyOf(sha256);
    const existing = await head(final);
    if (existing !== null && (declared || existing === sizeBytes)) {
      // Nothing is uploaded, so nothing is checked by the backend: the service checks.
      await verify();
      return { sha256, sizeBytes };
    }
    try {
      await client.send(signedPut(final, bytes, sha256));
    } catch (err) {
      // Under a declared hash: the caller's bytes are not the ones declared. Under the service's own
      // hash, bytes changed on the way to the backend: a backend fault, retried like one.
      if (declared && isPayloadMismatch(err)) throw errors.checksumMismatch(sha256, await hashOf(bytes));
      throw s3Failure(err, where('PutObject', final));
    }
    return { sha256, sizeBytes };
  }

  /**
   * A body longer than one part: a multipart upload, each part signed with its own hash by the SDK
   * (the backend checks every part). The whole body's sha256 is the service's, computed on the
   * way: with a declared one the upload goes to the final key and completes only once the bytes
   * hashed to it; without, it goes to a staging key and is copied under its hash.
   */
  async function putMultipart(
    reader: ReadableStreamDefaultReader<Uint8Array>,
    first: Uint8Array[],
    sizeSoFar: number,
    putOptions: BlobPutOptions,
  ): Promise<BlobInfo> {
    const max = putOptions.maxBytes ?? Number.POSITIVE_INFINITY;
    const declared = declaredOf(putOptions);
    const hasher = hash();
    let size = sizeSoFar;
    let digest: string | undefined;
    let refusal: unknown;
    let bodyError: unknown;
    const refuse = (err: unknown) => {
      refusal = err;
      return err;
    };
    // Hashes (and counts, past the first part) on the way to S3. Over the limit it stops reading the
    // body (cancelled, not drained) and fails the upload, which aborts it. Body errors are told apart
    // from S3's. With a declared sha256 the bytes are verified before the stream ends: a mismatch
    // fails the stream, so the upload is aborted and never completes.
    const metered = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          const ahead = first.shift();
          if (ahead) {
            hasher.update(ahead);
            controller.enqueue(ahead);
            return;
          }
          for (;;) {
            let next: ReadableStreamReadResult<Uint8Array>;
            try {
              next = await reader.read();
            } catch (err) {
              bodyError = err;
              throw err;
            }
            if (next.done) {
              digest = await hasher.digest();
              if (putOptions.expectedSha256 && putOptions.expectedSha256 !== digest)
                throw refuse(errors.checksumMismatch(putOptions.expectedSha256, digest));
              return controller.close();
            }
            const chunk = next.value;
            if (chunk.byteLength === 0) continue;
            size += chunk.byteLength;
            if (size > max) {
              await reader.cancel(refuse(errors.payloadTooLarge(max))).catch(() => {});
              throw refusal;
            }
            hasher.update(chunk);
            controller.enqueue(chunk);
            return;
          }
        },
        cancel(reason) {
          return reader.cancel(reason);
        },
      },
      { highWaterMark: 0 },
    );
    const failure = (err: unknown, key: string) => {
      if (refusal) return refusal;
      if (bodyError !== undefined) return bodyError;
      return s3Failure(err, where('upload', key));
    };
    const upload = (key: string) =>
      new Upload({
        client,
        params: { Bucket: bucket, Key: key, Body: metered, ContentType: 'application/octet-stream' },
        partSize,
        queueSize,
      }).done();

    if (declared) {
      // The final key is known up front: no staging copy. An object appears in S3 only when its
      // upload completes, which happens only after the bytes matched, so readers never see others.
      try {
        await putOptions.beforeCommit?.({ sha256: declared });
      } catch (err) {
        await metered.cancel(err).catch(() => {});
        throw err;
      }
      const final = keyOf(declared);
      if ((await head(final)) !== null) {
        // Already stored: check the body, write nothing.
        try {
          const drain = metered.getReader();
          while (!(await drain.read()).done);
        } catch (err) {
          throw failure(err, final);
        }
        return { sha256: declared, sizeBytes: size };
      }
      try {
        await upload(final);
      } catch (err) {
        throw failure(err, final);
      }
      return { sha256: declared, sizeBytes: size };
    }

    const staging = layout.stagingKey();
    try {
      await upload(staging);
    } catch (err) {
      await removeQuietly(staging);
      throw failure(err, staging);
    }
    try {
      const sha256 = digest!;
      await putOptions.beforeCommit?.({ sha256 });
      const final = keyOf(sha256);
      if ((await head(final)) !== size) await copy(staging, final, size);
      return { sha256, sizeBytes: size };
    } finally {
      await removeQuietly(staging);
    }
  }

  /** Links straight to the bucket (or the CDN in front) and direct uploads. */
  const direct: DirectAccess = {
    async presignGet(sha256: string, o: PresignGetOptions) {
      if (!check(sha256)) throw new Error(`not a sha256: ${sha256}`);
      // S3 accepts 1 s to 7 days.
      const expiresIn = Math.min(7 * 24 * 3600, Math.max(1, Math.floor(o.expiresInSeconds)));
      if (options.cdn) {
        // The distribution forwards these two query strings to S3 (see infra/), which sets the headers.
        const query = new URLSearchParams({
          'response-content-type': o.contentType,
          'response-content-disposition': o.contentDisposition,
        });
        const url = `${options.cdn.url.replace(/\/+$/, '')}/${keyOf(sha256)}?${query}`;
        return signCloudFrontUrl({
          url,
          keyPairId: options.cdn.keyPairId,
          privateKey: options.cdn.privateKey,
          dateLessThan: new Date(Date.now() + expiresIn * 1000).toISOString(),
        });
      }
      return presigner.get(keyOf(sha256), o);
    },

    async presignUpload(o: { sizeBytes: number; expiresInSeconds: number; sha256?: string }) {
      // Signed with the declared sha256 where the backend checks it (and the body is not empty, which
      // RGW 16 does not check): whatever lands under such a key is the declared bytes, and its key
      // says so to commitUpload. Otherwise commitUpload re-reads and hashes the object.
      if (o.sha256 && check(o.sha256) && o.sizeBytes > 0 && (await backendChecksPayload())) {
        const stagingKey = layout.checkedStagingKey();
        return { stagingKey, ...(await presigner.put(stagingKey, o)) };
      }
      const stagingKey = layout.stagingKey();
      return {
        stagingKey,
        ...(await presigner.put(stagingKey, { sizeBytes: o.sizeBytes, expiresInSeconds: o.expiresInSeconds })),
      };
    },

    async commitUpload(
      stagingKey: string,
      expected: { sizeBytes: number; sha256: string },
      beforeCommit?: BlobPutOptions['beforeCommit'],
    ) {
      if (layout.isCheckedStagingKey(stagingKey) && expected.sizeBytes > 0) {
        // The backend took this object only if it hashed to the signed sha256, and only at the signed
        // size: nothing to re-read. The HEAD says whether anything was uploaded.
        const size = await head(stagingKey);
        if (size === null) throw nothingUploaded();
        if (size !== expected.sizeBytes) {
          await removeQuietly(stagingKey);
          throw sizeMismatch(expected.sizeBytes, `${size}`);
        }
        try {
          await beforeCommit?.({ sha256: expected.sha256 });
          const final = keyOf(expected.sha256);
          if ((await head(final)) !== expected.sizeBytes) await copy(stagingKey, final, expected.sizeBytes);
          return { sha256: expected.sha256, sizeBytes: expected.sizeBytes };
        } finally {
          await removeQuietly(stagingKey);
        }
      }
      let body: ReadableStream<Uint8Array>;
      try {
        const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: stagingKey }));
        if (!out.Body) throw new Error('GetObject returned no body');
        body = out.Body.transformToWebStream() as ReadableStream<Uint8Array>;
      } catch (err) {
        if (isNotFound(err)) throw nothingUploaded();
        throw s3Failure(err, where('GetObject', stagingKey));
      }
      try {
        // One byte over the declared size is enough to refuse: the rest is not read.
        const hasher = hash();
        let size = 0;
        const reader = body.getReader();
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            size += value.byteLength;
            if (size > expected.sizeBytes) throw sizeMismatch(expected.sizeBytes, 'more');
            hasher.update(value);
          }
        } catch (err) {
          await reader.cancel(err).catch(() => {});
          if (isArtifactError(err)) throw err;
          throw s3Failure(err, where('reading', stagingKey));
        }
        if (size < expected.sizeBytes) throw sizeMismatch(expected.sizeBytes, `${size}`);
        const sha256 = await hasher.digest();
        if (sha256 !== expected.sha256) throw errors.checksumMismatch(expected.sha256, sha256);
        await beforeCommit?.({ sha256 });
        const final = keyOf(sha256);
        if ((await head(final)) !== size) await copy(stagingKey, final, size);
        return { sha256, sizeBytes: size };
      } finally {
        await removeQuietly(stagingKey);
      }
    },

    async discardUpload(stagingKey: string) {
      await removeQuietly(stagingKey);
    },
  };

  return {
    driver: 's3',
    bucket,
    keyOf,

    async put(body: ReadableStream<Uint8Array>, putOptions: BlobPutOptions = {}): Promise<BlobInfo> {
      const max = putOptions.maxBytes ?? Number.POSITIVE_INFINITY;
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
          await reader.cancel(refusal).catch(() => {});
          throw refusal;
        }
        first.push(next.value);
      }
      if (ended) return putOne(concatBytes(first, size), putOptions);
      return putMultipart(reader, first, size, putOptions);
    },

    async get(sha256: string, range?: ByteRange) {
      if (!check(sha256)) return null;
      const key = keyOf(sha256);
      try {
        const out = await client.send(
          new GetObjectCommand({
            Bucket: bucket,
            Key: key,
            ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
          }),
        );
        if (!out.Body) throw new Error('GetObject returned no body');
        return out.Body.transformToWebStream() as ReadableStream<Uint8Array>;
      } catch (err) {
        if (isNotFound(err)) return null;
        throw s3Failure(err, where('GetObject', key));
      }
    },

    async stat(sha256: string) {
      if (!check(sha256)) return null;
      const size = await head(keyOf(sha256));
      return size === null ? null : { sha256, sizeBytes: size };
    },

    async exists(sha256: string) {
      if (!check(sha256)) return false;
      return (await head(keyOf(sha256))) !== null;
    },

    async delete(sha256: string) {
      if (!check(sha256)) return false;
      const key = keyOf(sha256);
      // S3 deletes are idempotent and do not say whether anything was there: ask first.
      if ((await head(key)) === null) return false;
      try {
        await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
        return true;
      } catch (err) {
        throw s3Failure(err, where('DeleteObject', key));
      }
    },

    direct,

    ...(options.cdn?.invalidate
      ? {
          cdn: {
            async invalidate(sha256: string) {
              // The path CloudFront caches: the CDN URL's own path (a custom origin path) plus the key.
              const base = new URL(options.cdn!.url).pathname.replace(/\/+$/, '');
              await options.cdn!.invalidate!([`${base}/${keyOf(sha256)}`]);
            },
          },
        }
      : {}),

    async *list() {
      for await (const o of listUnder(layout.blobsPrefix)) {
        const sha256 = layout.sha256Of(o.key);
        if (sha256) yield { sha256, sizeBytes: o.sizeBytes, modifiedAt: o.modifiedAt ?? 0 };
      }
    },

    async sweepStaging(before: number) {
      const stagingPrefix = layout.stagingPrefix;
      let removed = 0;
      let bytes = 0;
      let stale: ListedObject[] = [];
      const removeStale = async () => {
        if (stale.length === 0) return;
        try {
          await client.send(
            new DeleteObjectsCommand({
              Bucket: bucket,
              Delete: { Objects: stale.map((o) => ({ Key: o.key })), Quiet: true },
            }),
          );
        } catch (err) {
          throw s3Failure(err, where('DeleteObjects', stagingPrefix));
        }
        removed += stale.length;
        bytes += stale.reduce((sum, o) => sum + o.sizeBytes, 0);
        stale = [];
      };
      for await (const o of listUnder(stagingPrefix)) {
        if (o.modifiedAt === undefined || o.modifiedAt >= before) continue;
        stale.push(o);
        // DeleteObjects takes at most 1000 keys.
        if (stale.length === 1000) await removeStale();
      }
      await removeStale();
      // Multipart uploads of puts that died mid-stream: their parts take space but are no objects.
      let keyMarker: string | undefined;
      let uploadIdMarker: string | undefined;
      do {
        let page;
        try {
          page = await client.send(
            new ListMultipartUploadsCommand({
              Bucket: bucket,
              Prefix: stagingPrefix,
              KeyMarker: keyMarker,
              UploadIdMarker: uploadIdMarker,
            }),
          );
        } catch (err) {
          throw s3Failure(err, where('ListMultipartUploads', stagingPrefix));
        }
        for (const u of page.Uploads ?? []) {
          if (!u.Key || !u.UploadId || !u.Initiated || u.Initiated.getTime() >= before) continue;
          await client
            .send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: u.Key, UploadId: u.UploadId }))
            .catch(() => {});
          removed++;
        }
        keyMarker = page.IsTruncated ? page.NextKeyMarker : undefined;
        uploadIdMarker = page.IsTruncated ? page.NextUploadIdMarker : undefined;
      } while (keyMarker);
      return { removed, bytes };
    },

    async close() {
      if (options.ownsClient) client.destroy();
    },
  };
}

const nothingUploaded = () =>
  errors.badRequest('Nothing has been uploaded for this upload yet: PUT the bytes to its url, then complete it.');

/** sha256 of no bytes: the probe's deliberately wrong payload hash. */
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

/** The backend refused a body that did not match its signed payload hash (or its Content-MD5). */
function isPayloadMismatch(err: unknown): boolean {
  const e = err as { name?: string; Code?: string };
  return ['XAmzContentSHA256Mismatch', 'BadDigest'].some((code) => e?.name === code || e?.Code === code);
}

const NOT_FOUND = new Set(['NoSuchKey', 'NotFound', 'NoSuchVersion']);

function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; Code?: string; $metadata?: { httpStatusCode?: number } };
  return (
    NOT_FOUND.has(e?.name ?? '') ||
    NOT_FOUND.has(e?.Code ?? '') ||
    (e?.$metadata?.httpStatusCode === 404 && e?.name !== 'NoSuchBucket')
  );
}

/**
 * Every S3 failure the caller cannot fix is backend_unavailable (503 + Retry-After): the backend is
 * down, throttling, or misconfigured (the message says which, for the operator's logs).
 */
export function s3Failure(err: unknown, action: string) {
  const e = err as {
    name?: string;
    message?: string;
    code?: string;
    $metadata?: { httpStatusCode?: number };
    $retryable?: { throttling?: boolean };
  };
  const status = e?.$metadata?.httpStatusCode;
  const throttled = e?.$retryable?.throttling || e?.name === 'SlowDown' || status === 429 || status === 503;
  const misconfigured =
    e?.name === 'NoSuchBucket' ||
    e?.name === 'AccessDenied' ||
    e?.name === 'InvalidAccessKeyId' ||
    e?.name === 'SignatureDoesNotMatch' ||
    status === 403;
  const reason =
    e?.name === 'NoSuchBucket'
      ? 'the bucket does not exist'
      : e?.name === 'AccessDenied' ||
          e?.name === 'InvalidAccessKeyId' ||
          e?.name === 'SignatureDoesNotMatch' ||
          status === 403
        ? 'access denied (check the credentials and the bucket policy)'
        : throttled
          ? 'the backend is throttling'
          : status === undefined
            ? `the backend is unreachable (${e?.code ?? e?.name ?? 'network error'})`
            : `the backend answered ${status} ${e?.name ?? ''}`.trim();
  const advice = misconfigured ? 'The service is misconfigured; tell the operator.' : 'Retry shortly.';
  return errors.backendUnavailable(`Blob storage failed: ${action}: ${reason}. ${advice}`, {
    cause: err,
    retryAfter: throttled ? 2 : misconfigured ? 30 : 1,
  });
}
