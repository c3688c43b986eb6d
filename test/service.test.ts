import { execFile } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { beforeEach, describe, expect, it } from 'vitest';
import { createFsBlobStore } from '../src/blob/fs.js';
import { ArtifactError } from '../src/core/errors.js';
import { artifactId } from '../src/core/ids.js';
import { parseRange } from '../src/core/range.js';
import type { ArtifactRef, ArtifactScope } from '../src/core/schemas.js';
import { createSqliteRepository } from '../src/db/sqlite.js';
import { createCheckpointer, type CheckpointResult } from '../src/db/sqlite/checkpointer.js';
import { openSqlite } from '../src/db/sqlite/connection.js';
import { loadConfig } from '../src/core/config.js';
import { sqliteOptions } from '../src/node/sqlite-options.js';
import {
  createArtifactService,
  type Access,
  type ArtifactService,
  type ServiceLimits,
} from '../src/service/artifact-service.js';
import { expectArtifactError } from './helpers/artifact-errors.js';
import { createServiceHarness, HARNESS_T0, type ServiceHarness } from './helpers/service-harness.js';
import { bytesStream, failingStream, readAll, sha256Of } from './helpers/streams.js';

const T0 = HARNESS_T0;
const iso = (ms: number) => new Date(ms).toISOString();

const LIMITS: ServiceLimits = {
  maxArtifactBytes: 4 * 1024 * 1024,
  defaultTtlSeconds: 3600,
  maxTtlSeconds: 86_400,
  touchFlushMs: 0,
};

type Harness = ServiceHarness;

/** A service over a temp folder at T0 (test/helpers/service-harness.ts), closed when the test ends. */
const createHarness = (limits: Partial<ServiceLimits> = {}): Promise<Harness> =>
  createServiceHarness({ limits: { ...LIMITS, ...limits } });

const tenant = (tenantId: string): Access => ({ tenantId, filter: {} });
const sessionAccess = (tenantId: string, sessionId: string): Access => ({ tenantId, filter: { sessionId } });

