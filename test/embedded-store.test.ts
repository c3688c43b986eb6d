/**
 * openArtifactStore (artifact-store/node): a data dir opened in-process as `serve` opens it, with no
 * HTTP listener. The ArtifactStore contract, serve's configuration and tenant policies, sharing the
 * data dir with a running service, close() releasing the SQLite file, the worker threads and the
 * retention timer, and the clear error for drivers handed to createEmbeddedArtifactStore. The same
 * with `memory: true`: the contract, the configured policies, nothing on disk, nothing left by close().
 */
import { existsSync, mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runningDir } from '../src/cli/data-dir.js';
import { createHttpArtifactStore } from '../src/client/http-store.js';
import { loadConfig } from '../src/core/config.js';
import {
  type EmbeddedArtifactStore,
  type OpenArtifactStoreOptions,
  openArtifactStore,
  openNodeDrivers,
  startServer,
} from '../src/node.js';
import { createEmbeddedArtifactStore } from '../src/service/embedded-store.js';
import { describeArtifactStoreContract } from './artifact-store.contract.js';
import { expectArtifactError } from './helpers/artifact-errors.js';
import { listFiles } from './helpers/drivers.js';

const dirs: string[] = [];
const open: { close(): Promise<void> }[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'artifact-store-embedded-'));
  dirs.push(dir);
  return dir;
}

/** A store over `dataDir`, closed after the test (a second close is a no-op, so tests may close it too). */
async function openStore(
  dataDir: string,
  scope?: OpenArtifactStoreOptions['scope'],
  env: Record<string, string> = {},
): Promise<EmbeddedArtifactStore> {
  const store = await openArtifactStore({ dataDir, ...(scope ? { scope } : {}), env });
  open.push(store);
  return store;
}

afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const text = (bytes: Uint8Array | null) => (bytes ? new TextDecoder().decode(bytes) : null);

/** What this process has open inside `dir` (Linux: /proc/self/fd). */
function openFilesIn(dir: string): string[] {
  const out: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(dir)) out.push(target);
    } catch {
      // closed meanwhile (the fd readdir itself used)
    }
  }
  return out;
}

/** This process's threads (Linux: /proc/self/task): the main one, V8's and libuv's, and worker threads. */
const threadCount = () => readdirSync('/proc/self/task').length;

describeArtifactStoreContract('openArtifactStore (SQLite file + fs blobs, no HTTP)', async () => {
  const dir = tempDir();
  const store = await openStore(dir, { tenantId: 'acme', userId: 'u-1', sessionId: 's-a' });
  return {
    store,
    otherSession: store.withScope({ tenantId: 'acme', userId: 'u-1', sessionId: 's-b' }),
    cleanup: () => store.close(),
  };
});

