import { randomBytes } from 'node:crypto';
import {
  AbortMultipartUploadCommand,
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectsCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { describe, inject, it } from 'vitest';
import type { S3TargetInfo } from './s3-target.js';

/** The run's S3 server (test/global-setup-s3.ts), or null when none could be had. */
export function s3TestTarget(): S3TargetInfo | null {
  return inject('s3');
}

/**
 * Tests that need a real S3. Without one they are skipped with the reason in their name, except in
 * CI (CI=true), where a missing S3 is a failure: CI installs Ceph RGW and must run them.
 */
export function describeS3(name: string, fn: () => void): void {
  const target = inject('s3');
  if (target) {
    describe(`${name} [${target.name}]`, fn);
    return;
  }
  const reason = inject('s3Unavailable') ?? 'no S3 server';
  if (process.env.CI === 'true') {
    describe(name, () => {
      it('has a real S3 server to run against', () => {
        throw new Error(`CI must run the S3 tests, but there is ${reason}`);
      });
    });
    return;
  }
  // The name keeps the first line; the whole reason was printed when the run started.
  describe.skip(`${name} (skipped: ${reason.split('\n')[0]})`, fn);
}

/**
 * The settings of a service in this process on the s3 driver over `bucket` of the target: a test's
 * own data dir, no logs; `more` adds or overrides (a prefix, limits, thresholds).
 */
export function s3ServiceSettings(
  target: S3TargetInfo,
  bucket: string,
  dataDir: string,
  more: Record<string, string | number> = {},
) {
  return {
    port: 0,
    dataDir,
    logLevel: 'silent',
    env: 'test',
    blobDriver: 's3',
    s3Bucket: bucket,
    s3Region: target.region,
    s3Endpoint: target.endpoint,
    s3ForcePathStyle: target.forcePathStyle ? 'true' : 'false',
    s3AccessKeyId: target.accessKeyId,
    s3SecretAccessKey: target.secretAccessKey,
    ...more,
  } as const;
}

/** An SDK client for the target, with the settings every S3-compatible server accepts. */
export function testS3Client(target: S3TargetInfo): S3Client {
  return new S3Client({
    endpoint: target.endpoint,
    region: target.region,
    forcePathStyle: target.forcePathStyle,
    credentials: { accessKeyId: target.accessKeyId, secretAccessKey: target.secretAccessKey },
    // Newer SDKs add CRC checksums to every request; older servers (Ceph RGW 16) reject or ignore them.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
}

/**
 * A fresh, uniquely named bucket. cleanup() empties it (objects and unfinished multipart uploads,
 * all pages) and deletes it.
 */
export async function createTestBucket(
  target: S3TargetInfo,
  prefix: string,
): Promise<{ bucket: string; cleanup(): Promise<void> }> {
  const client = testS3Client(target);
  // Bucket names: 3-63 chars of [a-z0-9-], starting and ending with a letter or digit.
  const label =
    prefix
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 30) || 'test';
  const bucket = `as-test-${label}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  return {
    bucket,
    async cleanup() {
      try {
        let token: string | undefined;
        do {
          const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
          const keys = (page.Contents ?? []).map((o) => ({ Key: o.Key! }));
          if (keys.length > 0) {
            const out = await client.send(
              new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys, Quiet: true } }),
            );
            if (out.Errors?.length)
              throw new Error(`deleting from ${bucket}: ${out.Errors.map((e) => `${e.Key}: ${e.Code}`).join(', ')}`);
          }
          token = page.IsTruncated ? page.NextContinuationToken : undefined;
        } while (token);

        let keyMarker: string | undefined;
        let uploadIdMarker: string | undefined;
        do {
          const page = await client.send(
            new ListMultipartUploadsCommand({ Bucket: bucket, KeyMarker: keyMarker, UploadIdMarker: uploadIdMarker }),
          );
          for (const u of page.Uploads ?? []) {
            await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: u.Key!, UploadId: u.UploadId! }));
          }
          [keyMarker, uploadIdMarker] = page.IsTruncated
            ? [page.NextKeyMarker, page.NextUploadIdMarker]
            : [undefined, undefined];
        } while (keyMarker);

        await client.send(new DeleteBucketCommand({ Bucket: bucket }));
      } finally {
        client.destroy();
      }
    },
  };
}
