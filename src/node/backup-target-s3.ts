/**
 * A backup in an S3 bucket under a prefix (S3, MinIO, Ceph RGW, R2), over the S3 driver's
 * connection settings. Files are streamed (lib-storage's Upload: one PUT for small ones, multipart
 * for large ones, a few parts in memory at most); an object appears only once its upload completed.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { blobKeyLayout } from '../blob/blob-keys.js';
import { listAll } from '../blob/s3-listing.js';
import { createS3Client, type S3ConnectionOptions } from '../blob/s3-client.js';
import type { BackupTarget, ScratchFile } from '../service/backup.js';
import { removeDatabaseFile } from './backup-target.js';

const MiB = 1024 * 1024;

export interface S3BackupTargetOptions {
  bucket: string;
  /** "" or ending in "/". */
  prefix: string;
  connection: S3ConnectionOptions;
  /** Where the database backup is staged before its upload (default: the system's temp folder). */
  scratchDir?: string;
}

export function createS3BackupTarget(options: S3BackupTargetOptions): BackupTarget {
  const { bucket, prefix } = options;
  const client: S3Client = createS3Client(options.connection);
  const location = `s3://${bucket}/${prefix.replace(/\/$/, '')}`;
  const keyOf = (name: string) => `${prefix}${name}`;
  // The blobs are laid out as a bucket of the S3 driver's is, under the backup's prefix.
  const layout = blobKeyLayout(prefix);
  const fail = (err: unknown, action: string, key: string) =>
    new Error(`${action} s3://${bucket}/${key} failed: ${s3Problem(err, bucket, options.connection.endpoint)}.`, {
      cause: err,
    });

  async function get(key: string): Promise<ReadableStream<Uint8Array> | null> {
    try {
      const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return out.Body!.transformToWebStream() as ReadableStream<Uint8Array>;
    } catch (err) {
      const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
      if (e.name === 'NoSuchKey' || (e.$metadata?.httpStatusCode === 404 && e.name !== 'NoSuchBucket')) return null;
      throw fail(err, 'GetObject', key);
    }
  }

  async function upload(key: string, body: ReadableStream<Uint8Array> | Uint8Array | NodeJS.ReadableStream) {
    try {
      await new Upload({
        client,
        params: { Bucket: bucket, Key: key, Body: body as Uint8Array },
        partSize: 8 * MiB,
        queueSize: 4,
      }).done();
    } catch (err) {
      throw fail(err, 'Upload to', key);
    }
  }

  async function remove(key: string) {
    try {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    } catch (err) {
      throw fail(err, 'DeleteObject', key);
    }
  }

  return {
    location,

    async probe() {
      const key = keyOf(`.write-probe-${randomUUID()}`);
      try {
        await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'probe' }));
        await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
      } catch (err) {
        throw new Error(
          `Cannot write the backup to ${location}: ${s3Problem(err, bucket, options.connection.endpoint)}.`,
          {
            cause: err,
          },
        );
      }
    },

    read: (name) => get(keyOf(name)),
    write: (name, body) => upload(keyOf(name), body),
    remove: (name) => remove(keyOf(name)),

    async scratchFile(): Promise<ScratchFile> {
      const file = join(options.scratchDir ?? tmpdir(), `artifact-store-backup-${randomUUID()}.db`);
      return {
        path: file,
        async publish(name) {
          const { size } = await stat(file);
          const hash = createHash('sha256');
          const hashing = new Transform({
            transform(chunk: Buffer, _encoding, callback) {
              hash.update(chunk);
              callback(null, chunk);
            },
          });
          await upload(keyOf(name), createReadStream(file).pipe(hashing));
          await removeDatabaseFile(file);
          return { sizeBytes: size, sha256: hash.digest('hex') };
        },
        discard: () => removeDatabaseFile(file),
      };
    },

    async *blobs() {
      const under = layout.blobsPrefix;
      for await (const o of listAll(client, {
        bucket,
        prefix: under,
        fail: (err) => fail(err, 'ListObjectsV2', under),
      })) {
        const sha256 = layout.sha256Of(o.key);
        if (sha256) yield { sha256, sizeBytes: o.sizeBytes };
      }
    },

    readBlob: (sha256) => get(layout.blobKey(sha256)),
    writeBlob: (sha256, body) => upload(layout.blobKey(sha256), body),
    removeBlob: (sha256) => remove(layout.blobKey(sha256)),

    async close() {
      client.destroy();
    },
  };
}

/** What went wrong, in words an operator can act on. */
function s3Problem(err: unknown, bucket: string, endpoint: string | undefined): string {
  const e = err as { name?: string; code?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  const status = e?.$metadata?.httpStatusCode;
  if (e?.name === 'NoSuchBucket') return `the bucket ${bucket} does not exist. Create it, or name another`;
  if (
    e?.name === 'AccessDenied' ||
    e?.name === 'InvalidAccessKeyId' ||
    e?.name === 'SignatureDoesNotMatch' ||
    status === 403
  )
    return `access denied (${e?.name ?? status}). Check ARTIFACT_STORE_S3_ACCESS_KEY_ID and ARTIFACT_STORE_S3_SECRET_ACCESS_KEY (unset: the AWS credentials of this machine) and the bucket's policy`;
  if (e?.name === 'CredentialsProviderError')
    return 'no S3 credentials. Set ARTIFACT_STORE_S3_ACCESS_KEY_ID and ARTIFACT_STORE_S3_SECRET_ACCESS_KEY, or AWS credentials for this machine';
  if (status === undefined)
    return `cannot reach ${endpoint ?? 'S3'} (${e?.code ?? e?.name ?? 'network error'}). Check ARTIFACT_STORE_S3_ENDPOINT and ARTIFACT_STORE_S3_REGION`;
  return `S3 answered ${status} ${e?.name ?? ''}`.trim();
}
