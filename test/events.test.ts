import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createFsBlobStore } from '../src/blob/fs.js';
import type { ArtifactEvent } from '../src/client/artifact-store.js';
import { createHttpArtifactStore } from '../src/client/index.js';
import { loadConfig, policiesOf } from '../src/core/config.js';
import { createSqliteRepository } from '../src/db/sqlite.js';
import { startServer, type RunningServer } from '../src/node.js';
import { runRetention } from '../src/service/retention/index.js';
import { createArtifactService } from '../src/service/artifact-service.js';
import { issueApiKey } from '../src/service/api-keys.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function serve(env: Record<string, string> = {}): Promise<{ server: RunningServer; dataDir: string }> {
  const dataDir = await mkdtemp(join(tmpdir(), 'artifact-events-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const server = await startServer(
    loadConfig(env, { port: 0, dataDir, env: 'test', logLevel: 'silent', shutdownGraceMs: 2000 }),
  );
  cleanups.push(() => server.close());
  return { server, dataDir };
}

/** Reads events from an iterator into an array as they come; `next(n)` waits until n arrived. */
function collect(iterable: AsyncIterable<ArtifactEvent>) {
  const got: ArtifactEvent[] = [];
  let wake: (() => void) | undefined;
  const done = (async () => {
    for await (const e of iterable) {
      got.push(e);
      wake?.();
    }
  })();
  return {
    got,
    done,
    async next(n: number, timeoutMs = 10_000): Promise<ArtifactEvent[]> {
      const deadline = Date.now() + timeoutMs;
      while (got.length < n) {
        if (Date.now() > deadline)
          throw new Error(`waited for ${n} events, got ${got.length}: ${got.map((e) => e.type).join(', ')}`);
        await new Promise<void>((r) => {
          wake = r;
          setTimeout(r, 100);
        });
      }
      return got.slice(0, n);
    },
  };
}

