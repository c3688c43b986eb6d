/**
 * Downloads through the service on the S3 driver, where the Node server pipes S3's response into the
 * client's (src/blob/node-body.ts): byte-exact for the whole object and for ranges of an object S3
 * holds as a multipart upload, across its part boundaries, and a client that leaves mid-body costs
 * the service neither its next answer nor the connection to S3.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { blobKeyLayout } from '../src/blob/blob-keys.js';
import { loadConfig, startServer, type RunningServer } from '../src/node.js';
import { createTestBucket, describeS3, s3ServiceSettings, s3TestTarget, testS3Client } from './helpers/s3.js';

const target = s3TestTarget();
const MiB = 1024 * 1024;
/** The S3 driver's part size (src/blob/s3.ts): a put longer than one part is a multipart upload. */
const PART = 8 * MiB;
/** Three parts, the last one short. */
const bytes = randomBytes(2 * PART + 3 * MiB + 4321);
const sha256 = createHash('sha256').update(bytes).digest('hex');

/** GET with node:http: status, headers and the whole body. */
function get(url: string, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>((ok, fail) => {
    http
      .get(url, { agent: false, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => ok({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', fail);
      })
      .on('error', fail);
  });
}

describeS3('downloads through the service on the S3 driver', () => {
  let server: RunningServer;
  let dir: string;
  let bucket: string;
  let dropBucket: (() => Promise<void>) | undefined;
  let auth: Record<string, string>;
  let url: string;

  beforeAll(async () => {
    const made = await createTestBucket(target!, 'downloads');
    bucket = made.bucket;
    dropBucket = made.cleanup;
    dir = await mkdtemp(join(tmpdir(), 'artifact-s3-downloads-'));
    server = await startServer(loadConfig({}, s3ServiceSettings(target!, bucket, dir, { maxArtifactBytes: 64 * MiB })));
    auth = {
      Authorization: `Bearer ${await server.mintToken({ tenant: 'acme', sub: 'u1', perms: ['read', 'write'] })}`,
    };
    // With its sha256 declared, a body longer than one part is a multipart upload to its final key.
    const put = await fetch(`${server.url}/v1/artifacts`, {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/octet-stream', 'X-Artifact-Sha256': sha256 },
      body: bytes,
    });
    expect(put.status).toBe(201);
    url = `${server.url}/v1/artifacts/${((await put.json()) as { id: string }).id}`;
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await dropBucket?.();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('stores the body as a multipart object of three parts', async () => {
    const client = testS3Client(target!);
    try {
      const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key: blobKeyLayout('').blobKey(sha256) }));
      // A multipart object's ETag is the hash of its parts' hashes, "-" and the number of parts.
      expect(head.ETag).toMatch(/-3"$/);
      expect(head.ContentLength).toBe(bytes.length);
    } finally {
      client.destroy();
    }
  });

  it('serves the whole object byte for byte', async () => {
    const res = await get(url, auth);
    expect(res.status).toBe(200);
    expect(res.headers['content-length']).toBe(String(bytes.length));
    expect(res.body.equals(bytes)).toBe(true);
  });

  it('serves ranges across the part boundaries byte for byte', async () => {
    const last = bytes.length - 1;
    const asked: [string, number, number][] = [
      [`bytes=${PART - 1}-${PART}`, PART - 1, PART],
      [`bytes=${PART - 1000}-${PART + 1000}`, PART - 1000, PART + 1000],
      [`bytes=${PART}-${2 * PART - 1}`, PART, 2 * PART - 1],
      [`bytes=${PART - 5}-${2 * PART + 5}`, PART - 5, 2 * PART + 5],
      [`bytes=${2 * PART - 1}-${2 * PART}`, 2 * PART - 1, 2 * PART],
      [`bytes=${3}-${last - 3}`, 3, last - 3],
      [`bytes=${2 * PART - 70_000}-`, 2 * PART - 70_000, last],
      [`bytes=-${3 * MiB + 4321 + 1}`, 2 * PART - 1, last],
    ];
    for (const [range, start, end] of asked) {
      const res = await get(url, { ...auth, Range: range });
      expect(res.status, range).toBe(206);
      expect(res.headers['content-range'], range).toBe(`bytes ${start}-${end}/${bytes.length}`);
      expect(res.body.length, range).toBe(end - start + 1);
      expect(res.body.equals(bytes.subarray(start, end + 1)), range).toBe(true);
    }
  });

  it('answers whole after clients left mid-body', async () => {
    for (let i = 0; i < 3; i++) {
      await new Promise<void>((ok) => {
        const req = http.get(url, { agent: false, headers: auth }, (res) => {
          res.once('data', () => {
            req.destroy();
            ok();
          });
        });
        req.on('error', () => ok());
      });
    }
    const res = await get(url, auth);
    expect(res.body.equals(bytes)).toBe(true);
  });
});
