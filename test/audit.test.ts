/**
 * The audit trail beyond the routes that write it: policy changes recorded when a process starts
 * with other policies than last time, and retention trimming only entries past their keeping time.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryBlobStore } from '../src/blob/memory.js';
import { nodeSha256 } from '../src/blob/node-hash.js';
import { loadConfig } from '../src/core/config.js';
import { createSqliteRepository } from '../src/db/sqlite.js';
import { startServer } from '../src/node.js';
import { recordAction } from '../src/service/audit.js';
import { runRetention } from '../src/service/retention/index.js';
import { TEST_POLICY } from './helpers/policy.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'artifact-audit-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

describe('policy changes', () => {
  it('a start with other policies than last recorded records the change, for the service and each tenant whose overrides changed', {
    timeout: 30_000,
  }, async () => {
    const dataDir = await tempDir();
    const start = async (policies: Record<string, unknown>, env: Record<string, string> = {}) => {
      const server = await startServer(
        loadConfig(
          { ARTIFACT_STORE_TENANT_POLICIES: JSON.stringify(policies), ...env },
          { port: 0, dataDir, env: 'test', logLevel: 'silent' },
        ),
      );
      const entries = await server.repo.listAudit({ action: 'policy.change', limit: 100 });
      return { server, entries };
    };
    const first = await start({ acme: { maxSessionBytes: 1000 }, beta: { cleanupStrategy: 'reject' } });
    expect(first.entries.map((e) => e.tenantId).sort()).toEqual(['', 'acme', 'beta']);
    expect(first.entries.find((e) => e.tenantId === 'acme')!.details).toEqual({ overrides: { maxSessionBytes: 1000 } });
    expect(first.entries.every((e) => e.role === 'host' && e.actorKind === 'config')).toBe(true);
    await first.server.close();

    // The same policies, keys in another order: nothing new.
    const same = await start({ beta: { cleanupStrategy: 'reject' }, acme: { maxSessionBytes: 1000 } });
    expect(same.entries).toHaveLength(3);
    await same.server.close();

    // acme's override changes, beta's goes, gamma's comes; the base rate limits change too.
    const changed = await start(
      { acme: { maxSessionBytes: 2000 }, gamma: { tenantRequestsPerSecond: 5 } },
      { ARTIFACT_STORE_TENANT_REQUESTS_PER_SECOND: '50' },
    );
    const fresh = changed.entries.slice(0, changed.entries.length - 3);
    expect(fresh.map((e) => e.tenantId).sort()).toEqual(['', 'acme', 'beta', 'gamma']);
    expect(fresh.find((e) => e.tenantId === 'beta')!.details).toEqual({ overrides: null });
    expect(
      (fresh.find((e) => e.tenantId === '')!.details as { base: { tenantRequestsPerSecond: number } }).base
        .tenantRequestsPerSecond,
    ).toBe(50);

    // acme's admin reads acme's part of the trail, and only that.
    const admin = await changed.server.mintToken({ tenant: 'acme', perms: ['read', 'admin'] });
    const res = await fetch(`${changed.server.url}/v1/admin/audit?action=policy.change`, {
      headers: { Authorization: `Bearer ${admin}` },
    });
    const seen = (await res.json()) as { entries: { tenantId: string; details: unknown }[] };
    expect(seen.entries.map((e) => [e.tenantId, e.details])).toEqual([
      ['acme', { overrides: { maxSessionBytes: 2000 } }],
      ['acme', { overrides: { maxSessionBytes: 1000 } }],
    ]);
    await changed.server.close();
  });
});

describe('keeping the trail', () => {
  it('retention trims only entries older than their keeping time, in batches, and reports how many', async () => {
    const dir = await tempDir();
    const repo = createSqliteRepository({ path: join(dir, 'artifacts.db') });
    cleanups.push(() => repo.close());
    const day = 86_400_000;
    const now = Date.UTC(2026, 10, 25);
    const actor = { role: 'host' as const, actorKind: 'cli', actorId: 'ops' };
    for (const age of [100, 91, 90.5, 89, 1])
      await recordAction(repo, actor, 'key.create', { tenantId: 'acme', target: `k${age}` }, now - age * day);
    const report = await runRetention({
      repo,
      blobs: createMemoryBlobStore({ hash: nodeSha256 }),
      policies: () => TEST_POLICY,
      graceMs: 0,
      batchSize: 2,
      auditKeptMs: 90 * day,
      now: () => now,
    });
    expect(report.audit).toEqual({ trimmed: 3 });
    const left = await repo.listAudit({ action: 'key.create', limit: 10 });
    expect(left.map((e) => e.target)).toEqual(['k1', 'k89']);
    // The run itself is in the trail, by the scheduler unless said otherwise.
    expect((await repo.listAudit({ action: 'retention.run', limit: 10 }))[0]).toMatchObject({
      role: 'scheduler',
      actorId: 'cli',
      tenantId: '',
    });
  });
});