describe('GET /v1/events through the SDK', () => {
  it("streams stored, deleted and expired events of the caller's session, including a retention run by another process", {
    timeout: 30_000,
  }, async () => {
    const { server, dataDir } = await serve();
    const s1 = await server.mintToken({ tenant: 'acme', sub: 'u', session: 's1', perms: ['read', 'write'] });
    const s2 = await server.mintToken({ tenant: 'acme', sub: 'u', session: 's2', perms: ['read', 'write'] });
    const mine = createHttpArtifactStore({ baseUrl: server.url, token: s1 });
    const theirs = createHttpArtifactStore({ baseUrl: server.url, token: s2 });
    expect(mine.capabilities.events).toBe(true);

    const abort = new AbortController();
    const stream = collect(mine.events!({ signal: abort.signal }));
    const other = collect(theirs.events!({ signal: abort.signal }));
    // Give both streams time to connect: they start after the newest event.
    await new Promise((r) => setTimeout(r, 500));

    const kept = await mine.putText('kept', { filename: 'kept.txt' });
    const brief = await mine.putText('brief', { ttl: 1 });
    await theirs.putText('not yours');
    expect(await mine.delete(kept.id)).toBe(true);

    // Expired by a retention run on its own connection, as the CLI in another process would.
    await new Promise((r) => setTimeout(r, 1100));
    const cli = createSqliteRepository({ path: join(dataDir, 'artifacts.db') });
    try {
      const report = await runRetention({
        repo: cli,
        blobs: createFsBlobStore({ root: join(dataDir, 'blobs') }),
        policies: policiesOf(loadConfig({})),
        graceMs: 3_600_000,
      });
      expect(report.expired.refs).toBe(1);
    } finally {
      await cli.close();
    }

    const events = await stream.next(4);
    expect(events.map((e) => [e.type, e.ref.id])).toEqual([
      ['artifact.stored', kept.id],
      ['artifact.stored', brief.id],
      ['artifact.deleted', kept.id],
      ['artifact.expired', brief.id],
    ]);
    // The ArtifactRef as it was, never bytes.
    expect(events[0]!.ref).toMatchObject({
      id: kept.id,
      filename: 'kept.txt',
      mimeType: 'text/plain; charset=utf-8',
      sizeBytes: 4,
      scope: { tenantId: 'acme', sessionId: 's1' },
    });
    expect(Object.keys(events[0]!).sort()).toEqual(['at', 'id', 'ref', 'type']);
    expect(JSON.stringify(events)).not.toContain('kept"');
    // Session s2 saw only its own put.
    expect((await other.next(1)).map((e) => e.type)).toEqual(['artifact.stored']);
    await new Promise((r) => setTimeout(r, 400));
    expect(other.got).toHaveLength(1);

    abort.abort();
    await stream.done;
    await other.done;
  });

  it('resumes after Last-Event-ID without losing what happened while disconnected', { timeout: 30_000 }, async () => {
    const { server } = await serve();
    const token = await server.mintToken({ tenant: 'acme', sub: 'u', session: 's1', perms: ['read', 'write'] });
    const store = createHttpArtifactStore({ baseUrl: server.url, token });
    const first = new AbortController();
    const a = collect(store.events!({ signal: first.signal }));
    await new Promise((r) => setTimeout(r, 400));
    const one = await store.putText('one');
    const [seen] = await a.next(1);
    first.abort();
    await a.done;

    // Two changes while nobody listens.
    const two = await store.putText('two');
    await store.delete(one.id);

    const second = new AbortController();
    const b = collect(store.events!({ lastEventId: seen!.id, signal: second.signal }));
    expect((await b.next(2)).map((e) => [e.type, e.ref.id])).toEqual([
      ['artifact.stored', two.id],
      ['artifact.deleted', one.id],
    ]);
    second.abort();
    await b.done;
  });

  it('reconnects by itself after the service restarts, and misses nothing written meanwhile', {
    timeout: 30_000,
  }, async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'artifact-events-'));
    cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
    const config = { dataDir, env: 'development' as const, logLevel: 'silent' as const, shutdownGraceMs: 2000 };
    const first = await startServer(loadConfig({}, { ...config, port: 0 }));
    const port = Number(new URL(first.url).port);
    const token = first.token;
    const store = createHttpArtifactStore({ baseUrl: first.url, token, retryBaseMs: 50, retryMaxDelayMs: 300 });
    const abort = new AbortController();
    const stream = collect(store.events!({ sessionId: 's1', signal: abort.signal }));
    await new Promise((r) => setTimeout(r, 400));
    const before = await store.putText('before', { scope: { sessionId: 's1' } });
    await stream.next(1);

    // The service goes away; a change happens while it is down (another process, same database).
    await first.close();
    const repo = createSqliteRepository({ path: join(dataDir, 'artifacts.db') });
    const offline = createArtifactService({
      repo,
      blobs: createFsBlobStore({ root: join(dataDir, 'blobs') }),
      limits: { maxArtifactBytes: 1 << 20, defaultTtlSeconds: 3600, maxTtlSeconds: 3600, touchFlushMs: 0 },
    });
    const during = await offline.putText({ tenantId: 'dev', sessionId: 's1' }, 'while down');
    await offline.close();
    await repo.close();
    await new Promise((r) => setTimeout(r, 500));

    const second = await startServer(loadConfig({}, { ...config, port }));
    cleanups.push(() => second.close());
    const after = await store.putText('after', { scope: { sessionId: 's1' } });
    expect((await stream.next(3)).map((e) => e.ref.id)).toEqual([before.id, during.ref.id, after.id]);
    abort.abort();
    await stream.done;
  });

  it('sends heartbeats on an idle stream, refuses a bad Last-Event-ID, and needs a token', {
    timeout: 30_000,
  }, async () => {
    const { server } = await serve({ ARTIFACT_STORE_EVENTS_HEARTBEAT_SECONDS: '1' });
    const token = await server.mintToken({ tenant: 'acme', perms: ['read'] });
    expect((await fetch(`${server.url}/v1/events`)).status).toBe(401);
    const bad = await fetch(`${server.url}/v1/events`, {
      headers: { Authorization: `Bearer ${token}`, 'Last-Event-ID': 'yesterday' },
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { code: string }).code).toBe('bad_request');

    const abort = new AbortController();
    const res = await fetch(`${server.url}/v1/events`, {
      headers: { Authorization: `Bearer ${token}` },
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    const deadline = Date.now() + 20_000;
    while (!text.includes(': heartbeat') && Date.now() < deadline) text += (await reader.read()).value ?? '';
    expect(text).toContain(': heartbeat');
    abort.abort();
    await reader.cancel().catch(() => {});
  });
});

/** Reads an SSE stream for a while and returns its events' data (without the id-only positions). */
async function readEvents(
  url: string,
  token: string,
  until: (events: Record<string, any>[]) => boolean,
  timeoutMs = 10_000,
): Promise<Record<string, any>[]> {
  const controller = new AbortController();
  const res = await fetch(url, { headers: { Authorization: `Bearer ${token}` }, signal: controller.signal });
  expect(res.status).toBe(200);
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const events: Record<string, any>[] = [];
  let text = '';
  const deadline = setTimeout(() => controller.abort(), timeoutMs);
  try {
    while (!until(events)) {
      const { done, value } = await reader.read();
      if (done) break;
      text += value;
      const blocks = text.split('\n\n');
      text = blocks.pop()!;
      for (const block of blocks) {
        const data = /^data: (.+)$/m.exec(block);
        if (data) events.push(JSON.parse(data[1]!));
      }
    }
  } catch (err) {
    if (!controller.signal.aborted) throw err;
  } finally {
    clearTimeout(deadline);
    controller.abort();
  }
  return events;
}

