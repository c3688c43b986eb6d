import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createHttpArtifactStore, type HttpArtifactStoreOptions } from '../src/client/http-store.js';
import { loadConfig } from '../src/core/config.js';
import { rejection } from './helpers/artifact-errors.js';
import { sha256Hex } from '../src/core/hash.js';
import { startServer, type RunningServer } from '../src/node.js';
import { describeArtifactStoreContract } from './artifact-store.contract.js';

// ---------------------------------------------------------------------------------------------
// The contract, against the real service on an ephemeral port.

let running: Promise<{ server: RunningServer; dir: string }> | undefined;

function realServer() {
  running ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), 'artifact-http-'));
    const server = await startServer(loadConfig({}, { port: 0, dataDir: dir, logLevel: 'silent', env: 'test' }));
    return { server, dir };
  })();
  return running;
}

afterAll(async () => {
  if (!running) return;
  const { server, dir } = await running;
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

let sessionCounter = 0;
const freshSession = () => `s-${process.pid}-${++sessionCounter}-${Math.random().toString(36).slice(2, 8)}`;

describeArtifactStoreContract('HTTP client ↔ real service (session-bound tokens)', async () => {
  const { server } = await realServer();
  const tokenFor = (session: string) =>
    server.mintToken({ tenant: 'acme', sub: 'u-1', session, perms: ['read', 'write'] });
  const [a, b] = await Promise.all([tokenFor(freshSession()), tokenFor(freshSession())]);
  return {
    store: createHttpArtifactStore({ baseUrl: server.url, token: a }),
    otherSession: createHttpArtifactStore({ baseUrl: server.url, token: () => b }),
    cleanup: async () => {},
  };
});

// One tenant-wide token for both stores: each names its session on puts, listings and reads, so when
// both hold the same bytes each reads, links and deletes its own reference.
describeArtifactStoreContract(
  'HTTP client ↔ real service (one tenant-wide token, stores scoped by session)',
  async () => {
    const { server } = await realServer();
    const token = await server.mintToken({ tenant: 'acme-wide', sub: 'host', perms: ['read', 'write'] });
    return {
      store: createHttpArtifactStore({ baseUrl: server.url, token, scope: { sessionId: freshSession() } }),
      otherSession: createHttpArtifactStore({ baseUrl: server.url, token, scope: { sessionId: freshSession() } }),
      cleanup: async () => {},
    };
  },
);

describe('HTTP client ↔ real service: tokens and scope', () => {
  it('a tenant-wide token names the scope of puts and listings with options.scope', async () => {
    const { server } = await realServer();
    const session = freshSession();
    const store = createHttpArtifactStore({
      baseUrl: server.url,
      token: server.token,
      scope: { sessionId: session, traceId: 'tr-1' },
    });
    const ref = await store.putText('scoped by headers', { filename: 'scoped.txt' });
    expect(ref.scope).toMatchObject({ tenantId: 'dev', sessionId: session, traceId: 'tr-1' });
    expect((await store.list()).items.map((r) => r.id)).toEqual([ref.id]);
    const bound = createHttpArtifactStore({
      baseUrl: server.url,
      token: await server.mintToken({ tenant: 'dev', session, perms: ['read'] }),
    });
    expect((await bound.getRef(ref.id))?.filename).toBe('scoped.txt');
  });

  it('a session-bound token cannot store for another session (forbidden)', async () => {
    const { server } = await realServer();
    const store = createHttpArtifactStore({
      baseUrl: server.url,
      token: await server.mintToken({ tenant: 'acme', session: freshSession(), perms: ['read', 'write'] }),
    });
    expect((await rejection(store.putText('x', { scope: { sessionId: 'someone-else' } }))).code).toBe('forbidden');
  });

  it('a read-only token can read but not put or delete', async () => {
    const { server } = await realServer();
    const session = freshSession();
    const writer = createHttpArtifactStore({
      baseUrl: server.url,
      token: await server.mintToken({ tenant: 'acme', session, perms: ['read', 'write'] }),
    });
    const reader = createHttpArtifactStore({
      baseUrl: server.url,
      token: await server.mintToken({ tenant: 'acme', session, perms: ['read'] }),
    });
    const ref = await writer.putText('read only');
    expect(new TextDecoder().decode((await reader.get(ref.id))!)).toBe('read only');
    expect((await rejection(reader.putText('nope'))).code).toBe('forbidden');
    expect((await rejection(reader.delete(ref.id))).code).toBe('forbidden');
  });

  it('a bad token is unauthorized, for reads too (never a silent null)', async () => {
    const { server } = await realServer();
    const store = createHttpArtifactStore({ baseUrl: server.url, token: 'not-a-token' });
    expect((await rejection(store.putText('x'))).code).toBe('unauthorized');
    expect((await rejection(store.getRef('art_000000000000000000000000'))).code).toBe('unauthorized');
    expect((await rejection(store.exists('art_000000000000000000000000'))).code).toBe('unauthorized');
  });
});

// ---------------------------------------------------------------------------------------------
// Protocol behaviour (retries, errors, headers) against tiny scripted servers.

interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

type Handler = (req: IncomingMessage, res: ServerResponse, seen: SeenRequest, n: number) => void;

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A server that reads each whole request body, records it, then calls the handler (n counts from 0). */
async function scriptedServer(handler: Handler, options: { readBody?: boolean } = {}) {
  const seen: SeenRequest[] = [];
  const server = createServer((req, res) => {
    const record: SeenRequest = {
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      body: Buffer.alloc(0),
    };
    const n = seen.length;
    seen.push(record);
    if (options.readBody === false) return handler(req, res, record, n);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      record.body = Buffer.concat(chunks);
      handler(req, res, record, n);
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const handle = {
    close: () =>
      new Promise<void>((ok) => {
        server.close(() => ok());
        server.closeAllConnections();
      }),
  };
  servers.push(handle);
  return { url, seen };
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

async function fakeRef(bytes: Uint8Array, overrides: Record<string, unknown> = {}) {
  const sha256 = await sha256Hex(bytes);
  return {
    id: `art_${sha256.slice(0, 24)}`,
    mimeType: 'application/octet-stream',
    sizeBytes: bytes.byteLength,
    sha256,
    namespace: 'art',
    scope: { tenantId: 't' },
    createdAt: new Date(0).toISOString(),
    ...overrides,
  };
}

// Waits are capped far below Retry-After so the tests do not sleep for seconds.
const fast: Partial<HttpArtifactStoreOptions> = { retryBaseMs: 1, retryMaxDelayMs: 5 };

describe('HTTP client retries', () => {
  it('503 with Retry-After, then 201: putBytes is retried with the same body and succeeds', async () => {
    const data = new TextEncoder().encode('retry me');
    const ref = await fakeRef(data);
    const { url, seen } = await scriptedServer((_req, res, _seen, n) => {
      if (n === 0) return json(res, 503, { code: 'backend_unavailable', message: 'busy' }, { 'Retry-After': '1' });
      json(res, 201, ref);
    });
    const store = createHttpArtifactStore({ baseUrl: url, ...fast });
    expect(await store.putBytes(data)).toEqual(ref);
    expect(seen).toHaveLength(2);
    expect(seen[0]!.body).toEqual(Buffer.from(data));
    expect(seen[1]!.body).toEqual(Buffer.from(data));
  });

  it('429 is retried too, for reads as well as puts', async () => {
    const data = new TextEncoder().encode('abc');
    const { url, seen } = await scriptedServer((_req, res, _seen, n) => {
      if (n < 2) return json(res, 429, { code: 'rate_limited', message: 'slow down' }, { 'Retry-After': '2' });
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
      res.end(Buffer.from(data));
    });
    const store = createHttpArtifactStore({ baseUrl: url, ...fast });
    expect(await store.get('art_000000000000000000000000')).toEqual(data);
    expect(seen.map((r) => r.method)).toEqual(['GET', 'GET', 'GET']);
  });

  it('gives up after `retries` retries with the last error, Retry-After included', async () => {
    const { url, seen } = await scriptedServer((_req, res) =>
      json(res, 503, { code: 'backend_unavailable', message: 'still down' }, { 'Retry-After': '7' }),
    );
    const store = createHttpArtifactStore({ baseUrl: url, retries: 2, ...fast });
    const err = await rejection(store.putText('x'));
    expect(err).toMatchObject({ code: 'backend_unavailable', message: 'still down', retryAfter: 7, status: 503 });
    expect(seen).toHaveLength(3);
  });

  it('a streamed put that gets 503 mid-body fails at once with backend_unavailable, sent once', async () => {
    let received = 0;
    const { url, seen } = await scriptedServer(
      (req, res) => {
        let answered = false;
        req.on('data', (c: Buffer) => {
          received += c.byteLength;
          if (answered || received < 256 * 1024) return;
          answered = true;
          res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '1', Connection: 'close' });
          res.end(JSON.stringify({ code: 'backend_unavailable', message: 'disk full' }), () => req.socket.destroy());
        });
      },
      { readBody: false },
    );
    let cancelled = false;
    // Endless: only the server's answer can end this upload.
    const endless = new ReadableStream<Uint8Array>({
      pull: (c) => c.enqueue(new Uint8Array(64 * 1024).fill(7)),
      cancel: () => {
        cancelled = true;
      },
    });
    const store = createHttpArtifactStore({ baseUrl: url, retries: 5, ...fast });
    const err = await rejection(store.putStream(endless));
    expect(err.code).toBe('backend_unavailable');
    expect(seen).toHaveLength(1);
    expect(cancelled).toBe(true);
  });

  it('with streamUploads: false, putStream is collected first and then retried like a buffered put', async () => {
    const data = new TextEncoder().encode('collected then sent');
    const ref = await fakeRef(data);
    const { url, seen } = await scriptedServer((_req, res, _seen, n) => {
      if (n === 0) return json(res, 503, { code: 'backend_unavailable', message: 'busy' });
      json(res, 201, ref);
    });
    const store = createHttpArtifactStore({ baseUrl: url, streamUploads: false, ...fast });
    expect(await store.putStream(new Response(data).body!)).toEqual(ref);
    expect(seen).toHaveLength(2);
    expect(seen[1]!.body).toEqual(Buffer.from(data));
  });

  /** A port nothing listens on, and a fetch that counts its calls. */
  async function refusedPort() {
    const probe = createServer();
    await new Promise<void>((ok) => probe.listen(0, '127.0.0.1', () => ok()));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((ok) => probe.close(() => ok()));
    const counter = { calls: 0 };
    const counting: typeof fetch = (input, init) => {
      counter.calls++;
      return fetch(input, init);
    };
    return { port, counter, counting };
  }

  it('connection refused is retried, then thrown as backend_unavailable', async () => {
    const { port, counter, counting } = await refusedPort();
    const store = createHttpArtifactStore({
      baseUrl: `http://127.0.0.1:${port}`,
      fetch: counting,
      retries: 2,
      ...fast,
    });
    const err = await rejection(store.putText('nobody home'));
    expect(err.code).toBe('backend_unavailable');
    expect(err.message).toContain('after 3 attempts');
    expect(counter.calls).toBe(3);
    expect((await rejection(store.getRef('art_000000000000000000000000'))).code).toBe('backend_unavailable');
    expect(counter.calls).toBe(6);
  });

  it('a streamed put to a refused connection is not retried', async () => {
    const { port, counter, counting } = await refusedPort();
    const store = createHttpArtifactStore({
      baseUrl: `http://127.0.0.1:${port}`,
      fetch: counting,
      retries: 3,
      ...fast,
    });
    expect((await rejection(store.putStream(new Response('once').body!))).code).toBe('backend_unavailable');
    expect(counter.calls).toBe(1);
  });

  it('a failing source stream rejects with its own error, not a network error', async () => {
    // Reads forever, never answers: only the source's failure can end this put.
    const { url } = await scriptedServer((req) => void req.resume(), { readBody: false });
    const boom = new Error('source broke');
    let sent = false;
    const failing = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent) return c.error(boom);
        sent = true;
        c.enqueue(new Uint8Array([1, 2, 3]));
      },
    });
    const store = createHttpArtifactStore({ baseUrl: url, ...fast });
    await expect(store.putStream(failing)).rejects.toBe(boom);
  });

  it('other statuses are not retried', async () => {
    const { url, seen } = await scriptedServer((_req, res) => json(res, 400, { code: 'bad_request', message: 'no' }));
    const store = createHttpArtifactStore({ baseUrl: url, ...fast });
    expect((await rejection(store.putText('x'))).code).toBe('bad_request');
    expect(seen).toHaveLength(1);
  });
});

