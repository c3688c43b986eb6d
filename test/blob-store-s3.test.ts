import { generateKeyPairSync, randomBytes, randomUUID, verify } from 'node:crypto';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateMultipartUploadCommand,
  DeleteObjectsCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nodeSha256 } from '../src/blob/node-hash.js';
import { createS3BlobStore, createS3Client } from '../src/blob/s3.js';
import { createSqliteRepository } from '../src/db/sqlite.js';
import { createArtifactService } from '../src/service/artifact-service.js';
import { describeBlobStoreContract } from './blob-store.contract.js';
import { expectArtifactError } from './helpers/artifact-errors.js';
import { bytesStream, failingStream, readAll, sha256Of } from './helpers/streams.js';
import { createTestBucket, describeS3, s3TestTarget } from './helpers/s3.js';

const MiB = 1024 * 1024;
const target = s3TestTarget();

let client: S3Client;
let bucket: string;
let dropBucket: (() => Promise<void>) | undefined;

const clientFor = (endpoint = target!.endpoint, secret = target!.secretAccessKey) =>
  createS3Client({
    region: target!.region,
    endpoint,
    forcePathStyle: target!.forcePathStyle,
    accessKeyId: target!.accessKeyId,
    secretAccessKey: secret,
  });

/** Keys under a prefix (all pages). */
async function keysUnder(prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    for (const o of page.Contents ?? []) keys.push(o.Key!);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys.sort();
}

async function removeUnder(prefix: string): Promise<void> {
  const keys = await keysUnder(prefix);
  for (let i = 0; i < keys.length; i += 1000) {
    await client.send(
      new DeleteObjectsCommand({
        Bucket: bucket,
        Delete: { Objects: keys.slice(i, i + 1000).map((Key) => ({ Key })) },
      }),
    );
  }
}