async function blobFiles(root: string): Promise<string[]> {
  try {
    return (await readdir(join(root, 'sha256'), { recursive: true, withFileTypes: true }))
      .filter((e) => e.isFile())
      .map((e) => e.name);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

async function tmpFiles(root: string): Promise<string[]> {
  try {
    return await readdir(join(root, 'tmp'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

async function bytesOf(service: ArtifactService, access: Access, id: string): Promise<Buffer> {
  return Buffer.from(await readAll((await service.getStream(access, id)).body));
}

async function listAll(
  service: ArtifactService,
  access: Access,
  query: Parameters<ArtifactService['list']>[1] = {},
): Promise<ArtifactRef[]> {
  return (await service.list(access, { limit: 1000, ...query })).items;
}

describe('ArtifactService: put', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await createHarness();
  });

  it('returns a ref with id {namespace}_{24 hex}, the sha256, size and what the putter said', async () => {
    const bytes = randomBytes(10_000);
    const sha = sha256Of(bytes);
    const scope: ArtifactScope = { tenantId: 'acme', userId: 'u-1', sessionId: 's-1', traceId: 't-1' };
    const { ref, created } = await h.service.putBytes(scope, bytes, {
      namespace: 'tableau.download_workbook',
      mimeType: 'application/pdf',
      filename: 'reports/Sales.pdf',
      meta: { pages: 3 },
      source: { tool: 'download_workbook' },
    });
    expect(created).toBe(true);
    expect(ref).toEqual({
      id: `tableau.download_workbook_${sha.slice(0, 24)}`,
      mimeType: 'application/pdf',
      sizeBytes: 10_000,
      filename: 'Sales.pdf',
      sha256: sha,
      namespace: 'tableau.download_workbook',
      scope,
      source: { tool: 'download_workbook' },
      meta: { pages: 3 },
      createdAt: iso(T0),
      lastAccessedAt: iso(T0),
      expiresAt: iso(T0 + 3600_000),
    });
    expect((await bytesOf(h.service, tenant('acme'), ref.id)).equals(bytes)).toBe(true);
  });

  it('defaults: namespace art, application/octet-stream, text/plain for putText', async () => {
    const a = await h.service.putBytes({ tenantId: 'acme' }, new Uint8Array([1, 2, 3]));
    expect(a.ref.id).toMatch(/^art_[0-9a-f]{24}$/);
    expect(a.ref.namespace).toBe('art');
    expect(a.ref.mimeType).toBe('application/octet-stream');
    expect(a.ref.scope).toEqual({ tenantId: 'acme' });
    const t = await h.service.putText({ tenantId: 'acme' }, 'héllo');
    expect(t.ref.mimeType).toBe('text/plain; charset=utf-8');
    expect((await bytesOf(h.service, tenant('acme'), t.ref.id)).toString('utf8')).toBe('héllo');
  });

  it('is idempotent: same bytes + namespace + tenant give the same id; a re-put by the same scope refreshes expiresAt', async () => {
    const bytes = randomBytes(5000);
    const scope = { tenantId: 'acme', sessionId: 's-1' };
    const first = await h.service.putBytes(scope, bytes, { namespace: 'ns', filename: 'a.bin' });
    expect(first.ref.id).toBe(`ns_${sha256Of(bytes).slice(0, 24)}`);
    expect(first.ref.id).toMatch(/^ns_[0-9a-f]{24}$/);
    h.clock.t += 60_000;
    const second = await h.service.putBytes(scope, bytes, { namespace: 'ns', filename: 'a.bin' });
    expect(second.created).toBe(false);
    expect(second.ref.id).toBe(first.ref.id);
    expect(second.ref.createdAt).toBe(first.ref.createdAt);
    expect(second.ref.expiresAt).toBe(iso(T0 + 60_000 + 3600_000));
    expect(Date.parse(second.ref.expiresAt!)).toBeGreaterThan(Date.parse(first.ref.expiresAt!));
    const items = await listAll(h.service, tenant('acme'));
    expect(items).toHaveLength(1);
    expect(items[0]!.expiresAt).toBe(second.ref.expiresAt);
    // A different session is a new reference to the same id.
    const other = await h.service.putBytes({ tenantId: 'acme', sessionId: 's-2' }, bytes, { namespace: 'ns' });
    expect(other.created).toBe(true);
    expect(other.ref.id).toBe(first.ref.id);
    expect(await listAll(h.service, tenant('acme'))).toHaveLength(2);
  });

  it('same bytes under another namespace: another id', async () => {
    const bytes = randomBytes(100);
    const a = await h.service.putBytes({ tenantId: 'acme' }, bytes, { namespace: 'alpha' });
    const b = await h.service.putBytes({ tenantId: 'acme' }, bytes, { namespace: 'beta' });
    expect(a.ref.id).not.toBe(b.ref.id);
    expect(a.ref.id).toBe(artifactId('alpha', sha256Of(bytes)));
    expect(b.ref.id).toBe(artifactId('beta', sha256Of(bytes)));
    expect(b.created).toBe(true);
    expect((await listAll(h.service, tenant('acme'))).map((r) => r.id).sort()).toEqual([a.ref.id, b.ref.id].sort());
    // The bytes are stored once.
    expect(await blobFiles(h.blobRoot)).toEqual([sha256Of(bytes)]);
  });

  it('another tenant gets the same id but cannot see the first tenant’s reference', async () => {
    const bytes = randomBytes(2048);
    const a = await h.service.putBytes({ tenantId: 'tenant-a' }, bytes, {
      filename: 'a-secret.pdf',
      meta: { owner: 'a' },
    });
    await expectArtifactError(h.service.getRef(tenant('tenant-b'), a.ref.id), 'not_found');
    await expectArtifactError(h.service.getStream(tenant('tenant-b'), a.ref.id), 'not_found');
    expect(await h.service.exists(tenant('tenant-b'), a.ref.id)).toBe(false);
    expect(await h.service.delete(tenant('tenant-b'), a.ref.id)).toBe(false);
    expect(await listAll(h.service, tenant('tenant-b'))).toEqual([]);

    const b = await h.service.putBytes({ tenantId: 'tenant-b' }, bytes, { filename: 'b.pdf' });
    expect(b.ref.id).toBe(a.ref.id);
    // Cross-tenant dedup is invisible: B's put reads as a fresh creation.
    expect(b.created).toBe(true);
    expect(b.ref.filename).toBe('b.pdf');
    expect(b.ref.meta).toBeUndefined();
    expect((await h.service.getRef(tenant('tenant-b'), a.ref.id)).filename).toBe('b.pdf');

    expect(await h.service.delete(tenant('tenant-a'), a.ref.id)).toBe(true);
    await expectArtifactError(h.service.getRef(tenant('tenant-a'), a.ref.id), 'not_found');
    expect((await bytesOf(h.service, tenant('tenant-b'), b.ref.id)).equals(bytes)).toBe(true);
  });

  it('putBase64: a data: URL supplies the mime type unless one is given', async () => {
    const png = randomBytes(300);
    const url = `data:image/png;base64,${png.toString('base64')}`;
    const a = await h.service.putBase64({ tenantId: 'acme' }, url);
    expect(a.ref.mimeType).toBe('image/png');
    expect(a.ref.sha256).toBe(sha256Of(png));
    expect((await bytesOf(h.service, tenant('acme'), a.ref.id)).equals(png)).toBe(true);
    const b = await h.service.putBase64({ tenantId: 'acme', sessionId: 's' }, url, { mimeType: 'image/x-custom' });
    expect(b.ref.mimeType).toBe('image/x-custom');
    const c = await h.service.putBase64({ tenantId: 'acme', sessionId: 'wrapped' }, png.toString('base64url'));
    expect(c.ref.id).toBe(a.ref.id);
    expect(c.ref.mimeType).toBe('application/octet-stream');
  });

  it('malformed base64: bad_request and nothing stored', async () => {
    for (const input of ['not base64!', 'data:image/png,raw', 'AAAAA', 'data:image/png;base64,@@@@']) {
      await expectArtifactError(h.service.putBase64({ tenantId: 'acme' }, input), 'bad_request');
    }
    expect(await listAll(h.service, tenant('acme'))).toEqual([]);
    expect(await blobFiles(h.blobRoot)).toEqual([]);
  });

  it('ttl: over the maximum is bad_request with nothing stored; the maximum itself is accepted', async () => {
    const bytes = randomBytes(100);
    await expectArtifactError(
      h.service.putBytes({ tenantId: 'acme' }, bytes, { ttl: LIMITS.maxTtlSeconds + 1 }),
      'bad_request',
    );
    await expectArtifactError(h.service.putBytes({ tenantId: 'acme' }, bytes, { ttl: 0 }), 'bad_request');
    await expectArtifactError(h.service.putBytes({ tenantId: 'acme' }, bytes, { ttl: 1.5 }), 'bad_request');
    expect(await listAll(h.service, tenant('acme'))).toEqual([]);
    expect(await blobFiles(h.blobRoot)).toEqual([]);
    const ok = await h.service.putBytes({ tenantId: 'acme' }, bytes, { ttl: LIMITS.maxTtlSeconds });
    expect(ok.ref.expiresAt).toBe(iso(T0 + LIMITS.maxTtlSeconds * 1000));
  });

  it('a body that errors mid-stream leaves no row and no blob', async () => {
    const chunks = [randomBytes(1024 * 1024), randomBytes(1024 * 1024), randomBytes(10)];
    await expect(
      h.service.putStream({ tenantId: 'acme', sessionId: 's' }, failingStream(chunks, new Error('client went away'))),
    ).rejects.toThrow('client went away');
    expect(await listAll(h.service, tenant('acme'))).toEqual([]);
    expect(await blobFiles(h.blobRoot)).toEqual([]);
    expect(await tmpFiles(h.blobRoot)).toEqual([]);
  });

  it('checksum mismatch and oversize bodies store nothing; an empty body is a zero-byte artifact', async () => {
    const bytes = randomBytes(1000);
    await expectArtifactError(
      h.service.putBytes({ tenantId: 'acme' }, bytes, { sha256: sha256Of(randomBytes(5)) }),
      'checksum_mismatch',
    );
    await expectArtifactError(
      h.service.putBytes({ tenantId: 'acme' }, randomBytes(LIMITS.maxArtifactBytes + 1)),
      'payload_too_large',
    );
    expect(await listAll(h.service, tenant('acme'))).toEqual([]);
    expect(await blobFiles(h.blobRoot)).toEqual([]);
    const ok = await h.service.putBytes({ tenantId: 'acme' }, bytes, { sha256: sha256Of(bytes) });
    expect(ok.ref.sha256).toBe(sha256Of(bytes));
    const empty = await h.service.putBytes({ tenantId: 'acme' }, new Uint8Array(0));
    expect(empty.ref).toMatchObject({ sizeBytes: 0, sha256: sha256Of(new Uint8Array(0)) });
    expect(await blobFiles(h.blobRoot)).toHaveLength(2);
  });

  it('refuses bad options with bad_request before reading the body', async () => {
    const cases = [
      { namespace: 'Bad NS' },
      { mimeType: 'not a mime' },
      { mimeType: 'text/plain\r\nX-Evil: 1' },
      { filename: 'a\r\nb.pdf' },
      { meta: { big: 'x'.repeat(9000) } },
      { sha256: 'ABC' },
    ];
    for (const options of cases) {
      let pulled = false;
      const body = new ReadableStream<Uint8Array>(
        {
          pull(c) {
            pulled = true;
            c.enqueue(new Uint8Array([1]));
            c.close();
          },
        },
        { highWaterMark: 0 },
      );
      await expectArtifactError(h.service.putStream({ tenantId: 'acme' }, body, options), 'bad_request');
      expect(pulled, JSON.stringify(options)).toBe(false);
    }
    expect(await listAll(h.service, tenant('acme'))).toEqual([]);
  });
});

describe('ArtifactService: scope isolation and delete', () => {
  let h: Harness;
  const bytes = randomBytes(4096);
  const A = { tenantId: 'acme', userId: 'u-a', sessionId: 's-a' };
  const B = { tenantId: 'acme', userId: 'u-b', sessionId: 's-b' };
  const accessA = sessionAccess('acme', 's-a');
  const accessB = sessionAccess('acme', 's-b');

  beforeEach(async () => {
    h = await createHarness();
  });

  it('a session cannot see, read, list or delete another session’s reference', async () => {
    const a = await h.service.putBytes(A, bytes, {
      filename: 'secret-A.pdf',
      meta: { note: 'for A only' },
      source: { tool: 'a-tool' },
    });
    const missingId = artifactId('art', sha256Of(randomBytes(8)));

    const outOfScope = await expectArtifactError(h.service.getRef(accessB, a.ref.id), 'not_found');
    const missing = await expectArtifactError(h.service.getRef(accessB, missingId), 'not_found');
    // Out of scope and missing read the same.
    expect(outOfScope.message.replace(a.ref.id, 'ID')).toBe(missing.message.replace(missingId, 'ID'));
    await expectArtifactError(h.service.getStream(accessB, a.ref.id), 'not_found');
    expect(await h.service.exists(accessB, a.ref.id)).toBe(false);
    expect(await listAll(h.service, accessB)).toEqual([]);
    expect(await h.service.delete(accessB, a.ref.id)).toBe(false);
    // A's reference survived B's attempt.
    expect((await h.service.getRef(accessA, a.ref.id)).filename).toBe('secret-A.pdf');
    // A session-bound caller cannot list another session by asking for it.
    await expectArtifactError(h.service.list(accessB, { sessionId: 's-a' }), 'forbidden');
  });

  it('both sessions hold the same bytes; each sees only its own filename and meta', async () => {
    const a = await h.service.putBytes(A, bytes, {
      filename: 'secret-A.pdf',
      meta: { note: 'for A only' },
      source: { tool: 'a-tool' },
      mimeType: 'application/pdf',
    });
    const b = await h.service.putBytes(B, bytes, { filename: 'b.pdf', mimeType: 'application/x-b' });
    expect(b.ref.id).toBe(a.ref.id);
    expect(b.created).toBe(true);

    const streamed = await h.service.getStream(accessB, a.ref.id);
    await streamed.body.cancel();
    const seenByB = [await h.service.getRef(accessB, a.ref.id), streamed.ref, ...(await listAll(h.service, accessB))];
    for (const ref of seenByB) {
      expect(ref.filename).toBe('b.pdf');
      expect(ref.mimeType).toBe('application/x-b');
      expect(ref.meta).toBeUndefined();
      expect(ref.source).toBeUndefined();
      expect(ref.scope).toEqual(B);
      expect(JSON.stringify(ref)).not.toMatch(/secret-A|for A only|a-tool|u-a|s-a/);
    }
    const seenByA = await h.service.getRef(accessA, a.ref.id);
    expect(seenByA.filename).toBe('secret-A.pdf');
    expect(seenByA.meta).toEqual({ note: 'for A only' });
    // A tenant-wide listing returns one row per scope holding the id.
    const all = await listAll(h.service, tenant('acme'));
    expect(all.map((r) => r.scope.sessionId).sort()).toEqual(['s-a', 's-b']);
  });

  it('a session delete removes only that session’s reference', async () => {
    const a = await h.service.putBytes(A, bytes, { filename: 'a.pdf' });
    await h.service.putBytes(B, bytes, { filename: 'b.pdf' });
    expect(await h.service.delete(accessB, a.ref.id)).toBe(true);
    expect(await h.service.delete(accessB, a.ref.id)).toBe(false);
    await expectArtifactError(h.service.getRef(accessB, a.ref.id), 'not_found');
    expect((await h.service.getRef(accessA, a.ref.id)).filename).toBe('a.pdf');
    expect((await bytesOf(h.service, accessA, a.ref.id)).equals(bytes)).toBe(true);
    const all = await listAll(h.service, tenant('acme'));
    expect(all).toHaveLength(1);
    expect(all[0]!.scope.sessionId).toBe('s-a');
  });

  it('a tenant-wide delete removes every reference of the tenant, and only that tenant', async () => {
    const a = await h.service.putBytes(A, bytes);
    await h.service.putBytes(B, bytes);
    await h.service.putBytes({ tenantId: 'acme', traceId: 't-1' }, bytes);
    await h.service.putBytes({ tenantId: 'other' }, bytes);
    expect(await listAll(h.service, tenant('acme'))).toHaveLength(3);
    expect(await h.service.delete(tenant('acme'), a.ref.id)).toBe(true);
    expect(await h.service.delete(tenant('acme'), a.ref.id)).toBe(false);
    for (const access of [accessA, accessB, tenant('acme')]) {
      await expectArtifactError(h.service.getRef(access, a.ref.id), 'not_found');
    }
    expect(await listAll(h.service, tenant('acme'))).toEqual([]);
    expect((await bytesOf(h.service, tenant('other'), a.ref.id)).equals(bytes)).toBe(true);
    // Putting again after the artifact went creates it afresh.
    const again = await h.service.putBytes(A, bytes, { filename: 'new.pdf' });
    expect(again.created).toBe(true);
    expect(again.ref.id).toBe(a.ref.id);
  });

  it('ids that are not artifact ids are simply not found', async () => {
    for (const id of ['', '../../etc/passwd', 'art_XYZ', 'ART_0123456789abcdef01234567']) {
      await expectArtifactError(h.service.getRef(tenant('acme'), id), 'not_found');
      expect(await h.service.exists(tenant('acme'), id)).toBe(false);
      expect(await h.service.delete(tenant('acme'), id)).toBe(false);
    }
  });
});

describe('ArtifactService: reads', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await createHarness();
  });

  it('getStream serves a range resolved from the size and hash', async () => {
    const bytes = randomBytes(3000);
    const { ref } = await h.service.putBytes({ tenantId: 'acme' }, bytes);
    let seen: { sizeBytes: number; sha256: string } | undefined;
    const res = await h.service.getStream(tenant('acme'), ref.id, (entity) => {
      seen = entity;
      return parseRange('bytes=-10', entity.sizeBytes);
    });
    expect(seen).toEqual({ sizeBytes: 3000, sha256: sha256Of(bytes) });
    expect(res.range).toEqual({ start: 2990, end: 2999 });
    expect(res.sizeBytes).toBe(3000);
    expect(Buffer.from(await readAll(res.body)).equals(bytes.subarray(2990))).toBe(true);
    await expectArtifactError(
      h.service.getStream(tenant('acme'), ref.id, (e) => parseRange('bytes=5000-', e.sizeBytes)),
      'invalid_range',
    );
  });

  it('reads refresh last-accessed but not expiry', async () => {
    const { ref } = await h.service.putBytes({ tenantId: 'acme' }, randomBytes(10));
    h.clock.t += 5000;
    await readAll((await h.service.getStream(tenant('acme'), ref.id)).body);
    await h.service.flush();
    const after = await h.service.getRef(tenant('acme'), ref.id);
    expect(after.lastAccessedAt).toBe(iso(T0 + 5000));
    expect(after.expiresAt).toBe(ref.expiresAt);
    expect(after.createdAt).toBe(ref.createdAt);
  });

  it('expired references are invisible to getRef, getStream, exists, delete and list', async () => {
    const expiring = randomBytes(10);
    const { ref } = await h.service.putBytes({ tenantId: 'acme', sessionId: 's' }, expiring, { ttl: 60 });
    const keep = await h.service.putBytes({ tenantId: 'acme', sessionId: 's' }, randomBytes(10), { ttl: 3600 });
    h.clock.t = T0 + 59_999;
    expect((await h.service.getRef(tenant('acme'), ref.id)).id).toBe(ref.id);
    h.clock.t = T0 + 60_000;
    for (const access of [tenant('acme'), sessionAccess('acme', 's')]) {
      await expectArtifactError(h.service.getRef(access, ref.id), 'not_found');
      await expectArtifactError(h.service.getStream(access, ref.id), 'not_found');
      expect(await h.service.exists(access, ref.id)).toBe(false);
      expect((await listAll(h.service, access)).map((r) => r.id)).toEqual([keep.ref.id]);
    }
    expect(await h.service.delete(tenant('acme'), ref.id)).toBe(false);
    // A re-put after expiry is a new reference from the putter's point of view.
    h.clock.t = T0 + 120_000;
    const again = await h.service.putBytes({ tenantId: 'acme', sessionId: 's' }, expiring, { ttl: 60 });
    expect(again.created).toBe(true);
    expect(again.ref.id).toBe(ref.id);
    expect(again.ref.createdAt).toBe(iso(T0 + 120_000));
    expect(again.ref.expiresAt).toBe(iso(T0 + 180_000));
    expect((await bytesOf(h.service, tenant('acme'), ref.id)).equals(expiring)).toBe(true);
  });

  it('hash collision: a 24-hex prefix naming other bytes fails loudly and the original bytes stay served', async () => {
    const original = randomBytes(777);
    const colliding = randomBytes(888);
    const realSha = sha256Of(colliding);
    const fakeSha = realSha.slice(0, 24) + (realSha.slice(24, 25) === '0' ? '1' : '0') + realSha.slice(25);
    expect(fakeSha).not.toBe(realSha);
    expect(fakeSha.slice(0, 24)).toBe(realSha.slice(0, 24));
    const id = artifactId('ns', realSha);

    // Store the original bytes under the fake hash (a hasher that lies), then record them.
    const liar = createFsBlobStore({
      root: h.blobRoot,
      fsync: false,
      hash: () => ({ update() {}, digest: () => fakeSha }),
    });
    expect((await liar.put(bytesStream(original))).sha256).toBe(fakeSha);
    await h.repo.commitPut({
      scope: { tenantId: 'acme', sessionId: 's-orig' },
      artifactId: id,
      namespace: 'ns',
      sha256: fakeSha,
      sizeBytes: original.byteLength,
      mimeType: 'application/x-original',
      filename: 'original.bin',
      now: T0,
      expiresAt: T0 + 3600_000,
    });

    for (const scope of [
      { tenantId: 'acme', sessionId: 's-orig' },
      { tenantId: 'acme', sessionId: 's-new' },
      { tenantId: 'acme' },
    ]) {
      const err = await expectArtifactError(
        h.service.putBytes(scope, colliding, { namespace: 'ns', filename: 'colliding.bin' }),
        'hash_collision',
      );
      expect(err.status).toBe(409);
      expect(err.message).toContain(id);
    }

    const ref = await h.service.getRef(tenant('acme'), id);
    expect(ref.sha256).toBe(fakeSha);
    expect(ref.filename).toBe('original.bin');
    expect(ref.sizeBytes).toBe(777);
    expect((await bytesOf(h.service, tenant('acme'), id)).equals(original)).toBe(true);
    const all = await listAll(h.service, tenant('acme'));
    expect(all).toHaveLength(1);
    expect(all[0]!.scope).toEqual({ tenantId: 'acme', sessionId: 's-orig' });
    // Another namespace, or another tenant, stores the colliding bytes fine.
    expect((await h.service.putBytes({ tenantId: 'acme' }, colliding, { namespace: 'other' })).ref.sha256).toBe(
      realSha,
    );
    expect((await h.service.putBytes({ tenantId: 'globex' }, colliding, { namespace: 'ns' })).ref.id).toBe(id);
  });
});

