/**
 * npm run bench: the service against plain baselines measured in the same run, as one markdown table.
 *
 * Every server runs in its own process; this process is the client (uploads, downloads, wrk)
 * and samples the servers' RSS from /proc. Runs of service and baseline alternate, and the table
 * shows medians. Progress goes to stderr, the report to stdout.
 *
 * Environment: BENCH_SIZE_MIB (256), BENCH_RUNS (3), BENCH_DURATION (10 s of load per small-GET run),
 * BENCH_CONNECTIONS (50), BENCH_TIMEOUT (1800 s for everything), BENCH_STRICT=1 (exit 1 on a FAIL),
 * BENCH_ONLY=transfers,small,python,s3,retention,mcp,gateway,adk,ai-sdk,ui,views,limits,footprint,install,postgres,tus,parts (sections to run;
 * default all),
 * BENCH_SOAK_SECONDS (60: the footprint section's soak),
 * BENCH_SERVICE_CODE=dist|source (dist: the service's processes run the built code, built once per bench, as the
 * image and the package's bin run it; source: src/ under tsx, as `npm start` runs it).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { killAllChildren, REPO_ROOT, startServerChild, watchRss, type ServerChild } from './children.js';
import { load, type LoadResult, wrkMissing } from './load.js';
import { adkRows } from './adk.js';
import { aiSdkRows } from './ai-sdk.js';
import { uiRows } from './ui.js';
import { gatewayRows } from './gateway.js';
import { mcpRows } from './mcp.js';
import { retentionRows } from './retention.js';
import { postgresRows } from './postgres.js';
import { rateLimitRows } from './rate-limits.js';
import { footprintRows } from './footprint.js';
import { installRows } from './install.js';
import { pythonRows } from './python.js';
import { s3Rows } from './s3.js';
import { tusRows } from './tus.js';
import { partsRows } from './parts.js';
import { viewRows } from './views.js';
import {
  ceilingRow,
  perRoundRow,
  infoRow,
  markdownTable,
  ratioRow,
  samples,
  type Row,
  type Samples,
} from './report.js';
import { machineSummary, MiB, readSettings } from './settings.js';
import { rotate } from './stats.js';
import { download, mibPerSecond, upload, varyHead, writeRandomFile } from './transfer.js';

type Service = ServerChild<{ url: string; token: string }>;

const settings = readSettings();
const size = settings.sizeMiB * MiB;
/** Generous: at least 1 MiB/s, never under a minute. */
const transferTimeoutMs = Math.max(60_000, settings.sizeMiB * 1000);
const RSS_LIMIT_MIB = 16;

const work = mkdtempSync(join(tmpdir(), 'artifact-store-bench-'));
const input = join(work, 'artifact.bin');

process.on('exit', () => {
  killAllChildren();
  rmSync(work, { recursive: true, force: true });
});
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(signal, () => {
    console.error(`\n${signal}: stopping`);
    process.exit(130);
  });
}
setTimeout(() => {
  console.error(`bench: still running after ${settings.timeoutS} s (BENCH_TIMEOUT), giving up`);
  process.exit(1);
}, settings.timeoutS * 1000).unref();

const progress = (msg: string) => console.error(`[bench] ${msg}`);

/** Problems with the service; its rows show n/a and the reason is printed under the table. */
const serviceProblems: string[] = [];
let service: Service | null = null;

function serviceFailed(step: string, err: unknown): void {
  serviceProblems.push(`${step}: ${err instanceof Error ? err.message : String(err)}`);
  progress(`service failed at ${step}; its remaining rows are skipped`);
  const dead = service;
  service = null;
  void dead?.stop();
}

const authOf = (s: Service) => ({ Authorization: `Bearer ${s.info.token}` });
const uploadHeaders = { 'Content-Type': 'application/octet-stream', 'X-Artifact-Filename': 'bench.bin' };

