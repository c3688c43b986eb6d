/**
 * Rate limits: the buckets themselves (a fake clock), then the service under a real burst on a real
 * server: 429 with Retry-After for the noisy tenant while another is served, refusals that read no
 * body and write nothing, the SDK's retry getting through, metrics and the operator's report.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpArtifactStore } from '../src/client/http-store.js';
import { basePolicy, loadConfig } from '../src/core/config.js';
import { PRODUCTION_RATE_LIMITS } from '../src/core/policy.js';
import type { RateLimits } from '../src/core/limits.js';
import { createRateLimiter } from '../src/http/rate-limit.js';
import { startServer, type RunningServer } from '../src/node.js';
import { issueApiKey } from '../src/service/api-keys.js';

const OFF: RateLimits = { requestsPerSecond: 0, requestBurst: 0, bytesInFlight: 0 };

function limiter(tenant: Partial<RateLimits>, token: Partial<RateLimits> = {}, extra: { maxTokens?: number } = {}) {
  let clock = 1_000_000;
  const refused: string[] = [];
  const l = createRateLimiter({
    limitsOf: () => ({ tenant: { ...OFF, ...tenant }, token: { ...OFF, ...token } }),
    now: () => clock,
    onRefusal: (r) => refused.push(r),
    ...extra,
  });
  return { l, refused, advance: (ms: number) => (clock += ms) };
}

const codeOf = (fn: () => unknown) => {
  try {
    fn();
    return 'admitted';
  } catch (err) {
    const e = err as { code: string; retryAfter: number; details: { reason: string } };
    return `${e.code} ${e.details.reason} ${e.retryAfter}`;
  }
};

describe('the limiter', () => {
  it('lets a burst through, then the steady rate, and says how long to wait', () => {
    const { l, advance, refused } = limiter({ requestsPerSecond: 2, requestBurst: 4 });
    for (let i = 0; i < 4; i++) expect(codeOf(() => l.admit('acme', 'tok', 0))).toBe('admitted');
    expect(codeOf(() => l.admit('acme', 'tok', 0))).toBe('rate_limited tenant_requests 1');
    advance(500); // one request's worth at 2/s
    expect(codeOf(() => l.admit('acme', 'tok', 0))).toBe('admitted');
    expect(codeOf(() => l.admit('acme', 'tok', 0))).toBe('rate_limited tenant_requests 1');
    advance(10_000); // refills to the burst, never beyond
    for (let i = 0; i < 4; i++) expect(codeOf(() => l.admit('acme', 'tok', 0))).toBe('admitted');
    expect(codeOf(() => l.admit('acme', 'tok', 0))).toMatch(/^rate_limited/);
    // Another tenant has its own bucket.
    expect(codeOf(() => l.admit('beta', 'tok2', 0))).toBe('admitted');
    expect(refused).toEqual(['tenant_requests', 'tenant_requests', 'tenant_requests']);
    expect(l.refusals()).toEqual([{ tenantId: 'acme', requests: 3, bytes: 0 }]);
    expect(l.refusals('beta')).toEqual([]);
  });

  it('a slow rate waits whole seconds: Retry-After rounds up', () => {
    const { l } = limiter({ requestsPerSecond: 0.25, requestBurst: 1 });
    expect(codeOf(() => l.admit('acme', undefined, 0))).toBe('admitted');
    expect(codeOf(() => l.admit('acme', undefined, 0))).toBe('rate_limited tenant_requests 4');
  });

  it('per token inside the tenant: one token over its rate leaves the tenant and its other tokens alone', () => {
    const { l } = limiter({ requestsPerSecond: 100 }, { requestsPerSecond: 1, requestBurst: 2 });
    expect(codeOf(() => l.admit('acme', 'loop', 0))).toBe('admitted');
    expect(codeOf(() => l.admit('acme', 'loop', 0))).toBe('admitted');
    expect(codeOf(() => l.admit('acme', 'loop', 0))).toBe('rate_limited token_requests 1');
    expect(codeOf(() => l.admit('acme', 'calm', 0))).toBe('admitted');
  });

  it('takes from every bucket or none: a request the token refuses costs the tenant nothing', () => {
    const { l } = limiter({ requestsPerSecond: 1, requestBurst: 3 }, { requestsPerSecond: 1, requestBurst: 1 });
    expect(codeOf(() => l.admit('acme', 'a', 0))).toBe('admitted');
    for (let i = 0; i < 5; i++) expect(codeOf(() => l.admit('acme', 'a', 0))).toMatch(/token_requests/);
    // The tenant bucket still holds two.
    expect(codeOf(() => l.admit('acme', 'b', 0))).toBe('admitted');
    expect(codeOf(() => l.admit('acme', 'c', 0))).toBe('admitted');
    expect(codeOf(() => l.admit('acme', 'd', 0))).toMatch(/tenant_requests/);
  });

  it('bytes in flight: bodies reserve their size until released; one body larger than the budget still goes alone', () => {
    const { l } = limiter({ bytesInFlight: 1000 }, { bytesInFlight: 600 });
    const a = l.admit('acme', 'a', 500);
    expect(codeOf(() => l.admit('acme', 'a', 200))).toBe('rate_limited token_bytes 1');
    const b = l.admit('acme', 'b', 500);
    expect(codeOf(() => l.admit('acme', 'c', 1))).toBe('rate_limited tenant_bytes 1');
    a.release();
    a.release(); // twice is once
    const c = l.admit('acme', 'c', 400);
    b.release();
    c.release();
    // Nothing in flight: a body over the budget is let through rather than refused forever.
    const huge = l.admit('acme', 'a', 5000);
    expect(codeOf(() => l.admit('acme', 'b', 1))).toMatch(/tenant_bytes/);
    huge.release();
    expect(l.refusals('acme')).toEqual([{ tenantId: 'acme', requests: 0, bytes: 3 }]);
  });

  it('keeps a bounded number of token buckets: the least recently used go first', () => {
    const { l, advance } = limiter({}, { requestsPerSecond: 1, requestBurst: 1 }, { maxTokens: 2 });
    l.admit('acme', 'a', 0);
    l.admit('acme', 'b', 0);
    expect(codeOf(() => l.admit('acme', 'a', 0))).toMatch(/token_requests/); // a is now the most recent
    l.admit('acme', 'c', 0); // evicts b
    advance(0);
    expect(codeOf(() => l.admit('acme', 'b', 0))).toBe('admitted'); // a fresh bucket (evicts a)
    expect(codeOf(() => l.admit('acme', 'c', 0))).toMatch(/token_requests/);
  });

  it('operators have no tenant bucket; with everything off nothing is counted', () => {
    const { l } = limiter({ requestsPerSecond: 1, requestBurst: 1 });
    for (let i = 0; i < 10; i++) expect(codeOf(() => l.admit('', 'op', 0))).toBe('admitted');
    const off = limiter({});
    for (let i = 0; i < 10; i++) expect(codeOf(() => off.l.admit('acme', 'x', 1e9))).toBe('admitted');
  });
});

describe('configuration', () => {
  it('is on in production with stated defaults, off in development, and each setting wins over its default', () => {
    const pick = (c: ReturnType<typeof basePolicy>) => ({
      tenantRequestsPerSecond: c.tenantRequestsPerSecond,
      tokenBytesInFlight: c.tokenBytesInFlight,
    });
    expect(
      pick(
        basePolicy(
          loadConfig({ ARTIFACT_STORE_JWT_SECRETS: 'k:0123456789abcdef0123456789abcdef' }, { env: 'production' }),
        ),
      ),
    ).toEqual({
      tenantRequestsPerSecond: PRODUCTION_RATE_LIMITS.tenantRequestsPerSecond,
      tokenBytesInFlight: PRODUCTION_RATE_LIMITS.tokenBytesInFlight,
    });
    expect(pick(basePolicy(loadConfig({}, { env: 'development' })))).toEqual({
      tenantRequestsPerSecond: 0,
      tokenBytesInFlight: 0,
    });
    expect(
      basePolicy(loadConfig({ ARTIFACT_STORE_TENANT_REQUESTS_PER_SECOND: '7' }, { env: 'development' }))
        .tenantRequestsPerSecond,
    ).toBe(7);
    expect(
      basePolicy(loadConfig({ ARTIFACT_STORE_TENANT_REQUESTS_PER_SECOND: '0' }, { env: 'production' }))
        .tenantRequestsPerSecond,
    ).toBe(0);
    expect(() => loadConfig({ ARTIFACT_STORE_TOKEN_BYTES_IN_FLIGHT: '-1' })).toThrow(
      /ARTIFACT_STORE_TOKEN_BYTES_IN_FLIGHT/,
    );
    expect(() => loadConfig({ ARTIFACT_STORE_TENANT_POLICIES: '{"acme":{"tenantRequestsPerSecond":"fast"}}' })).toThrow(
      /tenantRequestsPerSecond/,
    );
  });
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function serve(env: Record<string, string>): Promise<RunningServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'artifact-rate-'));
  cleanups.push(() => rm(dataDir, { recursive: true, force: true }));
  const server = await startServer(
    loadConfig({ ARTIFACT_STORE_METRICS: 'true', ...env }, { port: 0, dataDir, env: 'test', logLevel: 'silent' }),
  );
  cleanups.push(() => server.close());
  return server;
}

/** Sends a put's headers and nothing of its body, and resolves with the answer (if one comes first). */
function headersOnlyPut(
  url: string,
  token: string,
  length: number,
): Promise<{ res: IncomingMessage; body: string; abort: () => void }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${url}/v1/artifacts`,
      {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${token}`,
          'Content-Type': 'application/octet-stream',
          'Content-Length': String(length),
        },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ res, body, abort: () => req.destroy() }));
      },
    );
    req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
    req.flushHeaders();
  });
}

