/**
 * The S3 rows of npm run bench: the service on its S3 driver against the AWS SDK talking directly to
 * the same S3 server, same bytes, same run. The S3 server is S3_ENDPOINT (+ S3_ACCESS_KEY_ID,
 * S3_SECRET_ACCESS_KEY, S3_REGION) when set, else a single-node Ceph RGW from scripts/rgw.sh.
 */
import { execFile, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  CreateBucketCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import type { Readable } from 'node:stream';
import { blobKeyLayout } from '../src/blob/blob-keys.js';
import { createS3Client } from '../src/blob/s3-client.js';
import { REPO_ROOT, startServerChild, type ServerChild } from './children.js';
import { infoRow, perRoundRow, ratioRow, samples, type Row, type Samples } from './report.js';
import { rotate } from './stats.js';
import { MiB } from './settings.js';
import { download, mibPerSecond, upload, varyHead } from './transfer.js';

interface S3Info {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

export interface S3BenchContext {
  work: string;
  input: string;
  size: number;
  runs: number;
  timeoutMs: number;
  progress(msg: string): void;
}

/** Rows for the table, plus problems to print under it (an S3 that could not be had, a failure). */
export async function s3Rows(
  ctx: S3BenchContext,
): Promise<{ rows: Row[]; problems: string[]; teardown(): Promise<void> }> {
  const mib = ctx.size / MiB;
  const up = { declared: samples(), undeclared: samples(), direct: samples() };
  const down = { service: samples(), direct: samples() };
  /** The service's downloads against a minimal Node proxy's (GetObject piped to the response) of the same object. */
  const proxied = samples();
  const small = { declared: samples(), undeclared: samples() };
  const smallMib = SMALL_PUT_BYTES / MiB;
  const rows = () => [
    ratioRow(`S3: upload ${mib} MiB through the service, sha256 declared (MiB/s)`, up.declared, 0, 0.9),
    ratioRow(`S3: upload ${mib} MiB through the service, no sha256 (MiB/s)`, up.undeclared, 0, 0.8),
    infoRow(`S3: direct upload ${mib} MiB (presigned PUT + complete) (MiB/s)`, up.direct, 0),
    ratioRow(`S3: download ${mib} MiB through the service (MiB/s)`, down.service, 0, 0.85),
    perRoundRow(
      `S3: download ${mib} MiB through the service ÷ a minimal Node proxy (GetObject piped to the response) (MiB/s)`,
      proxied,
      0,
      0.95,
      'median',
    ),
    infoRow(`S3: download ${mib} MiB, direct link (MiB/s)`, down.direct, 0),
    infoRow(
      `S3: ${SMALL_PUTS} puts of ${smallMib} MiB through the service, sha256 declared, vs SDK PutObject (puts/s)`,
      small.declared,
      0,
    ),
    infoRow(
      `S3: ${SMALL_PUTS} puts of ${smallMib} MiB through the service, no sha256, vs SDK PutObject (puts/s)`,
      small.undeclared,
      0,
    ),
  ];
  const problems: string[] = [];
  let stopS3 = async () => {};
  let service: ServerChild<{ url: string; token: string }> | undefined;
  let proxy: ServerChild | undefined;
  const teardown = async () => {
    await service?.stop();
    await proxy?.stop();
    await stopS3();
  };

  let s3: S3Info;
  try {
    ({ info: s3, stop: stopS3 } = await s3Server());
  } catch (err) {
    for (const s of [...Object.values(up), ...Object.values(down), proxied]) s.service = null;
    problems.push(`S3 rows: ${(err as Error).message}`);
    return { rows: rows(), problems, teardown };
  }

  const client = createS3Client({ ...s3, forcePathStyle: true });
  try {
    const bucket = `bench-${Date.now()}`;
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
    service = await startServerChild('service (s3 driver)', 'service-server.ts', [
      join(ctx.work, 'service-s3'),
      String(ctx.size + 16 * MiB),
      '',
      JSON.stringify({ ...s3, bucket }),
      // The direct-upload row is one presigned PUT; uploads in parts have their own section (parts.ts).
      JSON.stringify({ multipartUploadBytes: ctx.size + 16 * MiB }),
    ]);
    proxy = await startServerChild('S3 proxy (GetObject piped to the response)', 'baseline-servers.ts', [
      's3-proxy',
      JSON.stringify({ ...s3, bucket }),
    ]);
    const viaProxy = proxy;
    const s = service;
    const auth = { Authorization: `Bearer ${s.info.token}` };
    const baselineKey = 'bench/direct-sdk.bin';
    // Warm-up: the first writes into a fresh RGW create its pools.
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: 'bench/warm-up', Body: Buffer.alloc(MiB) }));
    await upload(
      `${s.info.url}/v1/artifacts`,
      { buffer: Buffer.alloc(MiB, 7) },
      { ...auth, 'Content-Type': 'application/octet-stream' },
      ctx.timeoutMs,
    );
    let lastId = '';
    let lastKey = '';
    for (let run = 0; run < ctx.runs; run++) {
      // The uploads take turns in a rotating order: RGW collects overwritten and deleted objects in
      // the background, which would otherwise always slow the same row.
      await rotate(run, [
        // The SDK straight to S3: the ceiling every S3 row is compared with.
        async () => {
          await varyHead(ctx.input);
          const sdkUp = await sdkPut(client, bucket, baselineKey, ctx.input, ctx.size);
          for (const f of Object.values(up)) f.baseline.push(sdkUp);
        },
        async () => {
          await varyHead(ctx.input);
          const sha = await sha256OfFile(ctx.input);
          const declared = await upload(
            `${s.info.url}/v1/artifacts`,
            { file: ctx.input, size: ctx.size },
            { ...auth, 'Content-Type': 'application/octet-stream', 'X-Artifact-Sha256': sha },
            ctx.timeoutMs,
          );
          if (declared.status !== 201)
            throw new Error(`upload with sha256 answered ${declared.status}: ${declared.body.slice(0, 300)}`);
          up.declared.service!.push(mibPerSecond(declared));
        },
        async () => {
          await varyHead(ctx.input);
          const plain = await upload(
            `${s.info.url}/v1/artifacts`,
            { file: ctx.input, size: ctx.size },
            { ...auth, 'Content-Type': 'application/octet-stream' },
            ctx.timeoutMs,
          );
          if (plain.status !== 201) throw new Error(`upload answered ${plain.status}: ${plain.body.slice(0, 300)}`);
          up.undeclared.service!.push(mibPerSecond(plain));
          const stored = JSON.parse(plain.body) as { id: string; sha256: string };
          lastId = stored.id;
          lastKey = blobKeyLayout('').blobKey(stored.sha256);
        },
        // Direct upload: begin, PUT to S3 with the same client as every other upload, complete.
        async () => {
          await varyHead(ctx.input);
          const directSha = await sha256OfFile(ctx.input);
          const started = performance.now();
          const ticketRes = await fetch(`${s.info.url}/v1/uploads`, {
            method: 'POST',
            headers: { ...auth, 'Content-Type': 'application/json' },
            body: JSON.stringify({ sizeBytes: ctx.size, sha256: directSha }),
          });
          if (ticketRes.status !== 201)
            throw new Error(`POST /v1/uploads answered ${ticketRes.status}: ${await ticketRes.text()}`);
          const ticket = (await ticketRes.json()) as { uploadId: string; url: string; headers: Record<string, string> };
          const put = await upload(
            ticket.url,
            { file: ctx.input, size: ctx.size },
            ticket.headers,
            ctx.timeoutMs,
            'PUT',
          );
          if (put.status !== 200) throw new Error(`presigned PUT answered ${put.status}: ${put.body.slice(0, 300)}`);
          const done = await fetch(`${s.info.url}/v1/uploads/${ticket.uploadId}/complete`, {
            method: 'POST',
            headers: auth,
          });
          if (done.status !== 201) throw new Error(`complete answered ${done.status}: ${await done.text()}`);
          up.direct.service!.push(ctx.size / MiB / ((performance.now() - started) / 1000));
        },
      ]);

      // Small puts, each of new bytes: one part, so one PutObject the backend checks.
      await rotate(run, [
        async () => {
          const rate = await putsPerSecond(SMALL_PUTS, (body, i) =>
            client.send(new PutObjectCommand({ Bucket: bucket, Key: `bench/small-${i}`, Body: body })),
          );
          for (const f of Object.values(small)) f.baseline.push(rate);
        },
        async () => {
          small.declared.service!.push(
            await putsPerSecond(SMALL_PUTS, async (body) => {
              const res = await fetch(`${s.info.url}/v1/artifacts`, {
                method: 'POST',
                headers: {
                  ...auth,
                  'Content-Type': 'application/octet-stream',
                  'X-Artifact-Sha256': createHash('sha256').update(body).digest('hex'),
                },
                body,
              });
              if (res.status !== 201) throw new Error(`small put with sha256 answered ${res.status}`);
              await res.arrayBuffer();
            }),
          );
        },
        async () => {
          small.undeclared.service!.push(
            await putsPerSecond(SMALL_PUTS, async (body) => {
              const res = await fetch(`${s.info.url}/v1/artifacts`, {
                method: 'POST',
                headers: { ...auth, 'Content-Type': 'application/octet-stream' },
                body,
              });
              if (res.status !== 201) throw new Error(`small put answered ${res.status}`);
              await res.arrayBuffer();
            }),
          );
        },
      ]);

      // The three reads of the same bytes take turns: the SDK, the proxy (the service's own object)
      // and the service.
      await rotate(run, [
        async () => {
          const sdkDown = await sdkGet(client, bucket, baselineKey);
          for (const f of Object.values(down)) f.baseline.push(sdkDown);
        },
        async () => {
          const r = await download(`${viaProxy.info.url}/${encodeURIComponent(lastKey)}`, {}, ctx.timeoutMs);
          if (r.status !== 200 || r.bytes !== ctx.size)
            throw new Error(`download through the minimal proxy: ${r.status}, ${r.bytes} bytes`);
          proxied.baseline.push(mibPerSecond(r));
        },
        async () => {
          const viaService = await download(`${s.info.url}/v1/artifacts/${lastId}`, auth, ctx.timeoutMs);
          if (viaService.status !== 200 || viaService.bytes !== ctx.size)
            throw new Error(`download through the service: ${viaService.status}, ${viaService.bytes} bytes`);
          down.service.service!.push(mibPerSecond(viaService));
          proxied.service!.push(mibPerSecond(viaService));
        },
      ]);
      const linkRes = await fetch(`${s.info.url}/v1/artifacts/${lastId}/url`, {
        method: 'POST',
        headers: { ...auth, 'Content-Type': 'application/json' },
        body: '{"mode":"direct"}',
      });
      const link = (await linkRes.json()) as { url: string; fetchMode: string };
      if (link.fetchMode !== 'direct') throw new Error(`asked for a direct link, got ${link.fetchMode}`);
      const viaLink = await download(link.url, {}, ctx.timeoutMs);
      if (viaLink.status !== 200 || viaLink.bytes !== ctx.size)
        throw new Error(`direct-link download: ${viaLink.status}, ${viaLink.bytes} bytes`);
      down.direct.service!.push(mibPerSecond(viaLink));
      // RGW here keeps objects in memory: drop this run's blobs (GC of unreferenced blobs is not built yet).
      await emptyPrefix(client, bucket, 'blobs/');
      await emptyPrefix(client, bucket, 'bench/small-');
      ctx.progress(`S3 run ${run + 1}/${ctx.runs} done`);
    }
  } catch (err) {
    problems.push(`S3 rows: ${(err as Error).message}`);
    const ran = up.declared.baseline.length;
    for (const f of [...Object.values(up), ...Object.values(down), proxied] as Samples[])
      if (f.service && f.service.length < ran) f.service = null;
  } finally {
    client.destroy();
  }
  return { rows: rows(), problems, teardown };
}

