/**
 * The plain servers the service is measured against, one per process:
 *   upload <dir>    node:http; hashes (node:crypto sha256), writes a temp file and fsyncs it
 *   download <file> node:http; pipeline(createReadStream(file, { highWaterMark: 1 MiB }), res)
 *   download-reused <file>  node:http; the file read into two 1 MiB buffers that take turns (no memory per read)
 *   s3-proxy <json> node:http; GET /{key}: GetObject of the key ({endpoint, region, accessKeyId, secretAccessKey,
 *                   bucket}) piped to the response
 *   hello           Hono hello-world on @hono/node-server
 *   hello4k         Hono on @hono/node-server answering 4 KiB from memory with the headers the service sends
 *                   with a 4 KiB download (the ceiling of a small GET: the service's own work is what it adds)
 * Each listens on 127.0.0.1 at a free port and prints {"url": ...} once listening.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { close, createReadStream, createWriteStream, fsync, open, statSync } from 'node:fs';
import { mkdir, open as openFile, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { createS3Client } from '../src/blob/s3-client.js';
import { announceAndWait } from './server-lifecycle.js';

const HOST = '127.0.0.1';

function uploadHandler(dir: string) {
  return async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const tmp = join(dir, `${randomUUID()}.part`);
    // A plain descriptor that outlives the stream, for the fsync once the last byte is written.
    const fd = await promisify(open)(tmp, 'wx');
    try {
      const hash = createHash('sha256');
      let size = 0;
      const hashing = new Transform({
        transform(chunk: Buffer, _enc, done) {
          hash.update(chunk);
          size += chunk.length;
          done(null, chunk);
        },
      });
      await pipeline(req, hashing, createWriteStream('', { fd, autoClose: false }));
      await promisify(fsync)(fd);
      res
        .writeHead(201, { 'Content-Type': 'application/json' })
        .end(JSON.stringify({ sha256: hash.digest('hex'), sizeBytes: size }));
    } catch (err) {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    } finally {
      await promisify(close)(fd).catch(() => {});
      // Removed after the answer: deleting is not part of the measured ingest.
      await rm(tmp, { force: true }).catch(() => {});
    }
  };
}

function downloadHandler(file: string) {
  const size = statSync(file).size;
  return (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'GET') {
      res.writeHead(405).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': String(size) });
    // A client closing right after the last byte rejects with a premature close: not a failure.
    pipeline(createReadStream(file, { highWaterMark: 1 << 20 }), res).catch(() => {});
  };
}

/**
 * The same answer, written the way the service's fs driver writes it on Node: the file read into two
 * 1 MiB buffers that take turns, a buffer read into again once the socket has called back for its
 * last write. So a download allocates nothing per read (pipeline(createReadStream) allocates a new
 * 1 MiB buffer per read, which costs page faults and full GCs).
 */
function downloadReusedHandler(file: string) {
  const size = statSync(file).size;
  return async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'GET') {
      res.writeHead(405).end();
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': String(size) });
    const fh = await openFile(file, 'r');
    const free = [Buffer.allocUnsafeSlow(1 << 20), Buffer.allocUnsafeSlow(1 << 20)];
    let wake: (() => void) | undefined;
    let gone = false;
    res.once('close', () => {
      gone = true;
      wake?.();
    });
    const nextFree = async () => {
      while (free.length === 0 && !gone) await new Promise<void>((ok) => (wake = ok));
      return free.pop();
    };
    try {
      let position = 0;
      while (position < size && !gone) {
        const buf = (await nextFree())!;
        if (gone) break;
        const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, size - position), position);
        if (bytesRead === 0) break;
        position += bytesRead;
        const fits = res.write(bytesRead === buf.length ? buf : buf.subarray(0, bytesRead), () => {
          free.push(buf);
          wake?.();
        });
        if (!fits && !gone) {
          await new Promise<void>((ok) => {
            const done = () => {
              res.off('drain', done).off('close', done);
              ok();
            };
            res.on('drain', done).on('close', done);
          });
        }
      }
      if (!gone) res.end();
    } finally {
      await fh.close();
    }
  };
}

/**
 * A minimal Node proxy of S3 downloads: GET /{key} is one GetObject of that key (the S3 client of the
 * service's driver, with its settings) whose body is piped to the response.
 */
function s3ProxyHandler(s3: {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  bucket: string;
}) {
  const client = createS3Client({ ...s3, forcePathStyle: true });
  return async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'GET') {
      res.writeHead(405).end();
      return;
    }
    try {
      const key = decodeURIComponent((req.url ?? '/').slice(1));
      const out = await client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
      res.writeHead(200, {
        'Content-Type': 'application/octet-stream',
        'Content-Length': String(out.ContentLength),
      });
      // A client closing right after the last byte rejects with a premature close: not a failure.
      await pipeline(out.Body as Readable, res).catch(() => {});
    } catch (err) {
      if (!res.headersSent) res.writeHead(502).end(String(err));
    }
  };
}

function listenPlain(handler: (req: IncomingMessage, res: ServerResponse) => unknown): Promise<Server> {
  const server = createServer((req, res) => void handler(req, res));
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(0, HOST, () => ok(server));
  });
}

function listenHello(): Promise<Server> {
  const app = new Hono();
  app.get('/', (c) => c.text('Hello Hono!'));
  return new Promise((ok, fail) => {
    const server = serve({ fetch: app.fetch, port: 0, hostname: HOST }, () => ok(server as Server)) as Server;
    server.once('error', fail);
  });
}

/** The service's answer to GET /v1/artifacts/{id} of a 4 KiB octet-stream, made without its work. */
function listenHello4k(): Promise<Server> {
  const body = randomBytes(4096);
  const etag = `"${createHash('sha256').update(body).digest('hex')}"`;
  const app = new Hono();
  app.get('/', (c) =>
    c.body(new Uint8Array(body), 200, {
      'Content-Type': 'application/octet-stream',
      'Content-Disposition': 'inline; filename="bench.bin"',
      'X-Content-Type-Options': 'nosniff',
      'Content-Security-Policy': 'sandbox',
      'Cache-Control': 'private, max-age=31536000, immutable',
      Vary: 'Authorization',
      ETag: etag,
      'Accept-Ranges': 'bytes',
      'X-Request-Id': randomUUID(),
      'Content-Length': '4096',
    }),
  );
  return new Promise((ok, fail) => {
    const server = serve({ fetch: app.fetch, port: 0, hostname: HOST }, () => ok(server as Server)) as Server;
    server.once('error', fail);
  });
}

async function main() {
  const [mode, arg] = process.argv.slice(2);
  let server: Server;
  if (mode === 'upload' && arg) {
    await mkdir(arg, { recursive: true });
    server = await listenPlain(uploadHandler(arg));
  } else if (mode === 'download' && arg) {
    server = await listenPlain(downloadHandler(arg));
  } else if (mode === 'download-reused' && arg) {
    server = await listenPlain(downloadReusedHandler(arg));
  } else if (mode === 's3-proxy' && arg) {
    server = await listenPlain(s3ProxyHandler(JSON.parse(arg)));
  } else if (mode === 'hello') {
    server = await listenHello();
  } else if (mode === 'hello4k') {
    server = await listenHello4k();
  } else {
    throw new Error(
      'usage: baseline-servers.ts upload <dir> | download <file> | download-reused <file> | s3-proxy <json> | hello | hello4k',
    );
  }
  const { port } = server.address() as AddressInfo;
  announceAndWait({ url: `http://${HOST}:${port}` }, () => {
    server.closeAllConnections();
    return new Promise((ok) => server.close(() => ok()));
  });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
