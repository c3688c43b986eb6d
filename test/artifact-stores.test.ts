import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { createFsBlobStore } from '../src/blob/fs.js';
import { createUrlSigner } from '../src/core/url-signing.js';
import { createApp } from '../src/http/app.js';
import { createAuthenticator } from '../src/http/auth.js';
import type { ArtifactStore } from '../src/client/artifact-store.js';
import { discoverArtifactStore, isArtifactStore } from '../src/client/discover.js';
import { createEmbeddedArtifactStore } from '../src/service/embedded-store.js';
import { createInMemoryArtifactStore } from '../src/client/memory-store.js';
import { createNoOpArtifactStore, NOOP_WARNING } from '../src/client/noop-store.js';
import { rejection } from './helpers/artifact-errors.js';
import { sha256Hex } from '../src/core/hash.js';
import { createPostgresRepository } from '../src/db/postgres.js';
import type { ArtifactRepository } from '../src/db/repository.js';
import { createSqliteRepository } from '../src/db/sqlite.js';
import { describePostgres, freshDatabase } from './helpers/postgres.js';
import { createArtifactService } from '../src/service/artifact-service.js';
import { createServiceOperations } from '../src/service/operations.js';
import { DEFAULT_POLICY } from '../src/core/policy.js';
import { describeArtifactStoreContract } from './artifact-store.contract.js';

/** The embedded store over the repository `openRepo` opens (SQLite or Postgres) and fs blobs. */
const embeddedOn =
  (openRepo: (dir: string) => Promise<{ repo: ArtifactRepository; drop(): Promise<void> }>) => async () => {
    const dir = await mkdtemp(join(tmpdir(), 'artifact-embedded-'));
    const { repo, drop } = await openRepo(dir);
    const blobs = createFsBlobStore({ root: join(dir, 'blobs'), fsync: false });
    const signer = createUrlSigner([{ kid: 'e1', secret: 'embedded-link-key-0123456789abcdef0123' }]);
    const service = createArtifactService({
      repo,
      blobs,
      limits: {
        maxArtifactBytes: 10 * 1024 * 1024,
        defaultTtlSeconds: 3600,
        maxTtlSeconds: 7 * 24 * 3600,
        touchFlushMs: 0,
      },
      links: { signer, defaultTtlSeconds: 900, maxTtlSeconds: 3600 },
    });
    // The same service behind HTTP, so the links the embedded store makes have a server to answer them.
    const app = createApp({
      service,
      ops: createServiceOperations({ repo, blobs, policies: () => DEFAULT_POLICY }),
      auth: createAuthenticator({ hmacSecrets: [] }),
      urlSigner: signer,
    });
    const server = await new Promise<ServerType>((ok) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => ok(s));
    });
    const publicUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return {
      store: createEmbeddedArtifactStore({
        service,
        scope: { tenantId: 'acme', userId: 'u-1', sessionId: 's-a' },
        publicUrl,
      }),
      otherSession: createEmbeddedArtifactStore({
        service,
        scope: { tenantId: 'acme', userId: 'u-1', sessionId: 's-b' },
        publicUrl,
      }),
      async cleanup() {
        await new Promise((ok) => server.close(ok));
        await service.close();
        await repo.close();
        await drop();
        await rm(dir, { recursive: true, force: true });
      },
    };
  };

describeArtifactStoreContract(
  'embedded (SQLite file + fs blobs)',
  embeddedOn(async (dir) => ({
    repo: createSqliteRepository({ path: join(dir, 'artifacts.db') }),
    drop: async () => {},
  })),
);

describePostgres('the store contract on Postgres', () => {
  describeArtifactStoreContract(
    'embedded (Postgres + fs blobs)',
    embeddedOn(async () => {
      const db = await freshDatabase();
      return { repo: await createPostgresRepository({ url: db.url }), drop: () => db.drop() };
    }),
  );
});

describeArtifactStoreContract('in-memory', async () => {
  const store = createInMemoryArtifactStore({ scope: { tenantId: 'acme', sessionId: 's-a' } });
  return { store, otherSession: store.withScope({ tenantId: 'acme', sessionId: 's-b' }), cleanup: async () => {} };
});