describe('ArtifactService: list', () => {
  let h: Harness;
  const ids: Record<string, string> = {};

  beforeEach(async () => {
    h = await createHarness();
    const items = [
      {
        key: 'i1',
        scope: { tenantId: 'acme', userId: 'u1', sessionId: 's1', traceId: 't1' },
        namespace: 'alpha',
        mimeType: 'image/png',
      },
      {
        key: 'i2',
        scope: { tenantId: 'acme', userId: 'u2', sessionId: 's1', traceId: 't2' },
        namespace: 'beta',
        mimeType: 'image/jpeg',
      },
      {
        key: 'i3',
        scope: { tenantId: 'acme', userId: 'u1', sessionId: 's2', traceId: 't3' },
        namespace: 'alpha',
        mimeType: 'application/pdf',
      },
      {
        key: 'i4',
        scope: { tenantId: 'acme', userId: 'u2', sessionId: 's2', traceId: 't3' },
        namespace: 'beta',
        mimeType: 'text/plain; charset=utf-8',
      },
      {
        key: 'x1',
        scope: { tenantId: 'other', userId: 'u1', sessionId: 's1', traceId: 't1' },
        namespace: 'alpha',
        mimeType: 'image/png',
      },
    ];
    for (const [i, item] of items.entries()) {
      h.clock.t = T0 + i * 1000;
      const { ref } = await h.service.putBytes(item.scope, randomBytes(64), {
        namespace: item.namespace,
        mimeType: item.mimeType,
      });
      ids[item.key] = ref.id;
    }
  });

  const keysOf = (refs: ArtifactRef[]) => refs.map((r) => Object.entries(ids).find(([, id]) => id === r.id)![0]);

  it('lists the tenant newest first', async () => {
    expect(keysOf(await listAll(h.service, tenant('acme')))).toEqual(['i4', 'i3', 'i2', 'i1']);
    expect(keysOf(await listAll(h.service, tenant('other')))).toEqual(['x1']);
    expect(await listAll(h.service, tenant('nobody'))).toEqual([]);
  });

  it('filters by session, trace, user, namespace and mime prefix', async () => {
    const q = async (query: Parameters<ArtifactService['list']>[1]) =>
      keysOf(await listAll(h.service, tenant('acme'), query));
    expect(await q({ sessionId: 's1' })).toEqual(['i2', 'i1']);
    expect(await q({ sessionId: 's2' })).toEqual(['i4', 'i3']);
    expect(await q({ traceId: 't3' })).toEqual(['i4', 'i3']);
    expect(await q({ traceId: 't1' })).toEqual(['i1']);
    expect(await q({ userId: 'u1' })).toEqual(['i3', 'i1']);
    expect(await q({ namespace: 'beta' })).toEqual(['i4', 'i2']);
    expect(await q({ mimePrefix: 'image/' })).toEqual(['i2', 'i1']);
    expect(await q({ mimePrefix: 'text/plain' })).toEqual(['i4']);
    expect(await q({ mimePrefix: 'image%' })).toEqual([]);
    expect(await q({ mimePrefix: 'video/' })).toEqual([]);
    expect(await q({ sessionId: 's1', userId: 'u2' })).toEqual(['i2']);
    expect(await q({ namespace: 'alpha', mimePrefix: 'application/' })).toEqual(['i3']);
    expect(await q({ sessionId: 'nope' })).toEqual([]);
  });

  it('filters by creation time', async () => {
    const q = async (query: Parameters<ArtifactService['list']>[1]) =>
      keysOf(await listAll(h.service, tenant('acme'), query));
    expect(await q({ createdAfter: iso(T0 + 1500) })).toEqual(['i4', 'i3']);
    expect(await q({ createdBefore: iso(T0 + 1500) })).toEqual(['i2', 'i1']);
    expect(await q({ createdAfter: iso(T0 + 500), createdBefore: iso(T0 + 2500) })).toEqual(['i3', 'i2']);
    expect(await q({ createdAfter: iso(T0 + 10_000) })).toEqual([]);
    expect(await q({ createdAfter: '2030-01-01T02:00:00.500+02:00' })).toEqual(['i4', 'i3', 'i2']);
  });

  it('a session-bound caller lists only its session, whatever else it asks', async () => {
    expect(keysOf(await listAll(h.service, sessionAccess('acme', 's2')))).toEqual(['i4', 'i3']);
    expect(keysOf(await listAll(h.service, sessionAccess('acme', 's2'), { sessionId: 's2', userId: 'u1' }))).toEqual([
      'i3',
    ]);
    await expectArtifactError(h.service.list(sessionAccess('acme', 's2'), { sessionId: 's1' }), 'forbidden');
    expect(keysOf(await listAll(h.service, { tenantId: 'acme', filter: { userId: 'u2' } }))).toEqual(['i4', 'i2']);
  });

  it('refuses bad filters and bad cursors with bad_request', async () => {
    const bad = [
      { cursor: 'garbage!!' },
      { cursor: 'djE6YWJjOmRlZg' }, // v1:abc:def
      { cursor: btoa('v2:1:2') },
      { cursor: btoa('v1:1') },
      { cursor: 'x'.repeat(600) },
      { limit: 0 },
      { limit: 1001 },
      { namespace: 'Bad NS' },
      { createdAfter: 'yesterday' },
    ];
    for (const query of bad) await expectArtifactError(h.service.list(tenant('acme'), query), 'bad_request');
  });
});

