/**
 * Rate-limit rows: what the limiter costs a small GET when it is on and never trips. Two service
 * processes, the same but for the limits (off; on per tenant and per token, request rate and bytes
 * in flight, set far above the load), take turns under the same wrk load. Ratio = on / off.
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
  let off: Service | undefined;
  let on: Service | undefined;
  try {
    off = await startServerChild('service, rate limits off', 'service-server.ts', [
      join(ctx.work, 'limits-off'),
      String(1024 * 1024),
    ]);
    on = await startServerChild('service, rate limits on', 'service-server.ts', [
      join(ctx.work, 'limits-on'),
      String(1024 * 1024),
      '',
      '',
      JSON.stringify(LIMITS_ON),
    ]);
    const targets = [await smallArtifactUrl(off), await smallArtifactUrl(on)] as const;
    const warmupS = Math.min(2, ctx.durationS);
    for (const t of targets) await load(t.url, t.headers, ctx.connections, warmupS);
    for (let run = 0; run < ctx.runs; run++) {
      await rotate(run, [
        async () => {
          rps.baseline.push(
            (await load(targets[0].url, targets[0].headers, ctx.connections, ctx.durationS)).requestsPerSecond,
          );
        },
        async () => {
          // wrk's parse fails on any non-2xx answer: a 429 here would mean the limits tripped.
          rps.service!.push(
            (await load(targets[1].url, targets[1].headers, ctx.connections, ctx.durationS)).requestsPerSecond,
          );
        },
      ]);
      ctx.progress(`rate-limit run ${run + 1}/${ctx.runs} done`);
    }
  } catch (err) {
    problems.push(`rate limits: ${err instanceof Error ? err.message : String(err)}`);
    rps.service = null;
  } finally {
    await Promise.all([off?.stop(), on?.stop()]);
  }
  return { rows: [ratioRow(metric, rps, 0, 0.97)], problems };
}