describe('HTTP client errors', () => {
  it('rebuilds { code, message, details } bodies as ArtifactError', async () => {
    const { url } = await scriptedServer((_req, res) =>
      json(res, 409, {
        code: 'quota_exceeded',
        message: 'Session quota of 10 artifacts reached.',
        details: { limit: 10, usage: 10 },
      }),
    );
    const store = createHttpArtifactStore({ baseUrl: url, ...fast });
    const err = await rejection(store.putText('x'));
    expect(err).toMatchObject({
      code: 'quota_exceeded',
      status: 409,
      message: 'Session quota of 10 artifacts reached.',
      details: { limit: 10, usage: 10 },
    });
    expect(err.retryAfter).toBeUndefined();
  });

  it('keeps Retry-After (seconds or HTTP date) on errors that are not retried', async () => {
    const { url } = await scriptedServer((_req, res, _seen, n) =>
      json(
        res,
        429,
        { code: 'rate_limited', message: 'slow down' },
        { 'Retry-After': n === 0 ? '12' : new Date(Date.now() + 120_000).toUTCString() },
      ),
    );
    const store = createHttpArtifactStore({ baseUrl: url, retries: 0 });
    expect(await rejection(store.putText('x'))).toMatchObject({ code: 'rate_limited', retryAfter: 12 });
    const dated = await rejection(store.putText('x'));
    expect(dated.retryAfter).toBeGreaterThan(100);
    expect(dated.retryAfter).toBeLessThanOrEqual(120);
  });

  it('an unknown 5xx body is backend_unavailable with the status in the message', async () => {
    const { url } = await scriptedServer((_req, res) => {
      res.writeHead(502, { 'Content-Type': 'text/html' });
      res.end('<html><body>Bad gateway</body></html>');
    });
    const store = createHttpArtifactStore({ baseUrl: url, ...fast });
    const err = await rejection(store.putText('x'));
    expect(err.code).toBe('backend_unavailable');
    expect(err.message).toContain('502');
    expect(err.details).toEqual({ status: 502 });
  });

  it('an unknown 4xx body is bad_request; a 404 page is not mistaken for a missing artifact', async () => {
    const { url } = await scriptedServer((_req, res) => {
      res.writeHead(404, { 'Content-Type': 'text/html' });
      res.end('<h1>Not Found</h1>');
    });
    const store = createHttpArtifactStore({ baseUrl: url, ...fast });
    const err = await rejection(store.getRef('art_000000000000000000000000'));
    expect(err.code).toBe('bad_request');
    expect(err.message).toContain('404');
    expect((await rejection(store.get('art_000000000000000000000000'))).code).toBe('bad_request');
  });

  it('a JSON not_found reads as null / false', async () => {
    const { url, seen } = await scriptedServer((req, res) => {
      if (req.method === 'HEAD') {
        res.writeHead(404);
        return res.end();
      }
      json(res, 404, { code: 'not_found', message: 'gone' });
    });
    const store = createHttpArtifactStore({ baseUrl: url, ...fast });
    const id = 'art_000000000000000000000000';
    expect(await store.get(id)).toBeNull();
    expect(await store.getRef(id)).toBeNull();
    expect(await store.exists(id)).toBe(false);
    expect(await store.delete(id)).toBe(false);
    expect(seen.map((r) => `${r.method} ${r.url}`)).toEqual([
      `GET /v1/artifacts/${id}`,
      `GET /v1/artifacts/${id}/meta`,
      `HEAD /v1/artifacts/${id}`,
      `DELETE /v1/artifacts/${id}`,
    ]);
  });

  it('a 2xx answer that is not an ArtifactRef is an error, not a broken ref', async () => {
    const { url } = await scriptedServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html' });
      res.end('<html>welcome</html>');
    });
    const store = createHttpArtifactStore({ baseUrl: url, retries: 0 });
    expect((await rejection(store.putText('x'))).code).toBe('backend_unavailable');
  });
});