describe('ArtifactService: cursor pagination', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await createHarness();
  });

  async function putMany(n: number, scope: ArtifactScope, tickEvery: number): Promise<string[]> {
    const out: string[] = [];
    for (let i = 0; i < n; i++) {
      if (i % tickEvery === 0) h.clock.t += 1000;
      out.push((await h.service.putBytes(scope, randomBytes(32))).ref.id);
    }
    return out;
  }

  it('pages in a stable order with no duplicates and no gaps, even with ties in createdAt', async () => {
    // Three puts share each timestamp, so ordering must break ties.
    await putMany(25, { tenantId: 'acme', sessionId: 's' }, 3);
    const full = (await h.service.list(tenant('acme'), { limit: 1000 })).items.map((r) => r.id);
    expect(full).toHaveLength(25);

    const paged: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await h.service.list(tenant('acme'), { limit: 10, ...(cursor ? { cursor } : {}) });
      paged.push(...page.items.map((r) => r.id));
      cursor = page.nextCursor;
      pages++;
      expect(pages).toBeLessThan(10);
    } while (cursor);
    expect(pages).toBe(3);
    expect(paged).toEqual(full);
  });

  it('new items inserted between pages neither duplicate nor displace the rest', async () => {
    const before = await putMany(25, { tenantId: 'acme', sessionId: 's' }, 4);
    const snapshot = (await h.service.list(tenant('acme'), { limit: 1000 })).items.map((r) => r.id);
    expect(new Set(snapshot)).toEqual(new Set(before));

    const page1 = await h.service.list(tenant('acme'), { limit: 10 });
    expect(page1.nextCursor).toBeDefined();
    // Newer puts: some at the very same millisecond as the newest rows, some later.
    await putMany(3, { tenantId: 'acme', sessionId: 's' }, 100);
    await putMany(3, { tenantId: 'acme', sessionId: 's-other' }, 1);
    const page2 = await h.service.list(tenant('acme'), { limit: 10, cursor: page1.nextCursor });
    await putMany(2, { tenantId: 'acme', sessionId: 's' }, 1);
    const page3 = await h.service.list(tenant('acme'), { limit: 10, cursor: page2.nextCursor });
    expect(page3.nextCursor).toBeUndefined();

    const paged = [...page1.items, ...page2.items, ...page3.items].map((r) => r.id);
    expect(new Set(paged).size).toBe(paged.length);
    expect(paged).toEqual(snapshot);
  });

  it('a page that ends exactly at the last item has no next cursor', async () => {
    await putMany(20, { tenantId: 'acme' }, 1);
    const p1 = await h.service.list(tenant('acme'), { limit: 10 });
    const p2 = await h.service.list(tenant('acme'), { limit: 10, cursor: p1.nextCursor });
    expect(p2.items).toHaveLength(10);
    expect(p2.nextCursor).toBeUndefined();
  });

  it('a cursor keeps the filters it is used with', async () => {
    await putMany(6, { tenantId: 'acme', sessionId: 's1' }, 1);
    await putMany(6, { tenantId: 'acme', sessionId: 's2' }, 1);
    const p1 = await h.service.list(sessionAccess('acme', 's1'), { limit: 4 });
    const p2 = await h.service.list(sessionAccess('acme', 's1'), { limit: 4, cursor: p1.nextCursor });
    const all = [...p1.items, ...p2.items];
    expect(all).toHaveLength(6);
    expect(all.every((r) => r.scope.sessionId === 's1')).toBe(true);
    expect(p2.nextCursor).toBeUndefined();
  });
});

