/**
 * Uploads in parts (BENCH_ONLY=parts): a direct upload in parts through the SDK (`putBlob` of a
 * file-backed Blob: each part hashed, presigned, PUT straight to S3, four at a time, then complete,
 * which reads the whole object back to check its sha256 and copies it under its hash) against the AWS
 * SDK's lib-storage uploading the same bytes to the same S3 server with the same part size and
 * concurrency, taking turns in each round. The whole file's sha256 is known to both beforehand (a
 * caller resuming by content has it). While complete checks the object, the service's RSS is sampled:
 * its growth is judged. BENCH_PARTS_MIB sets the size (default 1024).
 */
import { openAsBlob } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { CreateBucketCommand, DeleteObjectsCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { createReadStream } from 'node:fs';
import { createS3Client } from '../src/blob/s3-client.js';
import { createHttpArtifactStore } from '../src/client/index.js';
import { startServerChild, watchRss } from './children.js';
import { ceilingRow, ratioRow, samples, type Row } from './report.js';
import { s3Server, sha256OfFile } from './s3.js';
import { MiB } from './settings.js';
import { rotate } from './stats.js';
import { varyHead, writeRandomFile } from './transfer.js';

const PART = 16 * MiB;
const QUEUE = 4;

export async function partsRows(ctx: {
  work: string;
  runs: number;
  progress(msg: string): void;
}): Promise<{ rows: Row[]; problems: string[]; teardown(): Promise<void> }> {
  const size = Number(process.env.BENCH_PARTS_MIB ?? 1024) * MiB;
  const mib = size / MiB;
  const up = samples();
  const rss = samples();
  const rows = () => [
    ratioRow(
      `S3: direct upload in parts of ${mib} MiB (SDK putBlob, complete checks the sha256) ÷ lib-storage (MiB/s)`,
      up,
      0,
      0.9,
    ),
    ceilingRow(`S3: service RSS growth while complete checks ${mib} MiB`, rss, 32, 'MiB'),
  ];
  const problems: string[] = [];
  let stopS3 = async () => {};
  let stopService = async () => {};
  const teardown = async () => {
    await stopService();
    await stopS3();
  };
  let s3;
  try {
    ({ info: s3, stop: stopS3 } = await s3Server());
  } catch (err) {
    up.service = null;
    rss.service = null;
    problems.push(`parts rows: ${(err as Error).message}`);
    return { rows: rows(), problems, teardown };
  }
  const client = createS3Client({ ...s3, forcePathStyle: true });
  try {
    const bucket = `bench-parts-${Date.now()}`;
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
    const service = await startServerChild<{ url: string; token: string }>(
      'service (s3 driver, uploads in parts)',
      'service-server.ts',
      [
        join(ctx.work, 'service-parts'),
        String(size + MiB),
        '',
        JSON.stringify({ ...s3, bucket }),
        JSON.stringify({ multipartUploadBytes: 64 * MiB, uploadPartBytes: PART, maxSessionBytes: 64 * size }),
      ],
    );
    stopService = () => service.stop();
    const input = join(ctx.work, 'parts-input.bin');
    ctx.progress(`parts: writing ${mib} MiB of random bytes`);
    await writeRandomFile(input, size);
    const store = createHttpArtifactStore({
      baseUrl: service.info.url,
      token: service.info.token,
      uploads: { concurrency: QUEUE },
    });
    for (let run = 0; run < ctx.runs; run++) {
      await rotate(run, [
        async () => {
          await varyHead(input);
          const started = performance.now();
          await new Upload({
            client,
            params: {
              Bucket: bucket,
              Key: 'bench/lib-storage.bin',
              Body: createReadStream(input, { highWaterMark: MiB }),
              ContentLength: size,
            },
            partSize: PART,
            queueSize: QUEUE,
          }).done();
          up.baseline.push(mib / ((performance.now() - started) / 1000));
        },
        async () => {
          await varyHead(input);
          const sha256 = await sha256OfFile(input);
          // The RSS from the moment the last part is acknowledged: complete's check of the object.
          let watch: { stop(): number } | undefined;
          const parts = createHttpArtifactStore({
            baseUrl: service.info.url,
            token: service.info.token,
            uploads: {
              concurrency: QUEUE,
              onProgress: (p) => {
                if (p.sentBytes === p.totalBytes) watch ??= watchRss(service.pid);
              },
            },
          });
          const started = performance.now();
          const ref = await parts.putBlob(await openAsBlob(input), { sha256 });
          const seconds = (performance.now() - started) / 1000;
          rss.service!.push(watch?.stop() ?? Number.NaN);
          if (ref.sha256 !== sha256) throw new Error(`stored ${ref.sha256}, not ${sha256}`);
          up.service!.push(mib / seconds);
          await store.delete(ref.id);
        },
      ]);
      ctx.progress(`parts: round ${run + 1} of ${ctx.runs}`);
      await emptyBucket(client, bucket);
    }
    // No baseline for memory: the row is judged against its ceiling alone.
    rss.baseline = rss.service!.map(() => 0);
  } catch (err) {
    problems.push(`parts rows: ${(err as Error).stack ?? err}`);
    if (up.service && up.service.length < ctx.runs) up.service = null;
    if (rss.service && rss.service.length < ctx.runs) rss.service = null;
  } finally {
    client.destroy();
  }
  return { rows: rows(), problems, teardown };
}

async function emptyBucket(client: S3Client, bucket: string): Promise<void> {
  for (;;) {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
    const keys = (page.Contents ?? []).map((o) => ({ Key: o.Key! }));
    if (keys.length === 0) return;
    await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys } }));
  }
}
