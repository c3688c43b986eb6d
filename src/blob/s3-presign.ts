import { GetObjectCommand, PutObjectCommand, type S3Client, UploadPartCommand } from '@aws-sdk/client-s3';
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
export function withPayloadHash<C extends PutObjectCommand | UploadPartCommand>(command: C, sha256: string): C {
  (command.middlewareStack as unknown as BuildStep).add(
    (next) => (args) => {
      (args.request as { headers: Record<string, string> }).headers['x-amz-content-sha256'] = sha256;
      return next(args);
    },
    { step: 'build', name: 'artifactStorePayloadHash' },
  );
  return command;
}

/** The one middleware step withPayloadHash adds to, whichever command it is. */
interface BuildStep {
  add(
    middleware: (
      next: (args: { request: unknown }) => Promise<unknown>,
    ) => (args: { request: unknown }) => Promise<unknown>,
    options: { step: 'build'; name: string },
  ): void;
}

/** S3 accepts 1 s to 7 days. */
export const expiry = (seconds: number) => Math.min(7 * 24 * 3600, Math.max(1, Math.floor(seconds)));

/**
 * Presigns `command` with `signed` headers in its signature. Those after the first stay headers, not
 * query parameters: the backend compares the body with x-amz-content-sha256 only as a header.
 */
export function presignWithHeaders(
  client: S3Client,
  command: PutObjectCommand | UploadPartCommand,
  signed: string[],
  expiresInSeconds: number,
): Promise<string> {
  const options = {
    expiresIn: expiry(expiresInSeconds),
    signableHeaders: new Set(signed),
    unhoistableHeaders: new Set(signed.filter((h) => h === 'x-amz-content-sha256')),
  };
  // Two calls, one per command type: the signer's types take one command type at a time.
  return command instanceof UploadPartCommand
    ? getSignedUrl(client, command, options)
    : getSignedUrl(client, command, options);
}

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
      const url = await presignWithHeaders(client, command, signed, o.expiresInSeconds);
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
