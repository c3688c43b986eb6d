/**
 * Retention on a timer, in a process that keeps a data dir open: the server's and the embedded store's. Processes sharing the database take turns through the `retention` lease: its holder
 * runs every tick and renews it for two intervals; the others skip until it lapses (its holder stopped
 * or died) or is given up.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { ArtifactRepository } from '../db/repository.js';
import type { Logger } from '../core/logger.js';
import type { RetentionReport } from '../service/retention/index.js';

/** The lease whose holder runs the scheduled retention among processes sharing the database. */
export const RETENTION_LEASE = 'retention';

export interface RetentionSchedule {
  /** Stops the timer, waits for a run in progress, and gives up the lease. Idempotent. */
  stop(): Promise<void>;
}

/** Runs `run('schedule')` every `intervalSeconds` (0: never) while this process holds the lease. */
export function scheduleRetention(options: {
  repo: Pick<ArtifactRepository, 'claimLease' | 'releaseLease'>;
  intervalSeconds: number;
  run: (trigger: string) => Promise<RetentionReport>;
  logger: Logger;
}): RetentionSchedule {
  const { repo, run, logger } = options;
  const intervalMs = options.intervalSeconds * 1000;
  if (intervalMs <= 0) return { stop: async () => {} };
  const holder = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const claim = () => repo.claimLease(RETENTION_LEASE, holder, Date.now() + 2 * intervalMs, Date.now());
  const scheduled = async () => {
    if (!(await claim())) {
      logger.debug('retention run skipped: another process holds the lease');
      return;
    }
    const report = await run('schedule');
    logger.info('retention run', { ...report });
    await claim();
  };
  let inProgress: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    inProgress ??= scheduled()
      .catch((err) => logger.error('retention run failed', { error: err instanceof Error ? err.message : String(err) }))
      .finally(() => {
        inProgress = undefined;
      });
  }, intervalMs);
  // The schedule never keeps the process alive.
  timer.unref();
  let stopping: Promise<void> | undefined;
  return {
    stop: () =>
      (stopping ??= (async () => {
        clearInterval(timer);
        await inProgress;
        await repo.releaseLease(RETENTION_LEASE, holder).catch(() => {});
      })()),
  };
}
