import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { startCliServer, type CliServer } from './helpers/cli-server.js';

const PUTS = 200;
const LIMIT = 50;
const SIZE = 1024;

const running: CliServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) {
    s.kill();
    await s.exited;
  }
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

interface Put {
  id: string;
  bytes: Buffer;
}

async function put(server: CliServer, bytes: Buffer): Promise<Put> {
  const res = await fetch(`${server.url}/v1/artifacts`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${server.token}`,
      'Content-Type': 'application/octet-stream',
      'X-Artifact-Session': 'crowd',
    },
    body: new Uint8Array(bytes),
  });
  const body = (await res.json()) as { id: string; sha256: string };
  if (res.status !== 201) throw new Error(`put answered ${res.status}: ${JSON.stringify(body)}`);
  expect(body.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
  return { id: body.id, bytes };
}

/**
 * 200 parallel puts of distinct artifacts into one session whose count limit is 50, spread over
 * `servers` processes that share one SQLite file and one blob folder.
 */
async function crowd(processes: number) {
  const dataDir = await mkdtemp(join(tmpdir(), 'artifact-crowd-'));
  dirs.push(dataDir);
  const env = {
    ARTIFACT_STORE_ENV: 'development',
    ARTIFACT_STORE_MAX_ARTIFACTS_PER_SESSION: String(LIMIT),
    ARTIFACT_STORE_CLEANUP_STRATEGY: 'lru',
  };
  // One after the other: the first creates the database and the dev signing secret both then use.
  for (let i = 0; i < processes; i++) running.push(await startCliServer(dataDir, env));
  const servers = running.slice();

  const puts = await Promise.all(
    Array.from({ length: PUTS }, (_, i) => put(servers[i % servers.length]!, randomBytes(SIZE))),
  );
  expect(new Set(puts.map((p) => p.id)).size).toBe(PUTS);

  const first = servers[0]!;
  const listRes = await fetch(`${first.url}/v1/artifacts?session=crowd&limit=1000`, {
    headers: { Authorization: `Bearer ${first.token}` },
  });
  const survivors = ((await listRes.json()) as { items: { id: string; sizeBytes: number }[] }).items;
  // Within the limit, exactly: 200 puts of a 50-artifact session leave 50.
  expect(survivors).toHaveLength(LIMIT);
  expect(survivors.reduce((sum, r) => sum + r.sizeBytes, 0)).toBe(LIMIT * SIZE);

  // The outbox says in which order the puts committed and what was evicted after what.
  const db = new Database(join(dataDir, 'artifacts.db'), { readonly: true });
  const events = db
    .prepare("SELECT seq, type, artifact_id AS id FROM outbox WHERE tenant_id = 'dev' ORDER BY seq")
    .all() as { seq: number; type: string; id: string }[];
  db.close();
  const storedAt = new Map(events.filter((e) => e.type === 'artifact.stored').map((e) => [e.id, e.seq]));
  const evictedAt = new Map(events.filter((e) => e.type === 'artifact.evicted').map((e) => [e.id, e.seq]));
  expect(storedAt.size).toBe(PUTS);
  expect(evictedAt.size).toBe(PUTS - LIMIT);

  // The survivors are the most recently used: no reads happened, so the last 50 puts to commit.
  const lastCommitted = [...storedAt.entries()]
    .sort((a, b) => a[1] - b[1])
    .slice(-LIMIT)
    .map(([id]) => id);
  expect(survivors.map((r) => r.id).sort()).toEqual(lastCommitted.sort());

  // Every ref the API returned is retrievable with its own bytes, or was evicted by a later put.
  for (const p of puts) {
    const res = await fetch(`${servers[1 % servers.length]!.url}/v1/artifacts/${p.id}`, {
      headers: { Authorization: `Bearer ${first.token}`, 'X-Artifact-Session': 'crowd' },
    });
    if (res.status === 200) {
      expect(Buffer.from(await res.arrayBuffer()).equals(p.bytes)).toBe(true);
      expect(evictedAt.has(p.id)).toBe(false);
    } else {
      expect(res.status).toBe(404);
      await res.body?.cancel();
      expect(evictedAt.get(p.id)).toBeGreaterThan(storedAt.get(p.id)!);
    }
  }
}

describe('session limits under concurrency', () => {
  it('hold exactly with 200 parallel puts through one service process', { timeout: 120_000 }, async () => {
    await crowd(1);
  });

  it('hold exactly with 200 parallel puts through two service processes sharing one SQLite file', {
    timeout: 120_000,
  }, async () => {
    await crowd(2);
  });
});

describe('named versions under concurrency', () => {
  it('fifty parallel saves of one name through two processes sharing the SQLite file get versions 0-49', {
    timeout: 120_000,
  }, async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'artifact-names-'));
    dirs.push(dataDir);
    for (let i = 0; i < 2; i++) running.push(await startCliServer(dataDir, { ARTIFACT_STORE_ENV: 'development' }));
    const servers = running.slice();
    const saves = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        const server = servers[i % 2]!;
        const res = await fetch(`${server.url}/v1/names/crowd?name=${encodeURIComponent('shared.bin')}&scope=user`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${server.token}`, 'Content-Type': 'application/octet-stream' },
          body: randomBytes(SIZE),
        });
        expect(res.status).toBe(201);
        return ((await res.json()) as { version: number }).version;
      }),
    );
    expect(saves.sort((a, b) => a - b)).toEqual(Array.from({ length: 50 }, (_, i) => i));
  });
});