describe('HTTP client wire format', () => {
  async function capturePut(
    run: (store: ReturnType<typeof createHttpArtifactStore>) => Promise<unknown>,
    options: Partial<HttpArtifactStoreOptions> = {},
  ) {
    const { url, seen } = await scriptedServer(async (_req, res, req) =>
      json(res, 201, await fakeRef(new Uint8Array(req.body))),
    );
    await run(createHttpArtifactStore({ baseUrl: `${url}/`, ...options }));
    expect(seen).toHaveLength(1);
    return seen[0]!;
  }

  it('sends the raw body and every X-Artifact-* header', async () => {
    const data = new Uint8Array([0, 1, 2, 255]);
    const req = await capturePut(
      (store) =>
        store.putBytes(data, {
          mimeType: 'application/pdf',
          filename: 'Sales.pdf',
          namespace: 'tableau.download_workbook',
          meta: { pages: 3 },
          source: { tool: 'download_workbook' },
          ttl: 600,
          sha256: 'a'.repeat(64),
        }),
      { token: async () => 'tok-123', headers: { 'X-Request-Id': 'req-1' } },
    );
    expect(req.method).toBe('POST');
    expect(req.url).toBe('/v1/artifacts');
    expect(req.body).toEqual(Buffer.from(data));
    expect(req.headers).toMatchObject({
      authorization: 'Bearer tok-123',
      'x-request-id': 'req-1',
      'content-type': 'application/pdf',
      'x-artifact-filename': 'Sales.pdf',
      'x-artifact-namespace': 'tableau.download_workbook',
      'x-artifact-meta': '{"pages":3}',
      'x-artifact-source': '{"tool":"download_workbook"}',
      'x-artifact-ttl': '600',
      'x-artifact-sha256': 'a'.repeat(64),
    });
    expect(req.headers['x-artifact-session']).toBeUndefined();
  });

  it('encodes a non-ASCII filename and meta as RFC 8187 ext-values', async () => {
    const req = await capturePut((store) =>
      store.putText('x', { filename: 'Résumé 报告.pdf', meta: { city: 'Zürich' } }),
    );
    expect(req.headers['x-artifact-filename']).toBe("UTF-8''R%C3%A9sum%C3%A9%20%E6%8A%A5%E5%91%8A.pdf");
    expect(req.headers['x-artifact-meta']).toBe(`UTF-8''${encodeURIComponent('{"city":"Zürich"}')}`);
    expect(req.headers['content-type']).toBe('text/plain; charset=utf-8');
  });

  it('encodes an ASCII filename the service would misread as an ext-value', async () => {
    const req = await capturePut((store) => store.putText('x', { filename: "it's''odd.txt" }));
    expect(req.headers['x-artifact-filename']).toBe("UTF-8''it%27s%27%27odd.txt");
  });

  it('names the scope from options.scope, a per-put scope winning', async () => {
    const req = await capturePut((store) => store.putText('x', { scope: { traceId: 'tr-9' } }), {
      scope: { sessionId: 's-1', traceId: 'tr-1', userId: 'u-1' },
    });
    expect(req.headers).toMatchObject({
      'x-artifact-session': 's-1',
      'x-artifact-trace': 'tr-9',
      'x-artifact-user': 'u-1',
    });
  });

  it('refuses header values that cannot travel in a header, before sending anything', async () => {
    const { url, seen } = await scriptedServer((_req, res) => json(res, 500, {}));
    const store = createHttpArtifactStore({ baseUrl: url });
    expect((await rejection(store.putText('x', { scope: { sessionId: 'séance' } }))).code).toBe('bad_request');
    expect((await rejection(store.putText('x', { mimeType: 'text/plain\r\nX-Evil: 1' }))).code).toBe('bad_request');
    expect(seen).toHaveLength(0);
  });

  it('putBase64 decodes locally and sends the bytes with the data: URL media type', async () => {
    const req = await capturePut((store) => store.putBase64('data:image/png;base64,iVBORw0KGgo='));
    expect(req.headers['content-type']).toBe('image/png');
    expect(req.body).toEqual(Buffer.from('iVBORw0KGgo=', 'base64'));
  });

  it('lists with the query names of the API, defaulting to options.scope', async () => {
    const { url, seen } = await scriptedServer((_req, res) => json(res, 200, { items: [], nextCursor: 'c2' }));
    const store = createHttpArtifactStore({ baseUrl: url, scope: { sessionId: 's-1' } });
    expect(
      await store.list({
        namespace: 'ns',
        mimePrefix: 'image/',
        limit: 5,
        cursor: 'c1',
        createdAfter: '2026-01-01T00:00:00Z',
      }),
    ).toEqual({ items: [], nextCursor: 'c2' });
    const query = new URL(seen[0]!.url, url).searchParams;
    expect(Object.fromEntries(query)).toEqual({
      session: 's-1',
      namespace: 'ns',
      mimePrefix: 'image/',
      limit: '5',
      cursor: 'c1',
      createdAfter: '2026-01-01T00:00:00Z',
    });
  });

  it('asks for a range with a Range header, and cuts it out when an intermediary ignored it', async () => {
    const whole = Buffer.from('0123456789');
    const { url, seen } = await scriptedServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
      res.end(whole);
    });
    const store = createHttpArtifactStore({ baseUrl: url });
    const stream = await store.getStream('art_000000000000000000000000', { range: { start: 2, end: 5 } });
    expect(new TextDecoder().decode(await new Response(stream).arrayBuffer())).toBe('2345');
    expect(seen[0]!.headers.range).toBe('bytes=2-5');
  });

  it('keeps a baseUrl path prefix and escapes ids in paths', async () => {
    const { url, seen } = await scriptedServer((_req, res) => json(res, 404, { code: 'not_found', message: 'no' }));
    const store = createHttpArtifactStore({ baseUrl: `${url}/api/` });
    await store.getRef('tableau.download_workbook_0123456789abcdef01234567');
    expect(seen[0]!.url).toBe('/api/v1/artifacts/tableau.download_workbook_0123456789abcdef01234567/meta');
  });

  it('declares what the HTTP service can do', () => {
    expect(createHttpArtifactStore({ baseUrl: 'http://127.0.0.1:1' }).capabilities).toEqual({
      persistent: true,
      ranges: true,
      signedUrls: true,
      events: true,
      names: true,
      views: true,
    });
  });
});

