import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BlobStore } from '../src/blob/blob-store.js';
import { expectArtifactError } from './helpers/artifact-errors.js';
import {
  bytesStream,
  failingStream,
  hashStream,
  iteratorStream,
  readAll,
  settle,
  sha256Of,
} from './helpers/streams.js';

const KiB = 1024;
const MiB = 1024 * KiB;

export interface BlobStoreFixture {
  store: BlobStore;
  cleanup(): Promise<void>;
}

const MISSING_SHA = 'f'.repeat(64);

// ---------------------------------------------------------------------------------------------
// The contract.
// ---------------------------------------------------------------------------------------------

/**
 * The behaviour every BlobStore driver must have. `make` returns a fresh, empty store per test.
 */
export function describeBlobStoreContract(name: string, make: () => Promise<BlobStoreFixture>): void {
  describe(`BlobStore contract: ${name}`, () => {
    let fixture: BlobStoreFixture;
    let store: BlobStore;

    beforeEach(async () => {
      fixture = await make();
      store = fixture.store;
    });

    afterEach(async () => {
      await fixture.store.close?.();
      await fixture.cleanup();
    });

    it('put streams the body and returns its sha256 (as node:crypto computes it) and size', async () => {
      const bytes = randomBytes(300 * KiB + 7);
      const info = await store.put(bytesStream(bytes, 10 * KiB));
      expect(info).toEqual({ sha256: sha256Of(bytes), sizeBytes: bytes.byteLength });
      expect(info.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(await store.exists(info.sha256)).toBe(true);
      expect(await store.stat(info.sha256)).toEqual({ sha256: info.sha256, sizeBytes: bytes.byteLength });
    });

    it('get returns the identical bytes, as often as asked', async () => {
      const bytes = randomBytes(2 * MiB + 123);
      const { sha256 } = await store.put(bytesStream(bytes));
      const [a, b] = await Promise.all([
        store.get(sha256).then((s) => readAll(s!)),
        store.get(sha256).then((s) => readAll(s!)),
      ]);
      expect(Buffer.from(a).equals(bytes)).toBe(true);
      expect(Buffer.from(b).equals(bytes)).toBe(true);
    });

    it('accepts chunk views into larger buffers and skips empty chunks', async () => {
      const backing = randomBytes(100 * KiB);
      const chunks = [
        backing.subarray(10, 5000),
        new Uint8Array(0),
        backing.subarray(5000, 5000),
        backing.subarray(5000, 90_000),
        backing.subarray(90_000, 90_001),
      ];
      const expected = Buffer.concat(chunks);
      const info = await store.put(iteratorStream(chunks[Symbol.iterator]()));
      expect(info).toEqual({ sha256: sha256Of(expected), sizeBytes: expected.byteLength });
      expect(Buffer.from(await readAll((await store.get(info.sha256))!)).equals(expected)).toBe(true);
    });

    it('stores an empty body, declared or not, and reads it back empty', async () => {
      const empty = sha256Of(new Uint8Array(0));
      const info = await store.put(bytesStream(new Uint8Array(0)));
      expect(info).toEqual({ sha256: empty, sizeBytes: 0 });
      expect((await readAll((await store.get(info.sha256))!)).byteLength).toBe(0);
      // Chunks with no bytes in them are an empty body too; a declared hash is checked as usual.
      const again = await store.put(iteratorStream([new Uint8Array(0), new Uint8Array(0)][Symbol.iterator]()), {
        expectedSha256: empty,
      });
      expect(again).toEqual({ sha256: empty, sizeBytes: 0 });
      await expectArtifactError(
        store.put(bytesStream(new Uint8Array(0)), { expectedSha256: sha256Of(new Uint8Array([7])) }),
        'checksum_mismatch',
      );
      expect(await store.exists(empty)).toBe(true);
    });

    it('serves ranges with inclusive ends: first byte, last byte, middle, across read chunks, whole', async () => {
      const size = 3 * MiB + 17;
      const bytes = randomBytes(size);
      const { sha256 } = await store.put(bytesStream(bytes));
      const ranges = [
        { start: 0, end: 0 },
        { start: size - 1, end: size - 1 },
        { start: 0, end: size - 1 },
        { start: 100, end: 199 },
        { start: MiB - 1, end: MiB },
        { start: 12345, end: 2 * MiB + 5 },
        { start: size - 1000, end: size - 1 },
      ];
      for (const range of ranges) {
        const got = await readAll((await store.get(sha256, range))!);
        expect(got.byteLength, `range ${range.start}-${range.end}`).toBe(range.end - range.start + 1);
        expect(
          Buffer.from(got).equals(bytes.subarray(range.start, range.end + 1)),
          `range ${range.start}-${range.end}`,
        ).toBe(true);
      }
    });

    it('a missing key: get null, stat null, exists false, delete false', async () => {
      for (const key of [
        MISSING_SHA,
        sha256Of(randomBytes(16)),
        'not-a-hash',
        '../../etc/passwd',
        MISSING_SHA.toUpperCase(),
      ]) {
        expect(await store.get(key), key).toBeNull();
        expect(await store.get(key, { start: 0, end: 0 }), key).toBeNull();
        expect(await store.stat(key), key).toBeNull();
        expect(await store.exists(key), key).toBe(false);
        expect(await store.delete(key), key).toBe(false);
      }
    });

    it('delete removes the blob: true the first time, false after', async () => {
      const bytes = randomBytes(4096);
      const keep = randomBytes(4096);
      const { sha256 } = await store.put(bytesStream(bytes));
      const other = await store.put(bytesStream(keep));
      expect(await store.delete(sha256)).toBe(true);
      expect(await store.delete(sha256)).toBe(false);
      expect(await store.exists(sha256)).toBe(false);
      expect(await store.stat(sha256)).toBeNull();
      expect(await store.get(sha256)).toBeNull();
      // Only that blob went.
      expect(Buffer.from(await readAll((await store.get(other.sha256))!)).equals(keep)).toBe(true);
      // And it can be stored again.
      expect((await store.put(bytesStream(bytes))).sha256).toBe(sha256);
      expect(await store.exists(sha256)).toBe(true);
    });

    it('readSmall (where the driver has it) gives the same bytes as get, and null once deleted', async (ctx) => {
      if (!store.readSmall) return ctx.skip('this driver has no readSmall; the HTTP layer streams through get instead');
      const bytes = randomBytes(40 * KiB + 3);
      const { sha256 } = await store.put(bytesStream(bytes));
      for (const range of [
        { start: 0, end: bytes.length - 1 },
        { start: 0, end: 0 },
        { start: 17, end: 4096 },
        { start: bytes.length - 1, end: bytes.length - 1 },
      ]) {
        const got = await store.readSmall(sha256, range);
        expect(
          got && Buffer.from(got).equals(bytes.subarray(range.start, range.end + 1)),
          `range ${range.start}-${range.end}`,
        ).toBe(true);
      }
      for (const key of [MISSING_SHA, 'not-a-hash', '../../etc/passwd'])
        expect(await store.readSmall(key, { start: 0, end: 0 }), key).toBeNull();
      expect(await store.delete(sha256)).toBe(true);
      expect(await store.readSmall(sha256, { start: 0, end: 0 })).toBeNull();
      // Stored again, it reads back again.
      await store.put(bytesStream(bytes));
      expect(Buffer.from((await store.readSmall(sha256, { start: 0, end: bytes.length - 1 }))!).equals(bytes)).toBe(
        true,
      );
    });

    it('adoptFile (where the driver has it) takes a file as the blob, after beforeCommit; a wrong size or a refused pin stores nothing', async (ctx) => {
      if (!store.adoptFile) return ctx.skip('this driver adopts no files; callers stream them into put');
      const folder = await mkdtemp(join(tmpdir(), 'blob-adopt-'));
      try {
        const bytes = randomBytes(300 * KiB + 5);
        const sha256 = sha256Of(bytes);
        const file = join(folder, 'staged');
        await writeFile(file, bytes);
        const wrong = store.adoptFile(file, { sha256, sizeBytes: bytes.length + 1 });
        await expectArtifactError(wrong, 'bad_request');
        await expect(
          store.adoptFile(file, { sha256, sizeBytes: bytes.length }, () => Promise.reject(new Error('pin refused'))),
        ).rejects.toThrow('pin refused');
        expect(await store.exists(sha256)).toBe(false);
        const seen: boolean[] = [];
        const info = await store.adoptFile(file, { sha256, sizeBytes: bytes.length }, async (b) => {
          seen.push(await store.exists(b.sha256));
        });
        expect(info).toEqual({ sha256, sizeBytes: bytes.length });
        expect(seen).toEqual([false]);
        expect(Buffer.from(await readAll((await store.get(sha256))!)).equals(bytes)).toBe(true);
        expect(existsSync(file)).toBe(false);
      } finally {
        await rm(folder, { recursive: true, force: true });
      }
    });

    it('beforeCommit sees the hash before the blob is visible, with and without a declared sha256; its failure stores nothing', async () => {
      for (const declare of [false, true]) {
        const bytes = randomBytes(40 * KiB);
        const seen: { sha256: string; visible: boolean }[] = [];
        const info = await store.put(bytesStream(bytes), {
          ...(declare ? { expectedSha256: sha256Of(bytes) } : {}),
          beforeCommit: async ({ sha256 }) => {
            seen.push({ sha256, visible: await store.exists(sha256) });
          },
        });
        expect(seen).toEqual([{ sha256: info.sha256, visible: false }]);
      }
      const refused = randomBytes(40 * KiB);
      const boom = new Error('pin refused');
      await expect(store.put(bytesStream(refused), { beforeCommit: async () => Promise.reject(boom) })).rejects.toBe(
        boom,
      );
      expect(await store.exists(sha256Of(refused))).toBe(false);
    });

    it('expectedSha256 that matches is accepted', async () => {
      const bytes = randomBytes(50 * KiB);
      const info = await store.put(bytesStream(bytes), { expectedSha256: sha256Of(bytes) });
      expect(info.sha256).toBe(sha256Of(bytes));
      expect(await store.exists(info.sha256)).toBe(true);
    });

    it('expectedSha256 mismatch: checksum_mismatch and nothing is stored', async () => {
      const bytes = randomBytes(3 * MiB);
      const real = sha256Of(bytes);
      const declared = sha256Of(randomBytes(8));
      const err = await expectArtifactError(
        store.put(bytesStream(bytes), { expectedSha256: declared }),
        'checksum_mismatch',
      );
      expect(err.status).toBe(422);
      expect(await store.exists(real)).toBe(false);
      expect(await store.exists(declared)).toBe(false);
      expect(await store.get(real)).toBeNull();
    });

    it('maxBytes: exactly the limit is accepted, one byte more is payload_too_large with nothing stored', async () => {
      const limit = 256 * KiB;
      const exact = randomBytes(limit);
      expect((await store.put(bytesStream(exact, 10_000), { maxBytes: limit })).sizeBytes).toBe(limit);
      const over = randomBytes(limit + 1);
      const err = await expectArtifactError(
        store.put(bytesStream(over, 10_000), { maxBytes: limit }),
        'payload_too_large',
      );
      expect(err.status).toBe(413);
      expect(await store.exists(sha256Of(over))).toBe(false);
    });

    it('maxBytes is enforced while streaming: an endless body is cut off and no longer pulled', async () => {
      const chunk = randomBytes(64 * KiB);
      const limit = MiB;
      let pulled = 0;
      let finished = false;
      async function* endless(): AsyncGenerator<Uint8Array> {
        try {
          for (;;) {
            pulled++;
            yield chunk;
          }
        } finally {
          finished = true;
        }
      }
      await expectArtifactError(store.put(iteratorStream(endless()), { maxBytes: limit }), 'payload_too_large');
      const pulledAtReject = pulled;
      // The limit was noticed within a few chunks of passing it, not after buffering a lot more.
      expect(pulledAtReject).toBeGreaterThan(limit / chunk.byteLength);
      expect(pulledAtReject).toBeLessThanOrEqual(limit / chunk.byteLength + 4);
      await settle();
      expect(pulled).toBe(pulledAtReject);
      // The body was cancelled, so its producer could release what it held.
      expect(finished).toBe(true);
    });

    it('a body that errors mid-way rejects the put and leaves nothing', async () => {
      const chunks = [randomBytes(MiB), randomBytes(MiB), randomBytes(300 * KiB)];
      const partial = Buffer.concat(chunks);
      const intended = Buffer.concat([partial, randomBytes(MiB)]);
      await expect(store.put(failingStream(chunks, new Error('upstream reset')))).rejects.toThrow();
      expect(await store.exists(sha256Of(partial))).toBe(false);
      expect(await store.exists(sha256Of(intended))).toBe(false);
      // The store is still usable.
      const info = await store.put(bytesStream(intended));
      expect(info.sha256).toBe(sha256Of(intended));
    });

    it('concurrent puts of the same content all succeed with the same hash and the blob reads back intact', async () => {
      const bytes = randomBytes(5 * MiB);
      const expected = sha256Of(bytes);
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) => store.put(bytesStream(bytes, (32 + i * 16) * KiB))),
      );
      for (const r of results) expect(r).toEqual({ sha256: expected, sizeBytes: bytes.byteLength });
      expect(await hashStream((await store.get(expected))!)).toEqual({ sha256: expected, sizeBytes: bytes.byteLength });
      expect(await store.stat(expected)).toEqual({ sha256: expected, sizeBytes: bytes.byteLength });
    });

    it('re-putting a blob that exists never exposes a partial blob to readers', async () => {
      const bytes = randomBytes(4 * MiB);
      const expected = sha256Of(bytes);
      await store.put(bytesStream(bytes));
      const puts = Array.from({ length: 6 }, () => store.put(bytesStream(bytes, 100 * KiB)));
      const reads = Array.from({ length: 6 }, async () => {
        const s = await store.get(expected);
        expect(s).not.toBeNull();
        return hashStream(s!);
      });
      const [putResults, readResults] = await Promise.all([Promise.all(puts), Promise.all(reads)]);
      for (const r of putResults) expect(r.sha256).toBe(expected);
      for (const r of readResults) expect(r).toEqual({ sha256: expected, sizeBytes: bytes.byteLength });
    });

    it('a 64 MiB body produced chunk by chunk round-trips with the right hash', async () => {
      const chunkSize = MiB;
      const chunks = 64;
      const producerHash = createHash('sha256');
      function* produce(): Generator<Uint8Array> {
        for (let i = 0; i < chunks; i++) {
          const c = randomBytes(chunkSize);
          producerHash.update(c);
          yield c;
        }
      }
      const info = await store.put(iteratorStream(produce()));
      const expected = producerHash.digest('hex');
      expect(info).toEqual({ sha256: expected, sizeBytes: chunks * chunkSize });
      expect(await hashStream((await store.get(expected))!)).toEqual({
        sha256: expected,
        sizeBytes: chunks * chunkSize,
      });
      const tail = await readAll(
        (await store.get(expected, { start: chunks * chunkSize - 10, end: chunks * chunkSize - 1 }))!,
      );
      expect(tail.byteLength).toBe(10);
    });

    it('a reader never sees a blob whose put is still in flight', async () => {
      const chunkSize = 256 * KiB;
      const parts = Array.from({ length: 32 }, () => randomBytes(chunkSize));
      const whole = Buffer.concat(parts);
      const sha256 = sha256Of(whole);
      const gateAt = 24;
      let releaseGate!: () => void;
      const gate = new Promise<void>((r) => (releaseGate = r));
      let signalGate!: () => void;
      const atGate = new Promise<void>((r) => (signalGate = r));
      let i = 0;
      const body = new ReadableStream<Uint8Array>(
        {
          async pull(controller) {
            if (i === gateAt) {
              signalGate();
              await gate;
            }
            if (i >= parts.length) controller.close();
            else controller.enqueue(parts[i++]!);
          },
        },
        { highWaterMark: 0 },
      );
      let settled = false;
      const put = store.put(body).finally(() => (settled = true));
      // 6 MiB have been consumed (and, for staging drivers, written) by now.
      await atGate;
      await settle();
      expect(settled).toBe(false);
      expect(await store.exists(sha256)).toBe(false);
      expect(await store.stat(sha256)).toBeNull();
      expect(await store.get(sha256)).toBeNull();
      expect(await store.get(sha256, { start: 0, end: 0 })).toBeNull();
      releaseGate();
      expect(await put).toEqual({ sha256, sizeBytes: whole.byteLength });
      expect(await store.exists(sha256)).toBe(true);
      expect(Buffer.from(await readAll((await store.get(sha256))!)).equals(whole)).toBe(true);
    });
  });
}
