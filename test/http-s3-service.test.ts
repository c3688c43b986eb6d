import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createS3BlobStore } from '../src/blob/s3.js';
import { createS3Client } from '../src/blob/s3-client.js';
import { runRetention } from '../src/service/retention/index.js';
import { createHttpArtifactStore } from '../src/client/index.js';
import { loadConfig, policiesOf } from '../src/core/config.js';
import { createFileSpool, startServer, type RunningServer } from '../src/node.js';
import { describeArtifactStoreContract } from './artifact-store.contract.js';
import { createTestApp, putArtifact, bearer } from './helpers/app.js';
import { createTestBucket, describeS3, s3ServiceSettings, s3TestTarget } from './helpers/s3.js';

const target = s3TestTarget();
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** The bytes in 64 KiB chunks; with failAt, the stream errors once that many bytes went out. */
function chunked(bytes: Uint8Array, failAt?: number): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (failAt !== undefined && at >= failAt) return controller.error(new Error('source broke'));
      if (at >= bytes.byteLength) return controller.close();
      controller.enqueue(bytes.slice(at, at + 65536));
      at += 65536;
    },
  });
}

/** A fetch that records "METHOD path" for the service and "METHOD s3" for anything else. */
function recordingFetch(serviceUrl: string, calls: string[], through: typeof fetch = fetch): typeof fetch {
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    calls.push(`${init?.method ?? 'GET'} ${url.origin === serviceUrl ? url.pathname : 's3'}`);
    return through(input, init);
  };
}

// The whole service on the S3 driver: real server, real S3 (Ceph RGW here, MinIO or AWS elsewhere).
let server: RunningServer;
let dir: string;
let bucket: string;
let dropBucket: (() => Promise<void>) | undefined;
let token: string;

async function startS3Service(): Promise<void> {
  const made = await createTestBucket(target!, 'service');
  bucket = made.bucket;
  dropBucket = made.cleanup;
  dir = await mkdtemp(join(tmpdir(), 'artifact-s3-service-'));
  server = await startServer(loadConfig({}, s3ServiceSettings(target!, bucket, dir, { s3Prefix: 'svc/' })));
  token = await server.mintToken({ tenant: 'acme', sub: 'u1', perms: ['read', 'write'] });
}

async function stagingKeys(): Promise<string[]> {
  return keysUnder('svc/staging/');
}

async function blobKeys(): Promise<string[]> {
  return keysUnder('svc/blobs/');
}

async function keysUnder(prefix: string): Promise<string[]> {
  const client = createS3Client({
    region: target!.region,
    endpoint: target!.endpoint,
    forcePathStyle: target!.forcePathStyle,
    accessKeyId: target!.accessKeyId,
    secretAccessKey: target!.secretAccessKey,
  });
  try {
    const out = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
    return (out.Contents ?? []).map((o) => o.Key!);
  } finally {
    client.destroy();
  }
}

const api = (path: string, init: RequestInit = {}) =>
  fetch(`${server.url}${path}`, {
    ...init,
    headers: { Authorization: `Bearer ${token}`, ...(init.headers as Record<string, string>) },
  });
const json = async (res: Response) => (await res.json()) as Record<string, any>;

async function begin(bytes: Uint8Array, extra: Record<string, unknown> = {}, declaredSha = sha256(bytes)) {
  const res = await api('/v1/uploads', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ sizeBytes: bytes.byteLength, sha256: declaredSha, ...extra }),
  });
  return { res, ticket: await json(res) };
}

