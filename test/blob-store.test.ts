import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, readlink, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BlobStore } from '../src/blob/blob-store.js';
import { createFsBlobStore } from '../src/blob/fs.js';
import { ingest } from '../src/blob/ingest.js';
import { createMemoryBlobStore } from '../src/blob/memory.js';
import { nodeSha256 } from '../src/blob/node-hash.js';
import { describeBlobStoreContract } from './blob-store.contract.js';
import { expectArtifactError } from './helpers/artifact-errors.js';
import { bytesStream, failingStream, iteratorStream, readAll, settle, sha256Of } from './helpers/streams.js';

const KiB = 1024;
const MiB = 1024 * KiB;

describeBlobStoreContract('fs', async () => {
  const root = await mkdtemp(join(tmpdir(), 'artifact-blobs-'));
  return {
    store: createFsBlobStore({ root, hash: nodeSha256 }),
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
});

describeBlobStoreContract('fs (no fsync)', async () => {
  const root = await mkdtemp(join(tmpdir(), 'artifact-blobs-'));
  return {
    store: createFsBlobStore({ root, fsync: false }),
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
});

describeBlobStoreContract('memory', async () => ({
  store: createMemoryBlobStore({ hash: nodeSha256 }),
  cleanup: async () => {},
}));

/** Every file under a folder, relative to it. */
async function listFiles(dir: string, prefix = ''): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const out: string[] = [];
  for (const e of entries) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...(await listFiles(join(dir, e.name), rel)));
    else out.push(rel);
  }
  return out.sort();
}

