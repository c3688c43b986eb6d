/**
 * Retention through the HTTP API, on both runtimes (Node: SQLite + fs; workerd: D1 + R2): quotas
 * enforced at put time, POST /v1/admin/retention expiring references and collecting their bytes,
 * and what callers without the right see.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpArtifactStore } from '../src/client/http-store.js';
import type { Policy } from '../src/core/policy.js';
import { bearer, createTestApp, putArtifact, RUNTIME, sha256, type TestApp } from './helpers/app.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

const HOUR = 3_600_000;

async function setup(policy: Partial<Policy>) {
  let clock = Date.UTC(2026, 10, 1);
  t = await createTestApp({ now: () => clock, policy: { maxTtlSeconds: 7 * 24 * 3600, ...policy }, gcGraceMs: 0 });
  const app = t;
  const writer = await app.token(
    { tenant: 'acme', sub: 'u1', perms: ['read', 'write'] },
    { ttlSeconds: 30 * 24 * 3600 },
  );
  const admin = await app.operatorKey();
  const get = (id: string) => app.app.request(`/v1/artifacts/${id}/meta`, { headers: bearer(writer) });
  const retention = async () => {
    const res = await app.app.request('/v1/admin/retention', { method: 'POST', headers: bearer(admin) });
    expect(res.status).toBe(200);
    return (await res.json()) as Record<string, any>;
  };
  return { app, writer, admin, get, retention, advance: (ms: number) => (clock += ms) };
}

it(`runs on ${RUNTIME === 'workerd' ? 'D1 and R2 in workerd' : 'SQLite and fs on Node'}`, async () => {
  t = await createTestApp();
  expect(t.blobs.driver).toBe(RUNTIME === 'workerd' ? 'r2' : 'fs');
  expect(typeof (globalThis as { WebSocketPair?: unknown }).WebSocketPair).toBe(
    RUNTIME === 'workerd' ? 'function' : 'undefined',
  );
});

describe('retention over HTTP', () => {
  it('ttl "never" is refused unless the operator allows it; allowed, the reference outlives every run', async () => {
    const closed = await setup({});
    const refused = await putArtifact(closed.app.app, closed.writer, 'keep me', { 'X-Artifact-Ttl': 'never' });
    expect(refused.res.status).toBe(400);
    expect(refused.json.message).toContain('ARTIFACT_STORE_ALLOW_NO_EXPIRY');
    await closed.app.cleanup();

    const h = await setup({ allowNoExpiry: true });
    const kept = await putArtifact(h.app.app, h.writer, 'keep me', {
      'X-Artifact-Ttl': 'never',
      'X-Artifact-Session': 's1',
    });
    expect(kept.res.status).toBe(201);
    expect(kept.json.expiresAt).toBeUndefined();
    const dated = await putArtifact(h.app.app, h.writer, 'an hour', { 'X-Artifact-Session': 's1' });
    expect(dated.json.expiresAt).toBeDefined();
    h.advance(400 * 24 * HOUR);
    const report = await h.retention();
    expect(report.expired.refs).toBe(1);
    const meta = await h.get(kept.json.id);
    expect(meta.status).toBe(200);
    expect((await meta.json()).expiresAt).toBeUndefined();
    // A link to it lasts what links last, not forever.
    const link = await h.app.app.request(`/v1/artifacts/${kept.json.id}/url`, {
      method: 'POST',
      headers: bearer(h.writer),
    });
    const { urlExpiresAt } = (await link.json()) as { urlExpiresAt: string };
    expect(Date.parse(urlExpiresAt)).toBeLessThanOrEqual(Date.UTC(2026, 10, 1) + 400 * 24 * HOUR + 24 * HOUR);
  });

  it('POST /v1/admin/retention expires references past their TTL and collects bytes no artifact holds', async () => {
    const h = await setup({});
    const short = await putArtifact(h.app.app, h.writer, 'gone within the hour', {
      'X-Artifact-Ttl': '60',
      'X-Artifact-Session': 's1',
    });
    const long = await putArtifact(h.app.app, h.writer, 'kept for a day', {
      'X-Artifact-Ttl': '86400',
      'X-Artifact-Session': 's1',
    });
    expect([short.res.status, long.res.status]).toEqual([201, 201]);
    expect(await h.app.blobFiles()).toHaveLength(2);

    h.advance(HOUR);
    expect((await h.get(short.json.id)).status).toBe(404);
    const report = await h.retention();
    expect(report).toMatchObject({
      trigger: 'http',
      expired: { refs: 1, bytes: 'gone within the hour'.length },
      blobs: { collected: 1, failed: 0 },
    });
    expect(await h.app.blobFiles()).toHaveLength(1);
    expect((await h.get(long.json.id)).status).toBe(200);
    const body = await h.app.app.request(`/v1/artifacts/${long.json.id}`, { headers: bearer(h.writer) });
    expect(await body.text()).toBe('kept for a day');

    // Idempotent: a second run finds nothing to do.
    expect(await h.retention()).toMatchObject({ expired: { refs: 0 }, blobs: { collected: 0 } });
  });

  it('evicts the least recently used artifact of a full session at put time, with artifact.evicted', async () => {
    const h = await setup({ maxArtifactsPerSession: 2, cleanupStrategy: 'lru' });
    const ids: string[] = [];
    for (const text of ['first', 'second']) {
      const { res, json } = await putArtifact(h.app.app, h.writer, text, { 'X-Artifact-Session': 's1' });
      expect(res.status).toBe(201);
      ids.push(json.id);
      h.advance(1000);
    }
    // Reading the first makes the second the least recently used.
    expect((await h.app.app.request(`/v1/artifacts/${ids[0]}`, { headers: bearer(h.writer) })).status).toBe(200);
    await h.app.service.flush();
    h.advance(1000);
    const third = await putArtifact(h.app.app, h.writer, 'third', { 'X-Artifact-Session': 's1' });
    expect(third.res.status).toBe(201);

    expect((await h.get(ids[0]!)).status).toBe(200);
    expect((await h.get(ids[1]!)).status).toBe(404);
    expect((await h.get(third.json.id)).status).toBe(200);
    const events = await h.app.repo.readEvents('acme', 0, 100);
    expect(events.map((e) => [e.type, e.artifactId])).toEqual([
      ['artifact.stored', ids[0]],
      ['artifact.stored', ids[1]],
      ['artifact.evicted', ids[1]],
      ['artifact.stored', third.json.id],
    ]);
    const usage = await h.app.app.request('/v1/usage', { headers: bearer(h.admin) });
    expect(usage.status).toBe(200);
  });

  it("refuses a put into a full session with 409 quota_exceeded when the strategy is none, keeping what's there", async () => {
    const h = await setup({ maxSessionBytes: 10, cleanupStrategy: 'reject' });
    const first = await putArtifact(h.app.app, h.writer, '12345678', { 'X-Artifact-Session': 's1' });
    expect(first.res.status).toBe(201);
    const refused = await putArtifact(h.app.app, h.writer, 'abcdef', { 'X-Artifact-Session': 's1' });
    expect(refused.res.status).toBe(409);
    expect(refused.json).toMatchObject({
      code: 'quota_exceeded',
      details: {
        scope: 'session',
        id: 's1',
        limit: 'maxSessionBytes',
        limitValue: 10,
        usageBytes: 8,
        usageCount: 1,
        neededBytes: 6,
      },
    });
    expect(refused.json.message).toEqual(expect.any(String));
    // Nothing of the refused put remains: no reference, no event, no bytes.
    expect((await h.get(first.json.id)).status).toBe(200);
    expect((await h.app.repo.readEvents('acme', 0, 100)).map((e) => e.type)).toEqual(['artifact.stored']);
    h.advance(1000);
    await h.retention();
    expect(await h.app.blobFiles()).toHaveLength(1);
    // Another session is not affected.
    expect((await putArtifact(h.app.app, h.writer, 'abcdef', { 'X-Artifact-Session': 's2' })).res.status).toBe(201);
  });

  it('a re-put of bytes the session already holds is never refused and stores them once', async () => {
    const h = await setup({ maxArtifactsPerSession: 1, cleanupStrategy: 'reject' });
    const a = await putArtifact(h.app.app, h.writer, 'same bytes', { 'X-Artifact-Session': 's1' });
    const b = await putArtifact(h.app.app, h.writer, 'same bytes', { 'X-Artifact-Session': 's1' });
    expect([a.res.status, b.res.status]).toEqual([201, 200]);
    expect(b.json.id).toBe(a.json.id);
    expect(b.json.sha256).toBe(sha256('same bytes'));
    expect(await h.app.blobFiles()).toHaveLength(1);
  });

  it("only operators may run retention: a tenant's writer and its admin get 403", async () => {
    const h = await setup({});
    const tenantAdmin = await h.app.token({ tenant: 'acme', sub: 'boss', perms: ['read', 'write', 'admin'] });
    for (const token of [h.writer, tenantAdmin]) {
      const res = await h.app.app.request('/v1/admin/retention', { method: 'POST', headers: bearer(token) });
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ code: 'forbidden', message: expect.stringContaining('operator') });
    }
    expect((await h.app.app.request('/v1/admin/retention', { method: 'POST' })).status).toBe(401);
    expect(await h.app.repo.retentionRuns(10)).toEqual([]);
  });
});

describe('the event stream', () => {
  const eventsOf = (text: string) =>
    [...text.matchAll(/^event: (\S+)\ndata: (.*)\nid: (\d+)$/gm)].map((m) => ({
      type: m[1]!,
      id: JSON.parse(m[2]!).ref.id as string,
      seq: m[3]!,
    }));
  /** Id-only messages: the stream's position, for resuming. */
  const positionsOf = (text: string) => [...text.matchAll(/^id: (\d+)\ndata\n$/gm)].map((m) => m[1]!);

  it('ends after its poll budget (as on Workers) and resumes from Last-Event-ID without losing events', async () => {
    t = await createTestApp({ events: { pollMs: 5, maxPolls: 3 } });
    const tok = await t.token({ tenant: 'acme', sub: 'u1', perms: ['read', 'write'] });
    const first = await putArtifact(t.app, tok, 'one', { 'X-Artifact-Session': 's1' });
    const res = await t.app.request('/v1/events?lastEventId=0', { headers: bearer(tok) });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    // The body ends by itself: the stream closed after three outbox reads.
    const text = await res.text();
    const seen = eventsOf(text);
    expect(seen.map((e) => [e.type, e.id])).toEqual([['artifact.stored', first.json.id]]);
    expect(positionsOf(text)).toEqual(['0', seen[0]!.seq]);

    const second = await putArtifact(t.app, tok, 'two', { 'X-Artifact-Session': 's1' });
    const resumed = await (
      await t.app.request('/v1/events', { headers: { ...bearer(tok), 'Last-Event-ID': seen[0]!.seq } })
    ).text();
    expect(eventsOf(resumed).map((e) => [e.type, e.id])).toEqual([['artifact.stored', second.json.id]]);
  });

  it('gives an idle stream a position, so what is stored while the client reconnects is not missed', async () => {
    t = await createTestApp({ events: { pollMs: 5, maxPolls: 2 } });
    const tok = await t.token({ tenant: 'acme', sub: 'u1', perms: ['read', 'write'] });
    await putArtifact(t.app, tok, 'before', { 'X-Artifact-Session': 's1' });
    // A fresh stream (no Last-Event-ID) starts at the newest event and sees nothing before it ends.
    const idle = await (await t.app.request('/v1/events', { headers: bearer(tok) })).text();
    expect(eventsOf(idle)).toEqual([]);
    const [at] = positionsOf(idle);
    expect(at).toMatch(/^[1-9]\d*$/);
    // Stored between the end of that stream and the reconnect.
    const gap = await putArtifact(t.app, tok, 'in the gap', { 'X-Artifact-Session': 's1' });
    const next = await (
      await t.app.request('/v1/events', { headers: { ...bearer(tok), 'Last-Event-ID': at! } })
    ).text();
    expect(eventsOf(next).map((e) => e.id)).toEqual([gap.json.id]);
  });

  it("the SDK's events() follows a stream that keeps ending, and yields what was stored in the gaps", async () => {
    t = await createTestApp({ events: { pollMs: 5, maxPolls: 2 } });
    const app = t.app;
    const tok = await t.token({ tenant: 'acme', sub: 'u1', perms: ['read', 'write'] });
    const fetchApp = ((input: RequestInfo | URL, init?: RequestInit) =>
      app.request(input instanceof Request ? input : String(input), init)) as typeof fetch;
    const store = createHttpArtifactStore({ baseUrl: 'http://artifacts.test', token: tok, fetch: fetchApp });
    const controller = new AbortController();
    const stream = store.events!({ sessionId: 's1', signal: controller.signal })[Symbol.asyncIterator]();
    const first = stream.next(); // opens the first stream
    await new Promise((r) => setTimeout(r, 20));
    // Each put lands while the SDK is between streams (each lives two polls of 5 ms).
    const ids: string[] = [];
    for (const text of ['a', 'b', 'c']) {
      await new Promise((r) => setTimeout(r, 40));
      ids.push((await putArtifact(app, tok, text, { 'X-Artifact-Session': 's1' })).json.id);
    }
    const got: string[] = [(await first).value!.ref.id];
    while (got.length < 3) got.push((await stream.next()).value!.ref.id);
    controller.abort();
    await stream.return!(undefined);
    await new Promise((r) => setTimeout(r, 50)); // the last stream's final poll
    expect(got).toEqual(ids);
  });
});