describe('in-memory store specifics', () => {
  it('an expired reference is invisible; a re-put brings it back with a fresh expiry', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const store = createInMemoryArtifactStore({ now: () => now });
    const ref = await store.putText('short-lived', { ttl: 60 });
    now += 59_000;
    expect(await store.exists(ref.id)).toBe(true);
    now += 1_000;
    expect(await store.exists(ref.id)).toBe(false);
    expect(await store.get(ref.id)).toBeNull();
    expect(await store.getRef(ref.id)).toBeNull();
    expect((await store.list()).items).toEqual([]);
    expect(await store.delete(ref.id)).toBe(false);
    const again = await store.putText('short-lived', { ttl: 60 });
    expect(again.createdAt).toBe(new Date(now).toISOString());
    expect(again.expiresAt).toBe(new Date(now + 60_000).toISOString());
  });

  it('a re-put by the same scope refreshes the expiry but keeps createdAt', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const store = createInMemoryArtifactStore({ now: () => now });
    const first = await store.putText('kept', { ttl: 60 });
    now += 30_000;
    const second = await store.putText('kept', { ttl: 60 });
    expect(second.createdAt).toBe(first.createdAt);
    expect(second.expiresAt).toBe(new Date(now + 60_000).toISOString());
  });

  it('maxArtifactBytes refuses bigger puts with payload_too_large, streamed or not', async () => {
    const store = createInMemoryArtifactStore({ maxArtifactBytes: 10 });
    expect((await rejection(store.putBytes(new Uint8Array(11).fill(1)))).code).toBe('payload_too_large');
    const endless = new ReadableStream<Uint8Array>({ pull: (c) => c.enqueue(new Uint8Array(4).fill(2)) });
    expect((await rejection(store.putStream(endless))).code).toBe('payload_too_large');
    expect((await store.putBytes(new Uint8Array(10).fill(1))).sizeBytes).toBe(10);
  });

  it('ttl "never" needs allowNoExpiry, as on the service; allowed, the ref has no expiry and outlives time', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    expect((await rejection(createInMemoryArtifactStore().putText('x', { ttl: 'never' }))).code).toBe('bad_request');
    const store = createInMemoryArtifactStore({ allowNoExpiry: true, now: () => now });
    const ref = await store.putText('kept', { ttl: 'never' });
    expect(ref.expiresAt).toBeUndefined();
    now += 100 * 365 * 24 * 3600 * 1000;
    expect(await store.getRef(ref.id)).toMatchObject({ id: ref.id });
  });

  it('a ttl over the maximum is bad_request', async () => {
    const store = createInMemoryArtifactStore({ maxTtlSeconds: 100 });
    expect((await rejection(store.putText('x', { ttl: 101 }))).code).toBe('bad_request');
  });

  it('a session-bound store cannot put for another session', async () => {
    const store = createInMemoryArtifactStore({ scope: { tenantId: 't', sessionId: 's-1' } });
    expect((await rejection(store.putText('x', { scope: { sessionId: 's-2' } }))).code).toBe('forbidden');
    expect((await rejection(store.list({ sessionId: 's-2' }))).code).toBe('forbidden');
  });

  it('a tenant-wide view sees every session and deletes every reference', async () => {
    const tenant = createInMemoryArtifactStore({ scope: { tenantId: 't' } });
    const a = tenant.withScope({ tenantId: 't', sessionId: 's-1' });
    const b = tenant.withScope({ tenantId: 't', sessionId: 's-2' });
    const ref = await a.putText('both', { filename: 'a.txt' });
    await b.putText('both', { filename: 'b.txt' });
    expect((await tenant.list()).items.map((r) => r.filename).sort()).toEqual(['a.txt', 'b.txt']);
    expect((await tenant.list({ sessionId: 's-2' })).items.map((r) => r.filename)).toEqual(['b.txt']);
    expect(await tenant.delete(ref.id)).toBe(true);
    expect(await a.exists(ref.id)).toBe(false);
    expect(await b.exists(ref.id)).toBe(false);
  });

  it('ending a session: a bound view ends only its own, a trace-bound one none, a tenant-wide one any', async () => {
    const tenant = createInMemoryArtifactStore({ scope: { tenantId: 't' } });
    const s1 = tenant.withScope({ tenantId: 't', sessionId: 's-1' });
    const s2 = tenant.withScope({ tenantId: 't', sessionId: 's-2' });
    const traced = tenant.withScope({ tenantId: 't', traceId: 'tr-1' });
    const ref = await s2.putText('in s-2');
    await s2.names!.saveVersion({ app: 'app', name: 'n' }, 'a version');
    expect((await rejection(s1.endSession('s-2'))).code).toBe('forbidden');
    expect((await rejection(traced.endSession('s-2'))).code).toBe('forbidden');
    expect((await rejection(tenant.endSession())).message).toMatch(/Name the session to end/);
    expect(await s2.exists(ref.id)).toBe(true);
    expect(await tenant.endSession('s-2')).toEqual({
      sessionId: 's-2',
      refs: 2,
      bytes: 'in s-2'.length + 'a version'.length,
      versions: 1,
    });
    expect(await s2.exists(ref.id)).toBe(false);
    // Another tenant's session of the same name is not this tenant's to end.
    const other = tenant.withScope({ tenantId: 'u', sessionId: 's-2' });
    const theirs = await other.putText('in u');
    expect((await tenant.endSession('s-2')).refs).toBe(0);
    expect(await other.exists(theirs.id)).toBe(true);
  });

  it('a named version is a reference, as in the service: it lists, reads by its id and deletes like any other', async () => {
    const store = createInMemoryArtifactStore({ scope: { tenantId: 't', userId: 'u', sessionId: 's-1' } });
    const v0 = await store.names!.saveVersion({ app: 'app', name: 'plan.md' }, '# Plan');
    expect((await store.list()).items).toEqual([v0]);
    expect(new TextDecoder().decode((await store.get(v0.id))!)).toBe('# Plan');
    expect(await store.delete(v0.id)).toBe(true);
    expect(await store.names!.loadVersion({ app: 'app', name: 'plan.md' })).toBeNull();
    // The name's counter stays: the next save is version 1.
    expect((await store.names!.saveVersion({ app: 'app', name: 'plan.md' }, '# Plan, again')).version).toBe(1);
  });

  it('does not share buffers with the caller', async () => {
    const store = createInMemoryArtifactStore();
    const data = new Uint8Array([1, 2, 3]);
    const ref = await store.putBytes(data);
    data[0] = 9;
    const got = (await store.get(ref.id))!;
    expect(got).toEqual(new Uint8Array([1, 2, 3]));
    got[1] = 9;
    expect(await store.get(ref.id)).toEqual(new Uint8Array([1, 2, 3]));
  });
});