export async function s3Server(): Promise<{ info: S3Info; stop(): Promise<void> }> {
  const env = process.env;
  if (env.S3_ENDPOINT) {
    if (!env.S3_ACCESS_KEY_ID || !env.S3_SECRET_ACCESS_KEY)
      throw new Error('S3_ENDPOINT is set without S3_ACCESS_KEY_ID / S3_SECRET_ACCESS_KEY');
    return {
      info: {
        endpoint: env.S3_ENDPOINT,
        region: env.S3_REGION ?? 'us-east-1',
        accessKeyId: env.S3_ACCESS_KEY_ID,
        secretAccessKey: env.S3_SECRET_ACCESS_KEY,
      },
      stop: async () => {},
    };
  }
  if (spawnSync('sh', ['-c', 'command -v radosgw']).status !== 0) {
    throw new Error(
      'no S3 server: set S3_ENDPOINT (+ keys) or install Ceph RGW (apt-get install -y --no-install-recommends ceph-mon ceph-osd radosgw ceph-common)',
    );
  }
  const dir = mkdtempSync(join(tmpdir(), 'bench-rgw-'));
  const script = join(REPO_ROOT, 'scripts', 'rgw.sh');
  // Each run writes about 2 GiB (staging objects and copies included), freed by RGW's GC a little later.
  const rgwEnv = { ...process.env, RGW_MEMSTORE_BYTES: String(8 * 1024 * MiB) };
  const out = await new Promise<string>((ok, fail) =>
    execFile(script, ['start', dir], { timeout: 120_000, env: rgwEnv }, (err, stdout, stderr) =>
      err ? fail(new Error(`rgw.sh start: ${stderr || err.message}`)) : ok(stdout),
    ),
  );
  const info = JSON.parse(out.trim().split('\n').pop()!) as S3Info;
  return { info, stop: () => new Promise((ok) => execFile(script, ['stop', dir], () => ok())) };
}

