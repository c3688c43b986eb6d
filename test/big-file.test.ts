/**
 * A 6 GiB file, over S3's 5 GiB for one PUT and over 4 GiB (where Node 24's file-backed Blob stops
 * reading past 2 GiB), goes into the store from the CLI (`put --resume`) through a connection that
 * drops twice, and comes out by its sha256. The service runs on the fs driver, so the CLI sends the
 * file through the service's tus endpoint: after each drop it asks where the upload stands and sends
 * the rest. The file is sparse (zeros, with a few random bytes every 64 MiB, so no two chunks are
 * alike), so it costs no disk to make; the store writes its 6 GiB. While it goes, the service's RSS
 * is sampled (a process of its own, as `npm start` runs it).
 *
 * The same upload in parts straight to S3 is tested at 40 MiB on Ceph RGW (multipart-uploads.test.ts):
 * RGW's memory store here holds an object at about three times its size, so 6 GiB does not fit.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startCliServer, type CliServer } from './helpers/cli-server.js';
import { droppingProxy, type DroppingProxy } from './helpers/dropping-proxy.js';

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
const SIZE = 6 * GiB;
const EVERY = 64 * MiB;
/** RSS of a process in MiB, from /proc. */
function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? Number.NaN) / 1024;
}

describe('a 6 GiB file from the CLI through a connection that drops twice', () => {
  const work = mkdtempSync(join(tmpdir(), 'artifact-6gib-'));
  const file = join(work, 'big.bin');
  let service: CliServer | undefined;
  let proxy: DroppingProxy | undefined;
  let sha256 = '';

  beforeAll(async () => {
    // Sparse: 6 GiB of zeros but for 4 KiB of random bytes every 64 MiB.
    const fh = await open(file, 'w');
    await fh.truncate(SIZE);
    for (let at = 0; at < SIZE; at += EVERY) await fh.write(randomBytes(4096), 0, 4096, at);
    await fh.close();
    const hash = createHash('sha256');
    for await (const chunk of createReadStream(file, { highWaterMark: 4 * MiB })) hash.update(chunk as Buffer);
    sha256 = hash.digest('hex');
    service = await startCliServer(
      join(work, 'data'),
      {
        ARTIFACT_STORE_MAX_ARTIFACT_BYTES: String(7 * GiB),
        ARTIFACT_STORE_MAX_SESSION_BYTES: String(8 * GiB),
        ARTIFACT_STORE_MAX_TRACE_BYTES: String(8 * GiB),
      },
      120_000,
    );
    // The CLI reaches the service through a proxy that drops the connection twice, about a third and
    // two thirds of the way.
    proxy = await droppingProxy(service.url, [Math.floor(SIZE / 3), Math.floor((2 * SIZE) / 3)]);
  }, 600_000);

  afterAll(async () => {
    await service?.stop();
    await proxy?.close();
    rmSync(work, { recursive: true, force: true });
  }, 120_000);

  it('goes in from the CLI through a connection that drops twice, and comes out by its sha256', async () => {
    const pid = service!.proc.pid!;
    const before = rssMiB(pid);
    let peak = before;
    const sampling = setInterval(() => {
      peak = Math.max(peak, rssMiB(pid));
    }, 50);
    let put;
    try {
      put = await runCli(['put', file, '--resume', '-q', '--url', proxy!.url, '--token', service!.token], {
        env: { ARTIFACT_STORE_RESUME_FILE: join(work, 'uploads.json') },
        timeoutMs: 1_500_000,
      });
    } finally {
      clearInterval(sampling);
    }
    expect(put.code, put.stderr).toBe(0);
    const id = put.stdout.trim();
    // Both drops happened, each inside a PATCH, and the upload went on from where the service stood.
    expect(proxy!.cuts).toHaveLength(2);
    for (const cut of proxy!.cuts) expect(cut.request).toMatch(/^PATCH \/v1\/tus\/up_/);
    expect(proxy!.requests.filter((r) => r.request.startsWith('POST /v1/tus'))).toHaveLength(1);
    expect(proxy!.requests.filter((r) => r.request.startsWith('HEAD /v1/tus/')).length).toBeGreaterThanOrEqual(2);
    const meta = (await (
      await fetch(`${service!.url}/v1/artifacts/${id}/meta`, { headers: { Authorization: `Bearer ${service!.token}` } })
    ).json()) as { sha256: string; sizeBytes: number };
    expect(meta).toMatchObject({ sha256, sizeBytes: SIZE });
    // The service streamed the 6 GiB to disk, hashing on the way: its memory stayed within a few
    // chunks' worth whatever the size (the bound is loose for the garbage collector's timing).
    expect(peak - before, `RSS ${before.toFixed(0)} MiB, peak ${peak.toFixed(0)} MiB`).toBeLessThanOrEqual(256);
    // Out by its sha256: every byte through the service, hashed here.
    const res = await fetch(`${service!.url}/v1/artifacts/${id}`, {
      headers: { Authorization: `Bearer ${service!.token}` },
    });
    expect(res.status).toBe(200);
    const back = createHash('sha256');
    let size = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      back.update(chunk);
      size += chunk.byteLength;
    }
    expect(size).toBe(SIZE);
    expect(back.digest('hex')).toBe(sha256);
  }, 1_800_000);
});