describe('ArtifactService: two instances on one SQLite file', () => {
  it('both can put concurrently without SQLITE_BUSY leaking, and each sees the other’s writes', async () => {
    const h1 = await createHarness();
    const repo2 = createSqliteRepository({ path: h1.dbPath });
    const blobs2 = createFsBlobStore({ root: h1.blobRoot, fsync: false });
    const service2 = createArtifactService({ repo: repo2, blobs: blobs2, limits: LIMITS, now: () => h1.clock.t });
    h1.onClose(async () => {
      await service2.close();
      await repo2.close();
    });

    const shared = randomBytes(64 * 1024);
    const jobs: Promise<{ created: boolean; ref: ArtifactRef }>[] = [];
    for (let i = 0; i < 40; i++) {
      const service = i % 2 === 0 ? h1.service : service2;
      jobs.push(service.putBytes({ tenantId: 'acme', sessionId: `s-${i % 5}` }, randomBytes(32 * 1024 + i)));
      // The same bytes into the same scope through both instances.
      jobs.push(service.putBytes({ tenantId: 'acme', sessionId: 'shared' }, shared, { filename: 'shared.bin' }));
    }
    const results = await Promise.allSettled(jobs);
    const failures = results.filter((r) => r.status === 'rejected');
    expect(failures).toEqual([]);
    const ok = results.map((r) => (r as PromiseFulfilledResult<{ created: boolean; ref: ArtifactRef }>).value);
    const sharedResults = ok.filter((r) => r.ref.scope.sessionId === 'shared');
    expect(sharedResults).toHaveLength(40);
    expect(sharedResults.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(sharedResults.map((r) => r.ref.id)).size).toBe(1);

    for (const service of [h1.service, service2]) {
      const all = (await service.list(tenant('acme'), { limit: 1000 })).items;
      expect(all).toHaveLength(41);
      expect((await bytesOf(service, tenant('acme'), sharedResults[0]!.ref.id)).equals(shared)).toBe(true);
    }
    expect(await tmpFiles(h1.blobRoot)).toEqual([]);
  });
});

