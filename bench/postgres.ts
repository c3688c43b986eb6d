/**
 * Postgres rows: the service on Postgres against itself on SQLite, and against the driver alone.
 * A durable Postgres cluster of the bench's own (scripts/pg.sh with PG_DURABLE=1: fsync and
 * synchronous commits on, as SQLite's synchronous=FULL is) on this machine; each round starts its
 * processes afresh on a new database and a new data dir.
 *
 * - 4 KiB puts a second, 32 clients, one replica: Postgres ÷ SQLite (report).
 * - 4 KiB GETs (wrk): Postgres ÷ SQLite (≥ 0.8×: a GET is one indexed SELECT on either).
 * - put p99 under 32 clients on Postgres, with the p99 of the same number of bare
 *   `INSERT … ` transactions (autocommit: BEGIN … COMMIT) through the same driver, as its baseline.
 * - three replicas' aggregate puts a second ÷ one replica's (on two cores it cannot scale; the row is
 *   for machines with more).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { REPO_ROOT, startServerChild, type ServerChild } from './children.js';
import { load, wrkMissing } from './load.js';
import { infoRow, ratioRow, samples, type Row } from './report.js';

/** The value below which a share `q` of the values fall (nearest rank). */
function percentile(values: number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

type Service = ServerChild<{ url: string; token: string }>;

const CLIENTS = 32;
const PG_SCRIPT = join(REPO_ROOT, 'scripts', 'pg.sh');

/** `clients` loops putting distinct 4 KiB bodies across `services` for `seconds`: puts a second and latencies. */
async function putLoad(services: Service[], clients: number, seconds: number) {
  const latencies: number[] = [];
  const until = performance.now() + seconds * 1000;
  let n = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let i = 0; performance.now() < until; i++) {
        const s = services[(c + i) % services.length]!;
        const began = performance.now();
        const res = await fetch(`${s.info.url}/v1/artifacts`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${s.info.token}`, 'Content-Type': 'application/octet-stream' },
          body: randomBytes(4096),
        });
        await res.arrayBuffer();
        if (res.status !== 201) throw new Error(`a put answered ${res.status}`);
        latencies.push(performance.now() - began);
        n++;
      }
    }),
  );
  return { perSecond: n / seconds, p99: percentile(latencies, 0.99) };
}

/** The same number of clients each committing one-row INSERTs through postgres.js (a pool as big as the service's). */
async function bareInserts(url: string, clients: number, seconds: number) {
  const sql = postgres(url, { max: 10, onnotice: () => {} });
  try {
    await sql.unsafe('CREATE TABLE IF NOT EXISTS bare (id bigserial PRIMARY KEY, body text NOT NULL)');
    const latencies: number[] = [];
    const until = performance.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (performance.now() < until) {
          const began = performance.now();
          await sql.unsafe('INSERT INTO bare (body) VALUES ($1)', [randomBytes(64).toString('hex')]);
          latencies.push(performance.now() - began);
        }
      }),
    );
    return { perSecond: latencies.length / seconds, p99: percentile(latencies, 0.99) };
  } finally {
    await sql.end();
  }
}

export async function postgresRows(ctx: {
  work: string;
  runs: number;
  connections: number;
  durationS: number;
  progress: (m: string) => void;
}): Promise<{ rows: Row[]; problems: string[] }> {
  const putRate = samples();
  const getRate = samples();
  const putP99 = samples();
  const scale = samples();
  const metrics = {
    puts: `4 KiB puts, ${CLIENTS} clients, one replica: Postgres ÷ SQLite (puts/s)`,
    gets: `4 KiB GETs, ${ctx.connections} conns: Postgres ÷ SQLite (req/s)`,
    p99: `Put p99 at ${CLIENTS} clients on Postgres ÷ bare INSERT transactions through postgres.js (ms)`,
    scale: 'Three replicas on one Postgres ÷ one replica, aggregate 4 KiB puts (puts/s; 2 cores: cannot scale here)',
  };
  const notRun = (why: string) => ({
    rows: [
      infoRow(metrics.puts, { service: null, baseline: [] }, 0),
      ratioRow(metrics.gets, { service: null, baseline: [] }, 0, 0.8),
      infoRow(metrics.p99, { service: null, baseline: [] }, 1),
      infoRow(metrics.scale, { service: null, baseline: [] }, 0),
    ],
    problems: [`postgres: ${why}`],
  });
  const missing = await wrkMissing();
  if (missing) return notRun(missing);

  const clusterDir = join(ctx.work, 'pg-cluster');
  let adminUrl: string;
  try {
    const { stdout } = await promisify(execFile)(PG_SCRIPT, ['start', clusterDir], {
      env: { ...process.env, PG_DURABLE: '1' },
    });
    adminUrl = (JSON.parse(stdout.trim().split('\n').at(-1)!) as { url: string }).url;
  } catch (err) {
    return notRun(`no Postgres server to start (scripts/pg.sh): ${(err as Error).message.split('\n')[0]}`);
  }
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  let databases = 0;
  const freshUrl = async () => {
    const name = `bench_${databases++}`;
    await admin.unsafe(`CREATE DATABASE ${name}`);
    const u = new URL(adminUrl);
    u.pathname = `/${name}`;
    return u.toString();
  };
  const problems: string[] = [];
  const seconds = Math.max(3, Math.min(ctx.durationS, 6));
  let child = 0;
  const start = (side: 'sqlite' | 'postgres', url?: string): Promise<Service> =>
    startServerChild(`service on ${side}`, 'service-server.ts', [
      join(ctx.work, `pg-bench-${side}-${child++}`),
      String(1024 * 1024),
      '',
      '',
      url ? JSON.stringify({ databaseUrl: url }) : '',
    ]);
  const smallGet = async (s: Service) => {
    const headers = { Authorization: `Bearer ${s.info.token}` };
    const res = await fetch(`${s.info.url}/v1/artifacts`, {
      method: 'POST',
      headers: { ...headers, 'Content-Type': 'application/octet-stream' },
      body: randomBytes(4096),
    });
    const { id } = (await res.json()) as { id: string };
    const target = `${s.info.url}/v1/artifacts/${id}`;
    await load(target, headers, ctx.connections, Math.min(2, ctx.durationS));
    return (await load(target, headers, ctx.connections, ctx.durationS)).requestsPerSecond;
  };
  try {
    for (let run = 0; run < ctx.runs; run++) {
      ctx.progress(`postgres: round ${run + 1} of ${ctx.runs}`);
      // One replica on SQLite, then on Postgres: puts, then GETs.
      const lite = await start('sqlite');
      try {
        putRate.baseline.push((await putLoad([lite], CLIENTS, seconds)).perSecond);
        getRate.baseline.push(await smallGet(lite));
      } finally {
        await lite.stop();
      }
      const url = await freshUrl();
      const pg = await start('postgres', url);
      let one: number;
      try {
        const puts = await putLoad([pg], CLIENTS, seconds);
        one = puts.perSecond;
        putRate.service!.push(puts.perSecond);
        putP99.service!.push(puts.p99);
        getRate.service!.push(await smallGet(pg));
      } finally {
        await pg.stop();
      }
      putP99.baseline.push((await bareInserts(await freshUrl(), CLIENTS, seconds)).p99);
      // Three replicas on one database.
      const shared = await freshUrl();
      const three = await Promise.all([
        start('postgres', shared),
        start('postgres', shared),
        start('postgres', shared),
      ]);
      try {
        scale.service!.push((await putLoad(three, CLIENTS, seconds)).perSecond);
        scale.baseline.push(one);
      } finally {
        await Promise.all(three.map((s) => s.stop()));
      }
    }
  } catch (err) {
    problems.push(`postgres: ${(err as Error).message}`);
    for (const s of [putRate, getRate, putP99, scale]) s.service = null;
  } finally {
    await admin.end();
    await promisify(execFile)(PG_SCRIPT, ['stop', clusterDir]).catch(() => {});
  }
  return {
    rows: [
      infoRow(metrics.puts, putRate, 0),
      ratioRow(metrics.gets, getRate, 0, 0.8),
      infoRow(metrics.p99, putP99, 1),
      infoRow(metrics.scale, scale, 0),
    ],
    problems,
  };
}
