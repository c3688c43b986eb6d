/**
 * Resumable uploads through the service (/v1/tus) with tus-js-client from npm against the real
 * service in its own process: whole uploads, an upload cut at a random byte and resumed, the service
 * SIGKILLed between chunks and restarted, per-PATCH checksums, the protocol's refusals, quotas, rate
 * limits, scopes and tenants.
 */
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Upload } from 'tus-js-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintToken, type TokenClaims } from '../src/http/tokens.js';
import { startCliServer, type CliServer } from './helpers/cli-server.js';

const SECRET = { kid: 'k1', secret: 'tus-test-secret-0123456789abcdef-0123456789' };
const ENV = {
  ARTIFACT_STORE_JWT_SECRETS: `${SECRET.kid}:${SECRET.secret}`,
  ARTIFACT_STORE_MAX_ARTIFACT_BYTES: String(32 * 1024 * 1024),
  ARTIFACT_STORE_TENANT_POLICIES: JSON.stringify({
    small: { maxSessionBytes: 300_000, cleanupStrategy: 'reject' },
    slow: { tenantRequestsPerSecond: 1, tenantRequestBurst: 3 },
  }),
};
const TUS = { 'Tus-Resumable': '1.0.0' };
const OCTETS = { 'Content-Type': 'application/offset+octet-stream' };

let dir: string;
let server: CliServer;
let acme: string;

const token = (claims: Partial<TokenClaims> & { tenant: string }) =>
  mintToken(SECRET, { sub: 'u1', perms: ['read', 'write'], ...claims });
const auth = (bearer: string) => ({ Authorization: `Bearer ${bearer}` });
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const b64 = (s: string) => Buffer.from(s).toString('base64');

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'artifact-tus-'));
  server = await startCliServer(join(dir, 'data'), ENV);
  acme = await token({ tenant: 'acme' });
}, 90_000);