/** Stores bytes through the API and returns the new artifact's id. */
async function putThroughService(s: Service, source: Parameters<typeof upload>[1]) {
  const r = await upload(`${s.info.url}/v1/artifacts`, source, { ...uploadHeaders, ...authOf(s) }, transferTimeoutMs);
  if (r.status !== 201)
    throw new Error(`POST /v1/artifacts answered ${r.status} (want 201, new content): ${r.body.slice(0, 300)}`);
  const ref = JSON.parse(r.body) as { id?: unknown; sizeBytes?: unknown };
  if (typeof ref.id !== 'string') throw new Error(`POST /v1/artifacts returned no id: ${r.body.slice(0, 300)}`);
  if (ref.sizeBytes !== undefined && ref.sizeBytes !== r.bytes)
    throw new Error(`stored ${String(ref.sizeBytes)} bytes of ${r.bytes}`);
  return { id: ref.id, result: r };
}

/** Service and baseline take turns; the first of a pair alternates from run to run. */
const alternate = (run: number, baseline: () => Promise<void>, ofService: () => Promise<void>) =>
  rotate(run, [baseline, ofService]);

async function bigTransfers(
  uploadMiBs: Samples,
  uploadRss: Samples,
  downloadMiBs: Samples,
  downloadRss: Samples,
  /** The plain server writing from two reused buffers, in the baseline's place (service: unused). */
  downloadReusedMiBs: Samples,
) {
  const baseUp = await startServerChild('baseline upload server', 'baseline-servers.ts', [
    'upload',
    join(work, 'baseline-uploads'),
  ]);
  const baseDown = await startServerChild('baseline download server', 'baseline-servers.ts', ['download', input]);
  const baseDownReused = await startServerChild('baseline download server, reused buffers', 'baseline-servers.ts', [
    'download-reused',
    input,
  ]);
  let artifactId: string | undefined;
  try {
    for (let run = 0; run < settings.runs; run++) {
      await varyHead(input);
      await alternate(
        run,
        async () => {
          const rss = watchRss(baseUp.pid);
          const r = await upload(`${baseUp.info.url}/`, { file: input, size }, uploadHeaders, transferTimeoutMs);
          const growth = rss.stop();
          if (r.status !== 201) throw new Error(`baseline upload answered ${r.status}: ${r.body.slice(0, 300)}`);
          uploadMiBs.baseline.push(mibPerSecond(r));
          uploadRss.baseline.push(growth);
        },
        async () => {
          const s = service;
          if (!s) return;
          try {
            const rss = watchRss(s.pid);
            const { id, result } = await putThroughService(s, { file: input, size });
            const growth = rss.stop();
            artifactId = id;
            uploadMiBs.service?.push(mibPerSecond(result));
            uploadRss.service?.push(growth);
          } catch (err) {
            serviceFailed(`upload, run ${run + 1}`, err);
          }
        },
      );
      progress(`upload run ${run + 1}/${settings.runs} done`);
    }

    for (let run = 0; run < settings.runs; run++) {
      await rotate(run, [
        async () => {
          const r = await download(`${baseDownReused.info.url}/`, {}, transferTimeoutMs);
          if (r.status !== 200 || r.bytes !== size)
            throw new Error(`baseline download (reused buffers): status ${r.status}, ${r.bytes} of ${size} bytes`);
          downloadReusedMiBs.baseline.push(mibPerSecond(r));
        },
        async () => {
          const rss = watchRss(baseDown.pid);
          const r = await download(`${baseDown.info.url}/`, {}, transferTimeoutMs);
          const growth = rss.stop();
          if (r.status !== 200 || r.bytes !== size)
            throw new Error(`baseline download: status ${r.status}, ${r.bytes} of ${size} bytes`);
          downloadMiBs.baseline.push(mibPerSecond(r));
          downloadRss.baseline.push(growth);
        },
        async () => {
          const s = service;
          if (!s || !artifactId) return;
          try {
            const rss = watchRss(s.pid);
            const r = await download(
              `${s.info.url}/v1/artifacts/${encodeURIComponent(artifactId)}`,
              authOf(s),
              transferTimeoutMs,
            );
            const growth = rss.stop();
            if (r.status !== 200 || r.bytes !== size)
              throw new Error(`GET /v1/artifacts/{id}: status ${r.status}, ${r.bytes} of ${size} bytes`);
            downloadMiBs.service?.push(mibPerSecond(r));
            downloadRss.service?.push(growth);
          } catch (err) {
            serviceFailed(`download, run ${run + 1}`, err);
          }
        },
      ]);
      progress(`download run ${run + 1}/${settings.runs} done`);
    }
  } finally {
    await Promise.all([baseUp.stop(), baseDown.stop(), baseDownReused.stop()]);
  }
}

