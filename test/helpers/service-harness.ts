/**
 * An ArtifactService over a folder of its own, as the service's own tests build it (service, quotas,
 * retention): a SQLite repository and an fs blob store (no fsync) in a new temp folder, and a clock
 * the test moves by hand. Optionally quotas (`policies`), put faults, and a second connection to the
 * database for looking at (or editing) rows behind the service's back. The harness is closed and its
 * folder removed when the test that made it finishes, whether it was made in the test or in a
 * beforeEach.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { onTestFinished } from 'vitest';
import type { BlobStore } from '../../src/blob/blob-store.js';
import { createFsBlobStore } from '../../src/blob/fs.js';
import { nodeSha256 } from '../../src/blob/node-hash.js';
import type { Policy } from '../../src/core/policy.js';
import type { ArtifactRepository } from '../../src/db/repository.js';
import { createSqliteRepository } from '../../src/db/sqlite.js';
import {
  type ArtifactService,
  type ArtifactServiceDeps,
  createArtifactService,
  type ServiceLimits,
} from '../../src/service/artifact-service.js';
import { type RetentionDeps, type RetentionReport, runRetention } from '../../src/service/retention/index.js';

/** Where every harness's clock starts. */
export const HARNESS_T0 = Date.parse('2030-01-01T00:00:00.000Z');

export interface ServiceHarnessOptions {
  limits: ServiceLimits;
  /** Each tenant's policy (createPolicies). Without it the service has no quotas. */
  policies?: (tenantId: string) => Policy;
  faults?: ArtifactServiceDeps['faults'];
  /** A second connection to the database, opened after the service's: read-only, or read-write. */
  db?: 'readonly' | 'readwrite';
  /** The start of the temp folder's name, which says whose it is when one is left behind. */
  prefix?: string;
}

export interface ServiceHarness {
  dir: string;
  dbPath: string;
  /** The fs blob store's root, `{dir}/blobs`. */
  blobRoot: string;
  /** The service's clock: tests move `t`. */
  clock: { t: number };
  repo: ArtifactRepository;
  blobs: BlobStore;
  service: ArtifactService;
  /**
   * One retention run (trigger 'test') over the harness's repository and blobs at its clock, with
   * its policies and graceMs 0 unless `deps` says otherwise (a harness without policies needs
   * `deps.policies`).
   */
  retention(deps?: Partial<RetentionDeps>): Promise<RetentionReport>;
  /** Runs `close` when the harness closes, before its own service and repository are closed. */
  onClose(close: () => unknown): void;
}

export async function createServiceHarness(
  options: ServiceHarnessOptions & { db: 'readonly' | 'readwrite' },
): Promise<ServiceHarness & { db: Database.Database }>;
export async function createServiceHarness(options: ServiceHarnessOptions): Promise<ServiceHarness>;
export async function createServiceHarness(
  options: ServiceHarnessOptions,
): Promise<ServiceHarness & { db?: Database.Database }> {
  const dir = await mkdtemp(join(tmpdir(), options.prefix ?? 'artifact-service-'));
  const dbPath = join(dir, 'artifacts.db');
  const blobRoot = join(dir, 'blobs');
  const clock = { t: HARNESS_T0 };
  const now = () => clock.t;
  const repo = createSqliteRepository({ path: dbPath });
  const blobs = createFsBlobStore({ root: blobRoot, hash: nodeSha256, fsync: false });
  const { policies, faults } = options;
  const service = createArtifactService({ repo, blobs, limits: options.limits, policies, now, faults });
  const db = options.db ? new Database(dbPath, { readonly: options.db === 'readonly' }) : undefined;
  const closers: (() => unknown)[] = [];
  onTestFinished(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    db?.close();
    await service.close();
    await repo.close();
    await rm(dir, { recursive: true, force: true });
  });
  return {
    dir,
    dbPath,
    blobRoot,
    clock,
    repo,
    blobs,
    service,
    db,
    retention: (deps = {}) => {
      const runPolicies = deps.policies ?? policies;
      if (!runPolicies) throw new Error('a harness without policies runs retention with retention({ policies })');
      return runRetention({ repo, blobs, now, graceMs: 0, ...deps, policies: runPolicies }, 'test');
    },
    onClose: (close) => closers.push(close),
  };
}
