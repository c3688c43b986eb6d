/**
 * Code meant for Workers, run in workerd itself (Miniflare): the DigestStream hasher and the R2
 * driver on a real R2 binding, bundled by esbuild the way a Worker is. Hashes are compared with
 * node:crypto's.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../src/core/errors.js';
import { sha256Of } from './helpers/streams.js';
import { ROOT } from './helpers/cli-server.js';

let mf: Miniflare;

beforeAll(async () => {
  const bundle = await build({
    entryPoints: [join(ROOT, 'test/helpers/r2-worker.ts')],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  mf = new Miniflare({
    modules: true,
    script: bundle.outputFiles[0]!.text,
    compatibilityDate: '2026-04-01',
    r2Buckets: ['BLOBS'],
  });
  await mf.ready;
}, 120_000);

afterAll(async () => {
  await mf?.dispose();
});

/** A request body that arrives in many chunks. */
function chunked(bytes: Buffer, chunk = 64 * 1024): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(c) {
      if (at >= bytes.length) return c.close();
      c.enqueue(new Uint8Array(bytes.subarray(at, at + chunk)));
      at += chunk;
    },
  });
}

const put = (bytes: Buffer, headers: Record<string, string> = {}) =>
  mf.dispatchFetch('http://w/blob', { method: 'PUT', body: chunked(bytes) as never, duplex: 'half', headers } as never);

describe('on workerd', () => {
  it('crypto.DigestStream hashes a streamed body exactly as node:crypto does', async () => {
    for (const size of [0, 1, 65_536, 3 * 1024 * 1024 + 17]) {
      const bytes = randomBytes(size);
      const res = await mf.dispatchFetch('http://w/hash', {
        method: 'POST',
        body: chunked(bytes) as never,
        duplex: 'half',
      } as never);
      expect(await res.text(), `${size} bytes`).toBe(sha256Of(bytes));
    }
  });

  it('the R2 driver stores small and multipart blobs byte-identical, hashing with DigestStream', async () => {
    for (const size of [1000, 12 * 1024 * 1024 + 3]) {
      const bytes = randomBytes(size);
      const res = await put(bytes);
      expect(res.status).toBe(200);
      const info = (await res.json()) as { sha256: string; sizeBytes: number };
      expect(info).toEqual({ sha256: sha256Of(bytes), sizeBytes: size });
      const back = Buffer.from(await (await mf.dispatchFetch(`http://w/blob/${info.sha256}`)).arrayBuffer());
      expect(back.equals(bytes)).toBe(true);
      const range = Buffer.from(
        await (
          await mf.dispatchFetch(`http://w/blob/${info.sha256}`, { headers: { range: `bytes=10-19` } })
        ).arrayBuffer(),
      );
      expect(range.equals(bytes.subarray(10, 20))).toBe(true);
    }
  }, 120_000);

  it('a declared sha256 that does not match stores nothing, with checksum_mismatch', async () => {
    const bytes = randomBytes(5000);
    const res = await put(bytes, { 'x-sha256': '0'.repeat(64) });
    expect(res.status).toBe(ERROR_STATUS.checksum_mismatch);
    expect(await res.json()).toMatchObject({ code: 'checksum_mismatch' });
    expect((await mf.dispatchFetch(`http://w/blob/${sha256Of(bytes)}`)).status).toBe(404);
  });
});
