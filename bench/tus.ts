/**
 * Tus rows: a resumable upload through the service (POST /v1/tus, then the bytes in one PATCH, as
 * tus-js-client sends them by default, chunkSize Infinity) against a plain POST /v1/artifacts of the
 * same bytes, on the same service process, taking turns in each round. The client is node:http for
 * both (bench/transfer.ts's for the put), a fresh connection per request, the body streamed from disk
 * in 1 MiB reads; the time runs from the creation to the end of the last answer. An info row sends
 * the same bytes in 16 MiB PATCHes (a client that caps its chunks, as Uppy may be set to).
 */
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { pipeline } from 'node:stream/promises';
import { startServerChild, type ServerChild } from './children.js';
import { infoRow, ratioRow, samples, type Row } from './report.js';
import { MiB } from './settings.js';
import { rotate } from './stats.js';
import { mibPerSecond, upload, varyHead } from './transfer.js';

type Service = ServerChild<{ url: string; token: string }>;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request with node:http; `file` streams bytes [start, end) as its body. */
function send(
  url: string,
  method: string,
  headers: Record<string, string>,
  timeoutMs: number,
  file?: { path: string; start: number; end: number },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const length = file ? file.end - file.start : 0;
    const req = request(
      url,
      { method, agent: false, headers: { ...headers, 'Content-Length': String(length) } },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.once('error', fail);
        res.once('end', () => {
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') });
        });
      },
    );
    const timer = setTimeout(
      () => req.destroy(new Error(`${method} ${url} took longer than ${timeoutMs} ms`)),
      timeoutMs,
    );
    function fail(err: unknown) {
      clearTimeout(timer);
      req.destroy();
      reject(err);
    }
    req.once('error', (err) => {
      if (!answered) fail(err);
    });
    if (!file) req.end();
    else
      pipeline(createReadStream(file.path, { start: file.start, end: file.end - 1, highWaterMark: MiB }), req).catch(
        (err) => {
          if (!answered) fail(err);
        },
      );
  });
}

/** A whole tus upload of `file` in PATCHes of `chunk` bytes; MiB/s from the creation to the last answer. */
async function tusUpload(s: Service, file: string, size: number, chunk: number, timeoutMs: number): Promise<number> {
  const auth = { Authorization: `Bearer ${s.info.token}`, 'Tus-Resumable': '1.0.0' };
  const started = performance.now();
  const created = await send(
    `${s.info.url}/v1/tus`,
    'POST',
    {
      ...auth,
      'Upload-Length': String(size),
      'Upload-Metadata': `filename ${Buffer.from('bench.bin').toString('base64')}`,
    },
    timeoutMs,
  );
  const location = created.headers.location;
  if (created.status !== 201 || typeof location !== 'string')
    throw new Error(`POST /v1/tus answered ${created.status}: ${created.body.slice(0, 300)}`);
  let artifactId: string | undefined;
  for (let offset = 0; offset < size; ) {
    const end = Math.min(size, offset + chunk);
    const res = await send(
      location,
      'PATCH',
      { ...auth, 'Content-Type': 'application/offset+octet-stream', 'Upload-Offset': String(offset) },
      timeoutMs,
      { path: file, start: offset, end },
    );
    if (res.status !== 204 || res.headers['upload-offset'] !== String(end))
      throw new Error(
        `PATCH at ${offset} answered ${res.status} (offset ${String(res.headers['upload-offset'])}): ${res.body.slice(0, 300)}`,
      );
    artifactId = res.headers['x-artifact-id'] as string | undefined;
    offset = end;
  }
  const seconds = (performance.now() - started) / 1000;
  if (!artifactId) throw new Error('the last PATCH named no X-Artifact-Id');
  return size / MiB / seconds;
}

export async function tusRows(ctx: {
  work: string;
  input: string;
  size: number;
  runs: number;
  timeoutMs: number;
  progress: (m: string) => void;
}): Promise<{ rows: Row[]; problems: string[] }> {
  const { input, size, timeoutMs } = ctx;
  const mib = Math.round(size / MiB);
  const whole = samples();
  const chunked = samples();
  const problems: string[] = [];
  let service: Service | undefined;
  try {
    service = await startServerChild('service (tus)', 'service-server.ts', [
      join(ctx.work, 'service-data-tus'),
      String(size + 16 * MiB),
    ]);
    const s = service;
    const put = async () => {
      await varyHead(input);
      const r = await upload(
        `${s.info.url}/v1/artifacts`,
        { file: input, size },
        {
          Authorization: `Bearer ${s.info.token}`,
          'Content-Type': 'application/octet-stream',
          'X-Artifact-Filename': 'bench.bin',
        },
        timeoutMs,
      );
      if (r.status !== 201) throw new Error(`POST /v1/artifacts answered ${r.status}: ${r.body.slice(0, 300)}`);
      return mibPerSecond(r);
    };
    const tus = async (chunk: number) => {
      await varyHead(input);
      return tusUpload(s, input, size, chunk, timeoutMs);
    };
    for (let run = 0; run < ctx.runs; run++) {
      let plain = 0;
      await rotate(run, [
        async () => {
          plain = await put();
        },
        async () => {
          whole.service?.push(await tus(Number.POSITIVE_INFINITY));
        },
      ]);
      whole.baseline.push(plain);
      chunked.baseline.push(plain);
      chunked.service?.push(await tus(16 * MiB));
      const tusMiBs = whole.service?.at(-1) ?? 0;
      const chunkedMiBs = chunked.service?.at(-1) ?? 0;
      ctx.progress(
        `tus run ${run + 1}/${ctx.runs}: put ${plain.toFixed(0)} MiB/s, tus one PATCH ${tusMiBs.toFixed(0)} MiB/s (${(tusMiBs / plain).toFixed(2)}×), 16 MiB PATCHes ${chunkedMiBs.toFixed(0)} MiB/s (${(chunkedMiBs / plain).toFixed(2)}×)`,
      );
    }
  } catch (err) {
    problems.push(`tus: ${err instanceof Error ? err.message : String(err)}`);
    whole.service = null;
    chunked.service = null;
  } finally {
    await service?.stop();
  }
  return {
    rows: [
      ratioRow(`Tus upload of ${mib} MiB through the service, one PATCH, vs a plain POST put (MiB/s)`, whole, 0, 0.8),
      infoRow(`Tus upload of ${mib} MiB in 16 MiB PATCHes, vs a plain POST put (MiB/s)`, chunked, 0),
    ],
    problems,
  };
}