describe('HTTP client: answers are checked against their schemas', () => {
  const id = 'art_0123456789abcdef01234567';
  const validRef = {
    id,
    mimeType: 'text/plain',
    sizeBytes: 3,
    sha256: 'a'.repeat(64),
    namespace: 'art',
    scope: { tenantId: 't', sessionId: 's-1' },
    createdAt: '2026-01-01T00:00:00.000Z',
    expiresAt: '2026-01-01T01:00:00.000Z',
  };

  /** A store whose fetch answers every request with this status and JSON body (or raw text). */
  function answering(body: unknown, status = 200) {
    const calls: string[] = [];
    const fakeFetch: typeof fetch = async (input, init) => {
      calls.push(`${init?.method ?? 'GET'} ${new URL(String(input)).pathname}`);
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      return new Response(text, { status, headers: { 'Content-Type': 'application/json' } });
    };
    return {
      calls,
      store: createHttpArtifactStore({ baseUrl: 'http://artifacts.test', fetch: fakeFetch, retries: 0 }),
    };
  }

  it('a valid answer comes back as sent: key order and fields a newer service adds are kept', async () => {
    const sent = { ...validRef, addedLater: { x: 1 } };
    const { store } = answering(sent);
    const ref = await store.getRef(id);
    expect(ref).toEqual(sent);
    expect(JSON.stringify(ref)).toBe(JSON.stringify(sent));
  });

  it('put: a ref without an id is backend_unavailable naming the field', async () => {
    const { id: _dropped, ...noId } = validRef;
    const { store, calls } = answering(noId, 201);
    const err = await rejection(store.putText('abc'));
    expect(err.code).toBe('backend_unavailable');
    expect(err.message).toContain('POST /v1/artifacts did not match ArtifactRef');
    expect(err.message).toContain('field id');
    expect(calls).toEqual(['POST /v1/artifacts']);
  });

  it('put: a ref with fields of the wrong type is refused, nested ones too', async () => {
    const wrongSize = await rejection(
      answering({ ...validRef, sizeBytes: '3' }, 201).store.putBytes(new Uint8Array([1])),
    );
    expect(wrongSize).toMatchObject({ code: 'backend_unavailable' });
    expect(wrongSize.message).toMatch(/field sizeBytes: .*expected number, received string/);
    const wrongScope = await rejection(answering({ ...validRef, scope: { tenantId: 7 } }, 201).store.putText('x'));
    expect(wrongScope.message).toContain('field scope.tenantId');
  });

  it('meta: a malformed ref is an error, not a broken ref; JSON that is not a ref neither', async () => {
    const badId = await rejection(answering({ ...validRef, id: 42 }).store.getRef(id));
    expect(badId.code).toBe('backend_unavailable');
    expect(badId.message).toContain(`GET /v1/artifacts/${id}/meta did not match ArtifactRef`);
    expect(badId.message).toContain('field id');
    const array = await rejection(answering([validRef]).store.getRef(id));
    expect(array.message).toContain('the whole answer');
    const notJson = await rejection(answering('{"id": ').store.getRef(id));
    expect(notJson.message).toContain('it is not JSON');
  });

  it('list: a page without items, or with a malformed item, is refused with its index', async () => {
    const noItems = await rejection(answering({ refs: [validRef] }).store.list());
    expect(noItems.code).toBe('backend_unavailable');
    expect(noItems.message).toContain('GET /v1/artifacts did not match ArtifactList');
    expect(noItems.message).toContain('field items');
    const { id: _dropped, ...noId } = validRef;
    const badItem = await rejection(answering({ items: [validRef, noId] }).store.list());
    expect(badItem.message).toContain('field items[1].id');
    const badCursor = await rejection(answering({ items: [], nextCursor: 5 }).store.list());
    expect(badCursor.message).toContain('field nextCursor');
    expect(await answering({ items: [validRef], nextCursor: 'c2' }).store.list()).toEqual({
      items: [validRef],
      nextCursor: 'c2',
    });
  });

  it('url: a link without its url is refused', async () => {
    const err = await rejection(
      answering({ fetchMode: 'proxy', urlExpiresAt: 'x', mimeType: 'text/plain', sizeBytes: 1 }).store.url!(id),
    );
    expect(err.code).toBe('backend_unavailable');
    expect(err.message).toContain('did not match DownloadUrl: field url');
  });

  it('events: an artifact event with a malformed ref ends the stream with the error', async () => {
    const sse = `id: 1\nevent: artifact.stored\ndata: ${JSON.stringify({ type: 'artifact.stored', ref: { ...validRef, sha256: 'nope' }, at: 'now' })}\n\n`;
    const fakeFetch: typeof fetch = async () => new Response(sse, { headers: { 'Content-Type': 'text/event-stream' } });
    const store = createHttpArtifactStore({ baseUrl: 'http://artifacts.test', fetch: fakeFetch, ...fast });
    const err = await rejection(
      (async () => {
        for await (const _ of store.events!()) throw new Error('no event expected');
      })(),
    );
    expect(err.code).toBe('backend_unavailable');
    expect(err.message).toContain('did not match an artifact event: field ref.sha256');
  });
});
