/**
 * Downloads on Node without web streams (src/blob/node-body.ts, src/node/body-writer.ts): a body from
 * the fs driver is written to the response by its own writer through two reused buffers, and the
 * web stream over the same bytes still reads them for everyone else. Both ways must give exactly the
 * bytes asked for, whole and by range, across the 1 MiB reads, and a client that leaves early must
 * not cost the server an open file or its next answer.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type FileRangeSource, fileRangeStream, nodeWriterOf } from '../src/blob/node-body.js';
import { downloadResponse } from '../src/http/streamed-bodies.js';
import { withNodeBodies } from '../src/node/body-writer.js';
import { loadConfig, startServer, type RunningServer } from '../src/node.js';

const MiB = 1024 * 1024;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'artifact-store-node-downloads-'));
  dirs.push(dir);
  return dir;
}

/** 3.5 MiB and a bit: more than three 1 MiB reads, the last one short. */
const bytes = randomBytes(3 * MiB + 512 * 1024 + 17);
/** Ranges [start, end] (inclusive) across the 1 MiB read boundaries, and at both ends. */
const ranges: [number, number][] = [
  [0, bytes.length - 1],
  [0, 0],
  [MiB - 1, MiB],
  [MiB - 100, 2 * MiB + 100],
  [2 * MiB, 3 * MiB - 1],
  [3 * MiB + 5, bytes.length - 1],
  [bytes.length - 1, bytes.length - 1],
];

/** The file as the fs driver reads it, counting its closes. */
async function fileSource(path: string): Promise<FileRangeSource & { closes: () => number }> {
  const fh = await open(path, 'r');
  let closes = 0;
  return {
    read: async (target, position) => (await fh.read(target, 0, target.byteLength, position)).bytesRead,
    close: async () => {
      closes++;
      await fh.close();
    },
    closes: () => closes,
  };
}

