/**
 * The R2 driver against a real R2 implementation: Miniflare's bucket binding (workerd underneath),
 * driven from Node. The same BlobStore contract as every other driver, plus what is R2's own: the
 * staging object is gone after a multipart put, and the sweep removes stale staging.
 */
import { randomBytes } from 'node:crypto';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeSha256 } from '../src/blob/node-hash.js';
import { createR2BlobStore, type R2BucketLike } from '../src/blob/r2.js';
import { describeBlobStoreContract } from './blob-store.contract.js';
import { expectArtifactError } from './helpers/artifact-errors.js';
import { bytesStream, readAll, sha256Of } from './helpers/streams.js';
import type { ObjectPresigner } from '../src/blob/s3-presign.js';

let mf: Miniflare;
let bucket: R2BucketLike;
let n = 0;

beforeAll(async () => {
  mf = new Miniflare({
    modules: true,
    script: 'export default { fetch() { return new Response(null, { status: 404 }) } }',
    r2Buckets: ['BLOBS'],
  });
  bucket = (await mf.getR2Bucket('BLOBS')) as unknown as R2BucketLike;
}, 60_000);

afterAll(async () => {
  await mf?.dispose();
});

/** Every key under a prefix. */
async function keysUnder(prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix, ...(cursor ? { cursor } : {}) });
    keys.push(...page.objects.map((o) => o.key));
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return keys;
}

// A fresh prefix per test keeps each store empty, as the contract wants.
describeBlobStoreContract('r2 (Miniflare binding)', async () => ({
  store: createR2BlobStore({ bucket, hash: nodeSha256, prefix: `t${n++}/` }),
  cleanup: async () => {},
}));

