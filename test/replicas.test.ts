/**
 * Three `serve` processes on one Postgres (a cluster of this file's own, so it can be killed and
 * restarted) and one S3 bucket (the run's Ceph RGW), behind a client that spreads requests over them:
 * they must behave as one service. Exact quotas and names under parallel puts, nothing stale after a
 * change on another replica, events from every replica on any one (and resumable on another),
 * retention that expires each reference once, direct uploads and links across replicas; a replica
 * SIGKILLed during uploads and Postgres restarted under load.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { mintToken, type TokenClaims } from '../src/http/tokens.js';
import { type CliServer, runCli, startCliServer } from './helpers/cli-server.js';
import { hasPostgresServer, pgScript, startPgCluster } from './helpers/postgres-target.js';
import { describePostgres } from './helpers/postgres.js';
import { createTestBucket, describeS3 } from './helpers/s3.js';

const SECRET = { kid: 'r1', secret: 'replicas-test-secret-0123456789abcdef' };
const LINK_KEY = 'l1:replicas-link-key-0123456789abcdef';
const POLICIES = {
  rej: { maxArtifactsPerSession: 50, cleanupStrategy: 'reject' },
  lru: { maxArtifactsPerSession: 50, cleanupStrategy: 'lru' },
  cap: { maxTenantBytes: 100_000, cleanupStrategy: 'reject' },
  rate: { tenantRequestsPerSecond: 20, tenantRequestBurst: 20 },
  recent: { maxArtifactsPerSession: 3, cleanupStrategy: 'lru' },
};

let cluster: Awaited<ReturnType<typeof startPgCluster>>;
let bucket: Awaited<ReturnType<typeof createTestBucket>>;
let dir: string;
let env: Record<string, string>;
let replicas: CliServer[] = [];

const token = (claims: TokenClaims) => mintToken(SECRET, claims, 3600);
const auth = (t: string) => ({ Authorization: `Bearer ${t}` });
/** The i-th request's replica: requests go round the three. */
const at = (i: number) => replicas[i % replicas.length]!.url;

async function put(i: number, t: string, body: Uint8Array | string, headers: Record<string, string> = {}) {
  const res = await fetch(`${at(i)}/v1/artifacts`, {
    method: 'POST',
    headers: { ...auth(t), 'Content-Type': 'application/octet-stream', ...headers },
    body: typeof body === 'string' ? body : Buffer.from(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, any>, headers: res.headers };
}

/**
 * A put as a client makes it: a 503 (the pool's wait ran out while the machine is busy) is sent again
 * after its Retry-After, as the SDK does; any other answer is the put's.
 */
async function putRetrying(i: number, t: string, body: Uint8Array | string) {
  for (let attempt = 0; ; attempt++) {
    const r = await put(i, t, body);
    if (r.status !== 503 || attempt === 5) return r;
    await new Promise((ok) => setTimeout(ok, 1000 * Number(r.headers.get('Retry-After') ?? 1)));
  }
}

async function listIds(i: number, t: string, query = ''): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const q = new URLSearchParams(query);
    q.set('limit', '1000');
    if (cursor) q.set('cursor', cursor);
    const res = await fetch(`${at(i)}/v1/artifacts?${q}`, { headers: auth(t) });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { items: { id: string }[]; nextCursor?: string };
    ids.push(...page.items.map((x) => x.id));
    cursor = page.nextCursor;
  } while (cursor);
  return ids;
}

/** The statuses of a GET of `path` on every replica. */
const everywhere = (path: string, t: string) =>
  Promise.all(replicas.map(async (r) => (await fetch(`${r.url}${path}`, { headers: auth(t) })).status));

interface SseEvent {
  id?: string;
  event?: string;
  data?: string;
}

