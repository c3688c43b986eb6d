/**
 * The S3 driver's resumable direct uploads in parts: a multipart upload at a staging key whose parts
 * the client PUTs straight to the bucket (each presigned with its own sha256 as the payload hash, so
 * the backend refuses a part that changed on the way), listed for a resume, then assembled, read back
 * once to check the whole object's sha256, and copied under its hash.
 */
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  ListPartsCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { errors, isArtifactError } from '../core/errors.js';
import type { HashFactory } from '../core/hash.js';
import { paginate } from './blob-keys.js';
import type { DirectParts, HeldPart, PartsUpload } from './blob-store.js';
import { uploadSizeMismatch } from './ingest.js';
import { isNotFound, s3Failure } from './s3-client.js';
import type { S3Multipart } from './s3-multipart.js';
import type { S3Objects } from './s3-objects.js';
import { presignWithHeaders, withPayloadHash } from './s3-presign.js';

export interface S3PartsOptions {
  objects: S3Objects;
  /** The server-side copy of the checked object under its hash. */
  copy: S3Multipart['copy'];
  hash: HashFactory;
}

/** S3's limits on a multipart upload. */
const MIN_PART_BYTES = 5 * 1024 * 1024;
const MAX_PARTS = 10_000;

export function createS3Parts(options: S3PartsOptions): DirectParts {
  const { objects, copy, hash } = options;
  const { client, bucket, layout, where } = objects;

  async function listParts(upload: PartsUpload): Promise<HeldPart[] | null> {
    const pages = paginate<HeldPart, string>(async (marker) => {
      const page = await client.send(
        new ListPartsCommand({
          Bucket: bucket,
          Key: upload.stagingKey,
          UploadId: upload.multipartId,
          ...(marker ? { PartNumberMarker: marker } : {}),
        }),
      );
      return {
        items: (page.Parts ?? []).map((p) => ({
          partNumber: p.PartNumber ?? 0,
          sizeBytes: p.Size ?? 0,
          etag: p.ETag ?? '',
        })),
        next: page.IsTruncated && page.NextPartNumberMarker ? String(page.NextPartNumberMarker) : undefined,
      };
    });
    const held: HeldPart[] = [];
    try {
      for await (const part of pages) held.push(part);
    } catch (err) {
      // NoSuchUpload: completed (or aborted) already.
      if (isNotFound(err)) return null;
      throw s3Failure(err, where('ListParts', upload.stagingKey));
    }
    return held.sort((a, b) => a.partNumber - b.partNumber);
  }

  /**
   * The assembled object's sha256, read once as it comes (the SDK's body straight into the hash,
   * no stream bridging): memory stays flat whatever the size. More bytes than `size` stop the read.
   */
  async function digestOf(key: string, size: number): Promise<string> {
    const hasher = hash();
    let at = 0;
    try {
      const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      for await (const chunk of out.Body as AsyncIterable<Uint8Array>) {
        at += chunk.byteLength;
        if (at > size) throw uploadSizeMismatch(size, 'more');
        hasher.update(chunk);
      }
    } catch (err) {
      if (isArtifactError(err)) throw err;
      throw s3Failure(err, where('reading', key));
    }
    if (at !== size) throw uploadSizeMismatch(size, `${at}`);
    return hasher.digest();
  }

  return {
    minPartBytes: MIN_PART_BYTES,
    maxParts: MAX_PARTS,

    async begin() {
      const stagingKey = layout.partsStagingKey();
      try {
        const out = await client.send(
          new CreateMultipartUploadCommand({
            Bucket: bucket,
            Key: stagingKey,
            ContentType: 'application/octet-stream',
          }),
        );
        if (!out.UploadId) throw new Error('CreateMultipartUpload returned no UploadId');
        return { stagingKey, multipartId: out.UploadId };
      } catch (err) {
        throw s3Failure(err, where('CreateMultipartUpload', stagingKey));
      }
    },

    async presignPart(upload, part) {
      const command = new UploadPartCommand({
        Bucket: bucket,
        Key: upload.stagingKey,
        UploadId: upload.multipartId,
        PartNumber: part.partNumber,
        ContentLength: part.sizeBytes,
      });
      // Signed with the part's sha256 only where the backend checks it; elsewhere the whole
      // object's check at complete is what stands between other bytes and the store.
      const checked = await objects.checksPayload();
      if (checked) withPayloadHash(command, part.sha256);
      const signed = checked ? ['x-amz-content-sha256'] : [];
      const url = await presignWithHeaders(client, command, signed, part.expiresInSeconds);
      const headers: Record<string, string> = checked ? { 'x-amz-content-sha256': part.sha256 } : {};
      return { url, headers };
    },

    listParts,

    async complete(upload, parts, expected, beforeCommit) {
      const key = upload.stagingKey;
      if (parts.length > 0) {
        try {
          await client.send(
            new CompleteMultipartUploadCommand({
              Bucket: bucket,
              Key: key,
              UploadId: upload.multipartId,
              MultipartUpload: { Parts: parts.map((p) => ({ PartNumber: p.partNumber, ETag: p.etag })) },
            }),
          );
        } catch (err) {
          // Assembled by an earlier call that died before it checked: checked now, below.
          if (!isNotFound(err)) throw s3Failure(err, where('CompleteMultipartUpload', key));
        }
      }
      let blob;
      try {
        const size = await objects.head(key);
        if (size === null)
          throw errors.badRequest('The upload has no assembled object: upload its parts, then complete it.');
        if (size !== expected.sizeBytes) throw uploadSizeMismatch(expected.sizeBytes, `${size}`);
        blob = { sizeBytes: size, sha256: await digestOf(key, size) };
        if (blob.sha256 !== expected.sha256) throw errors.checksumMismatch(expected.sha256, blob.sha256);
      } catch (err) {
        // Other bytes than declared end the upload: nothing of them is kept.
        if (isArtifactError(err) && err.code !== 'backend_unavailable') await objects.removeQuietly(key);
        throw err;
      }
      try {
        await beforeCommit?.({ sha256: blob.sha256 });
        const final = layout.blobKey(blob.sha256);
        if ((await objects.head(final)) !== blob.sizeBytes) await copy(key, final, blob.sizeBytes);
        return blob;
      } finally {
        await objects.removeQuietly(key);
      }
    },

    async abort(upload) {
      try {
        await client.send(
          new AbortMultipartUploadCommand({ Bucket: bucket, Key: upload.stagingKey, UploadId: upload.multipartId }),
        );
      } catch (err) {
        if (!isNotFound(err)) throw s3Failure(err, where('AbortMultipartUpload', upload.stagingKey));
      }
      await objects.removeQuietly(upload.stagingKey);
    },
  };
}
