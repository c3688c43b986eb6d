/**
 * The service on one Worker env's bindings: D1 for metadata, R2 for bytes, composed by the same
 * composeApp as on Node. What `fetch` and `scheduled` run, and what the workerd tests drive.
 */
import type { JSONWebKeySet } from 'jose';
import { digestStreamSha256 } from '../blob/digest-stream-hash.js';
import { createR2BlobStore } from '../blob/r2.js';
import { composeApp } from '../compose/compose-app.js';
import type { Config } from '../core/config.js';
import { createD1Repository } from '../db/d1.js';
import type { ArtifactRepository } from '../db/repository.js';
import type { App } from '../http/app.js';
import { createJsonLogger, type Logger } from '../core/logger.js';
import type { EventStreamSettings } from '../http/routes/events.js';
import type { AuditActor } from '../service/audit.js';
import type { ServiceOperations } from '../service/operations.js';
import type { RetentionReport } from '../service/retention/index.js';
import type { ArtifactService, ServiceLimits } from '../service/types.js';
import type { BlobStore } from '../blob/blob-store.js';
import { WORKERS_BODY_LIMIT, type WorkerEnv, workerConfig } from './config.js';
import { r2Presigner } from './r2-presigner.js';
import { workerRateLimiter } from './rate-limiter.js';

/** What tests (and embedders) set without going through env. */
export interface WorkerOverrides {
  limits?: Partial<ServiceLimits>;
  /** The service's clock; puts then take their time from it rather than from D1's. */
  now?: () => number;
  logger?: Logger;
  /** A JWKS document of public keys (instead of, or besides, ARTIFACT_STORE_JWKS_URL). */
  jwks?: JSONWebKeySet;
  events?: EventStreamSettings;
}

/** One isolate's service: the app `fetch` serves, and what the cron trigger runs. */
export interface WorkerApp {
  app: App;
  service: ArtifactService;
  ops: ServiceOperations;
  repo: ArtifactRepository;
  blobs: BlobStore;
  retention(trigger: string, actor?: AuditActor): Promise<RetentionReport>;
  /** Records a policy change when the vars' policies differ from the last recorded ones (cron). */
  recordPolicies(): Promise<unknown>;
  logger: Logger;
  config: Config;
}

/** An isolate has 128 MB: the small-blob cache gets at most 8 MiB (the default), whatever the setting. */
const MAX_SMALL_BLOB_CACHE_BYTES = 8 * 1024 * 1024;

export async function createWorkerApp(env: WorkerEnv, overrides: WorkerOverrides = {}): Promise<WorkerApp> {
  const config = workerConfig(env);
  const logger = overrides.logger ?? createJsonLogger(config.logLevel, (line) => console.log(line));
  const repo = createD1Repository({ db: env.DB, clock: overrides.now ? 'caller' : 'database' });
  const blobs = createR2BlobStore({
    bucket: env.BLOBS,
    hash: digestStreamSha256,
    prefix: config.s3Prefix,
    presigner: r2Presigner(env),
  });
  const composed = await composeApp(
    config,
    { repo, blobs, hash: digestStreamSha256 },
    {
      keys: {
        howToSetKeys:
          'set the secret ARTIFACT_STORE_JWT_SECRETS (kid:secret,..., `wrangler secret put`; .dev.vars for `npm run dev:worker`) or the var ARTIFACT_STORE_JWKS_URL.',
      },
      ...(overrides.jwks ? { jwks: overrides.jwks } : {}),
      ...(overrides.now ? { now: overrides.now } : {}),
      // Flushed by waitUntil after each response (touchFlushMs): a timer may never fire once a request is done.
      limits: {
        smallBlobCacheBytes: Math.min(config.smallBlobCacheBytes, MAX_SMALL_BLOB_CACHE_BYTES),
        ...overrides.limits,
      },
      rateLimiter: ({ policies }) => workerRateLimiter(env, config, policies),
      // Runs are not shared between requests as on Node: a request's I/O belongs to that request, and
      // concurrent runs are safe anyway (each step re-checks its condition in its own batch). Batches
      // of 100 keep a step's D1 queries and R2 calls well under the per-invocation caps.
      retention: { shareRuns: false, batchSize: 100 },
      hostActorId: 'worker',
      logger,
      http: {
        maxRequestBodyBytes: WORKERS_BODY_LIMIT,
        // SSE polls the D1 outbox (every isolate sees every write there). Once a second is enough for a
        // UI, and a stream ends after 15 minutes, within the per-invocation query cap; clients resume
        // with Last-Event-ID.
        events: { pollMs: 1000, maxPolls: 900, ...overrides.events },
        // No /mcp: MCP sessions live in one process's memory, and a Worker's requests land on many
        // isolates. `artifact-store mcp --url` (stdio) reaches the Worker's API instead.
      },
    },
  );
  const { app, service, ops, retention, recordPolicies } = composed;
  return { app, service, ops, repo, blobs, retention, recordPolicies, logger, config };
}