afterAll(async () => {
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** Uploads `bytes` with tus-js-client; resolves with the upload's URL and the stored artifact's id. */
function tusUpload(
  bytes: Uint8Array,
  options: {
    endpoint?: string;
    uploadUrl?: string;
    bearer?: string;
    headers?: Record<string, string>;
    metadata?: Record<string, string>;
    chunkSize?: number;
    retryDelays?: number[] | null;
    onChunk?: (upload: Upload, accepted: number) => void;
  } = {},
): { upload: Upload; done: Promise<{ url: string; artifactId: string | undefined }> } {
  let upload!: Upload;
  const done = new Promise<{ url: string; artifactId: string | undefined }>((ok, fail) => {
    upload = new Upload(Buffer.from(bytes), {
      endpoint: options.endpoint ?? `${server.url}/v1/tus`,
      ...(options.uploadUrl ? { uploadUrl: options.uploadUrl } : {}),
      headers: { ...auth(options.bearer ?? acme), ...options.headers },
      metadata: options.metadata ?? { filename: 'report.bin', filetype: 'application/x-report' },
      ...(options.chunkSize ? { chunkSize: options.chunkSize } : {}),
      retryDelays: options.retryDelays === undefined ? [0, 200, 500] : options.retryDelays,
      onChunkComplete: (_size, accepted) => options.onChunk?.(upload, accepted),
      onError: fail,
      onSuccess: ({ lastResponse }) =>
        ok({ url: upload.url!, artifactId: lastResponse.getHeader('X-Artifact-Id') ?? undefined }),
    });
    upload.start();
  });
  return { upload, done };
}

async function create(bearer: string, length: number, metadata = '', headers: Record<string, string> = {}) {
  return fetch(`${server.url}/v1/tus`, {
    method: 'POST',
    headers: { ...auth(bearer), ...TUS, 'Upload-Length': String(length), 'Upload-Metadata': metadata, ...headers },
  });
}

async function createdUrl(bearer: string, length: number, metadata = '', headers: Record<string, string> = {}) {
  const res = await create(bearer, length, metadata, headers);
  expect(res.status).toBe(201);
  return res.headers.get('location')!;
}

const head = (url: string, bearer = acme, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'HEAD', headers: { ...auth(bearer), ...TUS, ...headers } });

const patch = (url: string, offset: number, body: Uint8Array, headers: Record<string, string> = {}, bearer = acme) =>
  fetch(url, {
    method: 'PATCH',
    headers: { ...auth(bearer), ...TUS, ...OCTETS, 'Upload-Offset': String(offset), ...headers },
    body: body as Uint8Array<ArrayBuffer>,
  });

async function download(id: string, bearer = acme, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}/v1/artifacts/${id}`, { headers: { ...auth(bearer), ...headers } });
  return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()), type: res.headers.get('content-type') };
}

async function listed(bearer: string, session: string) {
  const res = await fetch(`${server.url}/v1/artifacts?session=${session}`, { headers: auth(bearer) });
  expect(res.status).toBe(200);
  return ((await res.json()) as { items: { id: string; sizeBytes: number }[] }).items;
}

/** A TCP proxy to the server that drops both connections once `cutAfter` bytes went upstream. */
async function cuttingProxy(cutAfter: number): Promise<{ url: string; close(): Promise<void>; sent(): number }> {
  const target = new URL(server.url);
  let sent = 0;
  const sockets = new Set<Socket>();
  const proxy: Server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    client.on('data', (chunk: Buffer) => {
      if (sent >= cutAfter) return;
      const room = cutAfter - sent;
      upstream.write(chunk.subarray(0, room));
      sent += Math.min(room, chunk.length);
      if (sent >= cutAfter) {
        // Let the partial chunk reach the service, then drop both sides as a network failure would.
        setTimeout(() => {
          client.destroy();
          upstream.destroy();
        }, 50);
      }
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((ok) => proxy.listen(0, '127.0.0.1', ok));
  const { port } = proxy.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    sent: () => sent,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((ok) => proxy.close(() => ok()));
    },
  };
}

describe('tus-js-client against the service', () => {
  it('uploads a file in chunks; the artifact reads back byte for byte, with the metadata and scope asked', async () => {
    const bytes = randomBytes(1_300_000 + randomInt(1000));
    const { done } = tusUpload(bytes, {
      chunkSize: 256 * 1024,
      headers: { 'X-Artifact-Session': 'whole' },
      metadata: { filename: 'result.csv', filetype: 'text/csv', namespace: 'tool' },
    });
    const { url, artifactId } = await done;
    expect(artifactId).toBe(`tool_${sha256(bytes).slice(0, 24)}`);
    const got = await download(artifactId!, acme, { 'X-Artifact-Session': 'whole' });
    expect(got.status).toBe(200);
    expect(got.bytes.equals(bytes)).toBe(true);
    expect(got.type).toMatch(/^text\/csv/);
    const meta = await (await fetch(`${server.url}/v1/artifacts/${artifactId}/meta`, { headers: auth(acme) })).json();
    expect(meta).toMatchObject({ filename: 'result.csv', scope: { sessionId: 'whole' }, sizeBytes: bytes.length });
    // A finished upload answers HEAD with its full offset and the artifact's id; nothing stays staged.
    const after = await head(url);
    expect(after.status).toBe(200);
    expect(after.headers.get('upload-offset')).toBe(String(bytes.length));
    expect(after.headers.get('x-artifact-id')).toBe(artifactId);
    expect(await readdir(join(dir, 'data', 'tus'))).toEqual([]);
  });

  it('stores an empty file', async () => {
    const { artifactId } = await tusUpload(new Uint8Array(0)).done;
    expect(artifactId).toBe(`art_${sha256(new Uint8Array(0)).slice(0, 24)}`);
    expect((await download(artifactId!)).bytes.length).toBe(0);
  });

  it('resumes an upload cut at a random byte from where the service acknowledged, with the stored URL', async () => {
    const bytes = randomBytes(2 * 1024 * 1024);
    // Past the creation's request and the PATCH's headers, somewhere in its body.
    const cutAfter = 2000 + randomInt(bytes.length - 4000);
    const proxy = await cuttingProxy(cutAfter);
    let url: string | undefined;
    try {
      const first = tusUpload(bytes, { endpoint: `${proxy.url}/v1/tus`, retryDelays: null });
      await expect(first.done).rejects.toThrow();
      url = first.upload.url!;
    } finally {
      await proxy.close();
    }
    expect(url).toBeDefined();
    const direct = `${server.url}${new URL(url!).pathname}`;
    const offset = Number((await head(direct)).headers.get('upload-offset'));
    // The bytes that arrived were kept (tus: the server should), and nothing more than was sent.
    expect(offset).toBeGreaterThan(0);
    expect(offset).toBeLessThan(cutAfter);
    const progress: number[] = [];
    const { artifactId } = await tusUpload(bytes, { uploadUrl: direct, onChunk: (_u, n) => progress.push(n) }).done;
    expect(progress[0]).toBe(bytes.length);
    const got = await download(artifactId!);
    expect(got.bytes.equals(bytes)).toBe(true);
  });
});

describe('a service SIGKILLed between chunks', () => {
  it('resumes after a restart on the same data dir and port, losing no acknowledged byte', {
    timeout: 120_000,
  }, async () => {
    const killDir = await mkdtemp(join(tmpdir(), 'artifact-tus-kill-'));
    let svc = await startCliServer(killDir, ENV);
    try {
      const port = Number(new URL(svc.url).port);
      const bearer = await token({ tenant: 'acme' });
      const bytes = randomBytes(3 * 1024 * 1024 + 17);
      const chunkSize = 64 * 1024;
      const killAfter = chunkSize * (2 + randomInt(10));
      let acknowledged = 0;
      let url: string | undefined;
      const first = tusUpload(bytes, {
        endpoint: `${svc.url}/v1/tus`,
        bearer,
        chunkSize,
        retryDelays: null,
        onChunk: (upload, accepted) => {
          acknowledged = accepted;
          url = upload.url!;
          if (accepted >= killAfter) {
            void upload.abort();
            svc.kill();
          }
        },
      });
      first.done.catch(() => {});
      await svc.exited;
      expect(acknowledged).toBeGreaterThanOrEqual(killAfter);

      svc = await startCliServer(killDir, ENV, 60_000, port);
      const res = await fetch(url!, { method: 'HEAD', headers: { ...auth(bearer), ...TUS } });
      expect(res.status).toBe(200);
      expect(Number(res.headers.get('upload-offset'))).toBeGreaterThanOrEqual(acknowledged);

      // Killed in the middle of a PATCH too: the bytes written but never acknowledged are cut on the next.
      const offset = Number(res.headers.get('upload-offset'));
      // More than one write's batch (1 MiB), so bytes reach the file before the kill.
      const half = bytes.subarray(offset, offset + 1_500_000);
      let pushed = 0;
      const slow = new ReadableStream<Uint8Array>({
        async pull(controller) {
          if (pushed >= half.length) return; // never ends: the service dies first
          controller.enqueue(half.subarray(pushed, pushed + 100_000));
          pushed += 100_000;
          if (pushed >= half.length) setTimeout(() => svc.kill(), 300);
        },
      });
      await fetch(url!, {
        method: 'PATCH',
        headers: { ...auth(bearer), ...TUS, ...OCTETS, 'Upload-Offset': String(offset) },
        body: slow,
        duplex: 'half',
      } as RequestInit).catch(() => undefined);
      await svc.exited;
      const staged = await stat(join(killDir, 'tus', new URL(url!).pathname.split('/').pop()!));
      expect(staged.size).toBeGreaterThan(offset);
      svc = await startCliServer(killDir, ENV, 60_000, port);
      const again = await fetch(url!, { method: 'HEAD', headers: { ...auth(bearer), ...TUS } });
      expect(again.headers.get('upload-offset')).toBe(String(offset));

      const { artifactId } = await tusUpload(bytes, { endpoint: `${svc.url}/v1/tus`, uploadUrl: url!, bearer }).done;
      const got = await fetch(`${svc.url}/v1/artifacts/${artifactId}`, { headers: auth(bearer) });
      expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
    } finally {
      svc.kill();
      await svc.exited;
      await rm(killDir, { recursive: true, force: true });
    }
  });
});

describe('the protocol', () => {
  it('answers OPTIONS with what it speaks, without a token', async () => {
    const res = await fetch(`${server.url}/v1/tus`, { method: 'OPTIONS' });
    expect(res.status).toBe(204);
    expect(res.headers.get('tus-version')).toBe('1.0.0');
    expect(res.headers.get('tus-extension')).toBe('creation,termination,checksum,expiration');
    expect(res.headers.get('tus-max-size')).toBe(String(32 * 1024 * 1024));
    expect(res.headers.get('tus-checksum-algorithm')).toBe('sha1,sha256,md5');
  });

  it('refuses a request without Tus-Resumable (412) and a PATCH of another Content-Type (415)', async () => {
    const bare = await fetch(`${server.url}/v1/tus`, {
      method: 'POST',
      headers: { ...auth(acme), 'Upload-Length': '10' },
    });
    expect(bare.status).toBe(412);
    expect(bare.headers.get('tus-version')).toBe('1.0.0');
    expect(await bare.json()).toMatchObject({ code: 'bad_request', details: { reason: 'tus_version' } });
    const url = await createdUrl(acme, 10);
    const typed = await patch(url, 0, new Uint8Array(10), { 'Content-Type': 'application/octet-stream' });
    expect(typed.status).toBe(415);
    expect(typed.headers.get('tus-resumable')).toBe('1.0.0');
    expect((await head(url)).headers.get('upload-offset')).toBe('0');
  });

  it('refuses a PATCH at another offset than the acknowledged one with 409 saying where to resume; nothing is committed', async () => {
    const bytes = randomBytes(1000);
    const url = await createdUrl(acme, bytes.length, '', { 'X-Artifact-Session': 'offsets' });
    expect((await patch(url, 0, bytes.subarray(0, 400))).status).toBe(204);
    const wrong = await patch(url, 100, bytes.subarray(100));
    expect(wrong.status).toBe(409);
    const body = (await wrong.json()) as { code: string; message: string; details: { offset: number } };
    expect(body.code).toBe('bad_request');
    expect(body.details.offset).toBe(400);
    expect(body.message).toMatch(/Resume from byte 400/);
    expect((await head(url)).headers.get('upload-offset')).toBe('400');
    expect(await listed(acme, 'offsets')).toEqual([]);
    const rest = await patch(url, 400, bytes.subarray(400));
    expect(rest.status).toBe(204);
    expect(rest.headers.get('x-artifact-id')).toBe(`art_${sha256(bytes).slice(0, 24)}`);
  });

  it('refuses a chunk whose Upload-Checksum does not match (460) and keeps none of it', async () => {
    const bytes = randomBytes(4096);
    const url = await createdUrl(acme, bytes.length);
    const digest = (alg: string, b: Uint8Array) => createHash(alg).update(b).digest('base64');
    const first = bytes.subarray(0, 1000);
    const good = await patch(url, 0, first, { 'Upload-Checksum': `sha1 ${digest('sha1', first)}` });
    expect(good.status).toBe(204);
    expect(good.headers.get('upload-offset')).toBe('1000');
    const bad = await patch(url, 1000, bytes.subarray(1000), {
      'Upload-Checksum': `sha256 ${digest('sha256', randomBytes(8))}`,
    });
    expect(bad.status).toBe(460);
    expect(await bad.json()).toMatchObject({ code: 'checksum_mismatch' });
    expect((await head(url)).headers.get('upload-offset')).toBe('1000');
    const unknown = await patch(url, 1000, bytes.subarray(1000), { 'Upload-Checksum': 'crc32 AAAA' });
    expect(unknown.status).toBe(400);
    const rest = bytes.subarray(1000);
    const ok = await patch(url, 1000, rest, { 'Upload-Checksum': `md5 ${digest('md5', rest)}` });
    expect(ok.status).toBe(204);
    const got = await download(ok.headers.get('x-artifact-id')!);
    expect(got.bytes.equals(bytes)).toBe(true);
  });

  it('ends an upload whose bytes do not hash to the declared sha256 (422), storing nothing', async () => {
    const bytes = randomBytes(3000);
    const url = await createdUrl(acme, bytes.length, `sha256 ${b64(sha256(randomBytes(4)))}`, {
      'X-Artifact-Session': 'declared',
    });
    const res = await patch(url, 0, bytes);
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ code: 'checksum_mismatch' });
    expect(await listed(acme, 'declared')).toEqual([]);
    expect((await head(url)).status).toBe(404);
  });

  it('refuses more bytes than the upload has left (413), keeping what was acknowledged', async () => {
    const url = await createdUrl(acme, 100);
    expect((await patch(url, 0, randomBytes(60))).status).toBe(204);
    const over = await patch(url, 60, randomBytes(41));
    expect(over.status).toBe(413);
    expect((await head(url)).headers.get('upload-offset')).toBe('60');
  });

  it('terminates an upload: 204, then it is gone', async () => {
    const url = await createdUrl(acme, 500);
    expect((await patch(url, 0, randomBytes(200))).status).toBe(204);
    const del = await fetch(url, { method: 'DELETE', headers: { ...auth(acme), ...TUS } });
    expect(del.status).toBe(204);
    expect((await head(url)).status).toBe(404);
    expect((await patch(url, 200, randomBytes(300))).status).toBe(404);
    expect((await readdir(join(dir, 'data', 'tus'))).filter((f) => url.endsWith(f))).toEqual([]);
  });

  it('refuses creation without Upload-Length, with a deferred length, or over the largest artifact', async () => {
    const none = await fetch(`${server.url}/v1/tus`, { method: 'POST', headers: { ...auth(acme), ...TUS } });
    expect(none.status).toBe(400);
    const deferred = await fetch(`${server.url}/v1/tus`, {
      method: 'POST',
      headers: { ...auth(acme), ...TUS, 'Upload-Defer-Length': '1' },
    });
    expect(deferred.status).toBe(400);
    const huge = await create(acme, 32 * 1024 * 1024 + 1);
    expect(huge.status).toBe(413);
    expect(await huge.json()).toMatchObject({ code: 'payload_too_large' });
    const readOnly = await create(await token({ tenant: 'acme', perms: ['read'] }), 10);
    expect(readOnly.status).toBe(403);
  });
});

describe('tenants and scopes', () => {
  it("answers another tenant's token on an upload's URL exactly like a missing upload (HEAD, PATCH, DELETE)", async () => {
    const url = await createdUrl(acme, 100);
    expect((await patch(url, 0, randomBytes(40))).status).toBe(204);
    const other = await token({ tenant: 'other' });
    const missing = `${server.url}/v1/tus/up_${'0'.repeat(32)}`;
    for (const target of [url, missing]) {
      expect((await head(target, other)).status).toBe(404);
      const p = await patch(target, 40, randomBytes(60), {}, other);
      expect(p.status).toBe(404);
      expect(await p.json()).toMatchObject({ code: 'not_found' });
      const d = await fetch(target, { method: 'DELETE', headers: { ...auth(other), ...TUS } });
      expect(d.status).toBe(404);
    }
    expect((await head(url)).headers.get('upload-offset')).toBe('40');
  });

  // As for reads: a tenant-wide token sees its tenant's uploads unless it names a scope.
  it("answers another session's or user's request on an upload as missing", async () => {
    const url = await createdUrl(acme, 100, '', { 'X-Artifact-Session': 's1' });
    expect((await head(url, acme, { 'X-Artifact-Session': 's2' })).status).toBe(404);
    expect((await head(url, await token({ tenant: 'acme', session: 's2' }))).status).toBe(404);
    expect((await head(url, acme, { 'X-Artifact-User': 'u2' })).status).toBe(404);
    expect((await head(url, await token({ tenant: 'acme', session: 's1' }))).status).toBe(200);
  });
});

describe('quotas and rate limits', () => {
  it("refuses at creation an upload larger than a whole scope may hold, with the put's quota error", async () => {
    const small = await token({ tenant: 'small' });
    const res = await create(small, 400_000, '', { 'X-Artifact-Session': 'q1' });
    expect(res.status).toBe(413);
    const body = (await res.json()) as { code: string; details: { limit: string } };
    expect(body.code).toBe('quota_exceeded');
    expect(body.details.limit).toBe('maxSessionBytes');
  });

  it('refuses the commit when the quota was used up between creation and the last chunk, storing nothing', async () => {
    const small = await token({ tenant: 'small' });
    const bytes = randomBytes(200_000);
    const url = await createdUrl(small, bytes.length, '', { 'X-Artifact-Session': 'q2' });
    expect((await patch(url, 0, bytes.subarray(0, 100_000), {}, small)).status).toBe(204);
    const put = await fetch(`${server.url}/v1/artifacts`, {
      method: 'POST',
      headers: { ...auth(small), 'Content-Type': 'application/octet-stream', 'X-Artifact-Session': 'q2' },
      body: randomBytes(150_000),
    });
    expect(put.status).toBe(201);
    const last = await patch(url, 100_000, bytes.subarray(100_000), {}, small);
    expect(last.status).toBe(413);
    expect(await last.json()).toMatchObject({ code: 'quota_exceeded' });
    const items = await listed(small, 'q2');
    expect(items.map((i) => i.sizeBytes)).toEqual([150_000]);
    expect((await head(url, small)).status).toBe(404);
  });

  it('meters tus requests like any write: past the rate, 429 with Retry-After', async () => {
    const slow = await token({ tenant: 'slow' });
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 8; i++) {
      const res = await create(slow, 10);
      statuses.push(res.status);
      if (res.status === 429) {
        retryAfter = res.headers.get('retry-after');
        expect(res.headers.get('tus-resumable')).toBe('1.0.0');
        expect(await res.json()).toMatchObject({ code: 'rate_limited' });
      }
    }
    expect(statuses.filter((s) => s === 201).length).toBeGreaterThanOrEqual(3);
    expect(statuses).toContain(429);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  });
});