describe('openArtifactStore', () => {
  it('stores text and bytes in the data dir, reads and lists them back, and keeps them across close and reopen', async () => {
    const dir = tempDir();
    const store = await openStore(dir, { sessionId: 's-42' });
    expect(store.scope).toEqual({ tenantId: 'dev', sessionId: 's-42' });
    expect(store.capabilities).toMatchObject({ persistent: true, ranges: true, views: true, names: true });

    const note = await store.putText('hello from the embedded store', { filename: 'hello.txt' });
    const pdf = new TextEncoder().encode('%PDF-1.4\n% a stand-in\n');
    const doc = await store.putBytes(pdf, { mimeType: 'application/pdf', filename: 'Sales.pdf', namespace: 'reports' });
    expect(note.scope).toEqual({ tenantId: 'dev', sessionId: 's-42' });
    expect(text(await store.get(note.id))).toBe('hello from the embedded store');
    expect(await store.get(doc.id)).toEqual(pdf);
    expect((await store.list()).items.map((r) => r.id).sort()).toEqual([note.id, doc.id].sort());
    expect((await store.list({ namespace: 'reports' })).items.map((r) => r.id)).toEqual([doc.id]);
    // The serve layout: {dataDir}/artifacts.db and {dataDir}/blobs.
    expect(existsSync(join(dir, 'artifacts.db'))).toBe(true);
    expect(listFiles(join(dir, 'blobs'))).toHaveLength(2);

    await store.close();
    await store.close(); // a no-op
    await expect(store.get(note.id)).rejects.toThrow(/closed.*openArtifactStore/);
    await expect(store.names!.listVersions({ app: 'a', name: 'n' })).rejects.toThrow(/closed/);

    const again = await openStore(dir, { sessionId: 's-42' });
    expect(text(await again.get(note.id))).toBe('hello from the embedded store');
    expect(await again.getRef(doc.id)).toMatchObject({ filename: 'Sales.pdf', mimeType: 'application/pdf' });
  });

  it('reads the data dir and every setting from ARTIFACT_STORE_* as serve does (env option, else process.env)', async () => {
    const dir = tempDir();
    const store = await openArtifactStore({
      env: { ARTIFACT_STORE_DATA_DIR: dir, ARTIFACT_STORE_MAX_ARTIFACT_BYTES: '100' },
    });
    open.push(store);
    expect((await expectArtifactError(store.putBytes(new Uint8Array(101)), 'payload_too_large')).message).toMatch(
      /100/,
    );
    await store.putText('fits');
    expect(existsSync(join(dir, 'artifacts.db'))).toBe(true);
    // An unknown setting is refused as serve refuses it, naming the closest one.
    await expect(openArtifactStore({ dataDir: dir, env: { ARTIFACT_STORE_MAX_ARTIFACT_BYTE: '1' } })).rejects.toThrow(
      /ARTIFACT_STORE_MAX_ARTIFACT_BYTE: not a setting\. Did you mean "ARTIFACT_STORE_MAX_ARTIFACT_BYTES"/,
    );
    // A scope part out of bounds is refused at open, as a put naming it would be.
    await expect(openArtifactStore({ dataDir: dir, env: {}, scope: { sessionId: '' } })).rejects.toThrow(
      /Invalid scope sessionId/,
    );
  });

  it("applies the tenant policies of the configuration: a put over the tenant's quota is refused with quota_exceeded, as over HTTP", async () => {
    const dir = tempDir();
    const env = { ARTIFACT_STORE_TENANT_POLICIES: JSON.stringify({ acme: { maxTenantBytes: 3000 } }) };
    const acme = await openStore(dir, { tenantId: 'acme', sessionId: 's-1' }, env);
    await acme.putBytes(new Uint8Array(2000).fill(1));
    const embedded = await expectArtifactError(acme.putBytes(new Uint8Array(2000).fill(2)), 'quota_exceeded');
    expect(embedded.details).toMatchObject({ scope: 'tenant', limit: 'maxTenantBytes', limitValue: 3000 });
    // Other tenants keep the base policy (no tenant quota).
    await acme.withScope({ tenantId: 'other' }).putBytes(new Uint8Array(4000).fill(3));

    // serve on the same data dir, with the same configuration, answers the same put the same way.
    const server = await startServer(loadConfig(env, { env: 'test', dataDir: dir, port: 0, logLevel: 'silent' }));
    try {
      const token = await server.mintToken({ tenant: 'acme', sub: 'u', perms: ['read', 'write'] });
      const http = createHttpArtifactStore({ baseUrl: server.url, token, scope: { sessionId: 's-1' } });
      const overHttp = await expectArtifactError(http.putBytes(new Uint8Array(2000).fill(2)), 'quota_exceeded');
      expect(overHttp.details).toEqual(embedded.details);
    } finally {
      await server.close();
    }
  });

  it('shares a data dir with a service running on it, and writes no running-service record of its own', async () => {
    const dir = tempDir();
    const server = await startServer(loadConfig({}, { env: 'test', dataDir: dir, port: 0, logLevel: 'silent' }));
    try {
      const http = createHttpArtifactStore({ baseUrl: server.url, token: server.token, scope: { sessionId: 's-9' } });
      const fromHttp = await http.putText('put over HTTP');
      // The default tenant is the dev token's: what one stores, the other sees.
      const store = await openStore(dir, { sessionId: 's-9' });
      expect(text(await store.get(fromHttp.id))).toBe('put over HTTP');
      const fromEmbedded = await store.putText('put in-process');
      expect(text(await http.get(fromEmbedded.id))).toBe('put in-process');
      // The CLI's ops commands find a data dir through `serve`'s records: an embedded store is not one.
      expect(existsSync(runningDir()) ? readdirSync(runningDir()) : []).toEqual([]);
      await store.close();
      // Closing it leaves the service serving.
      expect(text(await http.get(fromEmbedded.id))).toBe('put in-process');
      expect((await http.putText('still up')).sizeBytes).toBe(8);
    } finally {
      await server.close();
    }
  });

  it('withScope gives stores for other scopes over the same data dir; reads stay inside each scope', async () => {
    const dir = tempDir();
    const a = await openStore(dir, { tenantId: 'acme', sessionId: 's-a' });
    const b = a.withScope({ tenantId: 'acme', sessionId: 's-b' });
    const other = a.withScope({ tenantId: 'globex' });
    expect(b.scope).toEqual({ tenantId: 'acme', sessionId: 's-b' });
    const ref = await a.putText('session a only');
    expect(await b.get(ref.id)).toBeNull();
    expect(await other.exists(ref.id)).toBe(false);
    // A put may not leave its store's scope.
    await expectArtifactError(b.putText('x', { scope: { sessionId: 's-a' } }), 'forbidden');
    expect((await a.endSession()).refs).toBe(1);
    expect(await a.exists(ref.id)).toBe(false);
    // One close for all of them.
    await b.close();
    await expect(a.list()).rejects.toThrow(/closed/);
    await expect(other.list()).rejects.toThrow(/closed/);
  });

  it('close() releases the SQLite file, the worker threads and the retention timer', async () => {
    const dir = tempDir();
    const env = { ARTIFACT_STORE_RETENTION_INTERVAL_SECONDS: '60', ARTIFACT_STORE_GC_GRACE_SECONDS: '0' };
    // A first store that writes starts what stays for the process's life (libuv's thread pool, which
    // its file writes start when this test runs first); it writes elsewhere, to leave `dir` empty.
    const first = await openStore(tempDir(), undefined, env);
    await first.putText('starts the thread pool');
    await first.close();
    const threadsBefore = threadCount();

    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const store = await openStore(dir, { sessionId: 's-1' }, env);
      const json = await store.putText(JSON.stringify([{ title: 'one' }, { title: 'two' }]), {
        mimeType: 'application/json',
      });
      // A JSONPath query runs on the view sandbox's worker thread.
      expect((await store.query!(json.id, { path: '$[1].title' })).matches).toEqual([
        { path: "$[1]['title']", value: 'two' },
      ]);
      expect(threadCount()).toBeGreaterThan(threadsBefore);
      expect(openFilesIn(dir).some((f) => f.endsWith('artifacts.db'))).toBe(true);

      // Deleted, its bytes wait for retention; the schedule's tick runs it, and close() waits for the run.
      expect(await store.delete(json.id)).toBe(true);
      expect(listFiles(join(dir, 'blobs'))).toHaveLength(1);
      vi.advanceTimersByTime(60_000);
      await store.close();
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
    expect(listFiles(join(dir, 'blobs'))).toEqual([]);
    expect(openFilesIn(dir)).toEqual([]);
    expect(threadCount()).toBe(threadsBefore);
  });
});

