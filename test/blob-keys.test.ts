/**
 * The key layout and pagers the S3 and R2 drivers and the S3 backup target share
 * (src/blob/blob-keys.ts): every key the layout makes parses back, and no other key does; the pagers
 * walk every page, fetching each only when the previous one is consumed; and ListObjectsV2 over a
 * real S3 server page after page.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blobKeyLayout, paginate } from '../src/blob/blob-keys.js';
import { listAll } from '../src/blob/s3-listing.js';
import { createS3BlobStore } from '../src/blob/s3.js';
import { createS3Client } from '../src/blob/s3-client.js';
import { bytesStream, sha256Of } from './helpers/streams.js';
import { createTestBucket, describeS3, s3TestTarget } from './helpers/s3.js';

const PREFIXES = ['', 'artifacts/', 'tenant-a/blobs/'];
const hashes = Array.from({ length: 20 }, () => sha256Of(randomBytes(16)));

describe('the blob key layout', () => {
  it('puts a blob at {prefix}blobs/sha256/ab/cd/{sha256}, and stages under {prefix}staging/', () => {
    const layout = blobKeyLayout('p/');
    const sha = hashes[0]!;
    expect(layout.blobKey(sha)).toBe(`p/blobs/sha256/${sha.slice(0, 2)}/${sha.slice(2, 4)}/${sha}`);
    expect(layout.blobsPrefix).toBe('p/blobs/sha256/');
    expect(layout.stagingPrefix).toBe('p/staging/');
    expect(layout.stagingKey()).toMatch(/^p\/staging\/[0-9a-f-]{36}$/);
    expect(layout.checkedStagingKey()).toMatch(/^p\/staging\/checked\/[0-9a-f-]{36}$/);
    expect(layout.probeKey()).toMatch(/^p\/staging\/payload-check-[0-9a-f-]{36}$/);
    expect(layout.stagingKey()).not.toBe(layout.stagingKey());
    expect(blobKeyLayout().blobKey(sha)).toBe(`blobs/sha256/${sha.slice(0, 2)}/${sha.slice(2, 4)}/${sha}`);
  });

  it('parses back every blob key it makes, and no staging key', () => {
    for (const prefix of PREFIXES) {
      const layout = blobKeyLayout(prefix);
      for (const sha of hashes) expect(layout.sha256Of(layout.blobKey(sha)), prefix).toBe(sha);
      for (const key of [layout.stagingKey(), layout.checkedStagingKey(), layout.probeKey()]) {
        expect(layout.sha256Of(key), key).toBeNull();
        expect(layout.isStagingKey(key), key).toBe(true);
      }
      expect(layout.isCheckedStagingKey(layout.checkedStagingKey())).toBe(true);
      expect(layout.isCheckedStagingKey(layout.stagingKey())).toBe(false);
      expect(layout.isCheckedStagingKey(layout.probeKey())).toBe(false);
      expect(layout.isStagingKey(layout.blobKey(hashes[0]!))).toBe(false);
    }
  });

  it('gives null for every key that is not one of its blob keys', () => {
    const layout = blobKeyLayout('p/');
    // A hash whose shards read differently swapped and upper-cased, so each case below is foreign.
    const sha = sha256Of(Buffer.from('a0b1'.repeat(8)));
    const other = sha256Of(Buffer.from('another blob'));
    expect(/[a-f]/.test(sha.slice(0, 4)) && sha.slice(0, 2) !== sha.slice(2, 4)).toBe(true);
    const shards = `${sha.slice(0, 2)}/${sha.slice(2, 4)}`;
    const foreign = [
      '',
      sha,
      `blobs/sha256/${shards}/${sha}`, // another prefix's (none)
      `q/blobs/sha256/${shards}/${sha}`, // another prefix's
      `x/p/blobs/sha256/${shards}/${sha}`, // this prefix, deeper
      `p/blobs/sha256/${other.slice(0, 2)}/${other.slice(2, 4)}/${sha}`, // shards of another hash
      `p/blobs/sha256/${sha.slice(2, 4)}/${sha.slice(0, 2)}/${sha}`, // shards swapped
      `p/blobs/sha256/${shards}/${sha.toUpperCase()}`,
      `p/blobs/sha256/${shards.toUpperCase()}/${sha}`,
      `p/blobs/sha256/${shards}/${sha.slice(0, 63)}`,
      `p/blobs/sha256/${shards}/${sha}0`,
      `p/blobs/sha256/${shards}/${sha}/`,
      `p/blobs/sha256/${shards}/${sha}.tmp`,
      `p/blobs/sha256/${sha}`,
      `p/blobs/sha256/${sha.slice(0, 2)}/${sha}`,
      `p/blobs/sha256/${shards}/`,
      `p/blobs/sha256/${shards}/${'g'.repeat(64)}`,
      `p/blobs/sha1/${shards}/${sha}`,
      `p/staging/${sha}`,
      `p/blobs/sha256/readme.txt`,
    ];
    for (const key of foreign) expect(layout.sha256Of(key), key).toBeNull();
  });

  it('owns only keys under its staging prefix, and no key that climbs out of it', () => {
    const layout = blobKeyLayout('p/');
    expect(layout.isStagingKey('p/staging/abc')).toBe(true);
    for (const key of ['staging/abc', 'q/staging/abc', 'p/stagingabc', 'p/staging/../blobs/x', 'p/staging/a/..'])
      expect(layout.isStagingKey(key), key).toBe(false);
  });
});

describe('paginate', () => {
  it('yields every item of every page in order, asking for a page only once the last is consumed', async () => {
    const pages = new Map<string | undefined, { items: number[]; next: string | undefined }>([
      [undefined, { items: [1, 2], next: 'b' }],
      ['b', { items: [], next: 'c' }], // an empty page that is not the last (S3 may send one)
      ['c', { items: [3], next: undefined }],
    ]);
    const asked: (string | undefined)[] = [];
    const items = paginate<number, string>(async (token) => {
      asked.push(token);
      return pages.get(token)!;
    });
    expect((await items.next()).value).toBe(1);
    expect(asked).toEqual([undefined]);
    const rest: number[] = [];
    for await (const n of items) rest.push(n);
    expect(rest).toEqual([2, 3]);
    expect(asked).toEqual([undefined, 'b', 'c']);
  });

  it('passes tokens of any shape (S3 multipart uploads page by two markers)', async () => {
    type Marker = { key: string; uploadId: string };
    const asked: (Marker | undefined)[] = [];
    const all: string[] = [];
    for await (const s of paginate<string, Marker>(async (marker) => {
      asked.push(marker);
      return marker ? { items: ['y'], next: undefined } : { items: ['x'], next: { key: 'k', uploadId: 'u' } };
    }))
      all.push(s);
    expect(all).toEqual(['x', 'y']);
    expect(asked).toEqual([undefined, { key: 'k', uploadId: 'u' }]);
  });

  it('a failing page fails the iteration with its error', async () => {
    const items = paginate<number, string>(async (token) => {
      if (token) throw new Error('page two is gone');
      return { items: [1], next: 'two' };
    });
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const n of items) seen.push(n);
      })(),
    ).rejects.toThrow('page two is gone');
    expect(seen).toEqual([1]);
  });
});

const target = s3TestTarget();

describeS3('listAll over a real S3', () => {
  let client: S3Client;
  let bucket: string;
  let drop: (() => Promise<void>) | undefined;
  /** ListObjectsV2 requests the client sent. */
  let listRequests = 0;

  beforeAll(async () => {
    client = createS3Client({
      region: target!.region,
      endpoint: target!.endpoint,
      forcePathStyle: target!.forcePathStyle,
      accessKeyId: target!.accessKeyId,
      secretAccessKey: target!.secretAccessKey,
    });
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'ListObjectsV2Command') listRequests++;
        return next(args);
      },
      { step: 'initialize', name: 'countListRequests' },
    );
    const made = await createTestBucket(target!, 'blob-keys');
    bucket = made.bucket;
    drop = made.cleanup;
  });

  afterAll(async () => {
    await drop?.();
    client?.destroy();
  });

  it('walks every object under the prefix, page after page, and nothing outside it', async () => {
    const prefix = `list-${randomUUID()}/`;
    const sizes = new Map<string, number>();
    for (let i = 0; i < 7; i++) {
      const key = `${prefix}k${i}`;
      const body = randomBytes(10 + i);
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
      sizes.set(key, body.byteLength);
    }
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix.slice(0, -1)}-outside`, Body: 'x' }));
    const before = Date.now();

    listRequests = 0;
    const listed = [];
    for await (const o of listAll(client, { bucket, prefix, pageSize: 3, fail: (err) => err })) listed.push(o);
    // 7 objects at 3 a page: three requests, each following the last one's continuation token.
    expect(listRequests).toBe(3);
    expect(listed.map((o) => o.key)).toEqual([...sizes.keys()]);
    for (const o of listed) {
      expect(o.sizeBytes, o.key).toBe(sizes.get(o.key));
      expect(o.modifiedAt, o.key).toBeGreaterThan(before - 3_600_000);
    }

    // The default page (1000) takes one request.
    listRequests = 0;
    let count = 0;
    for await (const _ of listAll(client, { bucket, prefix, fail: (err) => err })) count++;
    expect(count).toBe(7);
    expect(listRequests).toBe(1);
  });

  it('throws what `fail` makes of a failed request', async () => {
    const missing = `${bucket}-missing`;
    const listing = listAll(client, {
      bucket: missing,
      prefix: '',
      fail: (err) => new Error(`listing ${missing} failed`, { cause: err }),
    });
    const err = await listing.next().then(
      () => new Error('listed a bucket that does not exist'),
      (e: Error) => e,
    );
    expect(err.message).toBe(`listing ${missing} failed`);
    expect((err.cause as { name?: string } | undefined)?.name).toBe('NoSuchBucket');
  });

  it("the S3 driver lists its blobs through the layout's parser: other keys under blobs/ are not blobs", async () => {
    const prefix = `driver-${randomUUID()}/`;
    const store = createS3BlobStore({ client, bucket, prefix });
    const a = await store.put(bytesStream(randomBytes(100)));
    const sha = hashes[3]!;
    for (const key of [
      `${prefix}blobs/sha256/${sha}`,
      `${prefix}blobs/sha256/zz/yy/${sha}`,
      `${prefix}blobs/sha256/readme.txt`,
    ])
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: 'not a blob' }));
    const listed = [];
    for await (const b of store.list!()) listed.push(b);
    expect(listed).toEqual([{ sha256: a.sha256, sizeBytes: 100, modifiedAt: expect.any(Number) }]);
  });
});