describe('event streams by role', () => {
  it("an operator streams every tenant's events and the audit trail; a tenant's admin its tenant's, audit included when asked; agents no audit", {
    timeout: 30_000,
  }, async () => {
    const { server } = await serve();
    const { key: operator } = await issueApiKey(server.repo, { operator: true });
    const acmeAdmin = await server.mintToken({ tenant: 'acme', sub: 'boss', perms: ['read', 'write', 'admin'] });
    const acmeAgent = await server.mintToken({ tenant: 'acme', sub: 'agent', perms: ['read', 'write'] });
    const betaAdmin = await server.mintToken({ tenant: 'beta', sub: 'boss', perms: ['read', 'write', 'admin'] });
    const summary = (events: Record<string, any>[]) =>
      events.map((e) =>
        e.ref ? `${e.type} ${e.ref.scope.tenantId}` : `${e.type} ${e.audit.action} ${e.audit.tenantId || '(service)'}`,
      );
    // Each stream reads until the last put it can see (the outbox is in order): anything it should
    // not see would have come before.
    const upTo = (n: number) => (events: Record<string, any>[]) =>
      events.filter((e) => e.ref?.filename === 'last').length >= n;

    const streams = {
      operator: readEvents(`${server.url}/v1/events?audit=true`, operator, upTo(2)),
      operatorBeta: readEvents(`${server.url}/v1/events?tenant=beta`, operator, upTo(1)),
      acmeAdmin: readEvents(`${server.url}/v1/events?audit=true`, acmeAdmin, upTo(1)),
      acmeAdminPlain: readEvents(`${server.url}/v1/events`, acmeAdmin, upTo(1)),
      acmeAgent: readEvents(`${server.url}/v1/events`, acmeAgent, upTo(1)),
      betaAdmin: readEvents(`${server.url}/v1/events?audit=true`, betaAdmin, upTo(1)),
    };
    await new Promise((r) => setTimeout(r, 500));
    const put = async (token: string, body: string, filename = 'thing') =>
      (await (
        await fetch(`${server.url}/v1/artifacts`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'text/plain', 'X-Artifact-Filename': filename },
          body,
        })
      ).json()) as { id: string };
    const a = await put(acmeAgent, 'acme thing');
    await put(betaAdmin, 'beta thing');
    expect(
      (
        await fetch(`${server.url}/v1/admin/artifacts/${a.id}`, {
          method: 'DELETE',
          headers: { Authorization: `Bearer ${acmeAdmin}` },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await fetch(`${server.url}/v1/admin/retention`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${operator}` },
        })
      ).status,
    ).toBe(200);
    await put(acmeAgent, 'acme last', 'last');
    await put(betaAdmin, 'beta last', 'last');

    const got = Object.fromEntries(
      await Promise.all(Object.entries(streams).map(async ([k, p]) => [k, summary(await p)])),
    );
    const lastOf = (t: string) => `artifact.stored ${t}`;
    expect(got.operator).toEqual([
      'artifact.stored acme',
      'artifact.stored beta',
      'artifact.deleted acme',
      'audit.recorded artifact.purge acme',
      'audit.recorded retention.run (service)',
      lastOf('acme'),
      lastOf('beta'),
    ]);
    expect(got.operatorBeta).toEqual(['artifact.stored beta', lastOf('beta')]);
    expect(got.acmeAdmin).toEqual([
      'artifact.stored acme',
      'artifact.deleted acme',
      'audit.recorded artifact.purge acme',
      lastOf('acme'),
    ]);
    expect(got.acmeAdminPlain).toEqual(['artifact.stored acme', 'artifact.deleted acme', lastOf('acme')]);
    expect(got.acmeAgent).toEqual(['artifact.stored acme', 'artifact.deleted acme', lastOf('acme')]);
    expect(got.betaAdmin).toEqual(['artifact.stored beta', lastOf('beta')]);
    // An agent may not ask for the audit trail.
    const refused = await fetch(`${server.url}/v1/events?audit=true`, {
      headers: { Authorization: `Bearer ${acmeAgent}` },
    });
    expect(refused.status).toBe(403);
  });
});