describe('fs blob store: layout and staging', () => {
  let root: string;
  let store: BlobStore;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'artifact-blobs-fs-'));
    store = createFsBlobStore({ root });
  });

  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const tmpFiles = () => listFiles(join(root, 'tmp'));

  it('commits blobs at {root}/sha256/ab/cd/{hex} and nowhere else', async () => {
    const bytes = randomBytes(100 * KiB);
    const { sha256 } = await store.put(bytesStream(bytes));
    const path = join(root, 'sha256', sha256.slice(0, 2), sha256.slice(2, 4), sha256);
    expect((await readFile(path)).equals(bytes)).toBe(true);
    expect((await stat(path)).size).toBe(bytes.byteLength);
    expect(await listFiles(join(root, 'sha256'))).toEqual([`${sha256.slice(0, 2)}/${sha256.slice(2, 4)}/${sha256}`]);
    expect((await readdir(root)).sort()).toEqual(['sha256', 'tmp']);
  });

  it('two blobs sharing a shard folder live side by side', async () => {
    const a = await store.put(bytesStream(randomBytes(1000)));
    const b = await store.put(bytesStream(randomBytes(1000)));
    const files = await listFiles(join(root, 'sha256'));
    expect(files).toEqual([a.sha256, b.sha256].map((h) => `${h.slice(0, 2)}/${h.slice(2, 4)}/${h}`).sort());
    expect(await store.delete(a.sha256)).toBe(true);
    expect(await listFiles(join(root, 'sha256'))).toEqual([
      `${b.sha256.slice(0, 2)}/${b.sha256.slice(2, 4)}/${b.sha256}`,
    ]);
  });

  it('leaves nothing in {root}/tmp after a successful put', async () => {
    await store.put(bytesStream(randomBytes(3 * MiB)));
    await Promise.all(Array.from({ length: 4 }, () => store.put(bytesStream(randomBytes(MiB)))));
    expect(await tmpFiles()).toEqual([]);
  });

  it('leaves nothing in {root}/tmp or sha256/ after a body that errors mid-way', async () => {
    await expect(
      store.put(failingStream([randomBytes(MiB), randomBytes(MiB), randomBytes(10)], new Error('socket hang up'))),
    ).rejects.toThrow('socket hang up');
    expect(await tmpFiles()).toEqual([]);
    expect(await listFiles(join(root, 'sha256'))).toEqual([]);
  });

  it('leaves nothing in {root}/tmp or sha256/ after payload_too_large', async () => {
    let pulled = 0;
    function* endless(): Generator<Uint8Array> {
      const chunk = randomBytes(256 * KiB);
      for (;;) {
        pulled++;
        yield chunk;
      }
    }
    await expectArtifactError(store.put(iteratorStream(endless()), { maxBytes: 2 * MiB }), 'payload_too_large');
    const pulledAtReject = pulled;
    await settle();
    expect(pulled).toBe(pulledAtReject);
    expect(await tmpFiles()).toEqual([]);
    expect(await listFiles(join(root, 'sha256'))).toEqual([]);
  });

  it('leaves nothing in {root}/tmp or sha256/ after checksum_mismatch', async () => {
    const bytes = randomBytes(2 * MiB + 5);
    await expectArtifactError(store.put(bytesStream(bytes), { expectedSha256: '0'.repeat(64) }), 'checksum_mismatch');
    expect(await tmpFiles()).toEqual([]);
    expect(await listFiles(join(root, 'sha256'))).toEqual([]);
  });

  it('leaves nothing in {root}/tmp after an empty body that does not match its declared hash', async () => {
    await expectArtifactError(
      store.put(bytesStream(new Uint8Array(0)), { expectedSha256: '0'.repeat(64) }),
      'checksum_mismatch',
    );
    expect(await tmpFiles()).toEqual([]);
    expect(await listFiles(join(root, 'sha256'))).toEqual([]);
  });

  it('stages an in-flight put in {root}/tmp, then moves it out', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let reached!: () => void;
    const atGate = new Promise<void>((r) => (reached = r));
    const parts = Array.from({ length: 8 }, () => randomBytes(512 * KiB));
    let i = 0;
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          if (i === 6) {
            reached();
            await gate;
          }
          if (i >= parts.length) controller.close();
          else controller.enqueue(parts[i++]!);
        },
      },
      { highWaterMark: 0 },
    );
    const put = store.put(body);
    await atGate;
    await settle();
    const staged = await tmpFiles();
    expect(staged).toHaveLength(1);
    expect(staged[0]).toMatch(/\.part$/);
    expect(await listFiles(join(root, 'sha256'))).toEqual([]);
    release();
    const info = await put;
    expect(info.sha256).toBe(sha256Of(Buffer.concat(parts)));
    expect(await tmpFiles()).toEqual([]);
  });

  it('never resolves keys outside the store (path traversal, upper case, wrong length)', async () => {
    const { sha256 } = await store.put(bytesStream(randomBytes(100)));
    for (const key of [
      '../../../etc/passwd',
      `../sha256/${sha256}`,
      sha256.toUpperCase(),
      sha256.slice(0, 63),
      `${sha256}0`,
      '',
    ]) {
      expect(await store.get(key), key).toBeNull();
      expect(await store.stat(key), key).toBeNull();
      expect(await store.exists(key), key).toBe(false);
      expect(await store.delete(key), key).toBe(false);
    }
    expect(await store.exists(sha256)).toBe(true);
  });

  it('a cancelled download releases the file (the blob can still be deleted and re-read)', async () => {
    const bytes = randomBytes(5 * MiB);
    const { sha256 } = await store.put(bytesStream(bytes));
    const stream = (await store.get(sha256))!;
    const reader = stream.getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    await reader.cancel();
    expect(Buffer.from(await readAll((await store.get(sha256))!)).equals(bytes)).toBe(true);
    expect(await store.delete(sha256)).toBe(true);
  });
});

