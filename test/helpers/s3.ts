import { randomBytes } from 'node:crypto';
import { AbortMultipartUploadCommand, CreateBucketCommand, DeleteBucketCommand, DeleteObjectsCommand, ListMultipartUploadsCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { describe, inject, it } from 'vitest';
import { createS3Client } from '../../src/blob/s3.js';
import type { S3TargetInfo } from './s3-target.js';

/** The run's S3 server (test/global-setup-s3.ts), or null when none could be had. */
export function s3TestTarget(): S3TargetInfo | null {
  return inject('s3');
}

/**
 * Tests that need a real S3. Without one they are skipped with the reason in their name, except in
 * CI, where a missing S3 is a failure: CI installs Ceph RGW and must run them.
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
        throw new Error(`CI must run the S3 tests, but ${reason}`);
      });
    });
    return;
  }
  describe.skip(`${name} (skipped: ${reason})`, fn);
}

/** A fresh bucket; cleanup() empties it (objects and unfinished multipart uploads) and deletes it. */
export async function createTestBucket(target: S3TargetInfo, label: string): Promise<{ bucket: string; cleanup(): Promise<void> }> {
  const client = createS3Client({ region: target.region, endpoint: target.endpoint, forcePathStyle: target.forcePathStyle, accessKeyId: target.accessKeyId, secretAccessKey: target.secretAccessKey });
  const bucket = `as-test-${label}-${randomBytes(4).toString('hex')}`;
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  return {
    bucket,
    async cleanup() {
      try {
        let token: string | undefined;
        do {
          const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
          const keys = (page.Contents ?? []).map((o) => ({ Key: o.Key! }));
          if (keys.length > 0) await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys } }));
          token = page.IsTruncated ? page.NextContinuationToken : undefined;
        } while (token);
        const uploads = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
        for (const u of uploads.Uploads ?? []) await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: u.Key!, UploadId: u.UploadId! }));
        await client.send(new DeleteBucketCommand({ Bucket: bucket }));
      } finally {
        client.destroy();
      }
    },
  };
}
