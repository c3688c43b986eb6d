import type { ChildProcessByStdio } from 'node:child_process';
import { spawnProcess, stopProcess } from './helpers/processes.js';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Readable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mintToken } from '../src/http/tokens.js';
import { loadConfig, startServer, type RunningServer } from '../src/node.js';
import { bytesOf } from './helpers/app.js';
import { listFiles } from './helpers/drivers.js';
import { CLI_ARGS } from './helpers/cli-server.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MiB = 1024 * 1024;

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'artifact-store-server-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A plain node:http request (header values may carry raw UTF-8 bytes as latin1 strings). */
function request(url: string, options: http.RequestOptions, body?: Buffer | string): Promise<RawResponse> {
  return new Promise((ok, fail) => {
    const req = http.request(url, { agent: false, ...options }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => ok({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end(body);
  });
}

describe('in-process server (startServer)', () => {
  let server: RunningServer;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = tempDir();
    server = await startServer(
      loadConfig({}, { port: 0, dataDir, logLevel: 'silent', env: 'test', maxArtifactBytes: MiB }),
    );
  });
  afterAll(async () => {
    await server?.close();
  });

  const auth = () => ({ Authorization: `Bearer ${server.token}` });

  async function listIds(): Promise<string[]> {
    const res = await fetch(`${server.url}/v1/artifacts`, { headers: auth() });
    expect(res.status).toBe(200);
    return ((await res.json()) as { items: { id: string }[] }).items.map((i) => i.id);
  }

  it('serves /docs and every asset it references from itself, with no third-party URLs', async () => {
    const page = await fetch(`${server.url}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await page.text();

    const absolute = html.match(/https?:\/\/[^\s"'<>)]+/g) ?? [];
    const origin = new URL(server.url).origin;
    expect(absolute.filter((u) => new URL(u).origin !== origin)).toEqual([]);

    const refs = [
      ...html.matchAll(/<script\b[^>]*\bsrc="([^"]+)"/g),
      ...html.matchAll(/<link\b[^>]*\bhref="([^"]+)"/g),
    ].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThanOrEqual(4);
    const expectations: [RegExp, RegExp, number][] = [
      [/swagger-ui-bundle\.js$/, /^text\/javascript/, 100_000],
      [/\.js$/, /^text\/javascript/, 50],
      [/\.css$/, /^text\/css/, 10_000],
      [/\.png$/, /^image\/png$/, 100],
    ];
    const seen = new Set<string>();
    for (const ref of refs) {
      const url = new URL(ref, `${server.url}/docs`);
      expect(url.origin, ref).toBe(origin);
      const res = await fetch(url);
      expect(res.status, ref).toBe(200);
      const bytes = new Uint8Array(await res.arrayBuffer());
      const rule = expectations.find(([name]) => name.test(url.pathname));
      expect(rule, `no expectation for ${ref}`).toBeDefined();
      const [, type, minSize] = rule!;
      expect(res.headers.get('content-type'), ref).toMatch(type);
      expect(bytes.byteLength, ref).toBeGreaterThan(minSize);
      if (url.pathname.endsWith('.png')) expect([...bytes.slice(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
      if (url.pathname.endsWith('.js')) expect(new TextDecoder().decode(bytes.slice(0, 2000))).not.toMatch(/^\s*</);
      seen.add(url.pathname.split('/').pop()!);
    }
    expect(seen).toEqual(new Set(['swagger-ui-bundle.js', 'init.js', 'swagger-ui.css', 'favicon-32x32.png']));

    // The page's script points Swagger UI at the service's own description.
    const init = await (await fetch(`${server.url}/docs/assets/init.js`)).text();
    expect(init).toContain("url: '/openapi.json'");
    const doc = await fetch(`${server.url}/openapi.json`);
    expect(doc.status).toBe(200);
    expect(((await doc.json()) as { openapi: string }).openapi).toMatch(/^3\.1/);

    const unknown = await fetch(`${server.url}/docs/assets/../../package.json`);
    expect(unknown.status).toBe(404);
    const other = await fetch(`${server.url}/docs/assets/swagger-ui-es-bundle.js`);
    expect(other.status).toBe(404);
  });

  it('answers 413 to a chunked upload over the limit without reading it all, and stores nothing', async () => {
    const total = 256 * MiB;
    const chunk = Buffer.alloc(64 * 1024, 0x5a);
    let produced = 0;
    function* generate() {
      while (produced < total) {
        produced += chunk.byteLength;
        yield chunk;
      }
    }

    const result = await new Promise<RawResponse>((ok, fail) => {
      let answered = false;
      const req = http.request(`${server.url}/v1/artifacts`, {
        method: 'POST',
        agent: false,
        headers: { ...auth(), 'Content-Type': 'application/octet-stream', 'Transfer-Encoding': 'chunked' },
      });
      req.on('response', (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          ok({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) });
          req.destroy();
        });
        res.on('error', fail);
      });
      // Once answered, the server may close the socket under our writes (EPIPE / ECONNRESET): expected.
      req.on('error', (err) => {
        if (!answered) fail(err);
      });
      const source = generate();
      const pump = () => {
        while (!answered) {
          const next = source.next();
          if (next.done) {
            req.end();
            return;
          }
          if (!req.write(next.value)) {
            req.once('drain', pump);
            return;
          }
        }
      };
      pump();
    });

    expect(result.status).toBe(413);
    const body = JSON.parse(result.body.toString('utf8'));
    expect(body.code).toBe('payload_too_large');
    expect(body.message).toContain(String(MiB));
    expect(result.headers['transfer-encoding']).toBeUndefined();
    // The server stopped reading long before the client ran out of bytes.
    expect(produced).toBeLessThan(total / 4);
    expect(await listIds()).toEqual([]);
    expect(listFiles(join(dataDir, 'blobs'))).toEqual([]);
  }, 120_000);

  it('answers 413 at once for a declared Content-Length over the limit', async () => {
    const res = await request(
      `${server.url}/v1/artifacts`,
      { method: 'POST', headers: { ...auth(), 'Content-Length': String(2 * MiB) } },
      Buffer.alloc(0),
    );
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body.toString()).code).toBe('payload_too_large');
  });

  it('decodes a filename sent as raw UTF-8 header bytes', async () => {
    const name = 'naïve 報告.pdf';
    const res = await request(
      `${server.url}/v1/artifacts`,
      {
        method: 'POST',
        headers: {
          ...auth(),
          'Content-Type': 'application/pdf',
          'X-Artifact-Filename': Buffer.from(name, 'utf8').toString('latin1'),
        },
      },
      Buffer.from(bytesOf(100, 21)),
    );
    expect(res.status).toBe(201);
    const ref = JSON.parse(res.body.toString('utf8'));
    expect(ref.filename).toBe(name);
    const dl = await request(`${server.url}/v1/artifacts/${ref.id}`, { headers: auth() });
    expect(dl.status).toBe(200);
    expect(dl.headers['content-disposition']).toBe(
      `inline; filename="na_ve __.pdf"; filename*=UTF-8''na%C3%AFve%20%E5%A0%B1%E5%91%8A.pdf`,
    );
    expect(dl.body.equals(Buffer.from(bytesOf(100, 21)))).toBe(true);
  });

  it('refuses control characters in a raw filename header with 400 and stores nothing', async () => {
    // Raw requests: node:http would refuse to send these bytes itself.
    const { hostname, port } = new URL(server.url);
    const rawPut = (filenameBytes: string) =>
      new Promise<string>((ok, fail) => {
        const socket = net.connect(Number(port), hostname, () => {
          // write, not end: a half-closed client socket makes Node drop the pending response.
          socket.write(
            Buffer.from(
              `POST /v1/artifacts HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${server.token}\r\nX-Artifact-Filename: ${filenameBytes}\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi`,
              'latin1',
            ),
          );
        });
        let out = '';
        socket.setEncoding('latin1');
        socket.on('data', (d: string) => (out += d));
        socket.on('end', () => ok(out));
        socket.on('error', fail);
      });
    const before = await listIds();
    // Tab, a raw C1 byte, and C1 as UTF-8 reach the service, which refuses them.
    for (const bytes of ['a\tb.pdf', 'a\x85b.pdf', 'a\xc2\x85b.pdf']) {
      const raw = await rawPut(bytes);
      expect(raw, JSON.stringify(bytes)).toMatch(/^HTTP\/1\.1 400 /);
      expect(raw).toContain('"code":"bad_request"');
      expect(raw).toMatch(/control characters/);
    }
    // Other C0 controls are refused by the HTTP parser before the service sees them.
    for (const bytes of ['a\x1bb.pdf', 'a\x00b.pdf', 'a\x7fb.pdf']) {
      expect(await rawPut(bytes), JSON.stringify(bytes)).toMatch(/^HTTP\/1\.1 400 /);
    }
    expect(await listIds()).toEqual(before);
  });
});

describe('production start-up', () => {
  it('refuses to start without keys, naming ARTIFACT_STORE_JWT_SECRETS', async () => {
    const config = loadConfig({}, { env: 'production', port: 0, dataDir: tempDir(), logLevel: 'silent' });
    await expect(startServer(config)).rejects.toThrow(/ARTIFACT_STORE_JWT_SECRETS/);
  });

  it('NODE_ENV=production alone also means production', async () => {
    const config = loadConfig({ NODE_ENV: 'production' }, { port: 0, dataDir: tempDir(), logLevel: 'silent' });
    expect(config.env).toBe('production');
    await expect(startServer(config)).rejects.toThrow(/ARTIFACT_STORE_JWT_SECRETS/);
  });

  it('refuses a short secret', async () => {
    const config = loadConfig(
      { ARTIFACT_STORE_JWT_SECRETS: 'k1:too-short' },
      { env: 'production', port: 0, dataDir: tempDir(), logLevel: 'silent' },
    );
    await expect(startServer(config)).rejects.toThrow(/k1.*shorter than 32/);
  });

  it('refuses a short URL signing key, with the same rule as the Worker', async () => {
    const config = loadConfig(
      { ARTIFACT_STORE_JWT_SECRETS: `k1:${'p'.repeat(40)}`, ARTIFACT_STORE_URL_SIGNING_KEYS: 'l1:too-short' },
      { env: 'production', port: 0, dataDir: tempDir(), logLevel: 'silent' },
    );
    await expect(startServer(config)).rejects.toThrow(/URL signing key of kid "l1" is shorter than 32/);
  });

  it('starts with a strong secret, prints no dev token, and accepts tokens signed with it', async () => {
    const secret = 'p'.repeat(40);
    const config = loadConfig(
      { ARTIFACT_STORE_JWT_SECRETS: `prod1:${secret}` },
      { env: 'production', port: 0, dataDir: tempDir(), logLevel: 'silent' },
    );
    const running = await startServer(config);
    try {
      expect(running.token).toBe('');
      await expect(running.mintToken({ tenant: 'x' })).rejects.toThrow();
      const token = await mintToken({ kid: 'prod1', secret }, { tenant: 'acme' });
      const ok = await fetch(`${running.url}/v1/artifacts`, { headers: { Authorization: `Bearer ${token}` } });
      expect(ok.status).toBe(200);
      const devLike = await mintToken({ kid: 'dev', secret }, { tenant: 'acme' });
      const refused = await fetch(`${running.url}/v1/artifacts`, { headers: { Authorization: `Bearer ${devLike}` } });
      expect(refused.status).toBe(401);
      await refused.arrayBuffer();
      await ok.arrayBuffer();
    } finally {
      await running.close();
    }
  });
});

describe('close() drains', () => {
  it('finishes a keep-alive download in progress, then closes its idle connection without waiting for the keep-alive timeout', {
    timeout: 120_000,
  }, async () => {
    const running = await startServer(
      loadConfig(
        {},
        {
          port: 0,
          dataDir: tempDir(),
          logLevel: 'silent',
          env: 'test',
          maxArtifactBytes: 64 * MiB,
          shutdownGraceMs: 30 * 60_000,
        },
      ),
    );
    // Far beyond the test timeout: close() must not wait for idle keep-alive connections to time out.
    running.server.keepAliveTimeout = 30 * 60_000;
    const bytes = Buffer.from(bytesOf(16 * MiB, 33));
    const put = await fetch(`${running.url}/v1/artifacts`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${running.token}` },
      body: bytes,
    });
    expect(put.status).toBe(201);
    const { id } = (await put.json()) as { id: string };

    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    let closing: Promise<void> | undefined;
    const result = await new Promise<{ body: Buffer; socketClosed: Promise<void> }>((ok, fail) => {
      const req = http.get(
        `${running.url}/v1/artifacts/${id}`,
        { agent, headers: { Authorization: `Bearer ${running.token}` } },
        (res) => {
          const chunks: Buffer[] = [];
          const socketClosed = new Promise<void>((done) => res.socket.once('close', () => done()));
          res.once('data', (first: Buffer) => {
            res.pause();
            chunks.push(first);
            closing = running.close();
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => ok({ body: Buffer.concat(chunks), socketClosed }));
            res.on('error', fail);
            setTimeout(() => res.resume(), 200);
          });
        },
      );
      req.on('error', fail);
    });
    expect(result.body.equals(bytes)).toBe(true);
    await result.socketClosed;
    await closing;
    agent.destroy();
  });
});

