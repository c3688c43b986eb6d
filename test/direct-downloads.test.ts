/**
 * GET and HEAD of one artifact take a direct route past the router, running the app's request steps
 * around the download handler (src/http/direct-route.ts). Here the same requests go to an app with it
 * and one without, over one service: each pair must answer alike (status, headers, bytes) and log and
 * count alike, and the direct route must run every step the app has.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createApp, type App } from '../src/http/app.js';
import { createAuthenticator } from '../src/http/auth.js';
import { createJsonLogger } from '../src/core/logger.js';
import { createMetrics } from '../src/http/metrics.js';
import type { RateLimits } from '../src/core/limits.js';
import { createRateLimiter } from '../src/http/rate-limit.js';
import { bearer, bytesOf, createTestApp, HMAC_KEYS, putArtifact, type TestApp } from './helpers/app.js';

let t: TestApp;

beforeEach(async () => {
  t = await createTestApp();
});

afterEach(async () => {
  await t.cleanup();
});

const OFF: RateLimits = { requestsPerSecond: 0, requestBurst: 0, bytesInFlight: 0 };

/** One of the two apps over the test app's service, with its own log, metrics and rate limiter. */
function appOf(direct: boolean) {
  const lines: Record<string, unknown>[] = [];
  const metrics = createMetrics(undefined);
  const app: App = createApp({
    service: t.service,
    ops: t.ops,
    auth: createAuthenticator({ hmacSecrets: [...HMAC_KEYS], apiKeys: t.ops }),
    logger: createJsonLogger('info', (line) => lines.push(JSON.parse(line) as Record<string, unknown>)),
    metrics,
    // Tenant `limited` gets one request and no more (the clock stands still).
    rateLimiter: createRateLimiter({
      limitsOf: (tenantId) => ({
        tenant: tenantId === 'limited' ? { requestsPerSecond: 1, requestBurst: 1, bytesInFlight: 0 } : OFF,
        token: OFF,
      }),
      now: () => 0,
    }),
    directDownloads: direct,
  });
  return { app, lines, metrics };
}

/** What must match between the two answers: X-Request-Id is checked for its form, Date left out. */
async function answerOf(res: Response) {
  const headers = Object.fromEntries([...res.headers].filter(([k]) => k !== 'date' && k !== 'x-request-id'));
  expect(res.headers.get('x-request-id')).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
  return { status: res.status, headers, body: [...new Uint8Array(await res.arrayBuffer())] };
}

/** A log line without what differs from one request to the next. */
const stable = ({ time: _t, requestId: _r, durationMs: _d, ...rest }: Record<string, unknown>) => rest;

