/**
 * Single-object requests on one S3 bucket, as the S3 driver's parts use them: HEAD, GET, signed PUT,
 * copy, delete and listing, each failure mapped to backend_unavailable naming the request and key;
 * and the one-time probe of whether the backend checks payload hashes.
 */
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { Readable } from 'node:stream';
import type { ByteRange } from '../core/schemas.js';
import type { BlobKeyLayout } from './blob-keys.js';
import { type ListedObject, listAll } from './s3-listing.js';
import { isNotFound, isPayloadMismatch, s3Failure } from './s3-client.js';
import { withPayloadHash } from './s3-presign.js';
import { nodeReadableStream } from './node-body.js';

/** The requests of one bucket under one key layout. */
export interface S3Objects {
  readonly client: S3Client;
  readonly bucket: string;
  readonly layout: BlobKeyLayout;
  /** "{action} s3://{bucket}/{key}", for error messages. */
  where(action: string, key: string): string;
  /** The object's size, or null when it is not there. */
  head(key: string): Promise<number | null>;
  /** The object's bytes (or a range, inclusive ends), or null when it is not there. */
  read(key: string, range?: ByteRange): Promise<ReadableStream<Uint8Array> | null>;
  /**
   * PutObject whose SigV4 payload hash is `sha256` (the SDK does not hash the body again; the
   * backend checks it). Rejects with the SDK's error, so the caller can tell a payload mismatch apart.
   */
  putSigned(key: string, bytes: Uint8Array, sha256: string): Promise<void>;
  /** One server-side CopyObject (up to 5 GiB). */
  copyObject(from: string, to: string): Promise<void>;
  /** The CopySource of `key` in this bucket, for CopyObject and UploadPartCopy. */
  copySource(key: string): string;
  remove(key: string): Promise<void>;
  /** Best effort: a staging object left behind is reaped by retention (and a bucket lifecycle rule). */
  removeQuietly(key: string): Promise<void>;
  /** One DeleteObjects of at most 1000 keys; `under` names them in an error. */
  removeMany(keys: string[], under: string): Promise<void>;
  /** Every object under `prefix`. */
  list(prefix: string): AsyncIterable<ListedObject>;
  /**
   * Whether the backend refuses a body that does not match its signed x-amz-content-sha256. AWS,
   * MinIO and Ceph RGW do; a backend that did not would let wrong bytes in under a declared hash, so
   * this is asked once, of the backend itself: a small PutObject with a wrong payload hash to a
   * staging key. Accepted means the service hashes every body itself. A failed probe is not kept.
   */
  checksPayload(): Promise<boolean>;
}

export interface S3ObjectsOptions {
  client: S3Client;
  bucket: string;
  layout: BlobKeyLayout;
}

export function createS3Objects(options: S3ObjectsOptions): S3Objects {
  const { client, bucket, layout } = options;
  const where = (action: string, key: string) => `${action} s3://${bucket}/${key}`;

  async function putSigned(key: string, bytes: Uint8Array, sha256: string): Promise<void> {
    const command = new PutObjectCommand({
      Bucket: bucket,
      Key: key,
      Body: bytes,
      ContentLength: bytes.byteLength,
      ContentType: 'application/octet-stream',
    });
    await client.send(withPayloadHash(command, sha256));
  }

  async function removeQuietly(key: string): Promise<void> {
    // Dropped on purpose: the object is staging, which retention's sweep (and the bucket's lifecycle
    // rule) removes later, and the caller's own outcome is what matters.
    await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key })).catch(() => {});
  }

  let payloadChecked: Promise<boolean> | undefined;
  function checksPayload(): Promise<boolean> {
    payloadChecked ??= (async () => {
      const key = layout.probeKey();
      const probe = new TextEncoder().encode('artifact-store: does the backend check x-amz-content-sha256?');
      try {
        await putSigned(key, probe, EMPTY_SHA256);
      } catch (err) {
        if (isPayloadMismatch(err)) return true;
        throw s3Failure(err, where('PutObject (payload check)', key));
      }
      await removeQuietly(key);
      return false;
    })();
    // A failed probe is forgotten, so the next put asks again; the failure reaches that put's caller.
    payloadChecked.catch(() => {
      payloadChecked = undefined;
    });
    return payloadChecked;
  }

  return {
    client,
    bucket,
    layout,
    where,

    async head(key) {
      try {
        const out = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
        return out.ContentLength ?? 0;
      } catch (err) {
        if (isNotFound(err)) return null;
        throw s3Failure(err, where('HeadObject', key));
      }
    },

    async read(key, range) {
      try {
        const out = await client.send(
          new GetObjectCommand({
            Bucket: bucket,
            Key: key,
            ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}),
          }),
        );
        if (!out.Body) throw new Error('GetObject returned no body');
        // On Node the body is the SDK's IncomingMessage: a web stream over it that the Node server
        // can skip, piping the response from S3 into the client's (node-body.ts).
        if (out.Body instanceof Readable) return nodeReadableStream(out.Body);
        return out.Body.transformToWebStream() as ReadableStream<Uint8Array>;
      } catch (err) {
        if (isNotFound(err)) return null;
        throw s3Failure(err, where('GetObject', key));
      }
    },

    putSigned,

    async copyObject(from, to) {
      try {
        await client.send(new CopyObjectCommand({ Bucket: bucket, Key: to, CopySource: copySource(bucket, from) }));
      } catch (err) {
        throw s3Failure(err, where('CopyObject', to));
      }
    },

    copySource: (key) => copySource(bucket, key),

    async remove(key) {
      try {
        await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
      } catch (err) {
        throw s3Failure(err, where('DeleteObject', key));
      }
    },

    removeQuietly,

    async removeMany(keys, under) {
      try {
        await client.send(
          new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true } }),
        );
      } catch (err) {
        throw s3Failure(err, where('DeleteObjects', under));
      }
    },

    list: (prefix) =>
      listAll(client, { bucket, prefix, fail: (err) => s3Failure(err, where('ListObjectsV2', prefix)) }),

    checksPayload,
  };
}

const copySource = (bucket: string, key: string) => `${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;

/** sha256 of no bytes: the probe's deliberately wrong payload hash. */
const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';
