/** What a retention run is given (RetentionDeps), and what each of its phases works with (PhaseContext). */
import type { BlobStore } from '../../blob/blob-store.js';
import { type Logger, silentLogger } from '../../core/logger.js';
import type { Policy } from '../../core/policy.js';
import type { ArtifactRepository } from '../../db/repository.js';
import type { TusStaging } from '../tus-staging.js';
import { BATCH_TARGET_MS, type BatchSizer, createBatchSizer, DEFAULT_BATCH } from './batch-sizer.js';
import { createPacer, type Pacer, type RetentionPhase } from './pacing.js';
import type { RetentionReport } from './report.js';

export interface RetentionDeps {
  repo: ArtifactRepository;
  blobs: BlobStore;
  /** Each tenant's policy; tenants with overrides are listed so the scan knows the smallest limits. */
  policies: (tenantId: string) => Policy;
  /** Tenants whose policy differs from the base (the keys of ARTIFACT_STORE_TENANT_POLICIES). */
  overriddenTenants?: string[];
  now?: () => number;
  /** Unfinished direct uploads are reaped this long after they expired. */
  graceMs: number;
  /**
   * Rows per transaction, fixed. Unset, batches start at 500 and follow how long each transaction
   * of expiry and blob collection takes: doubled while one takes under half of batchTargetMs,
   * halved when one takes longer, up to 10,000 rows. Big batches write far fewer pages (an index
   * page holds many of a batch's rows), and the target keeps the write lock short: on SQLite a
   * transaction also holds the service's event loop.
   */
  batchSize?: number;
  /** The longest an unfixed batch's transaction should take (default BATCH_TARGET_MS, 50 ms). */
  batchTargetMs?: number;
  /**
   * After each transaction, wait this many times as long as it took before the next (default 0:
   * only a turn of the event loop). A process that also serves requests runs with 1: on SQLite a
   * transaction holds the event loop, and a put needs several turns of it (its file's writes, its
   * commit), so a run that took every turn would leave puts a fraction of the loop.
   */
  pause?: number;
  /**
   * Work in the same process that the run makes way for (puts in flight, in `serve`). While it
   * says true, the turn after a transaction lasts longer, until it says false or up to 3 times the
   * transaction's time (at least 10 ms): a put needs several turns of the event loop (its file's
   * writes and fsyncs, its commit), and one that met a transaction would otherwise meet the next
   * one too. The limit keeps the run going under constant writes.
   */
  busy?: () => boolean;
  /** Called as the run moves on, for progress bars. */
  onProgress?: (phase: RetentionPhase, done: number) => void;
  /** Audit entries are kept this long (default 90 days); the run trims only older ones. */
  auditKeptMs?: number;
  /** Where failures the run counts and goes past are logged (warn, with their cause); silent unless given. */
  logger?: Logger;
  /** Fault injection for tests: awaited at named points (crash, pause or fail there). */
  faults?: (point: 'gc:after-mark' | 'gc:after-delete') => Promise<void>;
  /**
   * Where this process stages resumable (tus) uploads. Without it (a CLI run, another runtime) an
   * expired tus upload is left for the service's own run, which can drop its staged file.
   */
  tusStaging?: Pick<TusStaging, 'discard'>;
}

/** The name of each phase in the run's table (src/service/retention/index.ts), also its log lines' `phase`. */
export type PhaseName = RetentionPhase | 'unfinished' | 'events' | 'audit';

/** What a phase works with. A phase adds what it did to `report`, and paces itself through `pace`. */
export interface PhaseContext {
  readonly deps: RetentionDeps;
  /** The run's clock (deps.now, or Date.now). */
  readonly now: () => number;
  /** Rows per transaction in the phases whose batches do not follow their time. */
  readonly batch: number;
  /** A new batch size for a phase whose batches follow their transactions' time. */
  sizer(): BatchSizer;
  readonly pace: Pacer;
  readonly logger: Logger;
  /** What the run has done so far. */
  readonly report: RetentionReport;
}

/** The context of a run with these deps, adding to `report`. */
export function createPhaseContext(deps: RetentionDeps, report: RetentionReport): PhaseContext {
  const targetMs = deps.batchTargetMs ?? BATCH_TARGET_MS;
  return {
    deps,
    now: deps.now ?? Date.now,
    batch: Math.max(1, deps.batchSize ?? DEFAULT_BATCH),
    sizer: () => createBatchSizer(deps.batchSize, targetMs),
    pace: createPacer(deps),
    logger: deps.logger ?? silentLogger,
    report,
  };
}

/** One phase of the run: its name, and what it does. */
export interface Phase {
  readonly name: PhaseName;
  run(ctx: PhaseContext): Promise<void>;
}