describe('R2 driver specifics', () => {
  it('a multipart put (over one part) leaves only the final object, byte-identical', async () => {
    const prefix = `mp${n++}/`;
    const store = createR2BlobStore({ bucket, hash: nodeSha256, prefix });
    const bytes = randomBytes(12 * 1024 * 1024 + 5);
    const info = await store.put(bytesStream(bytes, 256 * 1024));
    expect(info).toEqual({ sha256: sha256Of(bytes), sizeBytes: bytes.length });
    expect(await keysUnder(prefix)).toEqual([
      `${prefix}blobs/sha256/${info.sha256.slice(0, 2)}/${info.sha256.slice(2, 4)}/${info.sha256}`,
    ]);
    expect(Buffer.from(await readAll((await store.get(info.sha256))!)).equals(bytes)).toBe(true);
    const tail = await store.get(info.sha256, { start: bytes.length - 10, end: bytes.length - 1 });
    expect(Buffer.from(await readAll(tail!)).equals(bytes.subarray(bytes.length - 10))).toBe(true);
  }, 60_000);

  it('lists committed blobs for fsck, and sweeps only stale staging objects', async () => {
    const prefix = `sw${n++}/`;
    const store = createR2BlobStore({ bucket, hash: nodeSha256, prefix });
    const a = await store.put(bytesStream(Buffer.from('alpha')));
    const listed = [];
    for await (const b of store.list!()) listed.push(b);
    expect(listed).toEqual([{ sha256: a.sha256, sizeBytes: 5, modifiedAt: expect.any(Number) }]);

    await bucket.put(`${prefix}staging/left-over`, new Uint8Array(100));
    expect(await store.sweepStaging!(Date.now() - 60_000)).toEqual({ removed: 0, bytes: 0 });
    expect(await store.sweepStaging!(Date.now() + 1000)).toEqual({ removed: 1, bytes: 100 });
    expect(await keysUnder(`${prefix}staging/`)).toEqual([]);
    expect(await store.exists(a.sha256)).toBe(true);
  });

  it("lists through the layout's parser: other objects under blobs/ are not blobs", async () => {
    const prefix = `fk${n++}/`;
    const store = createR2BlobStore({ bucket, hash: nodeSha256, prefix });
    const a = await store.put(bytesStream(Buffer.from('alpha')));
    const sha = sha256Of(Buffer.from('beta'));
    for (const key of [`${prefix}blobs/sha256/zz/yy/${sha}`, `${prefix}blobs/sha256/readme.txt`])
      await bucket.put(key, new Uint8Array(4));
    const listed = [];
    for await (const b of store.list!()) listed.push(b);
    expect(listed).toEqual([{ sha256: a.sha256, sizeBytes: 5, modifiedAt: expect.any(Number) }]);
  });

  describe('direct uploads', () => {
    // The presigner is the S3 driver's (tested against a real S3); here it only records what it was asked.
    const asked: string[] = [];
    const presigner: ObjectPresigner = {
      get: async (key) => {
        asked.push(`GET ${key}`);
        return `https://r2.example/${key}?signed`;
      },
      put: async (key, o) => {
        asked.push(`PUT ${key} ${o.sizeBytes}`);
        return { url: `https://r2.example/${key}?signed`, headers: { 'Content-Type': 'application/octet-stream' } };
      },
    };
    const fresh = () => {
      const prefix = `du${n++}/`;
      return { prefix, store: createR2BlobStore({ bucket, hash: nodeSha256, prefix, presigner }) };
    };

    it('without a presigner the driver offers neither direct links nor direct uploads', () => {
      const store = createR2BlobStore({ bucket, hash: nodeSha256 });
      // The whole direct capability (links, uploads, completing them) is absent, not part of it.
      expect(store.direct).toBeUndefined();
    });

    it('presigns the final key for links and a fresh staging key for uploads', async () => {
      const { prefix, store } = fresh();
      const sha = sha256Of(Buffer.from('x'));
      expect(
        await store.direct!.presignGet(sha, {
          expiresInSeconds: 60,
          contentType: 'text/plain',
          contentDisposition: 'inline',
        }),
      ).toBe(`https://r2.example/${prefix}blobs/sha256/${sha.slice(0, 2)}/${sha.slice(2, 4)}/${sha}?signed`);
      const a = await store.direct!.presignUpload({ sizeBytes: 10, expiresInSeconds: 60 });
      const b = await store.direct!.presignUpload({ sizeBytes: 10, expiresInSeconds: 60 });
      expect(a.stagingKey).toMatch(new RegExp(`^${prefix}staging/[0-9a-f-]{36}$`));
      expect(b.stagingKey).not.toBe(a.stagingKey);
      expect(asked.at(-1)).toBe(`PUT ${b.stagingKey} 10`);
      await expect(
        store.direct!.presignGet('not-a-hash', {
          expiresInSeconds: 60,
          contentType: 'text/plain',
          contentDisposition: 'inline',
        }),
      ).rejects.toThrow(/sha256/);
    });

    it('completes an upload by re-reading and hashing the staged object through the binding', async () => {
      const { prefix, store } = fresh();
      const bytes = randomBytes(9 * 1024 * 1024 + 7); // over one part: the copy is multipart
      const { stagingKey } = await store.direct!.presignUpload({ sizeBytes: bytes.length, expiresInSeconds: 60 });
      await bucket.put(stagingKey, new Uint8Array(bytes)); // what the client's presigned PUT does
      const pinned: string[] = [];
      const info = await store.direct!.commitUpload(
        stagingKey,
        { sizeBytes: bytes.length, sha256: sha256Of(bytes) },
        async (b) => void pinned.push(b.sha256),
      );
      expect(info).toEqual({ sha256: sha256Of(bytes), sizeBytes: bytes.length });
      expect(pinned).toEqual([info.sha256]);
      expect(Buffer.from(await readAll((await store.get(info.sha256))!)).equals(bytes)).toBe(true);
      expect(await keysUnder(`${prefix}staging/`)).toEqual([]);
    }, 60_000);

    it('refuses other bytes or another size than declared, keeping nothing; nothing uploaded yet keeps the upload open', async () => {
      const { prefix, store } = fresh();
      const bytes = Buffer.from('declared bytes');
      const staged = async (body: Uint8Array) => {
        const { stagingKey } = await store.direct!.presignUpload({ sizeBytes: bytes.length, expiresInSeconds: 60 });
        await bucket.put(stagingKey, body);
        return stagingKey;
      };
      const other = await staged(new Uint8Array(Buffer.from('declared bytez')));
      await expectArtifactError(
        store.direct!.commitUpload(other, { sizeBytes: bytes.length, sha256: sha256Of(bytes) }),
        'checksum_mismatch',
      );
      const longer = await staged(new Uint8Array(Buffer.from('declared bytes!')));
      expect(
        (
          await expectArtifactError(
            store.direct!.commitUpload(longer, { sizeBytes: bytes.length, sha256: sha256Of(bytes) }),
            'bad_request',
          )
        ).message,
      ).toMatch(/not the declared 14 bytes \(got more\)/);
      const shorter = await staged(new Uint8Array(Buffer.from('declared')));
      expect(
        (
          await expectArtifactError(
            store.direct!.commitUpload(shorter, { sizeBytes: bytes.length, sha256: sha256Of(bytes) }),
            'bad_request',
          )
        ).message,
      ).toMatch(/got 8/);
      expect(await keysUnder(prefix)).toEqual([]);

      const { stagingKey } = await store.direct!.presignUpload({ sizeBytes: bytes.length, expiresInSeconds: 60 });
      expect(
        (
          await expectArtifactError(
            store.direct!.commitUpload(stagingKey, { sizeBytes: bytes.length, sha256: sha256Of(bytes) }),
            'bad_request',
          )
        ).message,
      ).toMatch(/Nothing has been uploaded/);
      await bucket.put(stagingKey, new Uint8Array(bytes));
      expect(
        await store.direct!.commitUpload(stagingKey, { sizeBytes: bytes.length, sha256: sha256Of(bytes) }),
      ).toEqual({
        sha256: sha256Of(bytes),
        sizeBytes: bytes.length,
      });
      await expect(
        store.direct!.commitUpload('elsewhere/key', { sizeBytes: 1, sha256: sha256Of(bytes) }),
      ).rejects.toThrow(/not a staging key/);
    });

    it('keeps the staged bytes when completing fails for a passing reason, so a retry succeeds', async () => {
      const { prefix, store } = fresh();
      const bytes = Buffer.from('retry me');
      const { stagingKey } = await store.direct!.presignUpload({ sizeBytes: bytes.length, expiresInSeconds: 60 });
      await bucket.put(stagingKey, new Uint8Array(bytes));
      const expected = { sizeBytes: bytes.length, sha256: sha256Of(bytes) };
      await expect(
        store.direct!.commitUpload(stagingKey, expected, async () => {
          throw new Error('pin: retry in a few seconds');
        }),
      ).rejects.toThrow(/retry/);
      expect(await keysUnder(`${prefix}staging/`)).toEqual([stagingKey]);
      expect(await store.direct!.commitUpload(stagingKey, expected)).toEqual({
        sha256: expected.sha256,
        sizeBytes: bytes.length,
      });
      expect(await keysUnder(`${prefix}staging/`)).toEqual([]);
    });
  });
});
