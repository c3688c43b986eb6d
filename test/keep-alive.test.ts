/**
 * Early refusals and keep-alive connections, with a real keep-alive client (node:http Agent, one
 * socket): after every kind of refusal — auth, validation, quota, 413, rate limit, a blob backend
 * that is down — the next request on the same pool succeeds. An answer sent before its body was
 * read either leaves the connection usable or says Connection: close, never a dead socket.
 */
import { createHash } from 'node:crypto';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type ConfigInput } from '../src/core/config.js';
import { startServer, type RunningServer } from '../src/node.js';

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  socket: Socket;
}

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function serve(settings: Partial<ConfigInput>, env: Record<string, string> = {}): Promise<RunningServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'artifact-keepalive-'));
  dirs.push(dataDir);
  return startServer(loadConfig(env, { port: 0, dataDir, env: 'test', logLevel: 'silent', ...settings }));
}

/** One request over `agent`; the body is written whole, as clients do, whatever the server answers first. */
function send(
  agent: Agent,
  base: string,
  path: string,
  method: string,
  headers: Record<string, string>,
  body?: Buffer,
): Promise<Answer> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method, headers: { ...headers, ...(body ? { 'Content-Length': String(body.length) } : {}) }, agent },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, socket: req.socket! }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Sends the refused request three times, each followed by a GET /healthz on the same one-socket
 * pool: every follow-up must succeed; a socket the server did not keep must have been announced.
 */
async function expectPoolSurvives(
  server: RunningServer,
  refused: () => { path: string; method?: string; headers: Record<string, string>; body?: Buffer },
  status: number,
) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (let i = 0; i < 3; i++) {
      const r = refused();
      const answer = await send(agent, server.url, r.path, r.method ?? 'POST', r.headers, r.body);
      expect(answer.status).toBe(status);
      // Give the server the time its adapter allows an unread body before it drops the socket.
      await new Promise((ok) => setTimeout(ok, 600));
      const next = await send(agent, server.url, '/healthz', 'GET', {});
      expect(next.status).toBe(200);
      if (next.socket !== answer.socket) expect(answer.headers.connection).toBe('close');
    }
  } finally {
    agent.destroy();
  }
}

const KiB = 1024;
const body = (size: number, seed: number) => Buffer.alloc(size, seed);
const shaOf = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe.concurrent('keep-alive after early refusals (fs driver)', () => {
  let server: RunningServer;
  let token: string;
  beforeAll(async () => {
    server = await serve({ maxArtifactBytes: 8192 * KiB, maxSessionBytes: 600 * KiB, cleanupStrategy: 'reject' });
    token = await server.mintToken({ tenant: 'acme', session: 's1', perms: ['read', 'write'] });
  });
  afterAll(() => server.close());
  const put = (extra: Record<string, string>) => ({
    'Content-Type': 'application/octet-stream',
    Authorization: `Bearer ${token}`,
    ...extra,
  });

  for (const size of [16 * KiB, 256 * KiB, 4096 * KiB]) {
    it(`no token (401), ${size / KiB} KiB body`, async () => {
      await expectPoolSurvives(
        server,
        () => ({ path: '/v1/artifacts', headers: { 'Content-Type': 'application/octet-stream' }, body: body(size, 1) }),
        401,
      );
    });
    it(`a bad header (400), ${size / KiB} KiB body`, async () => {
      await expectPoolSurvives(
        server,
        () => ({ path: '/v1/artifacts', headers: put({ 'X-Artifact-Ttl': 'soon' }), body: body(size, 2) }),
        400,
      );
    });
  }

  it('over the artifact size (413), declared and streamed', async () => {
    await expectPoolSurvives(
      server,
      () => ({ path: '/v1/artifacts', headers: put({}), body: body(9000 * KiB, 5) }),
      413,
    );
  });

  it('a full session with strategy none (409)', async () => {
    let n = 0;
    const quotaToken = await server.mintToken({ tenant: 'acme', session: 'full', perms: ['read', 'write'] });
    const first = await send(
      new Agent(),
      server.url,
      '/v1/artifacts',
      'POST',
      { ...put({}), Authorization: `Bearer ${quotaToken}` },
      body(90 * KiB, 7),
    );
    expect(first.status).toBe(201);
    // 90 KiB of 600 used: a 550 KiB put no longer fits.
    await expectPoolSurvives(
      server,
      () => ({
        path: '/v1/artifacts',
        headers: { ...put({}), Authorization: `Bearer ${quotaToken}` },
        body: body(550 * KiB, 10 + n++),
      }),
      409,
    );
  });

  it('a JSON body on a link for a missing artifact (404)', async () => {
    await expectPoolSurvives(
      server,
      () => ({
        path: '/v1/artifacts/art_000000000000000000000000/url',
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
        body: Buffer.from(JSON.stringify({ mode: 'proxy', pad: 'x'.repeat(300 * KiB) })),
      }),
      404,
    );
  });
});