/** An open /v1/events stream: the events read so far, and a way to wait for more. */
function openEvents(url: string, t: string, lastEventId?: string) {
  const controller = new AbortController();
  const events: SseEvent[] = [];
  const ready = (async () => {
    const res = await fetch(`${url}/v1/events`, {
      headers: { ...auth(t), ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}) },
      signal: controller.signal,
    });
    expect(res.status).toBe(200);
    return res.body!;
  })();
  const reading = ready.then(async (body) => {
    const decoder = new TextDecoder();
    let buffer = '';
    const reader = body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const e: SseEvent = {};
          for (const line of block.split('\n')) {
            const [, key, value] = /^(id|event|data): ?(.*)$/.exec(line) ?? [];
            if (key) e[key as keyof SseEvent] = value;
          }
          if (e.event) events.push(e);
        }
      }
    } catch {
      // aborted
    }
  });
  return {
    events,
    ready,
    async until(predicate: (events: SseEvent[]) => boolean, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(events)) {
        if (Date.now() > deadline) throw new Error(`events: timed out with ${JSON.stringify(events.slice(-5))}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async close() {
      controller.abort();
      await reading;
    },
  };
}

/** An ops command of the CLI as a process, on the replicas' settings; resolves with its exit. */
const cli = (args: string[]) => runCli(args, { env, timeoutMs: 120_000 });

async function startReplica(): Promise<CliServer> {
  return startCliServer(join(dir, `replica-${randomBytes(3).toString('hex')}`), env);
}

/**
 * The replicas run on a cluster of this file's own, which scripts/pg.sh starts from Debian's server
 * (it is killed and restarted): without that server they are skipped, except in CI.
 */
function describeWithPgServer(name: string, fn: () => void): void {
  if (hasPostgresServer() || process.env.CI === 'true') describe(name, fn);
  else describe.skip(`${name} (skipped: Debian's postgresql is not installed, which scripts/pg.sh runs)`, fn);
}

describePostgres('three replicas', () => {
  describeWithPgServer('of this file’s own Postgres', () =>
    describeS3('on one Postgres and one bucket', () => {
      beforeAll(async () => {
        const s3 = inject('s3')!;
        dir = mkdtempSync(join(tmpdir(), 'replicas-'));
        [cluster, bucket] = await Promise.all([startPgCluster(), createTestBucket(s3, 'replicas')]);
        env = {
          ARTIFACT_STORE_DATABASE_URL: cluster.url,
          ARTIFACT_STORE_DATABASE_POOL_WAIT_MS: '2000',
          ARTIFACT_STORE_BLOB_DRIVER: 's3',
          ARTIFACT_STORE_S3_BUCKET: bucket.bucket,
          ARTIFACT_STORE_S3_ENDPOINT: s3.endpoint,
          ARTIFACT_STORE_S3_REGION: s3.region,
          ARTIFACT_STORE_S3_ACCESS_KEY_ID: s3.accessKeyId,
          ARTIFACT_STORE_S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
          ARTIFACT_STORE_S3_FORCE_PATH_STYLE: String(s3.forcePathStyle),
          ARTIFACT_STORE_JWT_SECRETS: `${SECRET.kid}:${SECRET.secret}`,
          ARTIFACT_STORE_URL_SIGNING_KEYS: LINK_KEY,
          ARTIFACT_STORE_TENANT_POLICIES: JSON.stringify(POLICIES),
          ARTIFACT_STORE_RETENTION_INTERVAL_SECONDS: '1',
        };
        // Started together: they migrate the empty database once, taking turns under its lock.
        replicas = await Promise.all([startReplica(), startReplica(), startReplica()]);
      }, 120_000);

      afterAll(async () => {
        await Promise.all(replicas.map((r) => r.stop()));
        await cluster?.stop();
        await bucket?.cleanup();
        if (dir) rmSync(dir, { recursive: true, force: true });
      }, 60_000);

      it('reject: 300 parallel puts over 3 replicas into a 50-slot session store exactly 50', async () => {
        const t = await token({ tenant: 'rej', session: 's1', perms: ['read', 'write'] });
        const results = await Promise.all(Array.from({ length: 300 }, (_, i) => putRetrying(i, t, `rej ${i}`)));
        const statuses = results.map((r) => r.status);
        const others = results.filter((r) => r.status !== 201 && r.status !== 409).map((r) => [r.status, r.json.code]);
        expect(
          statuses.filter((s) => s === 201),
          JSON.stringify(others),
        ).toHaveLength(50);
        expect(
          statuses.filter((s) => s === 409),
          JSON.stringify(others),
        ).toHaveLength(250);
        expect(new Set(results.filter((r) => r.status === 409).map((r) => r.json.code))).toEqual(
          new Set(['quota_exceeded']),
        );
        for (const i of [0, 1, 2]) expect(await listIds(i, t)).toHaveLength(50);
      });

      it('lru: 300 parallel puts over 3 replicas into a 50-slot session leave exactly 50 live', async () => {
        const t = await token({ tenant: 'lru', session: 's1', perms: ['read', 'write'] });
        const results = await Promise.all(Array.from({ length: 300 }, (_, i) => putRetrying(i, t, `lru ${i}`)));
        expect(results.map((r) => r.status).filter((s) => s !== 201)).toEqual([]);
        for (const i of [0, 1, 2]) expect(await listIds(i, t)).toHaveLength(50);
      });

      it('the tenant quota is never exceeded by a byte', async () => {
        const t = await token({ tenant: 'cap', perms: ['read', 'write'] });
        // 1,000-byte artifacts into a 100,000-byte quota, from 300 puts at once.
        const body = (i: number) => `${String(i).padStart(4, '0')}${'x'.repeat(996)}`;
        const results = await Promise.all(Array.from({ length: 300 }, (_, i) => putRetrying(i, t, body(i))));
        expect(results.filter((r) => r.status === 201)).toHaveLength(100);
        const usage = (await (await fetch(`${at(1)}/v1/usage`, { headers: auth(t) })).json()) as Record<string, any>;
        expect(JSON.stringify(usage)).toContain('100000');
        expect(await listIds(2, t)).toHaveLength(100);
      });

      it('parallel saves of one name over 3 replicas get versions 0..N-1, no gap, no duplicate', async () => {
        const t = await token({ tenant: 'names', sub: 'u1', session: 's1', perms: ['read', 'write'] });
        const saves = await Promise.all(
          Array.from({ length: 60 }, async (_, i) => {
            const res = await fetch(`${at(i)}/v1/names/app?name=report.txt`, {
              method: 'POST',
              headers: { ...auth(t), 'Content-Type': 'text/plain' },
              body: `version body ${i}`,
            });
            expect(res.status).toBe(201);
            return ((await res.json()) as { version: number }).version;
          }),
        );
        expect([...saves].sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i));
      });

      it('nothing stale: after a delete, a purge or a session end on one replica, no replica serves it', async () => {
        const t = await token({ tenant: 'fresh', perms: ['read', 'write', 'admin'] });
        const session = { 'X-Artifact-Session': 'gone' };
        const ids: string[] = [];
        for (let i = 0; i < 3; i++) {
          const { status, json } = await put(i, t, `stale ${i} ${randomBytes(4).toString('hex')}`, session);
          expect(status).toBe(201);
          ids.push(json.id as string);
        }
        // Every replica reads each one (warming whatever it caches).
        for (const id of ids) {
          expect(await everywhere(`/v1/artifacts/${id}`, t)).toEqual([200, 200, 200]);
          expect(await everywhere(`/v1/artifacts/${id}/meta`, t)).toEqual([200, 200, 200]);
        }
        // A delete on replica 1, a purge on replica 2.
        expect((await fetch(`${at(1)}/v1/artifacts/${ids[0]}`, { method: 'DELETE', headers: auth(t) })).status).toBe(
          204,
        );
        expect(
          (await fetch(`${at(2)}/v1/admin/artifacts/${ids[1]}`, { method: 'DELETE', headers: auth(t) })).status,
        ).toBe(200);
        for (const id of ids.slice(0, 2)) {
          expect(await everywhere(`/v1/artifacts/${id}`, t)).toEqual([404, 404, 404]);
          expect(await everywhere(`/v1/artifacts/${id}/meta`, t)).toEqual([404, 404, 404]);
        }
        // The session ends on replica 0: its last artifact goes everywhere.
        expect((await fetch(`${at(0)}/v1/sessions/gone`, { method: 'DELETE', headers: auth(t) })).status).toBe(200);
        expect(await everywhere(`/v1/artifacts/${ids[2]}`, t)).toEqual([404, 404, 404]);
        // An expiry: read everywhere while live, then nowhere once its second has passed.
        const short = await put(1, t, `short-lived ${randomBytes(4).toString('hex')}`, { 'X-Artifact-Ttl': '1' });
        expect(await everywhere(`/v1/artifacts/${short.json.id}`, t)).toEqual([200, 200, 200]);
        await new Promise((r) => setTimeout(r, Date.parse(short.json.expiresAt as string) - Date.now() + 50));
        expect(await everywhere(`/v1/artifacts/${short.json.id}`, t)).toEqual([404, 404, 404]);
      });

      it('lru across replicas: a read on one replica keeps its artifact from the eviction a put on another makes', async () => {
        const t = await token({ tenant: 'recent', session: 's1', perms: ['read', 'write'] });
        const ids: string[] = [];
        for (const name of ['a', 'b', 'c']) {
          ids.push((await put(0, t, `recent ${name}`)).json.id as string);
          await new Promise((r) => setTimeout(r, 20));
        }
        // Replica 1 reads the oldest; its last access is written within the flush interval (1 s).
        expect((await fetch(`${at(1)}/v1/artifacts/${ids[0]}`, { headers: auth(t) })).status).toBe(200);
        const accessed = async () => {
          const res = await fetch(`${at(0)}/v1/artifacts?limit=10`, { headers: auth(t) });
          const { items } = (await res.json()) as {
            items: { id: string; createdAt: string; lastAccessedAt: string }[];
          };
          const a = items.find((x) => x.id === ids[0])!;
          return a.lastAccessedAt > a.createdAt;
        };
        for (const deadline = Date.now() + 15_000; !(await accessed()); ) {
          if (Date.now() > deadline) throw new Error('the read on replica 1 was never written as an access');
          await new Promise((r) => setTimeout(r, 100));
        }
        // A put on replica 2 into the full session evicts the least recently used: b, not a.
        expect((await put(2, t, 'recent d')).status).toBe(201);
        const live = await listIds(0, t);
        expect(live).toContain(ids[0]);
        expect(live).not.toContain(ids[1]);
        expect(live).toHaveLength(3);
      });

      it('events: a stream on one replica gets every replica’s events in order, and resumes on another', async () => {
        const t = await token({ tenant: 'ev', perms: ['read', 'write'] });
        const stream = openEvents(at(2), t);
        await stream.ready;
        // Wait for the stream to have read its starting position before anything is stored.
        await new Promise((r) => setTimeout(r, 300));
        const ids: string[] = [];
        for (let i = 0; i < 12; i++) ids.push((await put(i, t, `event ${i}`)).json.id as string);
        await stream.until((e) => e.filter((x) => x.event === 'artifact.stored').length >= 12);
        const stored = stream.events.filter((e) => e.event === 'artifact.stored');
        expect(stored.map((e) => (JSON.parse(e.data!) as { ref: { id: string } }).ref.id)).toEqual(ids);
        const seqs = stored.map((e) => Number(e.id));
        expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
        await stream.close();
        // Resumed on another replica after the fourth: the eight after it, nothing else.
        const resumed = openEvents(at(0), t, stored[3]!.id);
        await resumed.until((e) => e.filter((x) => x.event === 'artifact.stored').length >= 8);
        await new Promise((r) => setTimeout(r, 300));
        expect(resumed.events.map((e) => e.id)).toEqual(stored.slice(4).map((e) => e.id));
        await resumed.close();
      });

      it('retention on every replica expires each reference once: one artifact.expired each', async () => {
        const t = await token({ tenant: 'ret', perms: ['read', 'write'] });
        const stream = openEvents(at(1), t);
        await stream.ready;
        await new Promise((r) => setTimeout(r, 300));
        const ids: string[] = [];
        for (let i = 0; i < 30; i++) ids.push((await put(i, t, `expiring ${i}`, { 'X-Artifact-Ttl': '1' })).json.id);
        // Every replica runs retention each second; the references expire after one.
        await stream.until((e) => e.filter((x) => x.event === 'artifact.expired').length >= 30, 30_000);
        await new Promise((r) => setTimeout(r, 2500));
        const expired = stream.events
          .filter((e) => e.event === 'artifact.expired')
          .map((e) => (JSON.parse(e.data!) as { ref: { id: string } }).ref.id);
        expect(expired.sort()).toEqual([...ids].sort());
        await stream.close();
      });

      it('rate limits hold across replicas: three times the rate through three replicas gets the rate', async () => {
        const t = await token({ tenant: 'rate', perms: ['read'] });
        // 20 requests a second through each replica, for 3 s: three times the tenant's 20/s.
        const began = Date.now();
        const statuses = (
          await Promise.all(
            replicas.map(async (r) => {
              const out: number[] = [];
              for (let i = 0; i < 60; i++) {
                const sent = Date.now();
                const res = await fetch(`${r.url}/v1/artifacts?limit=1`, { headers: auth(t) });
                out.push(res.status);
                await res.arrayBuffer();
                await new Promise((ok) => setTimeout(ok, Math.max(0, 50 - (Date.now() - sent))));
              }
              return out;
            }),
          )
        ).flat();
        const seconds = (Date.now() - began) / 1000;
        const admitted = statuses.filter((s) => s === 200).length;
        expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
        // One bucket for the tenant: its burst plus its rate over the time taken (per replica, each
        // would have let all 180 through).
        expect(admitted).toBeLessThanOrEqual(20 + Math.ceil(20 * seconds));
        expect(admitted).toBeGreaterThanOrEqual(20 + Math.floor(20 * seconds * 0.5));
      });

      it('a direct upload begun on one replica completes on another; a link signed on one works on all', async () => {
        const t = await token({ tenant: 'up', perms: ['read', 'write'] });
        const bytes = randomBytes(70_000);
        const sha256 = createHash('sha256').update(bytes).digest('hex');
        const begun = await fetch(`${at(0)}/v1/uploads`, {
          method: 'POST',
          headers: { ...auth(t), 'Content-Type': 'application/json' },
          body: JSON.stringify({ sizeBytes: bytes.length, sha256, mimeType: 'application/octet-stream' }),
        });
        expect(begun.status).toBe(201);
        const upload = (await begun.json()) as { uploadId: string; url: string; headers: Record<string, string> };
        const sent = await fetch(upload.url, { method: 'PUT', headers: upload.headers, body: bytes });
        expect(sent.status).toBeLessThan(300);
        const done = await fetch(`${at(1)}/v1/uploads/${upload.uploadId}/complete`, {
          method: 'POST',
          headers: auth(t),
        });
        expect(done.status).toBe(201);
        const ref = (await done.json()) as { id: string };
        const got = await fetch(`${at(2)}/v1/artifacts/${ref.id}`, { headers: auth(t) });
        expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true);

        const linked = await fetch(`${at(2)}/v1/artifacts/${ref.id}/url`, {
          method: 'POST',
          headers: { ...auth(t), 'Content-Type': 'application/json' },
          body: JSON.stringify({ mode: 'proxy' }),
        });
        const { url } = (await linked.json()) as { url: string };
        const path = url.slice(new URL(url).origin.length);
        for (const r of replicas) {
          const res = await fetch(`${r.url}${path}`);
          expect(res.status).toBe(200);
          expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);
        }
        const tampered = new URL(path, 'http://x');
        const signature = tampered.searchParams.get('signature')!;
        tampered.searchParams.set('signature', `${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`);
        expect((await fetch(`${at(0)}${tampered.pathname}${tampered.search}`)).status).toBe(403);
      });

      it('a replica SIGKILLed during uploads: the others keep answering, nothing acknowledged is lost', async () => {
        const t = await token({ tenant: 'kill', perms: ['read', 'write'] });
        const victim = replicas[0]!;
        const bodies = Array.from({ length: 90 }, (_, i) => `kill ${i} ${randomBytes(2000).toString('hex')}`);
        const puts = bodies.map(async (body, i) => {
          try {
            const r = await put(i, t, body);
            return r.status === 201 ? (r.json.id as string) : null;
          } catch {
            return null; // the connection to the killed replica broke: not acknowledged
          }
        });
        await new Promise((r) => setTimeout(r, 30));
        victim.kill();
        await victim.exited;
        const acknowledged = (await Promise.all(puts)).filter((id): id is string => id !== null);
        expect(acknowledged.length).toBeGreaterThan(0);
        replicas = replicas.slice(1);
        // Every acknowledged put is there, through both survivors, bytes and all.
        for (const id of acknowledged)
          for (const r of replicas)
            expect((await fetch(`${r.url}/v1/artifacts/${id}`, { headers: auth(t) })).status).toBe(200);
        // A new replica takes the killed one's place.
        replicas.push(await startReplica());
        expect(await everywhere(`/v1/artifacts/${acknowledged[0]}`, t)).toEqual([200, 200, 200]);
        // fsck on Postgres and the bucket: every row's bytes are there (bytes a killed put stored without
        // their row are orphans, which retention collects after the grace period, not damage).
        const fsck = await cli(['fsck', '--json']);
        // Exit 1 when it found anything, orphaned bytes included.
        expect([0, 1], fsck.stderr).toContain(fsck.code);
        const report = JSON.parse(fsck.stdout) as { unresolved: number; problems: { kind: string }[] };
        expect(report.problems.filter((p) => p.kind !== 'orphan_bytes')).toEqual([]);
        const usage = await cli(['usage', '--json']);
        expect(usage.code, usage.stderr).toBe(0);
        const kill = (JSON.parse(usage.stdout) as { tenants: { tenantId: string; count: number }[] }).tenants.find(
          (x) => x.tenantId === 'kill',
        );
        expect(kill?.count).toBeGreaterThanOrEqual(acknowledged.length);
      });

      it('a malformed or unreachable ARTIFACT_STORE_DATABASE_URL stops the start with one line that names it, never the password', async () => {
        const password = 'hunter2-not-for-logs';
        for (const url of [
          `mysql://artifacts:${password}@127.0.0.1/artifacts`,
          `postgres://artifacts:${password}@127.0.0.1:1/artifacts`,
          `postgres://artifacts:${password}@`,
        ]) {
          const started = await startCliServer(join(dir, `bad-${randomBytes(3).toString('hex')}`), {
            ...env,
            ARTIFACT_STORE_DATABASE_URL: url,
          }).then(
            () => null,
            (err: Error) => err.message,
          );
          expect(started, url).not.toBeNull();
          const lines = started!.split('\n').filter((l) => l.startsWith('artifact-store:'));
          expect(lines, started!).toHaveLength(1);
          expect(lines[0]).toContain('ARTIFACT_STORE_DATABASE_URL');
          expect(started).not.toContain(password);
        }
      });

      it('backup and restore on Postgres refuse, naming pg_dump and pg_restore', async () => {
        const backup = await cli(['backup', join(dir, 'backup-target')]);
        expect(backup.code).toBe(2);
        expect(backup.stderr).toMatch(/ARTIFACT_STORE_DATABASE_URL.*pg_dump/);
        const restore = await cli(['restore', join(dir, 'backup-target')]);
        expect(restore.code).toBe(2);
        expect(restore.stderr).toMatch(/pg_restore/);
      });

      it('Postgres restarted under load: 503 with Retry-After, never 500; every replica recovers without a restart', async () => {
        const t = await token({ tenant: 'pg', perms: ['read', 'write'] });
        const { json } = await put(0, t, 'before the restart');
        const id = json.id as string;
        let stop = false;
        const statuses: number[] = [];
        const retryAfter = new Set<string | null>();
        const messages = new Set<string>();
        const load = Array.from({ length: 6 }, async (_, w) => {
          for (let i = w; !stop; i += 6) {
            const res = await fetch(`${at(i)}/v1/artifacts${i % 2 ? `/${id}` : ''}`, {
              method: i % 2 ? 'GET' : 'POST',
              headers: { ...auth(t), 'Content-Type': 'text/plain' },
              ...(i % 2 ? {} : { body: `under load ${w} ${i}` }),
            }).catch(() => null);
            if (!res) continue;
            statuses.push(res.status);
            if (res.status === 503) {
              retryAfter.add(res.headers.get('retry-after'));
              messages.add(((await res.json()) as { message: string }).message);
            } else await res.arrayBuffer();
          }
        });
        await new Promise((r) => setTimeout(r, 300));
        await pgScript('kill', cluster.dir);
        await new Promise((r) => setTimeout(r, 1500));
        await pgScript('restart', cluster.dir);
        // Every replica answers again, on its own.
        const deadline = Date.now() + 30_000;
        while ((await everywhere(`/v1/artifacts/${id}`, t)).some((s) => s !== 200)) {
          if (Date.now() > deadline) throw new Error('the replicas did not recover');
          await new Promise((r) => setTimeout(r, 200));
        }
        stop = true;
        await Promise.all(load);
        expect(statuses.filter((s) => s >= 500 && s !== 503)).toEqual([]);
        expect(statuses).toContain(503);
        expect([...retryAfter].every((v) => v !== null && Number(v) > 0)).toBe(true);
        // Each says what is wrong: the database (a connection lost, or none to be had), not "unexpected".
        expect([...messages].filter((m) => !/database|connection/i.test(m))).toEqual([]);
        expect((await put(1, t, 'after the restart')).status).toBe(201);
        // No half-written rows: every row's bytes are there.
        const fsck = await cli(['fsck', '--json']);
        // Exit 1 when it found anything, orphaned bytes included.
        expect([0, 1], fsck.stderr).toContain(fsck.code);
        const report = JSON.parse(fsck.stdout) as { problems: { kind: string }[] };
        expect(report.problems.filter((p) => p.kind !== 'orphan_bytes')).toEqual([]);
      });
    }),
  );
});
