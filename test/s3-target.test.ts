// Smoke test of the run's S3 server itself (test/global-setup-s3.ts): that it is a real S3, which
// checks signatures, before the driver tests rely on it.
import {
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadBucketCommand,
  PutObjectCommand,
  UploadPartCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestBucket, describeS3, s3TestTarget, testS3Client } from './helpers/s3.js';

describeS3('S3 test target', () => {
  const target = s3TestTarget()!;
  let client: S3Client;
  let bucket: string;
  let cleanup: () => Promise<void>;
  const body = Buffer.from('0123456789abcdefghijklmnopqrstuvwxyz');

  beforeAll(async () => {
    client = testS3Client(target);
    ({ bucket, cleanup } = await createTestBucket(target, 'smoke'));
  });
  afterAll(async () => {
    await cleanup?.();
    client?.destroy();
  });

  it('puts and gets an object, whole and by range', async () => {
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'a/b.txt', Body: body, ContentType: 'text/plain' }));
    const whole = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'a/b.txt' }));
    expect(Buffer.from(await whole.Body!.transformToByteArray())).toEqual(body);
    expect(whole.ContentType).toBe('text/plain');

    const range = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'a/b.txt', Range: 'bytes=10-15' }));
    expect(await range.Body!.transformToString()).toBe('abcdef');
    expect(range.ContentRange).toBe(`bytes 10-15/${body.length}`);
  });

  it('serves a presigned GET to plain fetch and refuses it with a tampered signature', async () => {
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'signed.bin', Body: body }));
    const url = new URL(
      await getSignedUrl(client, new GetObjectCommand({ Bucket: bucket, Key: 'signed.bin' }), { expiresIn: 60 }),
    );

    const ok = await fetch(url);
    expect(ok.status).toBe(200);
    expect(Buffer.from(await ok.arrayBuffer())).toEqual(body);

    const signature = url.searchParams.get('X-Amz-Signature')!;
    const flipped = signature.slice(0, -1) + (signature.endsWith('0') ? '1' : '0');
    url.searchParams.set('X-Amz-Signature', flipped);
    const forged = await fetch(url);
    expect(forged.status).toBe(403);
    expect(await forged.text()).toContain('SignatureDoesNotMatch');
  });

  it('cleanup() removes a bucket with objects and an unfinished multipart upload', async () => {
    const extra = await createTestBucket(target, 'Cleanup Check!');
    expect(extra.bucket).toMatch(/^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/);
    await Promise.all(
      [1, 2, 3].map((i) => client.send(new PutObjectCommand({ Bucket: extra.bucket, Key: `k${i}`, Body: body }))),
    );
    const mpu = await client.send(new CreateMultipartUploadCommand({ Bucket: extra.bucket, Key: 'unfinished' }));
    await client.send(
      new UploadPartCommand({
        Bucket: extra.bucket,
        Key: 'unfinished',
        UploadId: mpu.UploadId,
        PartNumber: 1,
        Body: body,
      }),
    );

    await extra.cleanup();
    await expect(client.send(new HeadBucketCommand({ Bucket: extra.bucket }))).rejects.toMatchObject({
      $metadata: { httpStatusCode: 404 },
    });
  });
});