describeS3('the service on the S3 driver', () => {
  beforeAll(startS3Service);
  afterAll(async () => {
    await server?.close();
    await dropBucket?.();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  describeArtifactStoreContract(`HTTP client ↔ service on s3 (${target?.name ?? 'no target'})`, async () => {
    const session = `s-${randomBytes(4).toString('hex')}`;
    const [a, b] = await Promise.all([
      server.mintToken({ tenant: 'acme', sub: 'u1', session, perms: ['read', 'write'] }),
      server.mintToken({ tenant: 'acme', sub: 'u1', session: `${session}-b`, perms: ['read', 'write'] }),
    ]);
    return {
      store: createHttpArtifactStore({ baseUrl: server.url, token: a }),
      otherSession: createHttpArtifactStore({ baseUrl: server.url, token: b }),
      cleanup: async () => {},
    };
  });

  describe('direct links', () => {
    it('a direct link is an S3 presigned GET: no credentials needed, the right type and name, Range works', async () => {
      const bytes = randomBytes(70_000);
      const put = await api('/v1/artifacts', {
        method: 'POST',
        headers: { 'Content-Type': 'application/pdf', 'X-Artifact-Filename': 'Q3.pdf' },
        body: bytes,
      });
      expect(put.status).toBe(201);
      const ref = await json(put);
      const link = await json(
        await api(`/v1/artifacts/${ref.id}/url`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ mode: 'direct', disposition: 'attachment' }),
        }),
      );
      expect(link.fetchMode).toBe('direct');
      expect(link.url.startsWith(target!.endpoint)).toBe(true);
      // A browser-style fetch: no Authorization, no cookies.
      const got = await fetch(link.url);
      expect(got.status).toBe(200);
      expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
      expect(got.headers.get('content-type')).toBe('application/pdf');
      expect(got.headers.get('content-disposition')).toBe('attachment; filename="Q3.pdf"');
      const part = await fetch(link.url, { headers: { Range: 'bytes=5-9' } });
      expect(part.status).toBe(206);
      expect(Buffer.from(await part.arrayBuffer()).equals(bytes.subarray(5, 10))).toBe(true);
    });

    it('the S3 server itself refuses a tampered or expired direct link', async () => {
      const ref = await json(
        await api('/v1/artifacts', {
          method: 'POST',
          headers: { 'Content-Type': 'text/plain' },
          body: 'for your eyes only',
        }),
      );
      const link = await json(
        await api(`/v1/artifacts/${ref.id}/url`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ mode: 'direct', expiresIn: 1 }),
        }),
      );
      const u = new URL(link.url);
      const sig = u.searchParams.get('X-Amz-Signature')!;
      u.searchParams.set('X-Amz-Signature', sig.slice(0, -1) + (sig.endsWith('0') ? '1' : '0'));
      const tampered = await fetch(u);
      expect(tampered.status).toBe(403);
      expect(await tampered.text()).not.toContain('for your eyes only');
      // Another object's key under the same signature.
      const other = new URL(link.url);
      other.pathname = other.pathname.replace(/[0-9a-f]{64}$/, '0'.repeat(64));
      expect((await fetch(other)).status).toBe(403);
      await new Promise((r) => setTimeout(r, 2100));
      const expired = await fetch(link.url);
      expect(expired.status).toBe(403);
    });
  });

  it('a tampered body under X-Artifact-Sha256 is 422 and commits nothing: small and multipart, new and already stored', async () => {
    const listed = async () =>
      (await json(await api('/v1/artifacts?limit=1000'))).items.map((r: Record<string, unknown>) => r.id).sort();
    const usage = async () => {
      const { at: _, ...counts } = await json(await api('/v1/usage'));
      return counts;
    };
    // One part (one PutObject the backend checks) and more than the 8 MiB part size (multipart).
    for (const size of [200_000, 9 * 1024 * 1024 + 1]) {
      const bytes = new Uint8Array(randomBytes(size));
      const tampered = new Uint8Array(bytes);
      tampered[size >> 1]! ^= 0xff;
      const put = (body: Uint8Array<ArrayBuffer>) =>
        api('/v1/artifacts', {
          method: 'POST',
          headers: { 'Content-Type': 'application/octet-stream', 'X-Artifact-Sha256': sha256(bytes) },
          body,
        });
      for (const stage of ['new', 'already stored']) {
        const before = { ids: await listed(), usage: await usage(), blobs: await blobKeys() };
        const res = await put(tampered);
        expect(res.status, `${size} bytes, ${stage}`).toBe(422);
        expect(await json(res)).toMatchObject({
          code: 'checksum_mismatch',
          details: { expected: sha256(bytes), actual: sha256(tampered) },
        });
        expect({ ids: await listed(), usage: await usage(), blobs: await blobKeys() }).toEqual(before);
        expect(await stagingKeys()).toEqual([]);
        if (stage === 'new') {
          expect(before.blobs.some((k) => k.endsWith(sha256(bytes)))).toBe(false);
          const stored = await put(bytes);
          expect(stored.status).toBe(201);
          expect((await json(stored)).sha256).toBe(sha256(bytes));
        }
      }
    }
  });

  describe('direct uploads', () => {
    it('begin → PUT to S3 without a token → complete gives the ArtifactRef; the bytes download', async () => {
      const bytes = randomBytes(3 * 1024 * 1024 + 5);
      const { res, ticket } = await begin(bytes, {
        mimeType: 'application/zip',
        filename: 'data.zip',
        meta: { run: 7 },
      });
      expect(res.status).toBe(201);
      expect(ticket).toMatchObject({ method: 'PUT', uploadId: expect.stringMatching(/^up_[0-9a-f]{32}$/) });
      const put = await fetch(ticket.url, { method: 'PUT', headers: ticket.headers, body: bytes });
      expect(put.status).toBe(200);
      const done = await api(`/v1/uploads/${ticket.uploadId}/complete?url=proxy`, { method: 'POST' });
      expect(done.status).toBe(201);
      const ref = await json(done);
      expect(ref).toMatchObject({
        sha256: sha256(bytes),
        sizeBytes: bytes.byteLength,
        mimeType: 'application/zip',
        filename: 'data.zip',
        meta: { run: 7 },
        fetchMode: 'proxy',
      });
      const got = await api(`/v1/artifacts/${ref.id}`);
      expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);
      expect(await stagingKeys()).toEqual([]);
      // Completed once: the upload is gone.
      expect((await api(`/v1/uploads/${ticket.uploadId}/complete`, { method: 'POST' })).status).toBe(404);
    });

    it('other bytes of the declared size are refused by the bucket itself: the PUT is signed with the declared sha256', async () => {
      const declared = randomBytes(100_000);
      const sent = randomBytes(100_000);
      const { ticket } = await begin(declared);
      expect(ticket.headers).toEqual({
        'Content-Type': 'application/octet-stream',
        'x-amz-content-sha256': sha256(declared),
      });
      const put = await fetch(ticket.url, { method: 'PUT', headers: ticket.headers, body: sent });
      expect(put.status).toBe(400);
      expect(await put.text()).toContain('XAmzContentSHA256Mismatch');
      // Without the header the signature does not match: the client cannot leave the check out.
      const { 'x-amz-content-sha256': _, ...withoutHash } = ticket.headers as Record<string, string>;
      expect((await fetch(ticket.url, { method: 'PUT', headers: withoutHash, body: sent })).status).toBe(403);
      // Nothing was uploaded: complete says so and the upload stays open for the right bytes.
      const early = await api(`/v1/uploads/${ticket.uploadId}/complete`, { method: 'POST' });
      expect(early.status).toBe(400);
      expect((await json(early)).message).toMatch(/Nothing has been uploaded/);
      const list = await json(await api(`/v1/artifacts?limit=1000`));
      expect(list.items.map((r: Record<string, unknown>) => r.sha256)).not.toContain(sha256(sent));
      expect(list.items.map((r: Record<string, unknown>) => r.sha256)).not.toContain(sha256(declared));
      expect(await stagingKeys()).toEqual([]);
      expect((await fetch(ticket.url, { method: 'PUT', headers: ticket.headers, body: declared })).status).toBe(200);
      const done = await api(`/v1/uploads/${ticket.uploadId}/complete`, { method: 'POST' });
      expect(done.status).toBe(201);
      expect((await json(done)).sha256).toBe(sha256(declared));
      expect(await stagingKeys()).toEqual([]);
    });

    it('the presigned PUT takes exactly the declared size: S3 refuses more or fewer bytes', async () => {
      const bytes = randomBytes(2000);
      const { ticket } = await begin(bytes);
      expect(
        (await fetch(ticket.url, { method: 'PUT', headers: ticket.headers, body: randomBytes(50_000) })).status,
      ).toBe(403);
      expect(
        (await fetch(ticket.url, { method: 'PUT', headers: ticket.headers, body: bytes.subarray(0, 1999) })).status,
      ).toBe(403);
      expect(await stagingKeys()).toEqual([]);
      expect((await fetch(ticket.url, { method: 'PUT', headers: ticket.headers, body: bytes })).status).toBe(200);
      expect((await api(`/v1/uploads/${ticket.uploadId}/complete`, { method: 'POST' })).status).toBe(201);
    });

    it('completing before the PUT is 400 and the upload stays open', async () => {
      const bytes = randomBytes(1000);
      const { ticket } = await begin(bytes);
      const early = await api(`/v1/uploads/${ticket.uploadId}/complete`, { method: 'POST' });
      expect(early.status).toBe(400);
      expect((await json(early)).message).toMatch(/Nothing has been uploaded/);
      await fetch(ticket.url, { method: 'PUT', headers: ticket.headers, body: bytes });
      expect((await api(`/v1/uploads/${ticket.uploadId}/complete`, { method: 'POST' })).status).toBe(201);
    });

    it('only the scope that began an upload may complete it', async () => {
      const other = await server.mintToken({
        tenant: 'acme',
        sub: 'u1',
        session: 'somebody-else',
        perms: ['read', 'write'],
      });
      const mineOnly = await server.mintToken({ tenant: 'acme', sub: 'u1', session: 'mine', perms: ['read', 'write'] });
      const bytes = randomBytes(500);
      const started = await fetch(`${server.url}/v1/uploads`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${mineOnly}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ sizeBytes: 500, sha256: sha256(bytes) }),
      });
      const ticket = await json(started);
      await fetch(ticket.url, { method: 'PUT', headers: ticket.headers, body: bytes });
      const foreign = await fetch(`${server.url}/v1/uploads/${ticket.uploadId}/complete`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${other}` },
      });
      expect(foreign.status).toBe(404);
      const own = await fetch(`${server.url}/v1/uploads/${ticket.uploadId}/complete`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${mineOnly}` },
      });
      expect(own.status).toBe(201);
      expect((await json(own)).scope.sessionId).toBe('mine');
    });

    it('the SDK sends large puts straight to S3 and small ones through the service', async () => {
      const calls: string[] = [];
      const store = createHttpArtifactStore({
        baseUrl: server.url,
        token,
        fetch: recordingFetch(server.url, calls),
        directUploadAboveBytes: 1024 * 1024,
      });
      const big = randomBytes(2 * 1024 * 1024);
      const ref = await store.putBytes(big, { mimeType: 'application/octet-stream', filename: 'big.bin' });
      expect(ref).toMatchObject({ sha256: sha256(big), sizeBytes: big.byteLength, filename: 'big.bin' });
      expect(calls).toEqual(['POST /v1/uploads', 'PUT s3', `POST /v1/uploads/${calls[2]?.split('/')[3]}/complete`]);
      expect(Buffer.from((await store.get(ref.id))!).equals(big)).toBe(true);
      calls.length = 0;
      await store.putText('small');
      expect(calls).toEqual(['POST /v1/artifacts']);
    });

    it('with a spool, putStream goes direct above the threshold and through the service below it', async () => {
      const spoolDir = await mkdtemp(join(tmpdir(), 'artifact-spool-test-'));
      try {
        const calls: string[] = [];
        const store = createHttpArtifactStore({
          baseUrl: server.url,
          token,
          fetch: recordingFetch(server.url, calls),
          directUploadAboveBytes: 1024 * 1024,
          spool: createFileSpool({ dir: spoolDir }),
        });
        const big = randomBytes(3 * 1024 * 1024 + 123);
        const ref = await store.putStream(chunked(big), { filename: 'streamed.bin' });
        expect(ref).toMatchObject({ sha256: sha256(big), sizeBytes: big.byteLength, filename: 'streamed.bin' });
        expect(calls).toEqual(['POST /v1/uploads', 'PUT s3', `POST /v1/uploads/${calls[2]?.split('/')[3]}/complete`]);
        expect(Buffer.from((await store.get(ref.id))!).equals(big)).toBe(true);
        expect(await readdir(spoolDir)).toEqual([]);

        calls.length = 0;
        const exact = randomBytes(1024 * 1024);
        expect((await store.putStream(chunked(exact))).sha256).toBe(sha256(exact));
        expect(calls).toEqual(['POST /v1/artifacts']);
        expect(await readdir(spoolDir)).toEqual([]);
      } finally {
        await rm(spoolDir, { recursive: true, force: true });
      }
    });

    it('a spooled putStream whose bytes miss the declared sha256, or whose source breaks, sends nothing and leaves no spool', async () => {
      const spoolDir = await mkdtemp(join(tmpdir(), 'artifact-spool-test-'));
      try {
        const calls: string[] = [];
        const store = createHttpArtifactStore({
          baseUrl: server.url,
          token,
          fetch: recordingFetch(server.url, calls),
          directUploadAboveBytes: 1024 * 1024,
          spool: createFileSpool({ dir: spoolDir }),
        });
        const big = randomBytes(2 * 1024 * 1024);
        await expect(store.putStream(chunked(big), { sha256: 'a'.repeat(64) })).rejects.toMatchObject({
          code: 'checksum_mismatch',
        });
        await expect(store.putStream(chunked(big, 1536 * 1024))).rejects.toThrow('source broke');
        await expect(store.putStream(chunked(big, 512 * 1024))).rejects.toThrow('source broke');
        expect(calls).toEqual([]);
        expect(await readdir(spoolDir)).toEqual([]);
      } finally {
        await rm(spoolDir, { recursive: true, force: true });
      }
    });

    it('retention reaps uploads never completed: the staged object, then the row', async () => {
      const bytes = randomBytes(1000);
      const { ticket } = await begin(bytes);
      expect((await fetch(ticket.url, { method: 'PUT', headers: ticket.headers, body: bytes })).status).toBe(200);
      expect((await stagingKeys()).length).toBeGreaterThan(0);
      const client = createS3Client({
        region: target!.region,
        endpoint: target!.endpoint,
        forcePathStyle: target!.forcePathStyle,
        accessKeyId: target!.accessKeyId,
        secretAccessKey: target!.secretAccessKey,
      });
      try {
        const blobs = createS3BlobStore({ client, bucket, prefix: 'svc/' });
        const policies = policiesOf(loadConfig({}));
        // Still within its hour: left alone.
        expect((await runRetention({ repo: server.repo, blobs, policies, graceMs: 60_000 })).uploads.reaped).toBe(0);
        // Two hours on, past its expiry and the grace: reaped.
        const report = await runRetention({
          repo: server.repo,
          blobs,
          policies,
          graceMs: 60_000,
          now: () => Date.now() + 2 * 3_600_000,
        });
        expect(report.uploads.reaped).toBeGreaterThanOrEqual(1);
        expect(report.uploads.stagingFailed).toBe(0);
      } finally {
        client.destroy();
      }
      expect(await stagingKeys()).toEqual([]);
      const late = await api(`/v1/uploads/${ticket.uploadId}/complete`, { method: 'POST' });
      expect(late.status).toBe(404);
    });

    it('bad begin requests are 4xx before anything is presigned', async () => {
      const cases: [Record<string, unknown>, number][] = [
        [{ sizeBytes: 0, sha256: 'a'.repeat(64) }, 400],
        [{ sizeBytes: 10, sha256: 'nothex' }, 400],
        [{ sizeBytes: 10 }, 400],
        [{ sizeBytes: 10 ** 12, sha256: 'a'.repeat(64) }, 413],
        [{ sizeBytes: 10, sha256: 'a'.repeat(64), namespace: 'Bad Namespace' }, 400],
        [{ sizeBytes: 10, sha256: 'a'.repeat(64), ttl: 10 ** 9 }, 400],
      ];
      for (const [body, status] of cases) {
        const res = await api('/v1/uploads', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        });
        expect(res.status, JSON.stringify(body)).toBe(status);
      }
      const readOnly = await server.mintToken({ tenant: 'acme', sub: 'u1', perms: ['read'] });
      const res = await fetch(`${server.url}/v1/uploads`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${readOnly}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ sizeBytes: 1, sha256: 'a'.repeat(64) }),
      });
      expect(res.status).toBe(403);
    });
  });
});

