import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { PresignGetOptions } from './blob-store.js';

/**
 * SigV4 presigned GET and PUT URLs for objects in an S3-compatible bucket: the S3 driver's, and the
 * R2 driver's (R2's S3 API) for direct links and direct uploads. Loads in Node and in Workers.
 */
export interface ObjectPresigner {
  /** A GET of `key` whose response carries these Content-Type and Content-Disposition headers. */
  get(key: string, options: PresignGetOptions): Promise<string>;
  /**
   * A PUT of exactly `sizeBytes` to `key`; the client must send `headers`. With `sha256`, that is
   * the request's signed payload hash (`x-amz-content-sha256`, one of the headers): a backend that
   * checks payload hashes refuses other bytes.
   */
  put(
    key: string,
    options: { sizeBytes: number; expiresInSeconds: number; sha256?: string },
  ): Promise<{ url: string; headers: Record<string, string> }>;
}

/**
 * Makes `sha256` the command's SigV4 payload hash: the signer takes a request's own
 * x-amz-content-sha256 instead of hashing the body, and the backend checks the body against it.
 */
export function withPayloadHash<C extends PutObjectCommand>(command: C, sha256: string): C {
  command.middlewareStack.add(
    (next) => (args) => {
      (args.request as { headers: Record<string, string> }).headers['x-amz-content-sha256'] = sha256;
      return next(args);
    },
    { step: 'build', name: 'artifactStorePayloadHash' },
  );
  return command;
}

/** S3 accepts 1 s to 7 days. */
const expiry = (seconds: number) => Math.min(7 * 24 * 3600, Math.max(1, Math.floor(seconds)));

export function s3Presigner(client: S3Client, bucket: string): ObjectPresigner {
  return {
    get(key, o) {
      const command = new GetObjectCommand({
        Bucket: bucket,
        Key: key,
        ResponseContentType: o.contentType,
        ResponseContentDisposition: o.contentDisposition,
      });
      return getSignedUrl(client, command, { expiresIn: expiry(o.expiresInSeconds) });
    },
    async put(key, o) {
      const command = new PutObjectCommand({
        Bucket: bucket,
        Key: key,
        ContentLength: o.sizeBytes,
        ContentType: 'application/octet-stream',
      });
      if (o.sha256) withPayloadHash(command, o.sha256);
      const signed = o.sha256 ? ['content-type', 'x-amz-content-sha256'] : ['content-type'];
      const url = await getSignedUrl(client, command, {
        expiresIn: expiry(o.expiresInSeconds),
        signableHeaders: new Set(signed),
        // A header, not a query parameter: the backend compares the body with the header.
        unhoistableHeaders: new Set(signed.slice(1)),
      });
      return {
        url,
        headers: {
          'Content-Type': 'application/octet-stream',
          ...(o.sha256 ? { 'x-amz-content-sha256': o.sha256 } : {}),
        },
      };
    },
  };
}