describe('ArtifactService: reference lookups stay current across instances', () => {
  const nextTurn = () => new Promise((r) => setImmediate(r));

  it('a reference deleted through one instance is gone for the other from its next turn on', async () => {
    const h1 = await createHarness();
    const repo2 = createSqliteRepository({ path: h1.dbPath });
    const service2 = createArtifactService({
      repo: repo2,
      blobs: createFsBlobStore({ root: h1.blobRoot, fsync: false }),
      limits: LIMITS,
      now: () => h1.clock.t,
    });
    h1.onClose(async () => {
      await service2.close();
      await repo2.close();
    });

    const { ref } = await h1.service.putText({ tenantId: 'acme', sessionId: 's1' }, 'shared view');
    // Looked up twice through instance 2: the second answer comes from its cache of recent lookups.
    expect((await service2.getRef(sessionAccess('acme', 's1'), ref.id))?.id).toBe(ref.id);
    expect((await service2.getRef(sessionAccess('acme', 's1'), ref.id))?.id).toBe(ref.id);
    await nextTurn();
    expect(await h1.service.delete(sessionAccess('acme', 's1'), ref.id)).toBe(true);
    await nextTurn();
    await expectArtifactError(service2.getRef(sessionAccess('acme', 's1'), ref.id), 'not_found');
    await expectArtifactError(service2.getStream(sessionAccess('acme', 's1'), ref.id), 'not_found');

    // Put back through instance 1: instance 2 sees it again (a miss is never cached).
    await h1.service.putText({ tenantId: 'acme', sessionId: 's1' }, 'shared view');
    await nextTurn();
    expect((await service2.getRef(sessionAccess('acme', 's1'), ref.id))?.id).toBe(ref.id);
  });

  it('an instance sees its own delete and re-put at once, within the same turn', async () => {
    const h = await createHarness();
    const access = sessionAccess('acme', 's1');
    const { ref } = await h.service.putText({ tenantId: 'acme', sessionId: 's1' }, 'mine');
    expect((await h.service.getRef(access, ref.id))?.id).toBe(ref.id);
    expect(await h.service.delete(access, ref.id)).toBe(true);
    await expectArtifactError(h.service.getRef(access, ref.id), 'not_found');
    await h.service.putText({ tenantId: 'acme', sessionId: 's1' }, 'mine', { filename: 'again.txt' });
    expect((await h.service.getRef(access, ref.id))?.filename).toBe('again.txt');
  });

  it('cached answers never cross scopes, whatever characters the scope parts hold', async () => {
    const h = await createHarness();
    const { ref } = await h.service.putText({ tenantId: 'acme', sessionId: '1:x' }, 'scoped');
    const owner: Access = { tenantId: 'acme', filter: { sessionId: '1:x' } };
    expect((await h.service.getRef(owner, ref.id))?.id).toBe(ref.id);
    expect((await h.service.getRef(owner, ref.id))?.id).toBe(ref.id);
    // Same turn, so these would be answered from the cache if their keys matched the owner's.
    for (const other of [
      { tenantId: 'acme', filter: { sessionId: '1', traceId: 'x' } },
      { tenantId: 'acme', filter: { sessionId: '1:x', traceId: '-' } },
      { tenantId: 'acme', filter: { userId: '1:x' } },
      { tenantId: 'acme1:x', filter: {} },
      { tenantId: 'acm', filter: { sessionId: 'e1:x' } },
    ] satisfies Access[]) {
      await expectArtifactError(h.service.getRef(other, ref.id), 'not_found');
    }
  });

  it('a cached answer is not served past the reference expiry', async () => {
    const h = await createHarness();
    const access = sessionAccess('acme', 's1');
    const { ref } = await h.service.putText({ tenantId: 'acme', sessionId: 's1' }, 'short-lived', { ttl: 60 });
    expect((await h.service.getRef(access, ref.id))?.id).toBe(ref.id);
    h.clock.t += 61_000;
    await expectArtifactError(h.service.getRef(access, ref.id), 'not_found');
  });
});