describe('direct downloads', () => {
  it('answer, log and count every kind of download request as the routed app does', async () => {
    const direct = appOf(true);
    const routed = appOf(false);
    const tok = await t.token({ tenant: 'acme', sub: 'u1', perms: ['read', 'write'] });
    const bound = await t.token({ tenant: 'acme', session: 's1', perms: ['read'] });
    const writeOnly = await t.token({ tenant: 'acme', perms: ['write'] });
    const expired = await t.token({ tenant: 'acme', perms: ['read'] }, { ttlSeconds: -60 });
    const limited = await t.token({ tenant: 'limited', perms: ['read', 'write'] });
    const operator = await t.operatorKey();

    const small = (
      await putArtifact(t.app, tok, bytesOf(1000, 3), {
        'Content-Type': 'application/pdf',
        'X-Artifact-Filename': 'report q3.pdf',
        'X-Artifact-Session': 's1',
      })
    ).json;
    const large = (await putArtifact(t.app, tok, bytesOf(200_000, 4), { 'Content-Type': 'image/png' })).json;
    const html = (await putArtifact(t.app, tok, '<p>hi</p>', { 'Content-Type': 'text/html' })).json;
    const empty = (await putArtifact(t.app, tok, new Uint8Array(0))).json;
    const other = (await putArtifact(t.app, limited, bytesOf(10, 9))).json;
    const etag = `"${small.sha256 as string}"`;

    const requests: [string, RequestInit & { headers?: Record<string, string> }][] = [
      [`/v1/artifacts/${small.id}`, { headers: bearer(tok) }],
      [`/v1/artifacts/${small.id}`, { headers: bearer(tok) }],
      [`/v1/artifacts/${large.id}`, { headers: bearer(tok) }],
      [`/v1/artifacts/${html.id}`, { headers: bearer(tok) }],
      [`/v1/artifacts/${empty.id}`, { headers: bearer(tok) }],
      [`/v1/artifacts/${small.id}`, { method: 'HEAD', headers: bearer(tok) }],
      [`/v1/artifacts/${large.id}`, { headers: { ...bearer(tok), Range: 'bytes=100-199' } }],
      [`/v1/artifacts/${large.id}`, { headers: { ...bearer(tok), Range: 'bytes=-10' } }],
      [`/v1/artifacts/${small.id}`, { headers: { ...bearer(tok), Range: 'bytes=5000-' } }],
      [`/v1/artifacts/${small.id}`, { headers: { ...bearer(tok), Range: 'bytes=0-9', 'If-Range': etag } }],
      [`/v1/artifacts/${small.id}`, { headers: { ...bearer(tok), Range: 'bytes=0-9', 'If-Range': '"other"' } }],
      [`/v1/artifacts/${small.id}`, { headers: { ...bearer(tok), 'If-None-Match': etag } }],
      [`/v1/artifacts/${small.id}`, { method: 'HEAD', headers: { ...bearer(tok), 'If-None-Match': etag } }],
      [`/v1/artifacts/${small.id}?disposition=attachment`, { headers: bearer(tok) }],
      [`/v1/artifacts/${small.id}?disposition=download`, { headers: bearer(tok) }],
      [`/v1/artifacts/${small.id}?session=s1`, { headers: bearer(tok) }],
      [`/v1/artifacts/${small.id}?session=s2`, { headers: bearer(tok) }],
      [`/v1/artifacts/${small.id}`, { headers: { ...bearer(tok), 'X-Artifact-User': 'u2' } }],
      [`/v1/artifacts/${small.id}`, { headers: bearer(bound) }],
      [`/v1/artifacts/${large.id}`, { headers: bearer(bound) }],
      [`/v1/artifacts/${small.id}`, { headers: { ...bearer(bound), 'X-Artifact-Session': 's2' } }],
      [`/v1/artifacts/${small.id}`, { headers: bearer(writeOnly) }],
      [`/v1/artifacts/${small.id}`, { headers: bearer(expired) }],
      [`/v1/artifacts/${small.id}`, { headers: bearer(`${tok}x`) }],
      [`/v1/artifacts/${small.id}`, { headers: { Authorization: 'Basic abc' } }],
      [`/v1/artifacts/${small.id}`, {}],
      [`/v1/artifacts/${small.id}`, { headers: bearer(operator) }],
      [`/v1/artifacts/${other.id}`, { headers: bearer(limited) }],
      [`/v1/artifacts/${other.id}`, { headers: bearer(limited) }],
      [`/v1/artifacts/${other.id}`, { headers: bearer(tok) }],
      [`/v1/artifacts/default_${'0'.repeat(64)}`, { headers: bearer(tok) }],
      ['/v1/artifacts/not-an-id', { headers: bearer(tok) }],
      [`/v1/artifacts/${(small.id as string).replace('d', '%64')}`, { headers: bearer(tok) }],
      [`/v1/artifacts/${small.id}`, { headers: { ...bearer(tok), 'X-Request-Id': 'req-1.2:3' } }],
      [`/v1/artifacts/${small.id}`, { headers: { ...bearer(tok), 'X-Request-Id': 'bad id!' } }],
    ];
    for (const [path, init] of requests) {
      const [a, b] = [await direct.app.request(path, init), await routed.app.request(path, init)];
      const what = `${init.method ?? 'GET'} ${path} ${JSON.stringify(init.headers ?? {})}`;
      expect(await answerOf(a), what).toEqual(await answerOf(b));
      const sent = init.headers?.['X-Request-Id'];
      if (sent === 'req-1.2:3')
        expect([a.headers.get('x-request-id'), b.headers.get('x-request-id')]).toEqual([sent, sent]);
    }
    // The puts went through the test app, so each app saw the downloads only.
    const downloads = (lines: Record<string, unknown>[]) => lines.filter((l) => l.msg === 'request').map(stable);
    expect(downloads(direct.lines)).toHaveLength(requests.length);
    expect(downloads(direct.lines)).toEqual(downloads(routed.lines));
    const counts = async (m: typeof direct.metrics) =>
      (await m.registry.metrics()).split('\n').filter((l) => l.startsWith('artifact_store_http_requests_total{'));
    expect(await counts(direct.metrics)).toEqual(await counts(routed.metrics));
    expect((await counts(direct.metrics)).join('\n')).toContain('route="/v1/artifacts/:id",status="206"');
  });

  it("run each of the app's request steps, the same ones as the routed requests", async () => {
    const { app } = appOf(true);
    // Every module of src/http/middleware/ that the app composes: a new one must be listed here.
    expect(app.steps.map((s) => s.name)).toEqual([
      'request-context',
      'access-log',
      'authentication',
      'rate-limits',
      'body-limits',
    ]);
    const tok = await t.token({ tenant: 'acme', perms: ['read', 'write'] });
    const { json } = await putArtifact(t.app, tok, bytesOf(100, 6));
    const entered = app.steps.map((s) => vi.spyOn(s, 'enter'));
    const left = app.steps.filter((s) => s.leave).map((s) => vi.spyOn(s, 'leave' as never));
    const router = vi.spyOn(app.router, 'match');
    const download = await app.request(`/v1/artifacts/${json.id}`, { headers: bearer(tok) });
    expect(download.status).toBe(200);
    expect(router).not.toHaveBeenCalled();
    for (const spy of [...entered, ...left]) expect(spy).toHaveBeenCalledTimes(1);
    // The routed requests run the same step objects (a listing goes through the router).
    expect((await app.request('/v1/artifacts?limit=1', { headers: bearer(tok) })).status).toBe(200);
    expect(router).toHaveBeenCalled();
    for (const spy of [...entered, ...left]) expect(spy).toHaveBeenCalledTimes(2);
  });

  it('hand the access line to a logger that formats it later, with either route', async () => {
    const tok = await t.token({ tenant: 'acme', perms: ['read', 'write'] });
    const { id } = (await putArtifact(t.app, tok, bytesOf(100, 5))).json as { id: string };
    for (const directDownloads of [true, false]) {
      const lines: string[] = [];
      const held: (() => void)[] = [];
      const app = createApp({
        service: t.service,
        ops: t.ops,
        auth: createAuthenticator({ hmacSecrets: [...HMAC_KEYS], apiKeys: t.ops }),
        logger: createJsonLogger('info', (line) => lines.push(line), { later: (format) => held.push(format) }),
        directDownloads,
      });
      const res = await app.request(`/v1/artifacts/${id}`, { headers: bearer(tok) });
      expect(res.status).toBe(200);
      expect((await res.arrayBuffer()).byteLength).toBe(100);
      expect(lines).toEqual([]);
      expect(held).toHaveLength(1);
      held[0]!();
      expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([
        expect.objectContaining({
          level: 'info',
          msg: 'request',
          requestId: res.headers.get('x-request-id'),
          method: 'GET',
          path: `/v1/artifacts/${id}`,
          status: 200,
          tenant: 'acme',
        }),
      ]);
    }
  });

  it('are off with CORS, so that its headers are on every download', async () => {
    const tok = await t.token({ tenant: 'acme', perms: ['read', 'write'] });
    const app = createApp({
      service: t.service,
      ops: t.ops,
      auth: createAuthenticator({ hmacSecrets: [...HMAC_KEYS] }),
      corsOrigins: ['https://chat.example'],
    });
    const { json } = await putArtifact(app, tok, bytesOf(100, 1));
    const res = await app.request(`/v1/artifacts/${json.id}`, {
      headers: { ...bearer(tok), Origin: 'https://chat.example' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://chat.example');
    expect(res.headers.get('access-control-expose-headers')).toContain('ETag');
  });

  it('leave every other request to the routes: longer paths, other methods, a bare prefix', async () => {
    const direct = appOf(true);
    const tok = await t.token({ tenant: 'acme', perms: ['read', 'write'] });
    const { json } = await putArtifact(direct.app, tok, bytesOf(100, 2));
    // The app's router sees no download, and every other request.
    const routed = vi.spyOn(direct.app.router, 'match');
    expect((await direct.app.request(`/v1/artifacts/${json.id}`, { headers: bearer(tok) })).status).toBe(200);
    expect(
      (await direct.app.request(`/v1/artifacts/${json.id}?session=s`, { method: 'HEAD', headers: bearer(tok) })).status,
    ).toBe(404);
    expect(routed).not.toHaveBeenCalled();
    const meta = await direct.app.request(`/v1/artifacts/${json.id}/meta`, { headers: bearer(tok) });
    expect(meta.status).toBe(200);
    expect(((await meta.json()) as { id: string }).id).toBe(json.id);
    expect((await direct.app.request('/v1/artifacts/', { headers: bearer(tok) })).status).toBe(404);
    expect((await direct.app.request(`/v1/artifacts/${json.id}/`, { headers: bearer(tok) })).status).toBe(404);
    const list = await direct.app.request('/v1/artifacts?limit=1', { headers: bearer(tok) });
    expect(list.status).toBe(200);
    const del = await direct.app.request(`/v1/artifacts/${json.id}`, { method: 'DELETE', headers: bearer(tok) });
    expect(del.status).toBe(204);
    expect((await direct.app.request(`/v1/artifacts/${json.id}`, { headers: bearer(tok) })).status).toBe(404);
    expect(routed.mock.calls.map(([method, path]) => `${method} ${path}`)).toEqual([
      `GET /v1/artifacts/${json.id}/meta`,
      'GET /v1/artifacts/',
      `GET /v1/artifacts/${json.id}/`,
      'GET /v1/artifacts',
      `DELETE /v1/artifacts/${json.id}`,
    ]);
  });
});
