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
import { bytesStream, describeBlobStoreContract, readAll, sha256Of } from './blob-store.contract.js';

let mf: Miniflare;
let bucket: R2BucketLike;
let n = 0;

beforeAll(async () => {
  mf = new Miniflare({ modules: true, script: 'export default { fetch() { return new Response(null, { status: 404 }) } }', r2Buckets: ['BLOBS'] });
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
    expect(await keysUnder(prefix)).toEqual([`${prefix}blobs/sha256/${info.sha256.slice(0, 2)}/${info.sha256.slice(2, 4)}/${info.sha256}`]);
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
});