describeS3('S3 blob store', () => {
  beforeAll(async () => {
    client = clientFor();
    const made = await createTestBucket(target!, 'blobs');
    bucket = made.bucket;
    dropBucket = made.cleanup;
  });

  afterAll(async () => {
    await dropBucket?.();
    client?.destroy();
  });

  // The same contract as fs and memory; each test gets its own key prefix in the shared bucket.
  describeBlobStoreContract(`s3 (${target?.name ?? 'no target'})`, async () => {
    const prefix = `contract-${randomUUID()}/`;
    return {
      store: createS3BlobStore({ client, bucket, prefix, hash: nodeSha256 }),
      cleanup: () => removeUnder(prefix),
    };
  });

  describe('purge with a CDN', () => {
    it('deletes the object and invalidates its CDN path, unless another tenant holds the bytes', async () => {
      const prefix = `purge-${randomUUID()}/`;
      const invalidated: string[][] = [];
      const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const blobs = createS3BlobStore({
        client,
        bucket,
        prefix,
        cdn: {
          url: 'https://cdn.example.com/media',
          keyPairId: 'K1',
          privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
          invalidate: async (paths) => void invalidated.push(paths),
        },
      });
      const dir = mkdtempSync(join(tmpdir(), 'artifact-purge-'));
      const repo = createSqliteRepository({ path: join(dir, 'artifacts.db') });
      const service = createArtifactService({
        repo,
        blobs,
        limits: { maxArtifactBytes: MiB, defaultTtlSeconds: 3600, maxTtlSeconds: 3600, touchFlushMs: 0 },
      });
      try {
        const mine = await service.putBytes({ tenantId: 'acme' }, randomBytes(1000));
        expect(await service.purge('acme', mine.ref.id)).toEqual({ refs: 1, bytesDeleted: true, cdnInvalidated: true });
        expect(invalidated).toEqual([
          [
            `/media/${prefix}blobs/sha256/${mine.ref.sha256.slice(0, 2)}/${mine.ref.sha256.slice(2, 4)}/${mine.ref.sha256}`,
          ],
        ]);
        expect(await blobs.exists(mine.ref.sha256)).toBe(false);

        const shared = randomBytes(1000);
        const ours = await service.putBytes({ tenantId: 'acme' }, shared);
        await service.putBytes({ tenantId: 'other' }, shared);
        expect(await service.purge('acme', ours.ref.id)).toEqual({ refs: 1, bytesDeleted: false });
        expect(invalidated).toHaveLength(1);
        expect(await blobs.exists(ours.ref.sha256)).toBe(true);
      } finally {
        await service.close();
        await repo.close();
        rmSync(dir, { recursive: true, force: true });
        await removeUnder(prefix);
      }
    });
  });

  describe('layout and staging', () => {
    it('sweepStaging removes staging objects and multipart uploads older than the cut-off, and nothing else', async () => {
      const prefix = `sweep-${randomUUID()}/`;
      const store = createS3BlobStore({ client, bucket, prefix });
      const { sha256 } = await store.put(bytesStream(randomBytes(1000)));
      await client.send(
        new PutObjectCommand({ Bucket: bucket, Key: `${prefix}staging/left-behind`, Body: randomBytes(700) }),
      );
      await client.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: `${prefix}staging/died-mid-stream` }));
      // Cut-off an hour ago: everything here is newer, so nothing goes.
      expect(await store.sweepStaging!(Date.now() - 3_600_000)).toEqual({ removed: 0, bytes: 0 });
      expect(await keysUnder(`${prefix}staging/`)).toEqual([`${prefix}staging/left-behind`]);
      // Cut-off in the future (clock skew aside): both leftovers go, the blob stays.
      expect(await store.sweepStaging!(Date.now() + 3_600_000)).toEqual({ removed: 2, bytes: 700 });
      expect(await keysUnder(`${prefix}staging/`)).toEqual([]);
      const uploads = await client.send(
        new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: `${prefix}staging/` }),
      );
      expect(uploads.Uploads ?? []).toEqual([]);
      expect(await store.exists(sha256)).toBe(true);
      await removeUnder(prefix);
    });

    it('commits at {prefix}blobs/sha256/ab/cd/{hex} and leaves nothing in staging', async () => {
      const prefix = `layout-${randomUUID()}/`;
      const store = createS3BlobStore({ client, bucket, prefix });
      const bytes = randomBytes(100_000);
      const { sha256 } = await store.put(bytesStream(bytes));
      expect(await keysUnder(prefix)).toEqual([
        `${prefix}blobs/sha256/${sha256.slice(0, 2)}/${sha256.slice(2, 4)}/${sha256}`,
      ]);
      // A second put of the same bytes finds the blob and leaves the layout as it was.
      await store.put(bytesStream(bytes));
      expect(await keysUnder(prefix)).toHaveLength(1);
      await removeUnder(prefix);
    });

    it('refused bodies leave nothing behind: too large, wrong sha256, empty, failing mid-way', async () => {
      const prefix = `refused-${randomUUID()}/`;
      const store = createS3BlobStore({ client, bucket, prefix, partSize: 5 * MiB });
      await expectArtifactError(
        store.put(bytesStream(randomBytes(12 * MiB)), { maxBytes: 6 * MiB }),
        'payload_too_large',
      );
      await expectArtifactError(
        store.put(bytesStream(randomBytes(1000)), { expectedSha256: sha256Of(randomBytes(8)) }),
        'checksum_mismatch',
      );
      await expectArtifactError(
        store.put(bytesStream(new Uint8Array(0)), { expectedSha256: sha256Of(randomBytes(8)) }),
        'checksum_mismatch',
      );
      await expect(
        store.put(failingStream([randomBytes(3 * MiB), randomBytes(3 * MiB)], new Error('client went away'))),
      ).rejects.toThrow('client went away');
      expect(await keysUnder(prefix)).toEqual([]);
    });

    it('a declared sha256 goes straight to the final key, and wrong bytes never complete there', async () => {
      for (const size of [1000, 12 * MiB + 3]) {
        const prefix = `declared-${randomUUID()}/`;
        const store = createS3BlobStore({ client, bucket, prefix, partSize: 5 * MiB });
        const bytes = randomBytes(size);
        const sha = sha256Of(bytes);
        // Other bytes under this hash: refused, no object, no multipart upload left open.
        await expectArtifactError(
          store.put(bytesStream(randomBytes(size)), { expectedSha256: sha }),
          'checksum_mismatch',
        );
        expect(await keysUnder(prefix)).toEqual([]);
        const open = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix }));
        expect(open.Uploads ?? []).toEqual([]);
        // The right bytes: the final key and nothing else (no staging copy).
        expect(await store.put(bytesStream(bytes), { expectedSha256: sha })).toEqual({ sha256: sha, sizeBytes: size });
        expect(await keysUnder(prefix)).toEqual([store.keyOf(sha)]);
        // Wrong bytes declared as an existing blob: refused, and the stored blob is untouched.
        await expectArtifactError(
          store.put(bytesStream(randomBytes(size)), { expectedSha256: sha }),
          'checksum_mismatch',
        );
        expect(Buffer.from(await readAll((await store.get(sha))!)).equals(bytes)).toBe(true);
        // The same bytes again: accepted without writing.
        expect(await store.put(bytesStream(bytes), { expectedSha256: sha })).toEqual({ sha256: sha, sizeBytes: size });
        await removeUnder(prefix);
      }
    });

    it('copies above maxSingleCopyBytes as a multipart copy, byte for byte', async () => {
      const prefix = `mpcopy-${randomUUID()}/`;
      const store = createS3BlobStore({
        client,
        bucket,
        prefix,
        partSize: 5 * MiB,
        maxSingleCopyBytes: 6 * MiB,
        copyPartBytes: 5 * MiB,
      });
      const bytes = randomBytes(12 * MiB + 11);
      const { sha256 } = await store.put(bytesStream(bytes, 1 * MiB));
      expect(Buffer.from(await readAll((await store.get(sha256))!)).equals(bytes)).toBe(true);
      expect(await keysUnder(`${prefix}staging/`)).toEqual([]);
      await removeUnder(prefix);
    });
  });

  describe('backend failures are backend_unavailable (503), never a wrong answer', () => {
    it('wrong credentials: the server checks the signature and the driver says access denied', async () => {
      const bad = clientFor(target!.endpoint, 'not-the-secret');
      const store = createS3BlobStore({ client: bad, bucket });
      const err = await expectArtifactError(store.put(bytesStream(randomBytes(100))), 'backend_unavailable');
      expect(err.message).toMatch(/access denied|signature/i);
      await expectArtifactError(store.get(sha256Of(randomBytes(4))), 'backend_unavailable');
      bad.destroy();
    });

    it('the backend going away mid-upload fails the put with 503 and commits no metadata', async () => {
      // A TCP relay in front of the real server, cut while the upload is in flight.
      const upstream = new URL(target!.endpoint);
      const sockets = new Set<Socket>();
      const relay: Server = createServer((inbound) => {
        const outbound = connect(Number(upstream.port || 80), upstream.hostname);
        for (const s of [inbound, outbound]) {
          sockets.add(s);
          s.on('error', () => {});
          s.on('close', () => sockets.delete(s));
        }
        inbound.pipe(outbound).pipe(inbound);
      });
      await new Promise<void>((ok) => relay.listen(0, '127.0.0.1', ok));
      const port = (relay.address() as { port: number }).port;
      const relayed = clientFor(`http://127.0.0.1:${port}`);
      relayed.config.maxAttempts = async () => 1;
      const prefix = `cut-${randomUUID()}/`;
      const blobs = createS3BlobStore({ client: relayed, bucket, prefix, partSize: 5 * MiB, queueSize: 1 });
      const dir = mkdtempSync(join(tmpdir(), 's3-cut-'));
      const repo = createSqliteRepository({ path: join(dir, 'a.db') });
      const service = createArtifactService({
        repo,
        blobs,
        limits: { maxArtifactBytes: 64 * MiB, defaultTtlSeconds: 3600, maxTtlSeconds: 86400, touchFlushMs: 0 },
      });
      try {
        let sent = 0;
        const body = new ReadableStream<Uint8Array>({
          async pull(controller) {
            if (sent >= 30 * MiB) return controller.close();
            if (sent === 12 * MiB) {
              // Two parts are out: stop the backend.
              relay.close();
              for (const s of sockets) s.destroy();
            }
            controller.enqueue(randomBytes(MiB));
            sent += MiB;
          },
        });
        await expectArtifactError(service.putStream({ tenantId: 'acme' }, body), 'backend_unavailable');
        expect((await service.list({ tenantId: 'acme', filter: {} }, {})).items).toEqual([]);
        expect(await keysUnder(`${prefix}blobs/`)).toEqual([]);
      } finally {
        relay.close();
        relayed.destroy();
        await service.close();
        await repo.close();
        rmSync(dir, { recursive: true, force: true });
        await removeUnder(prefix);
      }
    });
  });
});