describe('fs blob store: kept descriptors for small reads', () => {
  let root: string;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'artifact-blobs-fd-'));
  });

  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  /** Descriptors this process holds on files under the store's root. */
  const openUnderRoot = async () => {
    const out: string[] = [];
    for (const fd of await readdir('/proc/self/fd')) {
      try {
        const target = await readlink(`/proc/self/fd/${fd}`);
        if (target.startsWith(root)) out.push(target);
      } catch {
        // closed while listing
      }
    }
    return out;
  };

  it.runIf(process.platform === 'linux')(
    'keeps at most maxOpenFiles, least recently used closed first, and close() closes them all',
    async () => {
      const store = createFsBlobStore({ root, fsync: false, maxOpenFiles: 2 });
      const blobs: { bytes: Buffer; sha256: string; sizeBytes: number }[] = [];
      for (let i = 0; i < 4; i++) {
        const bytes = randomBytes(1000 + i);
        blobs.push({ bytes, ...(await store.put(bytesStream(bytes))) });
      }
      for (const b of blobs)
        expect(
          Buffer.from((await store.readSmall!(b.sha256, { start: 0, end: b.sizeBytes - 1 }))!).equals(b.bytes),
        ).toBe(true);
      let held = await openUnderRoot();
      expect(held).toHaveLength(2);
      expect(held.some((p) => p.endsWith(blobs[3]!.sha256))).toBe(true);
      expect(held.some((p) => p.endsWith(blobs[2]!.sha256))).toBe(true);
      // Reading blob 2 again makes 3 the oldest: reading 0 evicts 3, not 2.
      await store.readSmall!(blobs[2]!.sha256, { start: 0, end: 0 });
      await store.readSmall!(blobs[0]!.sha256, { start: 0, end: 0 });
      held = await openUnderRoot();
      expect(held.map((p) => p.slice(-64)).sort()).toEqual([blobs[0]!.sha256, blobs[2]!.sha256].sort());
      // delete closes the kept descriptor (the disk space is freed now, not at eviction).
      expect(await store.delete(blobs[0]!.sha256)).toBe(true);
      expect((await openUnderRoot()).map((p) => p.slice(-64))).toEqual([blobs[2]!.sha256]);
      await store.close!();
      expect(await openUnderRoot()).toEqual([]);
    },
  );

  it('a blob removed behind its back (another process) reads null once its descriptor is gone', async () => {
    const store = createFsBlobStore({ root, fsync: false, maxOpenFiles: 1 });
    const a = randomBytes(100);
    const b = randomBytes(200);
    const shaA = (await store.put(bytesStream(a))).sha256;
    const shaB = (await store.put(bytesStream(b))).sha256;
    await store.readSmall!(shaA, { start: 0, end: 99 });
    await rm(join(root, 'sha256', shaA.slice(0, 2), shaA.slice(2, 4), shaA));
    // Still kept: the same immutable bytes.
    expect(Buffer.from((await store.readSmall!(shaA, { start: 0, end: 99 }))!).equals(a)).toBe(true);
    await store.readSmall!(shaB, { start: 0, end: 199 }); // evicts A's descriptor
    expect(await store.readSmall!(shaA, { start: 0, end: 99 })).toBeNull();
    await store.close!();
  });
});

describe('ingest', () => {
  it('a failing write surfaces as the put error, never as an unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      // A slow body: the next chunk arrives well after the first write has failed.
      let i = 0;
      const body = new ReadableStream<Uint8Array>(
        {
          async pull(controller) {
            await new Promise((r) => setTimeout(r, 20));
            if (i++ < 4) controller.enqueue(randomBytes(64 * KiB));
            else controller.close();
          },
        },
        { highWaterMark: 0 },
      );
      const diskFull = new Error('ENOSPC: no space left on device');
      const write = async () => {
        throw diskFull;
      };
      await expect(ingest(body, nodeSha256, {}, write, 64 * KiB)).rejects.toBe(diskFull);
      await settle();
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('hands batches of about batchBytes to write, in order', async () => {
    const bytes = randomBytes(MiB + 10);
    const batches: number[] = [];
    const written: Uint8Array[] = [];
    const info = await ingest(
      bytesStream(bytes, 100 * KiB),
      nodeSha256,
      {},
      async (chunks) => {
        batches.push(chunks.reduce((n, c) => n + c.byteLength, 0));
        written.push(...chunks);
      },
      256 * KiB,
    );
    expect(info).toEqual({ sha256: sha256Of(bytes), sizeBytes: bytes.byteLength });
    expect(Buffer.concat(written).equals(bytes)).toBe(true);
    for (const b of batches.slice(0, -1)) expect(b).toBeGreaterThanOrEqual(256 * KiB);
    expect(batches.reduce((a, b) => a + b, 0)).toBe(bytes.byteLength);
  });
});