describe('ArtifactService: separate processes on one SQLite file', () => {
  it('writers in other processes and this one interleave without errors', async () => {
    const h = await createHarness();
    // The writers use the real clock; so does this process here, or their refs would read as expired.
    h.clock.t = Date.now();
    await h.service.putText({ tenantId: 'acme' }, 'warm-up');
    const script = join(h.dir, 'writer.mjs');
    const src = (rel: string) => JSON.stringify(pathToFileURL(fileURLToPath(new URL(rel, import.meta.url))).href);
    await writeFile(
      script,
      `
const { createSqliteRepository } = await import(${src('../src/db/sqlite.ts')});
const { createFsBlobStore } = await import(${src('../src/blob/fs.ts')});
const { createArtifactService } = await import(${src('../src/service/artifact-service.ts')});
const [dbPath, blobRoot, label] = process.argv.slice(2);
const repo = createSqliteRepository({ path: dbPath, busyTimeoutMs: 10000 });
const blobs = createFsBlobStore({ root: blobRoot, fsync: false });
const service = createArtifactService({ repo, blobs, limits: ${JSON.stringify(LIMITS)} });
let ok = 0;
const errors = [];
for (let i = 0; i < 100; i++) {
  try {
    await service.putText({ tenantId: 'acme', sessionId: label }, label + '-' + i);
    await service.putText({ tenantId: 'acme', sessionId: 'shared' }, 'same bytes everywhere');
    ok++;
  } catch (err) {
    errors.push(String(err && err.code || err));
  }
}
await service.close();
await repo.close();
process.stdout.write(JSON.stringify({ ok, errors }));
`,
    );
    const run = (label: string) =>
      new Promise<{ ok: number; errors: string[] }>((resolve, reject) => {
        execFile(
          process.execPath,
          ['--import', 'tsx', script, h.dbPath, h.blobRoot, label],
          { cwd: process.cwd() },
          (err, stdout, stderr) => {
            if (err) reject(new Error(`${label} failed: ${stderr || err.message}`));
            else resolve(JSON.parse(stdout) as { ok: number; errors: string[] });
          },
        );
      });
    const children = [run('p1'), run('p2')];
    // This process writes at the same time.
    const local: Promise<unknown>[] = [];
    for (let i = 0; i < 100; i++) {
      local.push(h.service.putText({ tenantId: 'acme', sessionId: 'p0' }, `p0-${i}`));
      local.push(h.service.putText({ tenantId: 'acme', sessionId: 'shared' }, 'same bytes everywhere'));
      if (i % 10 === 0) await new Promise((r) => setTimeout(r, 5));
    }
    const [localResults, ...childResults] = await Promise.all([Promise.allSettled(local), ...children]);
    expect(localResults.filter((r) => r.status === 'rejected')).toEqual([]);
    for (const r of childResults) expect(r).toEqual({ ok: 100, errors: [] });

    for (const session of ['p0', 'p1', 'p2']) {
      expect((await h.service.list(tenant('acme'), { sessionId: session, limit: 1000 })).items, session).toHaveLength(
        100,
      );
    }
    expect((await h.service.list(tenant('acme'), { sessionId: 'shared', limit: 1000 })).items).toHaveLength(1);
    expect(await tmpFiles(h.blobRoot)).toEqual([]);
  });
});

describe('ArtifactError surface', () => {
  it('service errors are ArtifactErrors with the wire status', async () => {
    const h = await createHarness();
    const err = await expectArtifactError(
      h.service.getRef(tenant('acme'), 'art_000000000000000000000000'),
      'not_found',
    );
    expect(err).toBeInstanceOf(ArtifactError);
    expect(err.status).toBe(404);
  });
});