/** GET with node:http: status, headers and the whole body. */
function get(url: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>((ok, fail) => {
    http
      .get(url, { agent: false, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => ok({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', fail);
      })
      .on('error', fail);
  });
}

/** GET that reads `keep` bytes of the body and then closes the connection. */
function getAndLeave(url: string, headers: Record<string, string>, keep: number) {
  return new Promise<void>((ok, fail) => {
    const req = http.get(url, { agent: false, headers }, (res) => {
      let seen = 0;
      res.on('data', (c: Buffer) => {
        seen += c.length;
        if (seen >= keep) {
          req.destroy();
          ok();
        }
      });
      res.on('error', () => {});
    });
    req.on('error', () => {});
    req.on('close', () => ok());
    setTimeout(() => fail(new Error('no bytes came')), 10_000).unref();
  });
}

describe('a file range as a web stream and as a Node writer', () => {
  let path: string;
  beforeAll(() => {
    path = join(tempDir(), 'blob');
    writeFileSync(path, bytes);
  });

  it('reads exactly the range through the web stream, and closes the file once', async () => {
    for (const [start, end] of ranges) {
      const file = await fileSource(path);
      const got = Buffer.from(await new Response(fileRangeStream(file, start, end + 1)).arrayBuffer());
      expect(got.equals(bytes.subarray(start, end + 1))).toBe(true);
      expect(file.closes()).toBe(1);
    }
  });

  it('writes exactly the range to a Node response through its writer, and closes the file once', async () => {
    let file: Awaited<ReturnType<typeof fileSource>> | undefined;
    let written: Promise<void> | undefined;
    const server = http.createServer((req, res) => {
      const [start, end] = (req.url ?? '').slice(1).split('-').map(Number) as [number, number];
      void fileSource(path).then((f) => {
        file = f;
        const writer = nodeWriterOf(fileRangeStream(f, start, end + 1));
        res.writeHead(200, { 'Content-Length': String(end - start + 1) });
        written = writer!(res);
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      for (const [start, end] of ranges) {
        const res = await get(`${base}/${start}-${end}`);
        expect(res.body.equals(bytes.subarray(start, end + 1))).toBe(true);
        await written;
        expect(file!.closes()).toBe(1);
      }
    } finally {
      server.close();
    }
  });

  it('is read one way only: the writer refuses a stream already read, the stream one already written', async () => {
    const file = await fileSource(path);
    const stream = fileRangeStream(file, 0, 10);
    const reader = stream.getReader();
    expect((await reader.read()).value?.byteLength).toBe(10);
    await expect(nodeWriterOf(stream)!(new http.ServerResponse(new http.IncomingMessage(null!)))).rejects.toThrow(
      /already being read/,
    );
    await reader.cancel();

    const other = await fileSource(path);
    const written = fileRangeStream(other, 0, 10);
    const sink = new (await import('node:stream')).PassThrough();
    sink.resume();
    await nodeWriterOf(written)!(sink);
    await expect(written.getReader().read()).rejects.toThrow(/already being written/);
    expect(other.closes()).toBe(1);
  });

  it('stops reading and closes the file when the client leaves mid-body', async () => {
    const big = join(tempDir(), 'big');
    writeFileSync(big, randomBytes(64 * MiB));
    let file: Awaited<ReturnType<typeof fileSource>> | undefined;
    let written: Promise<void> | undefined;
    const server = http.createServer((_req, res) => {
      void fileSource(big).then((f) => {
        file = f;
        res.writeHead(200, { 'Content-Length': String(64 * MiB) });
        written = nodeWriterOf(fileRangeStream(f, 0, 64 * MiB))!(res);
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    try {
      await getAndLeave(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, {}, MiB);
      await written;
      expect(file!.closes()).toBe(1);
    } finally {
      server.close();
    }
  });
});

describe('withNodeBodies on @hono/node-server', () => {
  it('hands a download with a writer to it, keeping status and headers; others go out as before', async () => {
    const path = join(tempDir(), 'blob');
    writeFileSync(path, bytes);
    // Which buffers the file was read into: the writer reuses two, the web stream takes a new one per read.
    const targets = new Set<ArrayBufferLike>();
    const app = new Hono();
    app.get('/with-writer', async () => {
      const file = await fileSource(path);
      const read = file.read;
      file.read = (target, position) => {
        targets.add(target.buffer);
        return read(target, position);
      };
      return downloadResponse(fileRangeStream(file, 5, bytes.length), 206, {
        'Content-Length': String(bytes.length - 5),
        'Content-Range': `bytes 5-${bytes.length - 1}/${bytes.length}`,
        'X-Test': 'kept',
      });
    });
    app.get('/without', () => downloadResponse(new Response('plain bytes').body!, 200, { 'Content-Length': '11' }));
    const server = serve({ fetch: withNodeBodies(app.fetch, () => {}), port: 0, hostname: '127.0.0.1' });
    await new Promise<void>((ok) => server.once('listening', ok));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const res = await get(`${base}/with-writer`);
      expect(res.status).toBe(206);
      expect(res.headers['content-range']).toBe(`bytes 5-${bytes.length - 1}/${bytes.length}`);
      expect(res.headers['x-test']).toBe('kept');
      expect(res.body.equals(bytes.subarray(5))).toBe(true);
      // Four reads of up to 1 MiB into the writer's two buffers.
      expect(targets.size).toBe(2);
      const plain = await get(`${base}/without`);
      expect(plain.status).toBe(200);
      expect(plain.body.toString()).toBe('plain bytes');
    } finally {
      server.close();
    }
  });
});

describe('withNodeBodies when the bytes cannot be read', () => {
  it('cuts the response short and reports the error', async () => {
    const path = join(tempDir(), 'blob');
    writeFileSync(path, bytes);
    const errors: unknown[] = [];
    const app = new Hono();
    app.get('/', async () => {
      const file = await fileSource(path);
      const read = file.read;
      let reads = 0;
      file.read = (target, position) =>
        ++reads > 2 ? Promise.reject(new Error('EIO: the disk went away')) : read(target, position);
      return downloadResponse(fileRangeStream(file, 0, bytes.length), 200, {
        'Content-Length': String(bytes.length),
      });
    });
    const server = serve({
      fetch: withNodeBodies(app.fetch, (err) => errors.push(err)),
      port: 0,
      hostname: '127.0.0.1',
    });
    await new Promise<void>((ok) => server.once('listening', ok));
    try {
      const got = await new Promise<{ status: number; bytes: number; complete: boolean }>((ok) => {
        http.get(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { agent: false }, (res) => {
          let n = 0;
          res.on('data', (c: Buffer) => {
            n += c.length;
          });
          res.on('error', () => {});
          res.on('close', () => ok({ status: res.statusCode!, bytes: n, complete: res.complete }));
        });
      });
      expect(got.status).toBe(200);
      expect(got.complete).toBe(false);
      expect(got.bytes).toBeLessThan(bytes.length);
      // The writer may cut the response before its failure reaches onError: the report follows.
      await vi.waitFor(() => expect(String(errors[0])).toMatch(/EIO/));
    } finally {
      server.close();
    }
  });
});

describe('downloads from the fs driver through startServer', () => {
  let server: RunningServer;
  let dataDir: string;
  let id: string;
  const auth = () => ({ Authorization: `Bearer ${server.token}` });
  beforeAll(async () => {
    dataDir = tempDir();
    server = await startServer(loadConfig({}, { port: 0, dataDir, logLevel: 'silent', env: 'development' }));
    const res = await fetch(`${server.url}/v1/artifacts`, {
      method: 'POST',
      headers: { ...auth(), 'Content-Type': 'application/octet-stream' },
      body: bytes,
    });
    expect(res.status).toBe(201);
    id = ((await res.json()) as { id: string }).id;
  });
  afterAll(() => server.close());

  it('serves the whole body and every range byte for byte, with the download headers', async () => {
    const whole = await get(`${server.url}/v1/artifacts/${id}`, auth());
    expect(whole.status).toBe(200);
    expect(whole.headers['content-length']).toBe(String(bytes.length));
    expect(whole.headers['x-request-id']).toBeTruthy();
    expect(whole.body.equals(bytes)).toBe(true);
    for (const [start, end] of ranges) {
      const res = await get(`${server.url}/v1/artifacts/${id}`, { ...auth(), Range: `bytes=${start}-${end}` });
      expect(res.status).toBe(206);
      expect(res.headers['content-range']).toBe(`bytes ${start}-${end}/${bytes.length}`);
      expect(res.body.equals(bytes.subarray(start, end + 1))).toBe(true);
    }
  });

  it('keeps no file open after clients leave mid-body, and answers the next one whole', async () => {
    const openBlobs = () => readdirSync('/proc/self/fd').length;
    const before = openBlobs();
    for (let i = 0; i < 5; i++) await getAndLeave(`${server.url}/v1/artifacts/${id}`, auth(), 100_000);
    await new Promise((r) => setTimeout(r, 200));
    expect(openBlobs()).toBeLessThanOrEqual(before);
    const res = await get(`${server.url}/v1/artifacts/${id}`, auth());
    expect(res.body.equals(bytes)).toBe(true);
  });
});
