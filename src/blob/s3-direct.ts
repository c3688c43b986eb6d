/**
 * The S3 driver's `direct` capability: links straight to the bucket (S3 presigned, or CloudFront
 * signed with a CDN in front) and direct uploads (a presigned PUT to a staging key, committed under
 * its hash once its size and sha256 are checked).
 */
import { errors, isArtifactError } from '../core/errors.js';
import type { HashFactory } from '../core/hash.js';
import { SHA256_PATTERN } from '../core/ids.js';
import type { BlobPutOptions, DirectAccess, DirectParts } from './blob-store.js';
import { uploadSizeMismatch as sizeMismatch } from './ingest.js';
import type { CloudFrontCdn } from './s3-cdn.js';
import { s3Failure } from './s3-client.js';
import type { S3Multipart } from './s3-multipart.js';
import type { S3Objects } from './s3-objects.js';
import type { ObjectPresigner } from './s3-presign.js';

export interface S3DirectOptions {
  objects: S3Objects;
  /** The server-side copy of a staged upload under its hash. */
  copy: S3Multipart['copy'];
  hash: HashFactory;
  presigner: ObjectPresigner;
  /** With a CDN in front, links are CloudFront signed URLs instead of S3 presigned ones. */
  cdn?: CloudFrontCdn;
  /** Resumable direct uploads in parts. */
  parts?: DirectParts;
}

export function createS3Direct(options: S3DirectOptions): DirectAccess {
  const { objects, copy, hash, presigner, cdn, parts } = options;
  const { layout, where } = objects;

  /** Commits a staging object the backend checked at its PUT: nothing to re-read. */
  async function commitChecked(
    stagingKey: string,
    expected: { sizeBytes: number; sha256: string },
    beforeCommit: BlobPutOptions['beforeCommit'],
  ) {
    // The backend took this object only if it hashed to the signed sha256, and only at the signed
    // size. The HEAD says whether anything was uploaded.
    const size = await objects.head(stagingKey);
    if (size === null) throw nothingUploaded();
    if (size !== expected.sizeBytes) {
      await objects.removeQuietly(stagingKey);
      throw sizeMismatch(expected.sizeBytes, `${size}`);
    }
    try {
      await beforeCommit?.({ sha256: expected.sha256 });
      const final = layout.blobKey(expected.sha256);
      if ((await objects.head(final)) !== expected.sizeBytes) await copy(stagingKey, final, expected.sizeBytes);
      return { sha256: expected.sha256, sizeBytes: expected.sizeBytes };
    } finally {
      await objects.removeQuietly(stagingKey);
    }
  }

  return {
    ...(parts ? { parts } : {}),

    async presignGet(sha256, o) {
      if (!SHA256_PATTERN.test(sha256)) throw new Error(`not a sha256: ${sha256}`);
      if (cdn) return cdn.signedUrl(sha256, o);
      return presigner.get(layout.blobKey(sha256), o);
    },

    async presignUpload(o) {
      // Signed with the declared sha256 where the backend checks it (and the body is not empty, which
      // RGW 16 does not check): whatever lands under such a key is the declared bytes, and its key
      // says so to commitUpload. Otherwise commitUpload re-reads and hashes the object.
      if (o.sha256 && SHA256_PATTERN.test(o.sha256) && o.sizeBytes > 0 && (await objects.checksPayload())) {
        const stagingKey = layout.checkedStagingKey();
        return { stagingKey, ...(await presigner.put(stagingKey, o)) };
      }
      const stagingKey = layout.stagingKey();
      return {
        stagingKey,
        ...(await presigner.put(stagingKey, { sizeBytes: o.sizeBytes, expiresInSeconds: o.expiresInSeconds })),
      };
    },

    async commitUpload(stagingKey, expected, beforeCommit) {
      if (layout.isCheckedStagingKey(stagingKey) && expected.sizeBytes > 0)
        return commitChecked(stagingKey, expected, beforeCommit);
      const body = await objects.read(stagingKey);
      if (!body) throw nothingUploaded();
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
          // The error above is the one to report; a body that fails to cancel changes nothing.
          await reader.cancel(err).catch(() => {});
          if (isArtifactError(err)) throw err;
          throw s3Failure(err, where('reading', stagingKey));
        }
        if (size < expected.sizeBytes) throw sizeMismatch(expected.sizeBytes, `${size}`);
        const sha256 = await hasher.digest();
        if (sha256 !== expected.sha256) throw errors.checksumMismatch(expected.sha256, sha256);
        await beforeCommit?.({ sha256 });
        const final = layout.blobKey(sha256);
        if ((await objects.head(final)) !== size) await copy(stagingKey, final, size);
        return { sha256, sizeBytes: size };
      } finally {
        await objects.removeQuietly(stagingKey);
      }
    },

    async discardUpload(stagingKey) {
      await objects.removeQuietly(stagingKey);
    },
  };
}

const nothingUploaded = () =>
  errors.badRequest('Nothing has been uploaded for this upload yet: PUT the bytes to its url, then complete it.');
