/**
 * The S3 driver's multipart work: a put longer than one part (streamed through lib-storage's Upload,
 * hashed on the way), the server-side copy of a staged object under its hash (one CopyObject, or a
 * multipart copy above S3's 5 GiB limit), and aborting the multipart uploads of puts that died.
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  ListMultipartUploadsCommand,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { errors } from '../core/errors.js';
import type { HashFactory } from '../core/hash.js';
import { paginate } from './blob-keys.js';
import type { BlobInfo, BlobPutOptions } from './blob-store.js';
import { s3Failure } from './s3-client.js';
import type { S3Objects } from './s3-objects.js';

export interface S3MultipartOptions {
  objects: S3Objects;
  hash: HashFactory;
  /** Part size of uploads (at least S3's 5 MiB). */
  partSize: number;
  /** Parts uploaded at once. */
  queueSize: number;
  /** Above this size a copy is a multipart copy. */
  maxSingleCopyBytes: number;
  /** Part size of a multipart copy. */
  copyPartBytes: number;
}

export interface S3Multipart {
  /**
   * A body longer than one part: a multipart upload, each part signed with its own hash by the SDK
   * (the backend checks every part). The whole body's sha256 is the service's, computed on the
   * way: with a `declared` one the upload goes to the final key and completes only once the bytes
   * hashed to it; without, it goes to a staging key and is copied under its hash. `first` holds the
   * chunks already read (`sizeSoFar` bytes); `reader` the rest of the body.
   */
  put(
    reader: ReadableStreamDefaultReader<Uint8Array>,
    first: Uint8Array[],
    sizeSoFar: number,
    putOptions: BlobPutOptions,
    declared: string | undefined,
  ): Promise<BlobInfo>;
  /** A server-side copy of `size` bytes: one CopyObject, or a multipart copy above maxSingleCopyBytes. */
  copy(from: string, to: string, size: number): Promise<void>;
  /**
   * Aborts the multipart uploads under `prefix` initiated before `before` (ms since the epoch): puts
   * that died mid-stream, whose parts take space but are no objects. Keys under `except` are left
   * alone. How many it aborted.
   */
  abortStale(prefix: string, before: number, except?: string): Promise<number>;
}

export function createS3Multipart(options: S3MultipartOptions): S3Multipart {
  const { objects, hash, partSize, queueSize, maxSingleCopyBytes, copyPartBytes } = options;
  const { client, bucket, layout, where } = objects;

  /** Aborts an upload after a failure, which is the error the caller gets. */
  async function abortAfterFailure(key: string, uploadId: string): Promise<void> {
    // Dropped on purpose: the failure that led here is what the caller must hear about. An upload
    // left open holds no visible object, and the bucket's lifecycle rule aborts it.
    await client
      .send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId: uploadId }))
      .catch(() => {});
  }

  async function multipartCopy(from: string, to: string, size: number): Promise<void> {
    const source = objects.copySource(from);
    let uploadId: string | undefined;
    try {
      uploadId = (await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: to }))).UploadId;
      if (!uploadId) throw new Error('CreateMultipartUpload returned no UploadId');
      const parts: { ETag: string; PartNumber: number }[] = [];
      for (let start = 0, n = 1; start < size; start += copyPartBytes, n++) {
        const end = Math.min(size, start + copyPartBytes) - 1;
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
      if (uploadId) await abortAfterFailure(to, uploadId);
      throw s3Failure(err, where('multipart copy to', to));
    }
  }

  const copy = (from: string, to: string, size: number) =>
    size <= maxSingleCopyBytes ? objects.copyObject(from, to) : multipartCopy(from, to, size);

  async function put(
    reader: ReadableStreamDefaultReader<Uint8Array>,
    first: Uint8Array[],
    sizeSoFar: number,
    putOptions: BlobPutOptions,
    declared: string | undefined,
  ): Promise<BlobInfo> {
    const max = putOptions.maxBytes ?? Number.POSITIVE_INFINITY;
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
              // The refusal is what the caller gets; a body that fails to cancel changes nothing.
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
        // The pin's refusal is what the caller gets; the body is only being let go.
        await metered.cancel(err).catch(() => {});
        throw err;
      }
      const final = layout.blobKey(declared);
      if ((await objects.head(final)) !== null) {
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
      await objects.removeQuietly(staging);
      throw failure(err, staging);
    }
    try {
      const sha256 = digest!;
      await putOptions.beforeCommit?.({ sha256 });
      const final = layout.blobKey(sha256);
      if ((await objects.head(final)) !== size) await copy(staging, final, size);
      return { sha256, sizeBytes: size };
    } finally {
      await objects.removeQuietly(staging);
    }
  }

  async function abortStale(prefix: string, before: number, except?: string): Promise<number> {
    const uploads = paginate<
      { Key?: string; UploadId?: string; Initiated?: Date },
      { keyMarker: string; uploadIdMarker: string | undefined }
    >(async (marker) => {
      let page;
      try {
        page = await client.send(
          new ListMultipartUploadsCommand({
            Bucket: bucket,
            Prefix: prefix,
            KeyMarker: marker?.keyMarker,
            UploadIdMarker: marker?.uploadIdMarker,
          }),
        );
      } catch (err) {
        throw s3Failure(err, where('ListMultipartUploads', prefix));
      }
      return {
        items: page.Uploads ?? [],
        next:
          page.IsTruncated && page.NextKeyMarker
            ? { keyMarker: page.NextKeyMarker, uploadIdMarker: page.NextUploadIdMarker }
            : undefined,
      };
    });
    let aborted = 0;
    for await (const u of uploads) {
      if (!u.Key || !u.UploadId || !u.Initiated || u.Initiated.getTime() >= before) continue;
      if (except && u.Key.startsWith(except)) continue;
      // Dropped on purpose: an upload that cannot be aborted now is listed, and tried, again by the
      // next sweep; the bucket's lifecycle rule aborts it in the end.
      await client
        .send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: u.Key, UploadId: u.UploadId }))
        .catch(() => {});
      aborted++;
    }
    return aborted;
  }

  return { put, copy, abortStale };
}
