/**
 * What the retention tests share (test/retention.test.ts, test/retention-pacing.test.ts): a service
 * harness with retention's limits and a readwrite look at its database, and a gate that holds code at
 * a fault point.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createPolicies, type Policy, type TenantPolicies } from '../../src/core/policy.js';
import type { createArtifactService } from '../../src/service/artifact-service.js';
import type { RetentionDeps } from '../../src/service/retention/index.js';
import { TEST_POLICY } from './policy.js';
import { createServiceHarness } from './service-harness.js';

/** Resolves `reached` when code gets to the point, and holds it there until `release()`. */
export function gate() {
  let release!: () => void;
  let arrived!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const reached = new Promise<void>((r) => (arrived = r));
  return {
    reached,
    release,
    hold: async () => {
      arrived();
      await released;
    },
  };
}

/**
 * A service over a temp folder (test/helpers/service-harness.ts) on TEST_POLICY, closed when the test
 * ends; `retention()` runs retention with that policy changed as given, `count` and `events` read its
 * database, `blobFiles` counts the blob files.
 */
export async function retentionHarness(faults?: Parameters<typeof createArtifactService>[0]['faults']) {
  const base = TEST_POLICY;
  const h = await createServiceHarness({
    prefix: 'artifact-retention-',
    limits: { ...base, touchFlushMs: 0, gcGraceMs: 60_000 },
    policies: createPolicies(base),
    faults,
    db: 'readwrite',
  });
  const { dir, db } = h;
  const retention = (
    policy: Partial<Policy> = {},
    overrides: TenantPolicies = {},
    extra: Partial<RetentionDeps> = {},
  ) =>
    h.retention({
      policies: createPolicies({ ...base, ...policy }, overrides),
      overriddenTenants: Object.keys(overrides),
      ...extra,
    });
  const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
  const events = (type: string) =>
    (db.prepare('SELECT artifact_id AS id FROM outbox WHERE type = ? ORDER BY seq').all(type) as { id: string }[]).map(
      (e) => e.id,
    );
  const blobFiles = async () =>
    (await readdir(join(dir, 'blobs', 'sha256'), { recursive: true, withFileTypes: true }).catch(() => [])).filter(
      (e) => e.isFile(),
    ).length;
  return { ...h, retention, count, events, blobFiles };
}