describe('direct uploads on a driver without them (fs)', () => {
  it('answers 400 direct_uploads_unavailable, so clients fall back to POST /v1/artifacts', async () => {
    const t = await createTestApp();
    try {
      const tok = await t.token({ tenant: 'acme', sub: 'u1', perms: ['read', 'write'] });
      const res = await t.app.request('/v1/uploads', {
        method: 'POST',
        headers: { ...bearer(tok), 'Content-Type': 'application/json' },
        body: JSON.stringify({ sizeBytes: 10, sha256: 'a'.repeat(64) }),
      });
      expect(res.status).toBe(400);
      const body = (await res.json()) as Record<string, any>;
      expect(body.details).toEqual({ reason: 'direct_uploads_unavailable' });
      // The ordinary put still works.
      expect((await putArtifact(t.app, tok, 'fine')).res.status).toBe(201);
      // And the SDK falls back to it, asking only once.
      const calls: string[] = [];
      const viaApp: typeof fetch = async (input, init) => {
        const url = new URL(String(input));
        calls.push(`${init?.method} ${url.pathname}`);
        return t.app.request(`${url.pathname}${url.search}`, init);
      };
      const store = createHttpArtifactStore({
        baseUrl: 'http://artifacts.test',
        token: tok,
        fetch: viaApp,
        directUploadAboveBytes: 10,
      });
      await store.putText('more than ten bytes');
      await store.putText('more than ten bytes, again');
      expect(calls).toEqual(['POST /v1/uploads', 'POST /v1/artifacts', 'POST /v1/artifacts']);

      // A spooled putStream that learns there are no direct uploads sends the spooled bytes instead.
      const spoolDir = await mkdtemp(join(tmpdir(), 'artifact-spool-test-'));
      try {
        calls.length = 0;
        const fresh = createHttpArtifactStore({
          baseUrl: 'http://artifacts.test',
          token: tok,
          fetch: viaApp,
          directUploadAboveBytes: 1024,
          spool: createFileSpool({ dir: spoolDir }),
        });
        const bytes = randomBytes(200 * 1024);
        const ref = await fresh.putStream(chunked(bytes));
        expect(ref.sha256).toBe(sha256(bytes));
        expect(Buffer.from((await fresh.get(ref.id))!).equals(bytes)).toBe(true);
        expect(calls).toEqual(['POST /v1/uploads', 'POST /v1/artifacts', `GET /v1/artifacts/${ref.id}`]);
        expect(await readdir(spoolDir)).toEqual([]);
      } finally {
        await rm(spoolDir, { recursive: true, force: true });
      }
    } finally {
      await t.cleanup();
    }
  });
});