describe('CLI serve: SIGTERM drains in-flight downloads', () => {
  let child: ChildProcessByStdio<null, Readable, Readable> | undefined;
  afterEach(async () => {
    if (child) await stopProcess(child, { signal: 'SIGKILL' });
  });

  it('finishes the download in progress, refuses new connections, and exits 0', { timeout: 300_000 }, async () => {
    const dataDir = tempDir();
    const proc = spawnProcess<ChildProcessByStdio<null, Readable, Readable>>(
      process.execPath,
      [...CLI_ARGS, 'serve', '--port', '0', '--data-dir', dataDir],
      {
        cwd: ROOT,
        env: {
          ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ARTIFACT_STORE_'))),
          ARTIFACT_STORE_ENV: 'test',
          ARTIFACT_STORE_LOG_LEVEL: 'warn',
          ARTIFACT_STORE_MAX_ARTIFACT_BYTES: String(128 * MiB),
          ARTIFACT_STORE_SHUTDOWN_GRACE_MS: '240000',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child = proc;
    let stdout = '';
    let stderr = '';
    proc.stdout.setEncoding('utf8');
    proc.stderr.setEncoding('utf8');
    const waiters: (() => void)[] = [];
    proc.stdout.on('data', (d: string) => {
      stdout += d;
      for (const w of waiters.splice(0)) w();
    });
    proc.stderr.on('data', (d: string) => (stderr += d));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((ok) =>
      proc.on('exit', (code, signal) => ok({ code, signal })),
    );
    const waitForStdout = async (pattern: RegExp): Promise<RegExpExecArray> => {
      for (;;) {
        const m = pattern.exec(stdout);
        if (m) return m;
        if (proc.exitCode !== null) throw new Error(`server exited early (${proc.exitCode}):\n${stdout}\n${stderr}`);
        await new Promise<void>((ok) => {
          waiters.push(ok);
          setTimeout(ok, 200);
        });
      }
    };

    const url = (await waitForStdout(/listening on (http:\/\/\S+)/))[1]!;
    const token = (await waitForStdout(/ARTIFACT_STORE_TOKEN=(\S+)/))[1]!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(url).not.toMatch(/:0$/);

    const size = 64 * MiB;
    const big = Buffer.alloc(size);
    for (let i = 0; i < size; i += 4096) big.writeUInt32LE(i, i);
    const expected = createHash('sha256').update(big).digest('hex');
    const put = await fetch(`${url}/v1/artifacts`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/octet-stream' },
      body: big,
    });
    expect(put.status).toBe(201);
    const ref = (await put.json()) as { id: string; sha256: string };
    expect(ref.sha256).toBe(expected);

    const connectRefused = () =>
      new Promise<boolean>((ok) => {
        const { hostname, port } = new URL(url);
        const s = net.connect(Number(port), hostname);
        s.once('connect', () => {
          s.destroy();
          ok(false);
        });
        s.once('error', (err: NodeJS.ErrnoException) => ok(err.code === 'ECONNREFUSED'));
      });

    const download = await new Promise<{
      received: number;
      sha256: string;
      refusedWhileInFlight: boolean;
      receivedAtSignal: number;
    }>((ok, fail) => {
      const req = http.get(
        `${url}/v1/artifacts/${ref.id}`,
        { agent: false, headers: { Authorization: `Bearer ${token}` } },
        (res) => {
          if (res.statusCode !== 200) {
            fail(new Error(`download answered ${res.statusCode}`));
            return;
          }
          const hash = createHash('sha256');
          let received = 0;
          res.once('data', (first: Buffer) => {
            res.pause();
            hash.update(first);
            received += first.byteLength;
            void (async () => {
              const receivedAtSignal = received;
              proc.kill('SIGTERM');
              await waitForStdout(/"msg":"shutting down"/);
              // The listener closes right after the signal; poll briefly for the refusal while the download is paused.
              let refusedWhileInFlight = false;
              for (let i = 0; i < 200 && !refusedWhileInFlight; i++) {
                refusedWhileInFlight = await connectRefused();
                if (!refusedWhileInFlight) await new Promise((r) => setTimeout(r, 100));
              }
              res.on('data', (chunk: Buffer) => {
                hash.update(chunk);
                received += chunk.byteLength;
              });
              res.on('end', () => ok({ received, sha256: hash.digest('hex'), refusedWhileInFlight, receivedAtSignal }));
              res.on('error', fail);
              res.resume();
            })().catch(fail);
          });
        },
      );
      req.on('error', fail);
    });

    expect(download.receivedAtSignal).toBeLessThan(size);
    expect(download.refusedWhileInFlight).toBe(true);
    expect(download.received).toBe(size);
    expect(download.sha256).toBe(expected);
    expect(await connectRefused()).toBe(true);

    const { code, signal } = await exited;
    expect({ code, signal }, stderr).toEqual({ code: 0, signal: null });
  });
});