describe('embedded store specifics', () => {
  it('refuses to put for a session other than its own', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'artifact-embedded-'));
    const repo = createSqliteRepository({ path: join(dir, 'artifacts.db') });
    const service = createArtifactService({
      repo,
      blobs: createFsBlobStore({ root: join(dir, 'blobs'), fsync: false }),
      limits: { maxArtifactBytes: 1024, defaultTtlSeconds: 60, maxTtlSeconds: 120, touchFlushMs: 0 },
    });
    try {
      const store = createEmbeddedArtifactStore({
        service,
        scope: { tenantId: 't', sessionId: 's-1' },
        persistent: false,
      });
      expect(store.capabilities).toEqual({
        persistent: false,
        ranges: true,
        signedUrls: false,
        events: false,
        names: true,
        views: true,
      });
      expect((await rejection(store.putText('x', { scope: { sessionId: 's-2' } }))).code).toBe('forbidden');
      expect((await rejection(store.putBytes(new Uint8Array(2048).fill(1)))).code).toBe('payload_too_large');
      const ref = await store.putText('x', { scope: { traceId: 'tr-1' } });
      expect(ref.scope).toEqual({ tenantId: 't', sessionId: 's-1', traceId: 'tr-1' });
      // Ending a session: its own only; a store bound to a trace ends none.
      expect((await rejection(store.endSession!('s-2'))).code).toBe('forbidden');
      const traced = createEmbeddedArtifactStore({ service, scope: { tenantId: 't', traceId: 'tr-1' } });
      expect((await rejection(traced.endSession!('s-1'))).code).toBe('forbidden');
      expect(await store.exists(ref.id)).toBe(true);
      expect(await store.endSession!()).toEqual({ sessionId: 's-1', refs: 1, bytes: 1, versions: 0 });
    } finally {
      await service.close();
      await repo.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('NoOp store', () => {
  it('stores nothing but answers with a ref marked truncated, computed like a real one', async () => {
    const warn = vi.fn();
    const store = createNoOpArtifactStore({ warn });
    const data = new TextEncoder().encode('%PDF-1.7 pretend');
    const ref = await store.putBytes(data, {
      mimeType: 'application/pdf',
      filename: 'dir/Sales.pdf',
      namespace: 'tableau.download_workbook',
      source: { tool: 'download_workbook' },
    });
    const sha = await sha256Hex(data);
    expect(ref).toMatchObject({
      id: `tableau.download_workbook_${sha.slice(0, 24)}`,
      sha256: sha,
      sizeBytes: data.byteLength,
      mimeType: 'application/pdf',
      filename: 'Sales.pdf',
      namespace: 'tableau.download_workbook',
      source: { tool: 'download_workbook', truncated: true, warning: NOOP_WARNING },
    });
    expect(await store.get(ref.id)).toBeNull();
    expect(await store.getStream(ref.id)).toBeNull();
    expect(await store.getRef(ref.id)).toBeNull();
    expect(await store.exists(ref.id)).toBe(false);
    expect(await store.delete(ref.id)).toBe(false);
    expect(await store.list()).toEqual({ items: [] });
    expect(store.capabilities).toEqual({ persistent: false, ranges: false, signedUrls: false, events: false });
    // It kept nothing, so ending a session removes nothing; the id is checked as everywhere.
    expect(await store.endSession!('s-1')).toEqual({ sessionId: 's-1', refs: 0, bytes: 0, versions: 0 });
    expect((await rejection(store.endSession!())).code).toBe('bad_request');
    expect((await rejection(store.endSession!('x'.repeat(257)))).code).toBe('bad_request');
    const bound = createNoOpArtifactStore({ warn, scope: { tenantId: 'local', sessionId: 's-9' } });
    expect((await bound.endSession!()).sessionId).toBe('s-9');
  });

  it('warns once, however many puts', async () => {
    const warn = vi.fn();
    const store = createNoOpArtifactStore({ warn });
    await store.putText('a');
    await store.putBase64('data:image/png;base64,iVBORw0KGgo=');
    await store.putStream(new Response('streamed').body!);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledWith(NOOP_WARNING);
  });

  it('reports the real size and mime of text, base64 and streams', async () => {
    const store = createNoOpArtifactStore({ warn: () => {} });
    expect(await store.putText('héllo')).toMatchObject({ sizeBytes: 6, mimeType: 'text/plain; charset=utf-8' });
    expect(await store.putBase64('data:image/png;base64,iVBORw0KGgo=')).toMatchObject({
      sizeBytes: 8,
      mimeType: 'image/png',
    });
    expect(await store.putStream(new Response('streamed').body!)).toMatchObject({ sizeBytes: 8 });
  });

  it('still refuses what no store could keep: bad namespace and malformed base64', async () => {
    const store = createNoOpArtifactStore({ warn: () => {} });
    expect((await rejection(store.putText('x', { namespace: 'Bad NS' }))).code).toBe('bad_request');
    expect((await rejection(store.putBase64('not base64 at all!'))).code).toBe('bad_request');
  });
});

describe('discoverArtifactStore', () => {
  const memory = () => createInMemoryArtifactStore();

  it('prefers the explicit store', () => {
    const explicit = memory();
    expect(discoverArtifactStore({ artifactStore: memory() }, explicit)).toBe(explicit);
  });

  it('then the state store’s artifactStore', () => {
    const nested = memory();
    expect(discoverArtifactStore({ artifactStore: nested })).toBe(nested);
  });

  it('then a state store that is itself an ArtifactStore', () => {
    const stateStore = Object.assign(memory(), { saveState: async () => {} });
    expect(discoverArtifactStore(stateStore)).toBe(stateStore);
  });

  it('else a NoOp store that warns on first put', async () => {
    const warn = vi.fn();
    for (const stateStore of [undefined, null, {}, { artifactStore: { putBytes() {} } }, { get() {}, list() {} }]) {
      const store = discoverArtifactStore(stateStore, undefined, { warn });
      expect(store.capabilities.persistent).toBe(false);
      expect((await store.putText('x')).source).toMatchObject({ truncated: true });
    }
    expect(warn).toHaveBeenCalledTimes(5);
  });

  it('isArtifactStore checks every method and capabilities', () => {
    const store: ArtifactStore = memory();
    expect(isArtifactStore(store)).toBe(true);
    expect(isArtifactStore({ ...store, capabilities: undefined })).toBe(false);
    const { list: _list, ...withoutList } = store;
    expect(isArtifactStore(withoutList)).toBe(false);
  });
});
