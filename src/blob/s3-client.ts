/**
 * The S3 client of the S3 driver and the backup target, and what its failures mean: the connection
 * settings, and the mapping of every S3 error to the service's (not found, payload mismatch, or
 * backend_unavailable with a reason an operator can act on).
 */
import { S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { errors } from '../core/errors.js';

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

/** The backend refused a body that did not match its signed payload hash (or its Content-MD5). */
export function isPayloadMismatch(err: unknown): boolean {
  const e = err as { name?: string; Code?: string };
  return ['XAmzContentSHA256Mismatch', 'BadDigest'].some((code) => e?.name === code || e?.Code === code);
}

const NOT_FOUND = new Set(['NoSuchKey', 'NotFound', 'NoSuchVersion']);

/** The object (or the version asked for) is not there; a missing bucket is a misconfiguration instead. */
export function isNotFound(err: unknown): boolean {
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
