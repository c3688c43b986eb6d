/**
 * CloudFront in front of the S3 driver's bucket: direct links signed by CloudFront (canned policy)
 * for a blob's key, and invalidation of a blob's cached copies after a purge.
 */
import { randomUUID } from 'node:crypto';
import { type CloudFrontClient, CreateInvalidationCommand } from '@aws-sdk/client-cloudfront';
import { getSignedUrl as signCloudFrontUrl } from '@aws-sdk/cloudfront-signer';
import type { BlobKeyLayout } from './blob-keys.js';
import type { CdnAccess, PresignGetOptions } from './blob-store.js';
import { s3Failure } from './s3-client.js';

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

/** A CloudFront distribution in front of a bucket laid out as `layout`. */
export interface CloudFrontCdn {
  /** A signed URL of a blob through the distribution, valid for `options.expiresInSeconds` (1 s to 7 days). */
  signedUrl(sha256: string, options: PresignGetOptions): string;
  /** `BlobStore.cdn`: present when the distribution can be invalidated. */
  access: CdnAccess | undefined;
}

export function createCloudFrontCdn(cdn: CdnSigning, layout: BlobKeyLayout): CloudFrontCdn {
  const invalidate = cdn.invalidate;
  return {
    signedUrl(sha256, o) {
      // S3 accepts 1 s to 7 days.
      const expiresIn = Math.min(7 * 24 * 3600, Math.max(1, Math.floor(o.expiresInSeconds)));
      // The distribution forwards these two query strings to S3 (see infra/), which sets the headers.
      const query = new URLSearchParams({
        'response-content-type': o.contentType,
        'response-content-disposition': o.contentDisposition,
      });
      const url = `${cdn.url.replace(/\/+$/, '')}/${layout.blobKey(sha256)}?${query}`;
      return signCloudFrontUrl({
        url,
        keyPairId: cdn.keyPairId,
        privateKey: cdn.privateKey,
        dateLessThan: new Date(Date.now() + expiresIn * 1000).toISOString(),
      });
    },
    access: invalidate
      ? {
          async invalidate(sha256) {
            // The path CloudFront caches: the CDN URL's own path (a custom origin path) plus the key.
            const base = new URL(cdn.url).pathname.replace(/\/+$/, '');
            await invalidate([`${base}/${layout.blobKey(sha256)}`]);
          },
        }
      : undefined,
  };
}
