/**
 * Retention figures, each in a fresh process so its peak RSS is its own. Prints one JSON line.
 *
 *   retention-child.ts puts <dir> <quotas on|off> <count>
 *     <count> 4 KiB puts of distinct bytes through the service (fs blobs with fsync, SQLite), 16 at a
 *     time, into 8 sessions. With quotas on, each session holds at most count / 16 artifacts, so
 *     half of the puts evict. Prints {"perSecond"}.
 *   retention-child.ts seed <dir> <refs>
 *     <refs> expired references (distinct artifacts and blob rows, inserted in bulk), in the layout
 *     of a service data dir, so that `artifact-store retention run --data-dir <dir>` runs over them
 *     (bench/retention.ts times that). Prints {"refs"}.
 *   retention-child.ts puts-during <dir> <seconds>
 *     16 loops of 4 KiB puts, each due every 60 ms (latency counted from when a put was due), for
 *     <seconds>, then the same during one retention run over a seeded dir. Prints {"quietP99Ms",
 *     "busyP99Ms", "busyMaxMs", "quietPuts", "busyPuts", "report"}.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { createFsBlobStore } from '../src/blob/fs.js';
import { createPolicies, DEFAULT_POLICY, type Policy } from '../src/core/policy.js';
import { createSqliteRepository } from '../src/db/sqlite.js';
import { createArtifactService } from '../src/service/artifact-service.js';
import { runRetention } from '../src/service/retention/index.js';
import { runChild } from './children.js';

const SESSIONS = 8;
/** Each put loop's period in puts-during: one put due every 60 ms. */
const PUT_PERIOD_MS = 60;
const CONCURRENCY = 16;

const policy = (maxPerSession: number): Policy => ({
  ...DEFAULT_POLICY,
  maxTtlSeconds: 86_400,
  maxArtifactsPerSession: maxPerSession,
});

async function puts(dir: string, quotas: boolean, count: number) {
  const repo = createSqliteRepository({ path: join(dir, 'artifacts.db') });
  const blobs = createFsBlobStore({ root: join(dir, 'blobs') });
  const limits = { ...policy(1000), touchFlushMs: 1000 };
  const service = createArtifactService({
    repo,
    blobs,
    limits,
    ...(quotas ? { policies: createPolicies(policy(Math.max(1, Math.floor(count / 16)))) } : {}),
  });
  const bodies = Array.from({ length: count }, () => randomBytes(4096));
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < count; i = next++) {
        await service.putBytes({ tenantId: 'bench', sessionId: `s${i % SESSIONS}` }, bodies[i]!);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await service.close();
  await repo.close();
  return { perSecond: count / seconds };
}

/** <refs> expired references in bulk: distinct artifacts and blob rows (blobs without files). */
async function seed(dir: string, refs: number) {
  const dbPath = join(dir, 'artifacts.db');
  // The repository makes the schema; the rows go in straight (a put per reference would take minutes).
  await createSqliteRepository({ path: dbPath }).close();
  const db = new Database(dbPath);
  const past = Date.now() - 2 * 3_600_000;
  db.transaction(() => {
    const blob = db.prepare('INSERT INTO blobs (sha256, size_bytes, created_at) VALUES (?, 4096, ?)');
    const artifact = db.prepare(
      "INSERT INTO artifacts (tenant_id, id, namespace, sha256, size_bytes, created_at) VALUES ('bench', ?, 'art', ?, 4096, ?)",
    );
    const ref = db.prepare(
      "INSERT INTO artifact_refs (tenant_id, artifact_id, session_id, size_bytes, mime_type, created_at, last_accessed_at, expires_at) VALUES ('bench', ?, ?, 4096, 'application/octet-stream', ?, ?, ?)",
    );
    for (let i = 0; i < refs; i++) {
      const sha = randomBytes(32).toString('hex');
      const id = `art_${sha.slice(0, 24)}`;
      blob.run(sha, past);
      artifact.run(id, sha, past);
      ref.run(id, `s${i % 1000}`, past, past, past + 60_000);
    }
  })();
  db.close();
  return { refs };
}

/**
 * Put latency with and without a retention run beside it, in one process as in `serve`: 16 loops
 * of 4 KiB puts (one due every 60 ms each) for `seconds`, then the same loops while one
 * retention run goes over a seeded data dir. Prints the p99 of each, in ms.
 */
async function putsDuringRetention(dir: string, seconds: number) {
  const repo = createSqliteRepository({ path: join(dir, 'artifacts.db') });
  const blobs = createFsBlobStore({ root: join(dir, 'blobs') });
  const service = createArtifactService({ repo, blobs, limits: { ...policy(1000), touchFlushMs: 1000 } });
  // Open loop: each loop's puts are due on a fixed schedule (about 270 a second in all, a steady
  // load rather than a flood that would starve the run), and a put's latency counts from when it was
  // due. A loop held up by a stall of the event loop does not skip the puts it owed meanwhile: they are
  // late by the stall, so the stall shows in the percentiles (no coordinated omission).
  const latencies = async (until: () => boolean) => {
    const ms: number[] = [];
    const start = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, loop) => {
        for (let k = 0; !until(); k++) {
          const due = start + (k + loop / CONCURRENCY) * PUT_PERIOD_MS;
          const wait = due - performance.now();
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          await service.putBytes({ tenantId: 'load', sessionId: `p${loop}` }, randomBytes(4096));
          ms.push(performance.now() - due);
        }
      }),
    );
    return ms.sort((a, b) => a - b);
  };
  const p99 = (ms: number[]) => ms[Math.min(ms.length - 1, Math.floor(ms.length * 0.99))]!;
  const quietUntil = performance.now() + seconds * 1000;
  const quiet = await latencies(() => performance.now() > quietUntil);
  let done = false;
  const held = monitorEventLoopDelay({ resolution: 5 });
  held.enable();
  const run = runRetention(
    // As `serve` runs it (src/node/server.ts).
    {
      repo,
      blobs,
      policies: createPolicies(policy(1000)),
      graceMs: 3_600_000,
      pause: 1,
      batchTargetMs: 25,
      busy: () => service.putsInFlight() > 0,
    },
    'bench',
  ).finally(() => {
    done = true;
  });
  const busy = await latencies(() => done);
  const report = await run;
  held.disable();
  await service.close();
  await repo.close();
  return {
    quietP99Ms: p99(quiet),
    busyP99Ms: p99(busy),
    busyMaxMs: busy.at(-1)!,
    /** The longest the event loop was held during the run (ms). */
    loopHeldMaxMs: held.max / 1e6,
    quietPuts: quiet.length,
    busyPuts: busy.length,
    report,
  };
}

async function main() {
  const [mode, dir, a, b] = process.argv.slice(2);
  if (mode === 'puts' && dir && a && b) return puts(dir, a === 'on', Number(b));
  if (mode === 'seed' && dir && a) return seed(dir, Number(a));
  if (mode === 'puts-during' && dir && a) return putsDuringRetention(dir, Number(a));
  throw new Error(
    'usage: retention-child.ts puts <dir> on|off <count> | seed <dir> <refs> | puts-during <dir> <seconds>',
  );
}

runChild(main);
