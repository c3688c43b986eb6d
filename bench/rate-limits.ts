/**
 * Rate-limit rows: what the limiter costs a small GET when it is on and never trips. Two service
 * processes, the same but for the limits (off; on per tenant and per token, request rate and bytes
 * in flight, set far above the load), take turns under the same wrk load, each started afresh for
 * its round. Ratio = on / off.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { startServerChild, type ServerChild } from './children.js';
import { load, wrkMissing } from './load.js';
import { ratioRow, samples, type Row } from './report.js';
import { rotate } from './stats.js';

type Service = ServerChild<{ url: string; token: string }>;

/** On, with every limit in play, and too high for wrk on two cores to reach. */
const LIMITS_ON = {
  tenantRequestsPerSecond: 10_000_000,
  tenantRequestBurst: 10_000_000,
  tenantBytesInFlight: 1024 * 1024 * 1024,
  tokenRequestsPerSecond: 10_000_000,
  tokenRequestBurst: 10_000_000,
  tokenBytesInFlight: 256 * 1024 * 1024,
};

async function smallArtifactUrl(s: Service): Promise<{ url: string; headers: Record<string, string> }> {
  const headers = { Authorization: `Bearer ${s.info.token}` };
  const bytes = randomBytes(4096);
  const put = await fetch(`${s.info.url}/v1/artifacts`, {
    method: 'POST',
    headers: { ...headers, 'Content-Type': 'application/octet-stream' },
    body: bytes,
  });
  if (put.status !== 201)
    throw new Error(`POST /v1/artifacts answered ${put.status}: ${(await put.text()).slice(0, 300)}`);
  const { id } = (await put.json()) as { id: string };
  const url = `${s.info.url}/v1/artifacts/${encodeURIComponent(id)}`;
  const got = await fetch(url, { headers });
  if (got.status !== 200 || !Buffer.from(await got.arrayBuffer()).equals(bytes))
    throw new Error(`GET ${url} did not return the 4 KiB just stored`);
  return { url, headers };
}

export async function rateLimitRows(ctx: {
  work: string;
  runs: number;
  connections: number;
  durationS: number;
  progress: (m: string) => void;
}): Promise<{ rows: Row[]; problems: string[] }> {
  const rps = samples();
  const metric = `Small GETs, rate limits on and not tripping, vs off (req/s, ${ctx.connections} conns)`;
  const missing = await wrkMissing();
  if (missing)
    return {
      rows: [ratioRow(metric, { service: null, baseline: [] }, 0, 0.97)],
      problems: [`rate limits: ${missing}`],
    };
  const problems: string[] = [];
  const warmupS = Math.min(2, ctx.durationS);
  // Every round starts both processes afresh, as the small-GET rows do: two processes of the same
  // service differ by up to 10% in how fast they serve, which decided this row when one pair
  // served every round (1.02× and 0.81× in two full runs a few hours apart).
  const measure = async (side: 'off' | 'on', run: number): Promise<number> => {
    const server: Service = await startServerChild(`service, rate limits ${side}`, 'service-server.ts', [
      join(ctx.work, `limits-${side}-${run}`),
      String(1024 * 1024),
      ...(side === 'on' ? ['', '', JSON.stringify(LIMITS_ON)] : []),
    ]);
    try {
      const target = await smallArtifactUrl(server);
      await load(target.url, target.headers, ctx.connections, warmupS);
      // wrk's parse fails on any non-2xx answer: a 429 here would mean the limits tripped.
      return (await load(target.url, target.headers, ctx.connections, ctx.durationS)).requestsPerSecond;
    } finally {
      await server.stop();
    }
  };
  try {
    for (let run = 0; run < ctx.runs; run++) {
      await rotate(run, [
        async () => {
          rps.baseline.push(await measure('off', run));
        },
        async () => {
          rps.service!.push(await measure('on', run));
        },
      ]);
      ctx.progress(`rate-limit run ${run + 1}/${ctx.runs} done`);
    }
  } catch (err) {
    problems.push(`rate limits: ${err instanceof Error ? err.message : String(err)}`);
    rps.service = null;
  }
  return { rows: [ratioRow(metric, rps, 0, 0.97)], problems };
}
