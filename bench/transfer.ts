/**
 * The one client used for every large transfer, service and baseline alike: node:http with a fresh
 * connection per transfer, the body streamed from disk in 1 MiB reads, downloads counted and dropped.
 */
import { randomBytes, randomFillSync } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { request, get } from 'node:http';
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

/** GETs `url`, counting and dropping the bytes; the time runs until the last byte. */
export function download(url: string, headers: Record<string, string>, timeoutMs: number): Promise<TransferResult> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = get(url, { agent: false, headers }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => {
        bytes += c.length;
      });
      res.once('error', fail);
      res.once('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, bytes, seconds: (performance.now() - started) / 1000, body: '' });
      });
    });
    const timer = setTimeout(
      () => req.destroy(new Error(`download from ${url} took longer than ${timeoutMs} ms`)),
      timeoutMs,
    );
    function fail(err: unknown) {
      clearTimeout(timer);
      req.destroy();
      reject(err);
    }
    req.once('error', fail);
  });
}