interface SmallGetFigures {
  rps: Samples;
  p50: Samples;
  p99: Samples;
}

const smallGetFigures = (): SmallGetFigures => ({ rps: samples(), p50: samples(), p99: samples() });

/** Stores a 4 KiB artifact and checks that one GET returns exactly its bytes; returns the GET's URL. */
async function storeSmallArtifact(s: Service): Promise<string> {
  const bytes = randomBytes(4096);
  const { id } = await putThroughService(s, { buffer: bytes });
  const url = `${s.info.url}/v1/artifacts/${encodeURIComponent(id)}`;
  const res = await fetch(url, { headers: authOf(s) });
  const body = Buffer.from(await res.arrayBuffer());
  if (res.status !== 200 || !body.equals(bytes))
    throw new Error(`GET ${url}: status ${res.status}, ${body.length} bytes, not the 4 KiB just stored`);
  return url;
}

/** The service on other settings for the small GETs. */
interface SmallGetVariant {
  name: string;
  /** Its settings by config key (service-server.ts's configJson), and its small-blob cache ('' = default). */
  config: Record<string, unknown>;
  cacheBytes: string;
  figures: SmallGetFigures;
  /** The code it runs when not the bench's BENCH_SERVICE_CODE. */
  code?: 'source';
}

/** A server of one round of small GETs, started for that round: where to GET, and how to stop it. */
interface SmallGetServer {
  url: string;
  headers: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * Small GETs. Hono hello-world (the baseline), Hono serving the same 4 KiB with the service's
 * download headers from memory (the ceiling for a 4 KiB answer), and the service on each of its
 * variants take turns under the same wrk load. Every round starts each server afresh in a process
 * of its own (2 s of warm-up, then the measured run), so that how fast one process happens to be
 * (which core it got, what the JIT chose) counts for one round, not for the whole figure: between
 * two processes of the same service that difference reached 10% here.
 */
async function smallGets(variants: SmallGetVariant[], ceiling: SmallGetFigures) {
  const missing = await wrkMissing();
  if (missing) {
    serviceProblems.push(`small GETs: ${missing}`);
    return;
  }
  const { connections, durationS } = settings;
  const warmupS = Math.min(2, durationS);
  const dropped = new Set<string>();
  const measure = async (name: string, start: () => Promise<SmallGetServer>, record: (r: LoadResult) => void) => {
    if (dropped.has(name)) return;
    let server: SmallGetServer | undefined;
    try {
      server = await start();
      await load(server.url, server.headers, connections, warmupS);
      record(await load(server.url, server.headers, connections, durationS));
    } catch (err) {
      serviceProblems.push(`${name}, small GETs: ${err instanceof Error ? err.message : String(err)}`);
      dropped.add(name);
    } finally {
      await server?.stop();
    }
  };
  const push = (f: SmallGetFigures, side: 'service' | 'baseline', r: LoadResult) => {
    f.rps[side]?.push(r.requestsPerSecond);
    f.p50[side]?.push(r.p50Ms);
    f.p99[side]?.push(r.p99Ms);
  };
  const plain = (mode: string, name: string) => async (): Promise<SmallGetServer> => {
    const child = await startServerChild<{ url: string }>(name, 'baseline-servers.ts', [mode]);
    // The ceiling gets a bearer token of a real one's size, so that its requests are the service's.
    return { url: `${child.info.url}/`, headers: mode === 'hello' ? {} : FAKE_AUTH, stop: () => child.stop() };
  };
  progress(`small GETs (wrk): per round, each server started afresh, ${warmupS} s warm-up, then ${durationS} s`);
  for (let run = 0; run < settings.runs; run++) {
    const steps = [
      () =>
        measure('Hono hello-world', plain('hello', 'Hono hello-world'), (r) => {
          for (const f of [ceiling, ...variants.map((v) => v.figures)]) push(f, 'baseline', r);
        }),
      () =>
        measure('Hono, 4 KiB', plain('hello4k', 'Hono, 4 KiB and download headers'), (r) =>
          push(ceiling, 'service', r),
        ),
      ...variants.map(
        (v, i) => () =>
          measure(
            v.name,
            async () => {
              const child: Service = await startServerChild(
                v.name,
                'service-server.ts',
                [join(work, `service-data-small-${run}-${i}`), String(MiB), v.cacheBytes, '', JSON.stringify(v.config)],
                undefined,
                v.code ? { BENCH_SERVICE_CODE: v.code } : {},
              );
              try {
                return { url: await storeSmallArtifact(child), headers: authOf(child), stop: () => child.stop() };
              } catch (err) {
                await child.stop();
                throw err;
              }
            },
            (r) => push(v.figures, 'service', r),
          ),
      ),
    ];
    await rotate(run, steps);
    progress(`small GET run ${run + 1}/${settings.runs} done`);
  }
}

/** A bearer token of a dev token's length, for the ceiling server, which ignores it. */
const FAKE_AUTH = { Authorization: `Bearer ${'x'.repeat(300)}` };

async function main() {
  const date = new Date().toISOString();
  const machine = machineSummary();
  progress(`writing a ${settings.sizeMiB} MiB random file`);
  await writeRandomFile(input, size);

  if (existsSync(join(REPO_ROOT, 'src', 'node.ts'))) {
    try {
      service = await startServerChild('service', 'service-server.ts', [
        join(work, 'service-data'),
        String(size + 16 * MiB),
      ]);
    } catch (err) {
      serviceFailed('start', err);
    }
  } else {
    serviceProblems.push('src/node.ts does not exist yet: the service was not started');
  }

  const up = samples();
  const upRss = samples();
  const down = samples();
  const downRss = samples();
  const downReused = samples();
  const gets = smallGetFigures();
  const uncachedGets = smallGetFigures();
  const infoGets = smallGetFigures();
  const warnGets = smallGetFigures();
  const ceilingGets = smallGetFigures();
  const sourceGets = smallGetFigures();
  if (settings.only.has('transfers')) await bigTransfers(up, upRss, down, downRss, downReused);
  if (settings.only.has('small'))
    await smallGets(
      [
        { name: 'service, logs at info', config: { logLevel: 'info' }, cacheBytes: '', figures: infoGets },
        { name: 'service, logs off', config: {}, cacheBytes: '', figures: gets },
        { name: 'service, logs at warn', config: { logLevel: 'warn' }, cacheBytes: '', figures: warnGets },
        { name: 'service, small-blob cache off', config: {}, cacheBytes: '0', figures: uncachedGets },
        ...(settings.serviceCode === 'source'
          ? []
          : [
              {
                name: 'service, logs off, src/ under tsx',
                config: {},
                cacheBytes: '',
                figures: sourceGets,
                code: 'source' as const,
              },
            ]),
      ],
      ceilingGets,
    );
  let pythonTable: Row[] = [];
  if (settings.only.has('python')) {
    progress('python: the Python client against curl, both through the service');
    if (service) {
      const r = await pythonRows({
        service: service.info,
        input,
        size,
        runs: settings.runs,
        timeoutMs: transferTimeoutMs,
        progress,
      });
      serviceProblems.push(...r.problems);
      pythonTable = r.rows;
    }
  }
  let adkTable: Row[] = [];
  if (settings.only.has('adk')) {
    progress('adk: saveArtifact + loadArtifact through the ADK adapter over HTTP, against putBytes + get');
    if (service) {
      const r = await adkRows({ service: service.info, progress });
      serviceProblems.push(...r.problems);
      adkTable = r.rows;
    }
  }

  await service?.stop();
  let s3Table: Row[] = [];
  if (settings.only.has('s3')) {
    progress('S3: the service on its S3 driver against the SDK, same S3 server');
    const s3 = await s3Rows({ work, input, size, runs: settings.runs, timeoutMs: transferTimeoutMs, progress });
    await s3.teardown();
    serviceProblems.push(...s3.problems);
    s3Table = s3.rows;
  }

  let retentionTable: Row[] = [];
  if (settings.only.has('retention')) {
    progress('retention: puts with quotas against puts without, then a run over 100,000 expired references');
    const r = await retentionRows({ work, runs: settings.runs, progress });
    serviceProblems.push(...r.problems);
    retentionTable = r.rows;
  }

  let mcpTable: Row[] = [];
  if (settings.only.has('mcp')) {
    progress(
      'MCP: transformToolResult on a 10 MiB result holding a 7 MiB base64 PDF, against JSON.parse + base64 decode + sha256',
    );
    const r = await mcpRows({ runs: settings.runs, progress });
    serviceProblems.push(...r.problems);
    mcpTable = r.rows;
  }

  let gatewayTable: Row[] = [];
  if (settings.only.has('gateway')) {
    progress('gateway: MCP calls through artifact-store gateway against the same calls straight to the server');
    const r = await gatewayRows({ progress });
    serviceProblems.push(...r.problems);
    gatewayTable = r.rows;
  }

  let aiSdkTable: Row[] = [];
  if (settings.only.has('ai-sdk')) {
    progress('AI SDK: tool calls through withArtifacts against the bare tool and transformToolResult');
    const r = await aiSdkRows({ progress });
    serviceProblems.push(...r.problems);
    aiSdkTable = r.rows;
  }

  let uiTable: Row[] = [];
  if (settings.only.has('ui')) {
    progress('ui: the artifact browser with 10,000 artifacts in Chromium, against floors in the same browser');
    const r = await uiRows({ progress });
    serviceProblems.push(...r.problems);
    uiTable = r.rows;
  }

  let viewsTable: Row[] = [];
  const viewNotes: string[] = [];
  if (settings.only.has('views')) {
    progress(
      'views: artifact_search against grep -c -F, artifact_read far into a 1 GiB log, artifact_query against JSON.parse',
    );
    const r = await viewRows({ work, runs: settings.runs, progress });
    serviceProblems.push(...r.problems);
    viewsTable = r.rows;
    viewNotes.push(...r.notes);
  }

  let limitsTable: Row[] = [];
  if (settings.only.has('limits')) {
    progress('rate limits: small GETs with the limiter on (and not tripping) against the same service with it off');
    const r = await rateLimitRows({
      work,
      runs: settings.runs,
      connections: settings.connections,
      durationS: settings.durationS,
      progress,
    });
    serviceProblems.push(...r.problems);
    limitsTable = r.rows;
  }

  let postgresTable: Row[] = [];
  if (settings.only.has('postgres')) {
    progress('postgres: the service on Postgres against itself on SQLite, and against bare inserts');
    const r = await postgresRows({
      work,
      runs: settings.runs,
      connections: settings.connections,
      durationS: settings.durationS,
      progress,
    });
    serviceProblems.push(...r.problems);
    postgresTable = r.rows;
  }

  let tusTable: Row[] = [];
  if (settings.only.has('tus')) {
    progress('tus: a resumable upload through the service against a plain POST put of the same bytes');
    const r = await tusRows({ work, input, size, runs: settings.runs, timeoutMs: transferTimeoutMs, progress });
    serviceProblems.push(...r.problems);
    tusTable = r.rows;
  }

  let partsTable: Row[] = [];
  if (settings.only.has('parts')) {
    progress('parts: a direct upload in parts through the SDK against lib-storage, same S3 server');
    const r = await partsRows({ work, runs: settings.runs, progress });
    serviceProblems.push(...r.problems);
    partsTable = r.rows;
    await r.teardown();
  }

  let footprintTable: Row[] = [];
  if (settings.only.has('footprint')) {
    progress(`footprint: the built server idle, then a ${settings.soakS} s mixed soak at concurrency 32`);
    const r = await footprintRows({ work, runs: settings.runs, soakSeconds: settings.soakS, progress });
    serviceProblems.push(...r.problems);
    footprintTable = r.rows;
  }

  let installTable: Row[] = [];
  if (settings.only.has('install')) {
    progress('install: fresh installs of the packed SDK alone and of the server, from npm cache');
    const r = await installRows({ work, runs: settings.runs, progress });
    serviceProblems.push(...r.problems);
    installTable = r.rows;
  }

  // A figure whose service runs were cut short by a failure is not reported.
  for (const s of [
    up,
    upRss,
    down,
    downRss,
    ...[gets, uncachedGets, infoGets, warnGets, sourceGets].flatMap((f) => Object.values(f)),
  ]) {
    if (s.service && s.service.length < s.baseline.length) s.service = null;
  }

  const mib = settings.sizeMiB;
  const rows: Row[] = [];
  if (settings.only.has('transfers')) {
    rows.push(
      ratioRow(`Upload ${mib} MiB (MiB/s)`, up, 0, 0.7),
      perRoundRow(`Download ${mib} MiB (MiB/s)`, down, 0, 0.9),
      infoRow(
        `Download ${mib} MiB: the service ÷ a plain node:http server writing the file from two reused 1 MiB buffers (MiB/s)`,
        { service: down.service, baseline: downReused.baseline },
        0,
      ),
      ceilingRow(`Upload: server peak RSS growth (MiB)`, upRss, RSS_LIMIT_MIB, 'MiB'),
      ceilingRow(`Download: server peak RSS growth (MiB)`, downRss, RSS_LIMIT_MIB, 'MiB'),
    );
  }
  if (settings.only.has('small')) {
    rows.push(
      ratioRow(
        `Small GETs, 4 KiB, ${settings.connections} conns, logs at info (the default) (req/s)`,
        infoGets.rps,
        0,
        0.5,
      ),
      ratioRow('Small GETs, 4 KiB, logs at warn (req/s)', warnGets.rps, 0, 0.55),
      infoRow('Small GETs, 4 KiB, logs off (req/s)', gets.rps, 0),
      ratioRow(
        'Small GETs: logs at info ÷ logs off (req/s; the access log costs ≤ 10%)',
        { service: infoGets.rps.service, baseline: gets.rps.service ?? [] },
        0,
        0.9,
      ),
      infoRow('Small GETs: Hono answering the same 4 KiB and download headers from memory (req/s)', ceilingGets.rps, 0),
      ratioRow(
        "Small GETs: the service, logs off ÷ that Hono server (req/s; the service's own work)",
        { service: gets.rps.service, baseline: ceilingGets.rps.service ?? [] },
        0,
        0.9,
      ),
      ...(settings.serviceCode === 'source'
        ? []
        : [
            infoRow(
              'Small GETs: the service from src/ under tsx (npm start), logs off ÷ that Hono server (req/s)',
              { service: sourceGets.rps.service, baseline: ceilingGets.rps.service ?? [] },
              0,
            ),
          ]),
      infoRow('Small GETs p50 latency (ms)', gets.p50, 2),
      infoRow('Small GETs p99 latency (ms)', gets.p99, 2),
      infoRow('Small GETs, small-blob cache off (req/s)', uncachedGets.rps, 0),
      infoRow('Small GETs, small-blob cache off, p50 (ms)', uncachedGets.p50, 2),
      infoRow('Small GETs, small-blob cache off, p99 (ms)', uncachedGets.p99, 2),
    );
  }
  rows.push(
    ...pythonTable,
    ...s3Table,
    ...retentionTable,
    ...mcpTable,
    ...gatewayTable,
    ...adkTable,
    ...aiSdkTable,
    ...uiTable,
    ...viewsTable,
    ...limitsTable,
    ...postgresTable,
    ...tusTable,
    ...partsTable,
    ...footprintTable,
    ...installTable,
  );

  const out = [
    '## artifact-store bench',
    '',
    `- date: ${date}`,
    `- machine: ${machine}`,
    `- settings: ${mib} MiB artifact, ${settings.runs} alternating rounds per figure, small GETs ${settings.connections} connections × ${settings.durationS} s (wrk, 1 thread)`,
    `- the service's processes run ${settings.serviceCode === 'dist' ? 'the built dist/ (npm run build), as the image and the package bin do' : 'src/ under tsx, as npm start does (BENCH_SERVICE_CODE=source)'}, with the V8 flags of npm start`,
    "- cells: median (min–max) over the rounds; a ratio is the median of the rounds' own ratios (each round ran service and baseline back to back), and that median is judged",
    '',
    markdownTable(rows),
    '',
    'Baselines: upload = node:http + sha256 + temp file + fsync; download = node:http `pipeline(createReadStream(f, { highWaterMark: 1 << 20 }), res)`',
    '(judged in every round), beside it a node:http server writing the file from two reused 1 MiB buffers (info); downloads are read by a',
    'client that only counts bytes (a plain socket reading into one reused buffer), the same for every server;',
    'small GETs = Hono hello-world on @hono/node-server. Ratio = service / baseline. RSS growth = peak minus pre-transfer VmRSS of',
    'the server process, sampled every 20 ms; cells show median (max) and the worst run is judged.',
    'Small GETs run the whole request path on the service defaults: bearer JWT check (verified tokens cached), scope-checked',
    'reference lookup (answers cached, revalidated against SQLite data_version once per event-loop turn), bytes from the small-blob cache',
    '(ARTIFACT_STORE_SMALL_BLOB_CACHE_BYTES). The "small-blob cache off" rows are a second service process that preads the file',
    'on every GET. The judged rows run with logs at info (the default: one JSON line per request) and at warn, each service',
    'process writing them to a file through its own logger; "logs off" (silent) is the reference for what the access log costs.',
    'Every round starts each small-GET server afresh, in its own process. "Hono answering the same 4 KiB" sends the 4 KiB and',
    'the headers the service sends with it (type, disposition, nosniff, CSP, cache, ETag, request id) from memory: the ceiling',
    "for a 4 KiB answer on this machine, against which the service's own work per request shows.",
    'S3 rows: the service on its S3 driver (above one 8 MiB part: multipart to a staging key and a server-side copy, or',
    'straight to the final key when the sha256 is declared; within one part: one PutObject to the final key, signed with the',
    'sha256) against the AWS SDK (lib-storage multipart upload, PutObject, GetObject) putting and getting the same bytes on',
    'the same S3 server (Ceph RGW from scripts/rgw.sh unless S3_ENDPOINT is set). Direct rows: a presigned PUT plus complete',
    '(the PUT is signed with the sha256, which the bucket checks, so complete reads nothing back), and a presigned GET.',
    "The service's downloads are also set against a minimal Node proxy of the same object (node:http, GetObject with the",
    "driver's S3 client, its body piped to the response), taking turns with the service and the SDK in each round.",
    'Small puts: 40 new 1 MiB bodies, one after another.',
    'Retention rows: 2,000 puts of distinct 4 KiB artifacts, 16 at a time, into 8 sessions, through the service in its own process',
    '(fs blobs with fsync, SQLite), with quotas (125 artifacts per session, so most puts evict) against the same puts without',
    'quotas. Then 100,000 expired references (bulk-inserted rows, blobs without files, by one process) and one retention run over',
    "them by the built CLI (`artifact-store retention run`, npm start's V8 flags): expire, drop artifacts, collect the 100,000",
    "blob rows; the run's time and the peak RSS of that process, and the same CLI over 10 references (the process's own base).",
    'Put p99: in one process, as `serve` runs retention, 16 loops of 4 KiB puts, one due every 60 ms in each, for 10 s, then the',
    "same during a run over another 100,000 (2 rounds); a put's latency counts from when it was due, so a stall counts for every",
    'put it delayed. The slowest put, and the longest the event loop was held during the run (monitorEventLoopDelay), are info rows.',
    'Rate-limit row: two service processes, the same but for the rate limits (off; on per tenant and per token, request rate and',
    'bytes in flight, set far above the load so nothing trips), small GETs of a 4 KiB artifact under the same wrk load, taking turns,',
    'each process started afresh for its round.',
    'Ratio = on / off; any 429 fails the run.',
    'Footprint rows: `npm run build`, then `node dist/cli/main.js serve` on fs (no tsx) with the V8 flags of `npm start`, idle RSS (median',
    'of 1 s, 3 s after start) against a bare node:http server (and, beside it, the same server without the flags), then a mixed soak (puts 4-64 KiB and some 1 MiB, GETs, Range, HEAD, meta, lists, links and downloads,',
    'deletes, usage) from 32 concurrent loops; RSS every 100 ms: the peak, and growth = median of the last 5 s - median of 10-15 s.',
    'MCP rows: transformToolResult (Tableau download_workbook, server tableau) on one text block of 10 MiB of JSON, a 7 MiB PDF',
    'as base64 beside small rows, storing into createInMemoryArtifactStore; baseline = the bare cost of the same payload,',
    'JSON.parse + Buffer.from(base64) + sha256 (node:crypto). Both in a child process, alternating, 2 warm-ups then the larger',
    'of 7 and BENCH_RUNS runs each, a forced GC before each run; then the same turns with no gc() between them (natural GC, judged).',
    "Peak extra memory = the process's peak RSS during the run",
    '(VmHWM, reset through /proc/self/clear_refs) minus its RSS at the start, over the input size; it includes the in-memory',
    "store's own copy of the PDF (0.7×). It comes from a second child with MALLOC_MMAP_THRESHOLD_ fixed, so buffers freed by",
    "one run go back to the system instead of serving the next; the times come from the first, on Node's defaults.",
    'Gateway rows: one MCP SDK client over stdio calls test/helpers/scripted-mcp-server.ts straight and through',
    '`artifact-store gateway --embedded` (tsx), 5 alternating rounds of 300 calls of its echo tool each way: p50 and p99 of all',
    'calls, the added p50 judged. The 10 MiB row: the Tableau-shaped result through the gateway against the same call straight',
    'to the server plus transformToolResult into an embedded store in the bench process; 2 warm-ups, then 7 rounds each way.',
    "Both clients read stdio with the gateway's reader (one join per message, up to 256 MiB).",
    'ADK row: one HTTP store against the bench service; 2 warm-ups, then 9 alternating rounds of 8 saveArtifact + loadArtifact',
    'of 1 MiB (inlineData, base64 as ADK hands it) through ArtifactStoreArtifactService, against 8 putBytes + get of the',
    'same bytes; MiB moved per second, medians.',
    'AI SDK rows: in the bench process, an embedded store (SQLite + files). Small: 7 alternating rounds of 2,000 calls of a tool',
    "answering two JSON rows, withArtifacts' execute + toModelOutput against the bare execute; p50 of all calls, the added p50",
    'judged. 10 MiB: the Tableau-shaped result through the wrapped tool (execute + toModelOutput) against transformToolResult on',
    'the same raw result into the same store; 2 warm-ups, then 7 rounds each way, medians.',
    "UI rows: the service in the bench process with 10,000 artifacts in one session, /ui in Debian's Chromium (headless, no GPU),",
    '5 rounds, each a new tab. Main-thread work = CDP Performance.getMetrics TaskDuration (every task of the renderer) around the',
    'step. First rows: navigation to the first row in the DOM. Keystroke: one key of "item-01" to the service\'s rows shown (the',
    'debounce is idle time). Arrival: a put to its row painted (two frames), after 3.5 s of quiet, against the same row put on',
    'top by a bare script, measured the same way.',
    ...(viewNotes.length > 0
      ? [
          'View rows: one service process (fs, the flags of `npm start`); the client times each call from the request to the parsed',
          'answer, and every answer is checked (a wrong count or line fails the run). grep runs with LC_ALL=C, its file in the page cache.',
          ...viewNotes,
        ]
      : []),
  ];
  if (serviceProblems.length > 0)
    out.push('', '**Service not fully measured:**', ...serviceProblems.map((p) => `- ${p.replace(/\n/g, '\n  ')}`));
  console.log(out.join('\n'));

  const failed = rows.some((r) => r.result === 'FAIL');
  if (serviceProblems.length > 0) process.exitCode = 1;
  else if (failed && settings.strict) process.exitCode = 1;
}

main().then(
  () => process.exit(),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
