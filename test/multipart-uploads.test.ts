import { createHash, randomBytes } from 'node:crypto';
import { openAsBlob } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListMultipartUploadsCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createS3BlobStore } from '../src/blob/s3.js';
import { loadConfig, policiesOf } from '../src/core/config.js';
import { startServer, type RunningServer } from '../src/node.js';
import { createHttpArtifactStore } from '../src/client/index.js';
import { runRetention } from '../src/service/retention/index.js';
import { spawnCli } from './helpers/cli-server.js';
import { requestGate } from './helpers/request-gate.js';
import { stopProcess } from './helpers/processes.js';
import { createTestBucket, describeS3, s3ServiceSettings, s3TestTarget, testS3Client } from './helpers/s3.js';

const target = s3TestTarget();
const MiB = 1024 * 1024;
const PART = 5 * MiB;
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** Parts of 5 MiB above 8 MiB, under the prefix mp/. */
const PARTS_SETTINGS = {
  s3Prefix: 'mp/',
  multipartUploadBytes: String(8 * MiB),
  uploadPartBytes: String(PART),
  maxArtifactBytes: String(64 * MiB),
};

let server: RunningServer;
let dir: string;
let bucket: string;
let dropBucket: (() => Promise<void>) | undefined;
let token: string;

const api = (path: string, init: RequestInit = {}, as = token, base = server.url) =>
  fetch(`${base}${path}`, {
    ...init,
    headers: { Authorization: `Bearer ${as}`, 'Content-Type': 'application/json', ...(init.headers as object) },
  });
const json = async (res: Response) => (await res.json()) as Record<string, any>;

async function begin(bytes: Uint8Array, extra: Record<string, unknown> = {}) {
  const res = await api('/v1/uploads', {
    method: 'POST',
    body: JSON.stringify({ sizeBytes: bytes.byteLength, sha256: sha256(bytes), filename: 'big.bin', ...extra }),
  });
  expect(res.status).toBe(201);
  return json(res);
}

const partOf = (bytes: Buffer, ticket: Record<string, any>, n: number) =>
  bytes.subarray((n - 1) * ticket.partSize, Math.min(bytes.byteLength, n * ticket.partSize));

async function partUrls(ticket: Record<string, any>, bytes: Buffer, numbers: number[]) {
  const res = await api(`/v1/uploads/${ticket.uploadId}/parts`, {
    method: 'POST',
    body: JSON.stringify({ parts: numbers.map((n) => ({ partNumber: n, sha256: sha256(partOf(bytes, ticket, n)) })) }),
  });
  expect(res.status).toBe(200);
  return (await json(res)).parts as {
    partNumber: number;
    url: string;
    headers: Record<string, string>;
    sizeBytes: number;
  }[];
}

async function putParts(ticket: Record<string, any>, bytes: Buffer, numbers: number[]) {
  for (const p of await partUrls(ticket, bytes, numbers)) {
    const res = await fetch(p.url, {
      method: 'PUT',
      headers: p.headers,
      body: new Uint8Array(partOf(bytes, ticket, p.partNumber)),
    });
    expect(res.status, await res.text()).toBe(200);
  }
}

const complete = (id: string, body?: unknown) =>
  api(`/v1/uploads/${id}/complete`, { method: 'POST', ...(body === undefined ? {} : { body: JSON.stringify(body) }) });

async function keysUnder(prefix: string): Promise<string[]> {
  const client = testS3Client(target!);
  try {
    const out = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
    return (out.Contents ?? []).map((o) => o.Key!);
  } finally {
    client.destroy();
  }
}

async function openMultipartUploads(): Promise<string[]> {
  const client = testS3Client(target!);
  try {
    const out = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: 'mp/staging/' }));
    return (out.Uploads ?? []).map((u) => u.UploadId!);
  } finally {
    client.destroy();
  }
}

async function artifactCount(): Promise<number> {
  return ((await json(await api('/v1/artifacts?limit=100'))).items as unknown[]).length;
}