describe('over HTTP', () => {
  it('a tenant over its rate gets 429 with Retry-After while another tenant is served in the same second; the SDK gets through once the bucket refills', {
    timeout: 30_000,
  }, async () => {
    const server = await serve({
      ARTIFACT_STORE_TENANT_REQUESTS_PER_SECOND: '5',
      ARTIFACT_STORE_TENANT_REQUEST_BURST: '5',
      ARTIFACT_STORE_TENANT_POLICIES: JSON.stringify({
        vip: { tenantRequestsPerSecond: 1000, tenantRequestBurst: 1000 },
      }),
    });
    const noisy = await server.mintToken({ tenant: 'noisy', perms: ['read', 'write'] });
    const quiet = await server.mintToken({ tenant: 'quiet', perms: ['read', 'write'] });
    const vip = await server.mintToken({ tenant: 'vip', perms: ['read'] });
    const list = (token: string) =>
      fetch(`${server.url}/v1/artifacts`, { headers: { Authorization: `Bearer ${token}` } });

    const started = performance.now();
    const burst = await Promise.all(Array.from({ length: 30 }, () => list(noisy)));
    // What the bucket can have refilled while the thirty went out (5 a second).
    const refill = Math.ceil(((performance.now() - started) / 1000) * 5);
    const calm = await Promise.all(Array.from({ length: 5 }, () => list(quiet)));
    const big = await Promise.all(Array.from({ length: 50 }, () => list(vip)));
    const statuses = burst.map((r) => r.status);
    // The burst of five, and what refilled meanwhile.
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(5);
    expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(5 + refill);
    expect(statuses.filter((s) => s === 429).length).toBe(30 - statuses.filter((s) => s === 200).length);
    const bodies = await Promise.all([...burst, ...calm, ...big].map((r) => r.text()));
    const refused = burst.find((r) => r.status === 429)!;
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(bodies[burst.indexOf(refused)]!)).toMatchObject({
      code: 'rate_limited',
      message: expect.stringContaining('request rate'),
      details: { reason: 'tenant_requests' },
    });
    expect(calm.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    // A tenant policy raises one tenant's limit.
    expect(big.every((r) => r.status === 200)).toBe(true);

    // The SDK honours Retry-After: the noisy tenant's next call waits and succeeds.
    const seen: number[] = [];
    const store = createHttpArtifactStore({
      baseUrl: server.url,
      token: noisy,
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        seen.push(res.status);
        return res;
      },
    });
    const exhausted = await Promise.all(Array.from({ length: 10 }, () => list(noisy)));
    await Promise.all(exhausted.map((r) => r.body?.cancel()));
    const ref = await store.putText('made it through', { filename: 'retry.txt' });
    expect(seen[0]).toBe(429);
    expect(seen.at(-1)).toBe(201);
    expect(new TextDecoder().decode((await store.get(ref.id))!)).toBe('made it through');

    // Refusals by reason in the metrics (no tenant in any label); per tenant for the operator.
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toMatch(/artifact_store_rate_limited_total\{reason="tenant_requests"\} \d+/);
    expect(metrics).not.toContain('noisy');
    const { key: operator } = await issueApiKey(server.repo, { operator: true });
    const report = (await (
      await fetch(`${server.url}/v1/usage`, { headers: { Authorization: `Bearer ${operator}` } })
    ).json()) as { rateLimited: { tenantId: string; requests: number }[] };
    expect(report.rateLimited.map((r) => r.tenantId)).toEqual(['noisy']);
    expect(report.rateLimited[0]!.requests).toBeGreaterThanOrEqual(30 - 5 - refill);
    // The noisy tenant's admin sees its own refusals; the quiet one's sees none.
    const ownReport = async (tenant: string) =>
      (await (
        await fetch(`${server.url}/v1/usage`, {
          headers: { Authorization: `Bearer ${await server.mintToken({ tenant, perms: ['read', 'admin'] })}` },
        })
      ).json()) as { rateLimited?: unknown[] };
    await new Promise((r) => setTimeout(r, 1100));
    expect((await ownReport('noisy')).rateLimited).toEqual([report.rateLimited[0]]);
    expect((await ownReport('quiet')).rateLimited).toEqual([]);
  });

  it('bytes in flight: a put over the budget is refused from its headers alone, before a byte of its body, and leaves nothing behind', {
    timeout: 30_000,
  }, async () => {
    const server = await serve({ ARTIFACT_STORE_TENANT_BYTES_IN_FLIGHT: String(1024 * 1024) });
    const token = await server.mintToken({ tenant: 'acme', perms: ['read', 'write'] });
    const other = await server.mintToken({ tenant: 'other', perms: ['read', 'write'] });

    // The first put sends its headers and holds its body back: 800 KB reserved.
    const held = httpRequest(`${server.url}/v1/artifacts`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${token}`,
        'Content-Type': 'application/octet-stream',
        'Content-Length': String(800_000),
      },
    });
    const heldAnswer = new Promise<IncomingMessage>((ok, fail) => {
      held.on('response', ok);
      held.on('error', fail);
    });
    held.write(Buffer.alloc(1000, 1));
    await new Promise((r) => setTimeout(r, 200));

    // The second is answered without sending any of its body.
    const refused = await headersOnlyPut(server.url, token, 800_000);
    refused.abort();
    expect(refused.res.statusCode).toBe(429);
    expect(Number(refused.res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(refused.body)).toMatchObject({ code: 'rate_limited', details: { reason: 'tenant_bytes' } });
    // Another tenant's budget is its own.
    const theirs = await fetch(`${server.url}/v1/artifacts`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${other}`, 'Content-Type': 'application/octet-stream' },
      body: new Uint8Array(800_000).fill(2),
    });
    expect(theirs.status).toBe(201);

    held.end(Buffer.alloc(799_000, 1));
    expect((await heldAnswer).statusCode).toBe(201);
    // With the first body read, the budget is back.
    const after = await fetch(`${server.url}/v1/artifacts`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/octet-stream' },
      body: new Uint8Array(800_000).fill(3),
    });
    expect(after.status).toBe(201);
    // Three puts stored, three blob rows: the refusal wrote nothing.
    const { key: operator } = await issueApiKey(server.repo, { operator: true });
    const report = (await (
      await fetch(`${server.url}/v1/usage`, { headers: { Authorization: `Bearer ${operator}` } })
    ).json()) as { tenants: { tenantId: string; count: number }[]; rateLimited: unknown[] };
    expect(report.tenants.map((t) => [t.tenantId, t.count]).sort()).toEqual([
      ['acme', 2],
      ['other', 1],
    ]);
    expect(report.rateLimited).toEqual([{ tenantId: 'acme', requests: 0, bytes: 1 }]);
    expect((await server.repo.blobRows('', 100, Date.now())).length).toBe(3);
  });

  it('limits /mcp and signed download links too, and a forged link spends nothing', { timeout: 30_000 }, async () => {
    // A burst of three that refills one request every 100 s: however slowly the steps below run (a
    // busy machine), no request is refilled before the refusals they expect.
    const server = await serve({
      ARTIFACT_STORE_TENANT_REQUESTS_PER_SECOND: '0.01',
      ARTIFACT_STORE_TENANT_REQUEST_BURST: '3',
    });
    const token = await server.mintToken({ tenant: 'acme', perms: ['read', 'write'] });
    const put = await fetch(`${server.url}/v1/artifacts?url=proxy`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'text/plain' },
      body: 'linked',
    });
    const { url } = (await put.json()) as { url: string };
    // Forged links are refused by their signature and spend nothing of the tenant's budget.
    for (let i = 0; i < 5; i++)
      expect((await fetch(url.replace(/signature=[^&]+/, 'signature=AAAA'))).status).toBe(403);
    expect((await fetch(url)).status).toBe(200);
    const mcp = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${token}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    await mcp.body?.cancel();
    const refused = await fetch(url);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).not.toBeNull();
    const mcpRefused = await fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${token}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(mcpRefused.status).toBe(429);
  });
});