describe('direct links through CloudFront', () => {
  it('are CloudFront signed URLs for the blob key, carrying the response headers, valid for the key pair', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    // No request reaches S3 for a CDN link: any client will do.
    const offline = createS3Client({
      region: 'us-east-1',
      endpoint: 'http://127.0.0.1:1',
      accessKeyId: 'x',
      secretAccessKey: 'y',
    });
    const store = createS3BlobStore({
      client: offline,
      bucket: 'b',
      prefix: 'p/',
      cdn: {
        url: 'https://d111.cloudfront.net/',
        keyPairId: 'K2JCJMDEHXQW5F',
        privateKey: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
      },
    });
    const sha = sha256Of(randomBytes(8));
    const before = Math.floor(Date.now() / 1000);
    const signed = new URL(
      await store.presignGet!(sha, {
        expiresInSeconds: 600,
        contentType: 'application/pdf',
        contentDisposition: 'attachment; filename="a.pdf"',
      }),
    );
    offline.destroy();
    expect(`${signed.origin}${signed.pathname}`).toBe(
      `https://d111.cloudfront.net/p/blobs/sha256/${sha.slice(0, 2)}/${sha.slice(2, 4)}/${sha}`,
    );
    expect(signed.searchParams.get('response-content-type')).toBe('application/pdf');
    expect(signed.searchParams.get('response-content-disposition')).toBe('attachment; filename="a.pdf"');
    expect(signed.searchParams.get('Key-Pair-Id')).toBe('K2JCJMDEHXQW5F');
    const expires = Number(signed.searchParams.get('Expires'));
    expect(expires - before).toBeGreaterThanOrEqual(599);
    expect(expires - before).toBeLessThanOrEqual(601);
    // The canned policy CloudFront checks: this exact resource (query included) until Expires, RSA-SHA1.
    const resource = new URL(signed);
    for (const p of ['Expires', 'Key-Pair-Id', 'Signature']) resource.searchParams.delete(p);
    const policy = JSON.stringify({
      Statement: [{ Resource: resource.toString(), Condition: { DateLessThan: { 'AWS:EpochTime': expires } } }],
    });
    const signature = Buffer.from(
      signed.searchParams.get('Signature')!.replace(/-/g, '+').replace(/_/g, '=').replace(/~/g, '/'),
      'base64',
    );
    expect(verify('RSA-SHA1', Buffer.from(policy), publicKey, signature)).toBe(true);
    expect(verify('RSA-SHA1', Buffer.from(policy.replace(sha, sha256Of(randomBytes(8)))), publicKey, signature)).toBe(
      false,
    );
  });
});