describe.concurrent('keep-alive after early refusals (rate limits)', () => {
  for (const size of [16 * KiB, 256 * KiB, 4096 * KiB]) {
    it(`over the bytes-in-flight budget (429), ${size / KiB} KiB body`, async () => {
      const server = await serve(
        { maxArtifactBytes: 8192 * KiB },
        { ARTIFACT_STORE_TENANT_BYTES_IN_FLIGHT: String(100 * KiB) },
      );
      const token = await server.mintToken({ tenant: 'acme', perms: ['read', 'write'] });
      const put = { 'Content-Type': 'application/octet-stream', Authorization: `Bearer ${token}` };
      // One put alone may exceed the budget; a second alongside may not: hold one open.
      const held = request(new URL('/v1/artifacts', server.url), {
        method: 'POST',
        headers: { ...put, 'Content-Length': String(90 * KiB) },
      });
      held.on('error', () => {});
      held.write(body(KiB, 3));
      await new Promise((ok) => setTimeout(ok, 100));
      try {
        await expectPoolSurvives(server, () => ({ path: '/v1/artifacts', headers: put, body: body(size, 4) }), 429);
      } finally {
        held.destroy();
        await server.close();
      }
    });
  }

  it('429 over the request rate', async () => {
    const server = await serve(
      {},
      { ARTIFACT_STORE_TENANT_REQUESTS_PER_SECOND: '0.01', ARTIFACT_STORE_TENANT_REQUEST_BURST: '1' },
    );
    try {
      const token = await server.mintToken({ tenant: 'acme', perms: ['read', 'write'] });
      const first = await send(new Agent(), server.url, '/v1/artifacts', 'GET', { Authorization: `Bearer ${token}` });
      expect(first.status).toBe(200);
      await expectPoolSurvives(
        server,
        () => ({
          path: '/v1/artifacts',
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/octet-stream' },
          body: body(256 * KiB, 20),
        }),
        429,
      );
    } finally {
      await server.close();
    }
  });
});

describe.concurrent('keep-alive when the blob backend is down (S3 driver, nothing listening)', () => {
  let server: RunningServer;
  let token: string;
  beforeAll(async () => {
    // A port nothing listens on: every S3 call fails at once with ECONNREFUSED.
    server = await serve({
      blobDriver: 's3',
      s3Bucket: 'down',
      s3Endpoint: 'http://127.0.0.1:9',
      s3AccessKeyId: 'k',
      s3SecretAccessKey: 's',
      maxArtifactBytes: 8192 * KiB,
    });
    token = await server.mintToken({ tenant: 'acme', session: 's1', perms: ['read', 'write'] });
  });
  afterAll(() => server.close());

  for (const size of [16 * KiB, 256 * KiB, 4096 * KiB]) {
    for (const declared of [true, false]) {
      it(`503 with Retry-After, ${size / KiB} KiB ${declared ? 'with' : 'without'} X-Artifact-Sha256`, async () => {
        let seed = 30;
        await expectPoolSurvives(
          server,
          () => {
            const b = body(size, seed++);
            return {
              path: '/v1/artifacts',
              headers: {
                Authorization: `Bearer ${token}`,
                'Content-Type': 'application/octet-stream',
                ...(declared ? { 'X-Artifact-Sha256': shaOf(b) } : {}),
              },
              body: b,
            };
          },
          503,
        );
      });
    }
  }
});