const until = async (what: string, check: () => boolean | Promise<boolean>, ms = 60_000) => {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

describeS3('direct uploads in parts', () => {
  beforeAll(async () => {
    const made = await createTestBucket(target!, 'parts');
    bucket = made.bucket;
    dropBucket = made.cleanup;
    dir = await mkdtemp(join(tmpdir(), 'artifact-parts-'));
    server = await startServer(loadConfig({}, s3ServiceSettings(target!, bucket, dir, PARTS_SETTINGS)));
    token = await server.mintToken({ tenant: 'acme', sub: 'u1', perms: ['read', 'write'] });
  });
  afterAll(async () => {
    await server?.close();
    await dropBucket?.();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('small uploads stay one PUT; above the threshold the ticket is in parts, each part straight to the bucket', async () => {
    const small = await begin(randomBytes(1000));
    expect(small).toMatchObject({ kind: 'put', method: 'PUT' });
    await api(`/v1/uploads/${small.uploadId}`, { method: 'DELETE' });

    const bytes = randomBytes(12 * MiB + 123);
    const ticket = await begin(bytes);
    expect(ticket).toMatchObject({ kind: 'multipart', sizeBytes: bytes.byteLength, partSize: PART, partCount: 3 });
    expect(ticket.url).toBeUndefined();
    // Out of order, as parallel clients send them.
    await putParts(ticket, bytes, [3, 1, 2]);
    const status = await json(await api(`/v1/uploads/${ticket.uploadId}`));
    expect(status.parts.map((p: { partNumber: number; sizeBytes: number }) => [p.partNumber, p.sizeBytes])).toEqual([
      [1, PART],
      [2, PART],
      [3, 2 * MiB + 123],
    ]);
    const done = await complete(ticket.uploadId);
    expect(done.status, await done.clone().text()).toBe(201);
    const ref = await json(done);
    expect(ref).toMatchObject({ sha256: sha256(bytes), sizeBytes: bytes.byteLength, filename: 'big.bin' });
    const back = Buffer.from(await (await api(`/v1/artifacts/${ref.id}`)).arrayBuffer());
    expect(sha256(back)).toBe(sha256(bytes));
    // A range across the parts' seam is byte-exact.
    const ranged = await api(`/v1/artifacts/${ref.id}`, { headers: { Range: `bytes=${PART - 10}-${PART + 9}` } });
    expect(ranged.status).toBe(206);
    expect(Buffer.from(await ranged.arrayBuffer())).toEqual(Buffer.from(bytes.subarray(PART - 10, PART + 10)));
    // Nothing is left staged, and the upload is over.
    expect(await keysUnder('mp/staging/parts/')).toEqual([]);
    expect(await openMultipartUploads()).toEqual([]);
    expect((await api(`/v1/uploads/${ticket.uploadId}`)).status).toBe(404);
  });

  it('a part that changed on the way is refused by the bucket itself, and the upload goes on', async () => {
    const bytes = randomBytes(9 * MiB);
    const ticket = await begin(bytes);
    const [one] = await partUrls(ticket, bytes, [1]);
    const corrupted = Buffer.from(partOf(bytes, ticket, 1));
    corrupted[12345]! ^= 0xff;
    const refused = await fetch(one!.url, { method: 'PUT', headers: one!.headers, body: corrupted });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toMatch(/XAmzContentSHA256Mismatch|BadDigest/);
    expect((await json(await api(`/v1/uploads/${ticket.uploadId}`))).parts).toEqual([]);
    await putParts(ticket, bytes, [1, 2]);
    const done = await complete(ticket.uploadId);
    expect(done.status).toBe(201);
    expect((await json(done)).sha256).toBe(sha256(bytes));
  });

  it('bad requests are 4xx with what to do, and commit nothing', async () => {
    const bytes = randomBytes(11 * MiB);
    const ticket = await begin(bytes);
    const before = await artifactCount();
    const expectRefused = async (res: Response, status: number, reason?: string) => {
      expect(res.status).toBe(status);
      const body = await json(res);
      expect(body.code).toBeTypeOf('string');
      expect(body.message).toBeTypeOf('string');
      if (reason) expect(body.details?.reason).toBe(reason);
      return body;
    };
    // A part number past the ticket, or below 1.
    for (const n of [4, 0, 10_001])
      await expectRefused(
        await api(`/v1/uploads/${ticket.uploadId}/parts`, {
          method: 'POST',
          body: JSON.stringify({ parts: [{ partNumber: n, sha256: sha256(bytes) }] }),
        }),
        400,
        'part_out_of_range',
      );
    // A part's sha256 that is no sha256.
    await expectRefused(
      await api(`/v1/uploads/${ticket.uploadId}/parts`, {
        method: 'POST',
        body: JSON.stringify({ parts: [{ partNumber: 1, sha256: 'nope' }] }),
      }),
      400,
    );
    await putParts(ticket, bytes, [1, 3]);
    // Complete with a part missing: 400, the upload stays open and says which.
    const missing = await expectRefused(await complete(ticket.uploadId), 400, 'parts_missing');
    expect(missing.details.missing).toEqual([2]);
    // Parts listed out of order, twice, or past the ticket.
    await expectRefused(
      await complete(ticket.uploadId, { parts: [{ partNumber: 2 }, { partNumber: 1 }, { partNumber: 3 }] }),
      400,
      'parts_out_of_order',
    );
    await expectRefused(
      await complete(ticket.uploadId, { parts: [{ partNumber: 1 }, { partNumber: 1 }, { partNumber: 3 }] }),
      400,
      'parts_out_of_order',
    );
    await expectRefused(
      await complete(ticket.uploadId, { parts: [{ partNumber: 1 }, { partNumber: 3 }, { partNumber: 4 }] }),
      400,
      'part_out_of_range',
    );
    await expectRefused(await complete(ticket.uploadId, { parts: 'all' }), 400);
    expect(await artifactCount()).toBe(before);
    // Everything is still there to finish.
    await putParts(ticket, bytes, [2]);
    const status = await json(await api(`/v1/uploads/${ticket.uploadId}`));
    const listed = status.parts.map((p: { partNumber: number; etag: string }) => ({
      partNumber: p.partNumber,
      etag: p.etag,
    }));
    // A list that leaves a part out, though the bucket holds it.
    const short = await expectRefused(
      await complete(ticket.uploadId, { parts: [listed[0], listed[2]] }),
      400,
      'parts_missing',
    );
    expect(short.details.missing).toEqual([2]);
    // An ETag the bucket does not hold for that part.
    await expectRefused(
      await complete(ticket.uploadId, { parts: [{ ...listed[0], etag: '"0"' }, ...listed.slice(1)] }),
      400,
      'part_mismatch',
    );
    expect((await complete(ticket.uploadId, { parts: listed })).status).toBe(201);
    expect(await artifactCount()).toBe(before + 1);
  });

  it('parts of other bytes than the declared sha256 are refused at complete: 422, nothing kept', async () => {
    const bytes = randomBytes(9 * MiB);
    const other = Buffer.from(bytes);
    other[7 * MiB]! ^= 1;
    const before = await artifactCount();
    const ticket = await begin(bytes);
    // Each part is what its own URL was signed for, but together they are not the declared file.
    await putParts(ticket, other, [1, 2]);
    const refused = await complete(ticket.uploadId);
    expect(refused.status).toBe(422);
    expect((await json(refused)).code).toBe('checksum_mismatch');
    expect(await artifactCount()).toBe(before);
    expect(await keysUnder('mp/staging/parts/')).toEqual([]);
    expect((await api(`/v1/uploads/${ticket.uploadId}`)).status).toBe(404);
  });

  it("another tenant's or scope's upload id is 404, like one that never was", async () => {
    const bytes = randomBytes(9 * MiB);
    const ticket = await begin(bytes);
    const other = await server.mintToken({ tenant: 'globex', sub: 'u1', perms: ['read', 'write'] });
    const otherSession = await server.mintToken({
      tenant: 'acme',
      sub: 'u1',
      session: 's-x',
      perms: ['read', 'write'],
    });
    for (const as of [other, otherSession]) {
      expect((await api(`/v1/uploads/${ticket.uploadId}`, {}, as)).status).toBe(404);
      expect(
        (
          await api(
            `/v1/uploads/${ticket.uploadId}/parts`,
            { method: 'POST', body: JSON.stringify({ parts: [{ partNumber: 1, sha256: sha256(bytes) }] }) },
            as,
          )
        ).status,
      ).toBe(404);
      expect((await api(`/v1/uploads/${ticket.uploadId}/complete`, { method: 'POST' }, as)).status).toBe(404);
      expect((await api(`/v1/uploads/${ticket.uploadId}`, { method: 'DELETE' }, as)).status).toBe(404);
    }
    expect((await api(`/v1/uploads/${ticket.uploadId}`, { method: 'DELETE' })).status).toBe(204);
    expect((await api(`/v1/uploads/${ticket.uploadId}`)).status).toBe(404);
  });

  it('retention aborts an upload abandoned half way: the bucket drops its parts', async () => {
    const bytes = randomBytes(11 * MiB);
    const ticket = await begin(bytes);
    await putParts(ticket, bytes, [1]);
    const before = await openMultipartUploads();
    expect(before.length).toBeGreaterThan(0);
    const client = testS3Client(target!);
    try {
      const blobs = createS3BlobStore({ client, bucket, prefix: 'mp/' });
      const policies = policiesOf(loadConfig({}));
      // Within its day: left alone.
      expect((await runRetention({ repo: server.repo, blobs, policies, graceMs: 60_000 })).uploads.reaped).toBe(0);
      expect((await json(await api(`/v1/uploads/${ticket.uploadId}`))).parts).toHaveLength(1);
      // Past its day and the grace: aborted, its parts gone.
      const report = await runRetention({
        repo: server.repo,
        blobs,
        policies,
        graceMs: 60_000,
        now: () => Date.now() + 25 * 3_600_000,
      });
      expect(report.uploads.reaped).toBeGreaterThanOrEqual(1);
      expect(report.uploads.stagingFailed).toBe(0);
    } finally {
      client.destroy();
    }
    expect(await openMultipartUploads()).toEqual([]);
    expect((await api(`/v1/uploads/${ticket.uploadId}`)).status).toBe(404);
  });

  it('the SDK puts a file-backed Blob in parts, reports progress, and resumes from a record', async () => {
    const file = join(dir, 'sdk.bin');
    const bytes = randomBytes(17 * MiB + 5);
    await writeFile(file, bytes);
    const seen: number[] = [];
    const records = new Map<string, string>();
    const store = createHttpArtifactStore({
      baseUrl: server.url,
      token,
      uploads: { resume: records, onProgress: (p) => seen.push(p.sentBytes), concurrency: 2 },
    });
    const ref = await store.putBlob(await openAsBlob(file), { filename: 'sdk.bin' });
    expect(ref.sha256).toBe(sha256(bytes));
    expect(seen[0]).toBe(0);
    expect(seen.at(-1)).toBe(bytes.byteLength);
    expect([...seen].sort((a, b) => a - b)).toEqual(seen);
    // The record went with the upload.
    expect(records.size).toBe(0);

    // A record of an upload begun elsewhere: the SDK sends only the parts the bucket lacks.
    const other = randomBytes(16 * MiB);
    const ticket = await begin(other);
    await putParts(ticket, other, [2, 4]);
    records.set(`${server.url} ${sha256(other)} ${other.byteLength}`, ticket.uploadId);
    seen.length = 0;
    // A ByteSource (what the CLI hands it for a file: positioned reads), not a Blob.
    const resumed = await store.putBlob({
      size: other.byteLength,
      read: async (start, end) => other.subarray(start, end),
    });
    expect(resumed.sha256).toBe(sha256(other));
    expect(seen[0]).toBe(PART + MiB);
    expect(records.size).toBe(0);
  });

  it('`put --resume` killed after half its parts resumes in a new process and sends only the rest', async () => {
    const proxy = await requestGate(
      target!.endpoint,
      (req) => req.method === 'PUT' && /[?&]partNumber=/.test(req.url ?? ''),
    );
    const gatedDir = await mkdtemp(join(tmpdir(), 'artifact-parts-gated-'));
    const gated = await startServer(
      loadConfig({}, s3ServiceSettings(target!, bucket, gatedDir, { ...PARTS_SETTINGS, s3Endpoint: proxy.url })),
    );
    const records = join(dir, 'uploads.json');
    const file = join(dir, 'cli.bin');
    const bytes = randomBytes(8 * PART);
    await writeFile(file, bytes);
    const own = await gated.mintToken({ tenant: 'acme', sub: 'u1', perms: ['read', 'write'] });
    const put = () =>
      spawnCli(['put', file, '--resume', '-q', '--url', gated.url, '--token', own], {
        ARTIFACT_STORE_RESUME_FILE: records,
      });
    try {
      proxy.gate.passAfter = 4;
      const first = put();
      // Four parts answered, and the fifth held: the process dies with half its parts uploaded.
      await until('half the parts', () => proxy.gate.passed() >= 4 && proxy.gate.held() >= 1);
      await stopProcess(first.proc, { signal: 'SIGKILL' });
      await first.exited;
      proxy.open();
      const uploadId = Object.values(JSON.parse(await readFile(records, 'utf8')) as Record<string, string>)[0]!;
      const held = await json(await api(`/v1/uploads/${uploadId}`, {}, own, gated.url));
      expect(held.parts, JSON.stringify(held) + first.output()).toHaveLength(4);

      const second = put();
      expect(await second.exited, second.output()).toBe(0);
      expect(second.output()).toContain(`resuming upload ${uploadId}: 20 MiB of 40 MiB already uploaded`);
      // Only the four parts the bucket lacked went again.
      expect(proxy.gate.passed()).toBe(8);
      const id = second.output().match(/^(art_\S+)$/m)![1]!;
      const back = Buffer.from(await (await api(`/v1/artifacts/${id}`, {}, own, gated.url)).arrayBuffer());
      expect(sha256(back)).toBe(sha256(bytes));
      expect(JSON.parse(await readFile(records, 'utf8'))).toEqual({});
    } finally {
      proxy.open();
      await gated.close();
      await proxy.close();
      await rm(gatedDir, { recursive: true, force: true });
    }
  });
});
