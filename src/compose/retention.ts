import type { BlobStore } from '../blob/blob-store.js';
import type { Config } from '../core/config.js';
import type { ArtifactRepository } from '../db/repository.js';
import type { AuditActor } from '../service/audit.js';
import { type RetentionDeps, type RetentionReport, runRetention } from '../service/retention/index.js';
import type { ResolvedSettings } from './settings.js';

/** What a retention run needs under this configuration. */
export function retentionDepsOf(
  config: Config,
  settings: Pick<ResolvedSettings, 'policies' | 'overriddenTenants'>,
  drivers: { repo: ArtifactRepository; blobs: BlobStore },
  extra: Partial<RetentionDeps> = {},
): RetentionDeps {
  return {
    repo: drivers.repo,
    blobs: drivers.blobs,
    policies: settings.policies,
    overriddenTenants: settings.overriddenTenants,
    graceMs: config.gcGraceSeconds * 1000,
    auditKeptMs: config.auditRetentionDays * 86_400_000,
    ...extra,
  };
}

/** Runs retention; a call while a run is in progress gets that run's report (the run's starter is audited). */
export function createRetentionRunner(
  deps: RetentionDeps,
): (trigger: string, actor?: AuditActor) => Promise<RetentionReport> {
  let inFlight: Promise<RetentionReport> | undefined;
  return (trigger, actor) => {
    inFlight ??= runRetention(deps, trigger, actor).finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };
}