describe('SQLite connection settings', () => {
  it('the page cache is ARTIFACT_STORE_SQLITE_CACHE_BYTES (4 MiB by default, not better-sqlite3’s 16 MB)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sqlite-cache-'));
    try {
      for (const [env, kib] of [
        [{}, 4096],
        [{ ARTIFACT_STORE_SQLITE_CACHE_BYTES: '1048576' }, 1024],
      ] as const) {
        const ctx = openSqlite(sqliteOptions(loadConfig(env), join(dir, `${kib}.db`)));
        try {
          expect(ctx.sqlite.pragma('cache_size', { simple: true })).toBe(-kib);
        } finally {
          ctx.sqlite.close();
        }
      }
      expect(() => loadConfig({ ARTIFACT_STORE_SQLITE_CACHE_BYTES: '0' })).toThrow(/SQLITE_CACHE_BYTES/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('closing while a checkpoint runs starts no other, and the last connection removes the WAL', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sqlite-checkpoint-close-'));
    try {
      const path = join(dir, 'a.db');
      const done: CheckpointResult[] = [];
      const ctx = openSqlite({ path, checkpointAfterWriteMs: 0, onCheckpoint: (r) => done.push(r) });
      // The first write starts a checkpoint (and its worker); the second is due for another meanwhile.
      ctx.writing(() => ctx.sqlite.exec('CREATE TABLE filler (b BLOB)'));
      const insert = ctx.sqlite.prepare('INSERT INTO filler VALUES (?)');
      ctx.writing(() => insert.run(randomBytes(256 * 1024)));
      await ctx.close();
      // Long enough for a worker started by mistake to have opened the file (and made a WAL again).
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(done.length).toBeLessThanOrEqual(1);
      expect(existsSync(`${path}-wal`)).toBe(false);
      const other = new Database(path, { readonly: true });
      expect(other.prepare('SELECT count(*) FROM filler').pluck().get()).toBe(1);
      other.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('the checkpoint worker stays for the next checkpoint and leaves once idle', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sqlite-checkpoint-idle-'));
    const path = join(dir, 'a.db');
    const db = new Database(path);
    db.pragma('journal_mode = WAL');
    db.pragma('wal_autocheckpoint = 0');
    db.exec('CREATE TABLE filler (b BLOB)');
    const insert = db.prepare('INSERT INTO filler VALUES (?)');
    const onMainThread = () => {
      throw new Error('a checkpoint ran on the main thread');
    };
    const checkpointer = createCheckpointer(path, onMainThread, 'worker', 200);
    try {
      insert.run(randomBytes(64 * 1024));
      const first = await checkpointer.checkpoint();
      insert.run(randomBytes(64 * 1024));
      const second = await checkpointer.checkpoint();
      expect(first).toMatchObject({ thread: 'worker', busy: 0 });
      expect(second).toMatchObject({ thread: 'worker', busy: 0 });
      expect(second!.checkpointed).toBe(second!.log);
      // Called again at once: the same worker.
      expect(second!.workerThreadId).toBe(first!.workerThreadId);
      // 200 ms after its last checkpoint it left; the next checkpoint starts another.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      insert.run(randomBytes(64 * 1024));
      const third = await checkpointer.checkpoint();
      expect(third).toMatchObject({ thread: 'worker', busy: 0 });
      expect(third!.workerThreadId).not.toBe(first!.workerThreadId);
      expect(third!.checkpointed).toBe(third!.log);
    } finally {
      await checkpointer.close();
      db.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('the WAL is checkpointed on a thread of its own after enough write time, never inside a commit', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sqlite-checkpoint-'));
    try {
      for (const [after, thread] of [
        [0, 'worker'],
        [0, 'main'],
        [200, 'worker'],
      ] as const) {
        const path = join(dir, `${after}-${thread}.db`);
        const done: CheckpointResult[] = [];
        let next: (() => void) | undefined;
        const ctx = openSqlite({
          path,
          checkpointAfterWriteMs: after,
          checkpointThread: thread,
          onCheckpoint: (r) => {
            done.push(r);
            next?.();
          },
        });
        const checkpointed = () => new Promise<void>((resolve) => (next = resolve));
        try {
          expect(ctx.sqlite.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
          let waiting = checkpointed();
          ctx.writing(() => ctx.sqlite.exec('CREATE TABLE filler (b BLOB)'));
          if (after === 0) await waiting;
          const before = statSync(path).size;
          // 2 MiB in one commit: SQLite's own checkpoint (1,000 pages) would have copied it at once.
          const insert = ctx.sqlite.prepare('INSERT INTO filler VALUES (?)');
          waiting = checkpointed();
          ctx.writing(() =>
            ctx.sqlite.transaction(() => {
              for (let i = 0; i < 4; i++) insert.run(randomBytes(512 * 1024));
            })(),
          );
          // The 2 MiB went to the WAL (a passive checkpoint leaves its size). Where the checkpoint runs
          // on a later turn of this thread, the file is still as it was: the commit itself copied
          // nothing. A worker may already be copying by now, so its file is not compared here.
          expect(statSync(`${path}-wal`).size).toBeGreaterThanOrEqual(2 * 1024 * 1024);
          if (thread === 'main' || after > 0) expect(statSync(path).size).toBe(before);
          if (after === 0) {
            // The checkpoint after it copied the pages into the file, on the thread asked for.
            await waiting;
            expect(done.at(-1)).toMatchObject({ thread, busy: 0 });
            expect(done.at(-1)!.checkpointed).toBe(done.at(-1)!.log);
            expect(statSync(path).size).toBeGreaterThanOrEqual(before + 2 * 1024 * 1024);
          } else {
            // With 200 ms, a quick write waits for more.
            await new Promise((resolve) => setTimeout(resolve, 50));
            expect(done).toEqual([]);
            expect(statSync(path).size).toBe(before);
          }
          const other = new Database(path, { readonly: true });
          expect(other.prepare('SELECT count(*) FROM filler').pluck().get()).toBe(4);
          other.close();
        } finally {
          await ctx.close();
        }
        // Closing stopped the worker's connection first, so the service's, the last, removed the WAL.
        expect(existsSync(`${path}-wal`)).toBe(false);
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