describeArtifactStoreContract(
  'openArtifactStore({ memory: true }) (SQLite in memory + memory blobs, no HTTP)',
  async () => {
    const store = await openArtifactStore({
      memory: true,
      scope: { tenantId: 'acme', userId: 'u-1', sessionId: 's-a' },
      env: {},
    });
    open.push(store);
    return {
      store,
      otherSession: store.withScope({ tenantId: 'acme', userId: 'u-1', sessionId: 's-b' }),
      cleanup: () => store.close(),
    };
  },
);

describe('openArtifactStore({ memory: true })', () => {
  /** A store in memory, closed after the test. */
  async function openMemory(
    scope?: OpenArtifactStoreOptions['scope'],
    env: Record<string, string> = {},
  ): Promise<EmbeddedArtifactStore> {
    const store = await openArtifactStore({ memory: true, ...(scope ? { scope } : {}), env });
    open.push(store);
    return store;
  }

  it("is the service in memory: the configuration's policies apply, withScope shares the memory, nothing reaches the disk", async () => {
    const dataDir = join(tempDir(), 'data');
    const env = {
      ARTIFACT_STORE_DATA_DIR: dataDir,
      ARTIFACT_STORE_TENANT_POLICIES: JSON.stringify({ acme: { maxTenantBytes: 3000 } }),
    };
    const acme = await openMemory({ tenantId: 'acme', sessionId: 's-1' }, env);
    expect(acme.scope).toEqual({ tenantId: 'acme', sessionId: 's-1' });
    expect(acme.capabilities).toEqual({
      persistent: false,
      ranges: true,
      signedUrls: false,
      events: false,
      names: true,
      views: true,
    });
    const kept = await acme.putBytes(new Uint8Array(2000).fill(1));
    const refused = await expectArtifactError(acme.putBytes(new Uint8Array(2000).fill(2)), 'quota_exceeded');
    expect(refused.details).toMatchObject({ scope: 'tenant', limit: 'maxTenantBytes', limitValue: 3000 });
    // Another session of the same tenant, over the same memory: the tenant's quota counts both.
    const s2 = acme.withScope({ tenantId: 'acme', sessionId: 's-2' });
    expect(await s2.get(kept.id)).toBeNull();
    await expectArtifactError(s2.putBytes(new Uint8Array(2000).fill(3)), 'quota_exceeded');
    const tenantWide = acme.withScope({ tenantId: 'acme' });
    expect((await tenantWide.list()).items.map((r) => r.id)).toEqual([kept.id]);
    // Views and named versions run as on a data dir.
    const log = await s2.putText('one\ntwo\nthree');
    expect((await s2.search!(log.id, { pattern: 'two' })).lines).toContainEqual({ line: 2, text: 'two', match: true });
    await s2.names!.saveVersion({ app: 'app', name: 'plan' }, 'v0');
    expect((await s2.names!.saveVersion({ app: 'app', name: 'plan' }, 'v1')).version).toBe(1);
    expect(await acme.endSession()).toMatchObject({ sessionId: 's-1', refs: 1, bytes: 2000, versions: 0 });
    // A second memory store is a memory of its own.
    const other = await openMemory({ tenantId: 'acme', sessionId: 's-2' }, env);
    expect(await other.exists(log.id)).toBe(false);
    expect(existsSync(dataDir)).toBe(false);

    await acme.close();
    await expect(s2.get(log.id)).rejects.toThrow(/closed.*what it held in memory went with it/);
  });

  it('refuses a dataDir, which it would not use', async () => {
    await expect(openArtifactStore({ memory: true, dataDir: tempDir(), env: {} })).rejects.toThrow(
      /`memory: true` keeps nothing on disk, so it takes no `dataDir`/,
    );
  });

  it('close() leaves no worker thread, timer or handle', async () => {
    const env = { ARTIFACT_STORE_RETENTION_INTERVAL_SECONDS: '60', ARTIFACT_STORE_GC_GRACE_SECONDS: '0' };
    // A first open and close starts what stays for the process's life (libuv's thread pool).
    await (await openMemory(undefined, env)).close();
    const threadsBefore = threadCount();
    const resourcesBefore = process.getActiveResourcesInfo();

    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const store = await openMemory({ sessionId: 's-1' }, env);
      const json = await store.putText(JSON.stringify([{ title: 'one' }, { title: 'two' }]), {
        mimeType: 'application/json',
      });
      // A JSONPath query runs on the view sandbox's worker thread.
      expect((await store.query!(json.id, { path: '$[1].title' })).matches).toEqual([
        { path: "$[1]['title']", value: 'two' },
      ]);
      expect(threadCount()).toBeGreaterThan(threadsBefore);
      expect(vi.getTimerCount()).toBeGreaterThan(0);
      // The schedule's tick runs retention, and close() waits for the run.
      expect(await store.delete(json.id)).toBe(true);
      vi.advanceTimersByTime(60_000);
      await store.close();
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
    expect(threadCount()).toBe(threadsBefore);
    // Nothing of the store's is left: no resource that was not there before it opened.
    const left = [...resourcesBefore];
    const added = process.getActiveResourcesInfo().filter((r) => {
      const i = left.indexOf(r);
      if (i >= 0) left.splice(i, 1);
      return i < 0;
    });
    expect(added).toEqual([]);
  });
});

describe('createEmbeddedArtifactStore', () => {
  it('refuses the drivers openNodeDrivers returns in place of a service, naming what to pass', async () => {
    const dir = tempDir();
    const drivers = await openNodeDrivers(loadConfig({}, { dataDir: dir }));
    try {
      expect(() => createEmbeddedArtifactStore({ service: drivers as never, scope: { tenantId: 'acme' } })).toThrow(
        /`service` must be an ArtifactService .*not drivers \(what openNodeDrivers returns\).*openArtifactStore/,
      );
      expect(() => createEmbeddedArtifactStore({ service: undefined as never, scope: { tenantId: 'acme' } })).toThrow(
        /not undefined/,
      );
    } finally {
      await drivers.close();
    }
  });
});