async function emptyPrefix(client: S3Client, bucket: string, prefix: string): Promise<void> {
  const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
  const keys = (page.Contents ?? []).map((o) => ({ Key: o.Key! }));
  if (keys.length > 0) await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys } }));
}

export async function sha256OfFile(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file, { highWaterMark: MiB })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

const SMALL_PUTS = 40;
const SMALL_PUT_BYTES = MiB;

/**
 * Puts of new 1 MiB bodies, one after another: how a tool's screenshots and PDFs arrive. The bodies
 * are made (and, for declared puts, hashed) before the clock starts, as a caller would have them.
 */
async function putsPerSecond(
  n: number,
  put: (body: Uint8Array<ArrayBuffer>, i: number) => Promise<unknown>,
): Promise<number> {
  const bodies = Array.from({ length: n }, () => new Uint8Array(randomBytes(SMALL_PUT_BYTES)));
  const started = performance.now();
  for (let i = 0; i < n; i++) await put(bodies[i]!, i);
  return n / ((performance.now() - started) / 1000);
}

/** How an application would put a large file with the SDK: lib-storage, multipart, parts in parallel. */
export async function sdkPut(
  client: S3Client,
  bucket: string,
  key: string,
  file: string,
  size: number,
): Promise<number> {
  const started = performance.now();
  await new Upload({
    client,
    params: { Bucket: bucket, Key: key, Body: createReadStream(file, { highWaterMark: MiB }), ContentLength: size },
    partSize: 8 * MiB,
    queueSize: 4,
  }).done();
  return size / MiB / ((performance.now() - started) / 1000);
}

async function sdkGet(client: S3Client, bucket: string, key: string): Promise<number> {
  const started = performance.now();
  const out = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  let bytes = 0;
  for await (const chunk of out.Body as Readable) bytes += (chunk as Buffer).length;
  return bytes / MiB / ((performance.now() - started) / 1000);
}
