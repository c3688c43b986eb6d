/**
 * The one client used for every large transfer, service and baseline alike, with a fresh connection
 * per transfer: uploads through node:http, the body streamed from disk in 1 MiB reads; downloads over
 * a plain socket, counted and dropped.
 */
import { randomBytes, randomFillSync } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { request } from 'node:http';
import { connect } from 'node:net';
import { performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';
import { MiB } from './settings.js';

export interface TransferResult {
  status: number;
  bytes: number;
  seconds: number;
  /** The response body of an upload (JSON); empty for downloads. */
  body: string;
}

export const mibPerSecond = (r: TransferResult) => r.bytes / MiB / r.seconds;

/** Writes `bytes` random bytes to `file`, 1 MiB at a time. */
export async function writeRandomFile(file: string, bytes: number): Promise<void> {
  const fh = await open(file, 'w');
  try {
    const chunk = Buffer.allocUnsafe(MiB);
    for (let left = bytes; left > 0; left -= MiB) {
      const n = Math.min(MiB, left);
      randomFillSync(chunk, 0, n);
      await fh.write(chunk, 0, n);
    }
  } finally {
    await fh.close();
  }
}

/** Overwrites the first 16 bytes so the next upload is new content (no dedup shortcut). */
export async function varyHead(file: string): Promise<void> {
  const fh = await open(file, 'r+');
  try {
    await fh.write(randomBytes(16), 0, 16, 0);
  } finally {
    await fh.close();
  }
}

/** POSTs (or PUTs) `size` bytes, from `file` or from `buffer`; the time runs until the response has ended. */
export function upload(
  url: string,
  source: { file: string; size: number } | { buffer: Buffer },
  headers: Record<string, string>,
  timeoutMs: number,
  method: 'POST' | 'PUT' = 'POST',
): Promise<TransferResult> {
  const size = 'buffer' in source ? source.buffer.length : source.size;
  return new Promise((resolve, reject) => {
    let answered = false;
    const started = performance.now();
    const req = request(
      url,
      { method, agent: false, headers: { ...headers, 'Content-Length': String(size) } },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.once('error', fail);
        res.once('end', () => {
          clearTimeout(timer);
          resolve({
            status: res.statusCode ?? 0,
            bytes: size,
            seconds: (performance.now() - started) / 1000,
            body: Buffer.concat(chunks).toString('utf8'),
          });
        });
      },
    );
    const timer = setTimeout(
      () => req.destroy(new Error(`upload to ${url} took longer than ${timeoutMs} ms`)),
      timeoutMs,
    );
    function fail(err: unknown) {
      clearTimeout(timer);
      req.destroy();
      reject(err);
    }
    req.once('error', (err) => {
      // A server answering early (401, 413) may close while the body is still going out.
      if (!answered) fail(err);
    });
    if ('buffer' in source) {
      req.end(source.buffer);
    } else {
      pipeline(createReadStream(source.file, { highWaterMark: 1 << 20 }), req).catch((err) => {
        if (!answered) fail(err);
      });
    }
  });
}

/** One buffer that every download reads into and drops: the client allocates nothing per read. */
const sink = Buffer.allocUnsafe(4 * MiB);

/**
 * GETs `url`, counting and dropping the bytes; the time runs until the last byte. The client does no
 * work per byte: a plain socket reads into one reused buffer (`onread`), the response head is parsed
 * once and the body is only counted. node:http's client, which allocates a buffer per 64 KiB read and
 * runs its parser and a 'data' event over each, read a plain server at 0.4-0.6× of what curl read from
 * it on the same machine, and so capped every download row below the server's own rate.
 */
export function download(url: string, headers: Record<string, string>, timeoutMs: number): Promise<TransferResult> {
  const { hostname, port, pathname, search, host } = new URL(url);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let head = '';
    let status = 0;
    /** Body bytes so far; -1 until the head has ended. */
    let bytes = -1;
    /** Content-Length, or -1: read until the server closes. */
    let length = -1;
    let settled = false;
    const finish = (err?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve({ status, bytes: Math.max(0, bytes), seconds: (performance.now() - started) / 1000, body: '' });
    };
    const socket = connect({
      host: hostname,
      port: Number(port || 80),
      onread: {
        buffer: sink,
        callback(n: number, buf: Buffer) {
          if (bytes >= 0) {
            bytes += n;
          } else {
            head += buf.toString('latin1', 0, n);
            const end = head.indexOf('\r\n\r\n');
            if (end < 0) return true;
            const lines = head.slice(0, end).split('\r\n');
            status = Number(lines[0]!.split(' ')[1]);
            for (const line of lines.slice(1)) {
              const colon = line.indexOf(':');
              const name = line.slice(0, colon).trim().toLowerCase();
              const value = line.slice(colon + 1).trim();
              if (name === 'content-length') length = Number(value);
              if (name === 'transfer-encoding' && value.toLowerCase() !== 'identity') {
                finish(
                  new Error(`download from ${url}: transfer-encoding ${value} is not supported by the bench client`),
                );
                return false;
              }
            }
            bytes = head.length - end - 4;
          }
          if (length >= 0 && bytes >= length) finish();
          return true;
        },
      },
    });
    const timer = setTimeout(
      () => finish(new Error(`download from ${url} took longer than ${timeoutMs} ms`)),
      timeoutMs,
    );
    socket.once('error', (err) => finish(err));
    // A body without a Content-Length ends when the server closes; a short one is a short count.
    socket.once('end', () => finish());
    const lines = [`GET ${pathname}${search} HTTP/1.1`, `Host: ${host}`, 'Connection: close'];
    for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  });
}
