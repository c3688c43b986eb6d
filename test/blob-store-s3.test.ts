import { generateKeyPairSync, randomBytes, randomUUID, verify } from 'node:crypto';
import { createServer as createHttpServer } from 'node:http';
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
import { createS3BlobStore } from '../src/blob/s3.js';
import { createS3Client } from '../src/blob/s3-client.js';
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

  describe('one hash per byte: the backend checks what the service does not', () => {
    /** A store whose hash counts the bytes it is fed, on a client that records every request it sends. */
    function watched(prefix: string, partSize = 5 * MiB) {
      const sent: { command: string; key: string; payloadHash: string; status: number }[] = [];
      const watchedClient = clientFor();
      watchedClient.middlewareStack.add(
        (next, context) => async (args) => {
          const request = args.request as { path: string; headers: Record<string, string> };
          const entry = {
            command: String(context.commandName).replace(/Command$/, ''),
            key: decodeURIComponent(request.path).replace(`/${bucket}/`, ''),
            payloadHash: request.headers['x-amz-content-sha256'] ?? '',
            status: 0,
          };
          sent.push(entry);
          // Inside the SDK's deserializer: the raw response, before an error status becomes a throw.
          const out = await next(args);
          entry.status = (out.response as { statusCode: number }).statusCode;
          return out;
        },
        { step: 'deserialize', name: 'recordRequests' },
      );
      let hashed = 0;
      const store = createS3BlobStore({
        client: watchedClient,
        bucket,
        prefix,
        partSize,
        hash: () => {
          const h = nodeSha256();
          return {
            update: (chunk) => {
              hashed += chunk.byteLength;
              h.update(chunk);
            },
            digest: () => h.digest(),
          };
        },
      });
      return {
        store,
        sent,
        hashed: () => hashed,
        reset() {
          sent.length = 0;
          hashed = 0;
        },
        close: () => watchedClient.destroy(),
      };
    }

    it('a small body under a declared sha256 is hashed by the backend alone, which refuses other bytes', async () => {
      const prefix = `hash-once-${randomUUID()}/`;
      const w = watched(prefix);
      const bytes = randomBytes(300_000);
      const sha = sha256Of(bytes);
      const tampered = Buffer.from(bytes);
      tampered[150_000]! ^= 1;
      try {
        // Warms the one-time check of the backend, then starts counting.
        const warm = randomBytes(10);
        await w.store.put(bytesStream(warm), { expectedSha256: sha256Of(warm) });
        await removeUnder(prefix);
        w.reset();

        // Other bytes of the same size under the hash: sent once, signed with the declared hash, and
        // the backend refuses them. The service hashes them only to say what they hash to.
        const refused = await expectArtifactError(
          w.store.put(bytesStream(tampered), { expectedSha256: sha }),
          'checksum_mismatch',
        );
        expect(refused.details).toEqual({ expected: sha, actual: sha256Of(tampered) });
        expect(w.sent.filter((r) => r.command === 'PutObject')).toEqual([
          { command: 'PutObject', key: w.store.keyOf(sha), payloadHash: sha, status: 400 },
        ]);
        expect(await keysUnder(prefix)).toEqual([]);

        // The right bytes: one PutObject to the final key, signed with the declared hash, and not one
        // byte hashed in the service.
        w.reset();
        expect(await w.store.put(bytesStream(bytes), { expectedSha256: sha })).toEqual({
          sha256: sha,
          sizeBytes: bytes.byteLength,
        });
        expect(w.hashed()).toBe(0);
        expect(w.sent.map((r) => [r.command, r.key, r.status])).toEqual([
          ['HeadObject', w.store.keyOf(sha), 404],
          ['PutObject', w.store.keyOf(sha), 200],
        ]);
        expect(w.sent[1]!.payloadHash).toBe(sha);
        expect(Buffer.from(await readAll((await w.store.get(sha))!)).equals(bytes)).toBe(true);

        // Already stored: nothing is uploaded, so the service checks, and refuses the tampered bytes.
        w.reset();
        await expectArtifactError(w.store.put(bytesStream(tampered), { expectedSha256: sha }), 'checksum_mismatch');
        expect(w.sent.map((r) => r.command)).toEqual(['HeadObject']);
        expect(w.hashed()).toBe(bytes.byteLength);
        expect(Buffer.from(await readAll((await w.store.get(sha))!)).equals(bytes)).toBe(true);

        // An empty body under another hash: RGW 16 does not check empty bodies, so the service does.
        w.reset();
        await expectArtifactError(
          w.store.put(bytesStream(new Uint8Array(0)), { expectedSha256: sha256Of(tampered) }),
          'checksum_mismatch',
        );
        expect(w.sent).toEqual([]);
        expect(await keysUnder(prefix)).toEqual([w.store.keyOf(sha)]);
      } finally {
        w.close();
        await removeUnder(prefix);
      }
    });

    it('a small body without a sha256 is hashed once by the service and signed with it: no staging, no copy', async () => {
      const prefix = `hash-once-plain-${randomUUID()}/`;
      const w = watched(prefix);
      const bytes = randomBytes(1 * MiB + 5);
      const sha = sha256Of(bytes);
      try {
        expect(await w.store.put(bytesStream(bytes))).toEqual({ sha256: sha, sizeBytes: bytes.byteLength });
        expect(w.hashed()).toBe(bytes.byteLength);
        expect(w.sent.map((r) => [r.command, r.key, r.status])).toEqual([
          ['HeadObject', w.store.keyOf(sha), 404],
          ['PutObject', w.store.keyOf(sha), 200],
        ]);
        expect(w.sent[1]!.payloadHash).toBe(sha);
        // Again: found, nothing uploaded.
        w.reset();
        await w.store.put(bytesStream(bytes));
        expect(w.sent.map((r) => r.command)).toEqual(['HeadObject']);
        expect(await keysUnder(prefix)).toEqual([w.store.keyOf(sha)]);
      } finally {
        w.close();
        await removeUnder(prefix);
      }
    });

    it('bytes changed between the service and the backend are refused there: 503, nothing stored', async () => {
      // A TCP relay that flips one byte 50,000 bytes into each connection: inside the PutObject's
      // body (the HEAD before it is a few hundred bytes), after the service hashed it.
      const upstream = new URL(target!.endpoint);
      const relay: Server = createServer((inbound) => {
        const outbound = connect(Number(upstream.port || 80), upstream.hostname);
        let seen = 0;
        for (const s of [inbound, outbound]) s.on('error', () => {});
        inbound.on('data', (chunk: Buffer) => {
          if (seen <= 50_000 && seen + chunk.length > 50_000) chunk[50_000 - seen]! ^= 1;
          seen += chunk.length;
          outbound.write(chunk);
        });
        inbound.on('end', () => outbound.end());
        outbound.pipe(inbound);
      });
      await new Promise<void>((ok) => relay.listen(0, '127.0.0.1', ok));
      const relayed = clientFor(`http://127.0.0.1:${(relay.address() as { port: number }).port}`);
      relayed.config.maxAttempts = async () => 1;
      const prefix = `flipped-${randomUUID()}/`;
      try {
        const store = createS3BlobStore({ client: relayed, bucket, prefix });
        const err = await expectArtifactError(store.put(bytesStream(randomBytes(200_000))), 'backend_unavailable');
        expect(err.message).toMatch(/XAmzContentSHA256Mismatch/);
        expect(await keysUnder(prefix)).toEqual([]);
      } finally {
        relayed.destroy();
        relay.close();
      }
    });

    it('multipart: each part is signed with its own hash, the service hashes the whole once, and other bytes never complete', async () => {
      const prefix = `hash-once-mp-${randomUUID()}/`;
      const w = watched(prefix, 5 * MiB);
      const bytes = randomBytes(11 * MiB + 7);
      const sha = sha256Of(bytes);
      const tampered = Buffer.from(bytes);
      tampered[bytes.byteLength - 1]! ^= 1;
      const partHashes = [0, 5 * MiB, 10 * MiB].map((at) => sha256Of(bytes.subarray(at, at + 5 * MiB)));
      try {
        // New, other bytes under the hash: every part goes up (the backend checks each against its
        // own hash), then the service's hash of the whole disagrees and the upload is aborted.
        await expectArtifactError(w.store.put(bytesStream(tampered), { expectedSha256: sha }), 'checksum_mismatch');
        expect(w.hashed()).toBe(bytes.byteLength);
        const parts = w.sent.filter((r) => r.command === 'UploadPart');
        expect(parts.length).toBeGreaterThan(0);
        for (const part of parts) expect(part.payloadHash).toMatch(/^[0-9a-f]{64}$/);
        expect(w.sent.map((r) => r.command)).not.toContain('CompleteMultipartUpload');
        expect(w.sent.map((r) => r.command)).toContain('AbortMultipartUpload');
        expect(await keysUnder(prefix)).toEqual([]);
        const open = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: prefix }));
        expect(open.Uploads ?? []).toEqual([]);

        // The right bytes: three parts, each signed with its own hash, completed at the final key.
        w.reset();
        expect(await w.store.put(bytesStream(bytes), { expectedSha256: sha })).toEqual({
          sha256: sha,
          sizeBytes: bytes.byteLength,
        });
        expect(w.hashed()).toBe(bytes.byteLength);
        expect(
          w.sent
            .filter((r) => r.command === 'UploadPart')
            .map((r) => r.payloadHash)
            .sort(),
        ).toEqual([...partHashes].sort());
        expect(await keysUnder(prefix)).toEqual([w.store.keyOf(sha)]);

        // Already stored: nothing goes up; the service hashes the body and refuses it.
        w.reset();
        await expectArtifactError(w.store.put(bytesStream(tampered), { expectedSha256: sha }), 'checksum_mismatch');
        expect(w.sent.map((r) => r.command)).toEqual(['HeadObject']);
        expect(Buffer.from(await readAll((await w.store.get(sha))!)).equals(bytes)).toBe(true);
      } finally {
        w.close();
        await removeUnder(prefix);
      }
    });

    it('direct uploads are signed with the declared sha256, so completing one reads nothing back', async () => {
      const prefix = `hash-once-direct-${randomUUID()}/`;
      const w = watched(prefix);
      const bytes = randomBytes(300_000);
      const sha = sha256Of(bytes);
      try {
        const staged = await w.store.direct.presignUpload({
          sizeBytes: bytes.byteLength,
          expiresInSeconds: 600,
          sha256: sha,
        });
        expect(staged.headers['x-amz-content-sha256']).toBe(sha);
        expect(staged.stagingKey.startsWith(`${prefix}staging/checked/`)).toBe(true);
        expect((await fetch(staged.url, { method: 'PUT', headers: staged.headers, body: bytes })).status).toBe(200);
        w.reset();
        expect(
          await w.store.direct.commitUpload(staged.stagingKey, { sizeBytes: bytes.byteLength, sha256: sha }),
        ).toEqual({
          sha256: sha,
          sizeBytes: bytes.byteLength,
        });
        expect(w.hashed()).toBe(0);
        expect(w.sent.map((r) => r.command)).toEqual(['HeadObject', 'HeadObject', 'CopyObject', 'DeleteObject']);
        expect(await keysUnder(prefix)).toEqual([w.store.keyOf(sha)]);
        expect(Buffer.from(await readAll((await w.store.get(sha))!)).equals(bytes)).toBe(true);

        // A staged object under a plain staging key (an upload presigned without the hash, as before
        // this signing, or on a backend that does not check) is still read back and hashed.
        const plainKey = `${prefix}staging/${randomUUID()}`;
        await client.send(new PutObjectCommand({ Bucket: bucket, Key: plainKey, Body: randomBytes(1000) }));
        w.reset();
        await expectArtifactError(
          w.store.direct.commitUpload(plainKey, { sizeBytes: 1000, sha256: sha256Of(randomBytes(8)) }),
          'checksum_mismatch',
        );
        expect(w.sent.map((r) => r.command)).toEqual(['GetObject', 'DeleteObject']);
        expect(w.hashed()).toBe(1000);
        expect(await keysUnder(`${prefix}staging/`)).toEqual([]);
      } finally {
        w.close();
        await removeUnder(prefix);
      }
    });

    it('on a backend that does not check payload hashes, the service hashes every body itself', async () => {
      // An "S3" that takes any PUT (s3rver, and some S3-compatible servers, check no signature):
      // the driver asks once, sees a wrong payload hash accepted, and stops relying on the backend.
      const received: string[] = [];
      const lax = createHttpServer((req, res) => {
        received.push(`${req.method} ${decodeURIComponent(req.url ?? '').replace(/\?.*$/, '')}`);
        req.resume();
        req.on('end', () => {
          if (req.method === 'PUT') res.writeHead(200, { ETag: '"0"' }).end();
          else if (req.method === 'DELETE') res.writeHead(204).end();
          else res.writeHead(404).end();
        });
      });
      await new Promise<void>((ok) => lax.listen(0, '127.0.0.1', ok));
      const laxClient = clientFor(`http://127.0.0.1:${(lax.address() as { port: number }).port}`);
      try {
        const store = createS3BlobStore({ client: laxClient, bucket: 'lax' });
        const bytes = randomBytes(2000);
        const sha = sha256Of(bytes);
        await expectArtifactError(
          store.put(bytesStream(randomBytes(2000)), { expectedSha256: sha }),
          'checksum_mismatch',
        );
        // The probe went to a staging key and was removed; the tampered bytes were never sent.
        expect(received).toHaveLength(2);
        expect(received[0]).toMatch(/^PUT \/lax\/staging\/payload-check-/);
        expect(received[1]).toBe(received[0]!.replace(/^PUT/, 'DELETE'));
        // Right bytes still go up, checked by the service.
        received.length = 0;
        expect(await store.put(bytesStream(bytes), { expectedSha256: sha })).toEqual({ sha256: sha, sizeBytes: 2000 });
        expect(received).toEqual([`HEAD /lax/${store.keyOf(sha)}`, `PUT /lax/${store.keyOf(sha)}`]);
        // Direct uploads are not signed with the hash there: completing one reads it back and hashes it.
        const staged = await store.direct.presignUpload({ sizeBytes: 2000, expiresInSeconds: 600, sha256: sha });
        expect(staged.headers).toEqual({ 'Content-Type': 'application/octet-stream' });
        expect(staged.stagingKey).not.toContain('staging/checked/');
      } finally {
        laxClient.destroy();
        lax.close();
      }
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
      await store.direct.presignGet(sha, {
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
