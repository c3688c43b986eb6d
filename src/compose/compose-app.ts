/**
 * The composition root: the Node server, the Worker and the tests' apps all build the service and
 * its HTTP app here, from configuration plus the drivers their runtime opened. What differs between
 * runtimes comes in as `RuntimeParts`; every rule that reads configuration is applied once, here or
 * in resolveSettings.
 */
import type { JSONWebKeySet } from 'jose';
import type { BlobStore } from '../blob/blob-store.js';
import type { Config } from '../core/config.js';
import type { HashFactory } from '../core/hash.js';
import type { Logger } from '../core/logger.js';
import type { ArtifactRepository } from '../db/repository.js';
import { type App, type AppDeps, createApp } from '../http/app.js';
import { type Authenticator, createAuthenticator } from '../http/auth.js';
import type { Metrics } from '../http/metrics.js';
import { rateLimitsOf } from '../core/limits.js';
import { createRateLimiter, type RateLimiter } from '../http/rate-limit.js';
import { createArtifactService } from '../service/artifact-service.js';
import { type AuditActor, recordPolicyChange } from '../service/audit.js';
import { type FsckReport, fsck } from '../service/fsck.js';
import { createServiceOperations, type ServiceOperations } from '../service/operations.js';
import { type RetentionReport, runRetention } from '../service/retention/index.js';
import type { TusStaging } from '../service/tus-staging.js';
import type { ArtifactService, ServiceLimits, ServiceObserver } from '../service/types.js';
import type { ArtifactViews } from '../service/views/index.js';
import type { ViewSandbox } from '../service/views/sandbox.js';
import type { KeySources, ResolvedKeys } from './keys.js';
import { createRetentionRunner, retentionDepsOf } from './retention.js';
import { type ResolvedSettings, resolveSettings } from './settings.js';

/** Where the bytes and the metadata live, and how this runtime hashes a stream. */
export interface Drivers {
  repo: ArtifactRepository;
  blobs: BlobStore;
  hash: HashFactory;
}

/** What differs between runtimes. Everything else comes from the configuration. */
export interface RuntimeParts {
  /** How keys are found here (a dev secret file on Node, none on Workers), for resolveSettings. */
  keys: Omit<KeySources, 'hasJwks'>;
  /** A JWKS document of public keys (a file's contents on Node, an override on Workers). */
  jwks?: JSONWebKeySet;
  /** The service's clock (tests); puts, links and retention follow it. */
  now?: () => number;
  /** Where the service, retention and the HTTP app log (the access log among them). Default: nothing. */
  logger?: Logger;
  /** Overrides of the limits the configuration sets (the Worker caps the small-blob cache). */
  limits?: Partial<ServiceLimits>;
  observer?: ServiceObserver;
  /** Builds the rate limiter from the tenants' policies; default: per-process buckets. */
  rateLimiter?: (settings: ResolvedSettings) => RateLimiter;
  /**
   * Retention: Node shares one run among concurrent callers; a Worker runs each call on its own
   * (a request's I/O belongs to that request) in small batches.
   */
  retention?: {
    shareRuns: boolean;
    batchSize?: number;
    /** RetentionDeps.pause and .batchTargetMs: Node's service leaves requests most of the event loop during a run. */
    pause?: number;
    batchTargetMs?: number;
    /** RetentionDeps.busy while this service has puts in flight: runs in the process that serves them. */
    yieldToPuts?: boolean;
    onReport?: (report: RetentionReport) => void;
  };
  /** Prometheus metrics (Node), built once the operations exist; loaded only when they are on. */
  metrics?: (ops: ServiceOperations) => Promise<Metrics | undefined>;
  /**
   * Where PDFs are parsed and JSON documents queried, off the event loop with time and memory limits
   * (Node: a worker thread). Default: inline, without PDFs (Workers).
   */
  viewSandbox?: ViewSandbox;
  /** Who records policy changes: `pid 123` on Node, `worker` on Workers. */
  hostActorId: string;
  /**
   * Where resumable (tus) uploads stage their bytes: a folder of the data dir on Node. Without it
   * (Workers, which have no filesystem) /v1/tus is not served.
   */
  tusStaging?: TusStaging;
  /**
   * The HTTP app's runtime parts: assets, /mcp and the gateway (Node), draining, the metrics token,
   * event polling, the platform's body limit, the version.
   */
  http?: Pick<
    AppDeps,
    | 'docsAssets'
    | 'uiAssets'
    | 'isDraining'
    | 'mcp'
    | 'gateway'
    | 'metricsToken'
    | 'events'
    | 'maxRequestBodyBytes'
    | 'version'
  >;
}

/** Everything a runtime needs to serve and run the service. */
export interface ComposedApp {
  app: App;
  service: ArtifactService;
  /** The views a model reads through (the same the HTTP routes answer from). */
  views: ArtifactViews;
  ops: ServiceOperations;
  auth: Authenticator;
  settings: ResolvedSettings;
  metrics?: Metrics;
  /** Runs retention now (as POST /v1/admin/retention does). */
  retention(trigger: string, actor?: AuditActor): Promise<RetentionReport>;
  fsck(options: { verify: boolean }): Promise<FsckReport>;
  /** Records a `policy.change` when the configured policies differ from the last recorded ones. */
  recordPolicies(): Promise<unknown>;
}

/** What the service takes beyond the configuration: its policies, and the runtime's parts. */
export interface ServiceParts {
  policies: ResolvedSettings['policies'];
  /** Signs proxy links; without one only direct links (an S3 driver) can be made. */
  urlSigner?: ResolvedKeys['urlSigner'];
  now?: () => number;
  limits?: Partial<ServiceLimits>;
  viewSandbox?: ViewSandbox;
  observer?: ServiceObserver;
  logger?: Logger;
  tusStaging?: TusStaging;
}

/**
 * The ArtifactService over the drivers, with the configuration's limits, TTLs, link lifetimes and view
 * budget: the one place these settings reach the service, for composeApp and the Node embedded store.
 */
export function composeService(
  config: Config,
  drivers: Pick<Drivers, 'repo' | 'blobs'>,
  parts: ServiceParts,
): ArtifactService {
  return createArtifactService({
    repo: drivers.repo,
    blobs: drivers.blobs,
    ...(parts.now ? { now: parts.now } : {}),
    limits: {
      maxArtifactBytes: config.maxArtifactBytes,
      defaultTtlSeconds: config.defaultTtlSeconds,
      maxTtlSeconds: config.maxTtlSeconds,
      touchFlushMs: config.touchFlushMs,
      smallBlobCacheBytes: config.smallBlobCacheBytes,
      multipartUploadBytes: config.multipartUploadBytes,
      uploadPartBytes: config.uploadPartBytes,
      ...parts.limits,
    },
    links: {
      ...(parts.urlSigner ? { signer: parts.urlSigner } : {}),
      defaultTtlSeconds: config.urlDefaultTtlSeconds,
      maxTtlSeconds: config.urlMaxTtlSeconds,
    },
    policies: parts.policies,
    views: { budget: config.viewBudgetChars, ...(parts.viewSandbox ? { sandbox: parts.viewSandbox } : {}) },
    ...(parts.observer ? { observer: parts.observer } : {}),
    ...(parts.logger ? { logger: parts.logger } : {}),
    ...(parts.tusStaging ? { tusStaging: parts.tusStaging } : {}),
  });
}

/**
 * Where the database wakes event streams (Postgres's LISTEN/NOTIFY), how often a stream reads the
 * outbox anyway: a notification lost with a connection is late by at most this.
 */
const EVENTS_SAFETY_POLL_MS = 5000;

/** Builds the service, its operations, the authenticator and the HTTP app over the given drivers. */
export async function composeApp(config: Config, drivers: Drivers, runtime: RuntimeParts): Promise<ComposedApp> {
  const { repo, blobs, hash } = drivers;
  const jwks = runtime.jwks;
  const settings = await resolveSettings(config, {
    ...runtime.keys,
    hasJwks: jwks !== undefined || Boolean(config.jwksUrl || config.jwksFile),
  });
  const { keys, policies } = settings;
  const service = composeService(config, drivers, {
    policies,
    urlSigner: keys.urlSigner,
    ...(runtime.now ? { now: runtime.now } : {}),
    ...(runtime.limits ? { limits: runtime.limits } : {}),
    ...(runtime.viewSandbox ? { viewSandbox: runtime.viewSandbox } : {}),
    ...(runtime.observer ? { observer: runtime.observer } : {}),
    ...(runtime.logger ? { logger: runtime.logger } : {}),
    ...(runtime.tusStaging ? { tusStaging: runtime.tusStaging } : {}),
  });
  const { views } = service;
  const ops = createServiceOperations({ repo, blobs, policies, ...(runtime.now ? { now: runtime.now } : {}) });
  const metrics = await runtime.metrics?.(ops);
  const auth = createAuthenticator({
    hmacSecrets: keys.hmacSecrets,
    jwks,
    jwksUrl: config.jwksUrl,
    issuer: config.jwtIssuer,
    audience: config.jwtAudience,
    apiKeys: ops,
    ...(keys.signatureHint ? { signatureHint: keys.signatureHint } : {}),
  });
  const retentionDeps = retentionDepsOf(config, settings, drivers, {
    ...(runtime.now ? { now: runtime.now } : {}),
    ...(runtime.logger ? { logger: runtime.logger } : {}),
    ...(runtime.retention?.batchSize ? { batchSize: runtime.retention.batchSize } : {}),
    ...(runtime.retention?.pause ? { pause: runtime.retention.pause } : {}),
    ...(runtime.retention?.batchTargetMs ? { batchTargetMs: runtime.retention.batchTargetMs } : {}),
    ...(runtime.retention?.yieldToPuts ? { busy: () => service.putsInFlight() > 0 } : {}),
    ...(runtime.tusStaging ? { tusStaging: runtime.tusStaging } : {}),
  });
  const run =
    runtime.retention?.shareRuns === false
      ? (trigger: string, actor?: AuditActor) => runRetention(retentionDeps, trigger, actor)
      : createRetentionRunner(retentionDeps);
  const retention = async (trigger: string, actor?: AuditActor) => {
    const report = await run(trigger, actor);
    runtime.retention?.onReport?.(report);
    return report;
  };
  const check = (o: { verify: boolean }) =>
    fsck({ repo, blobs, hash, verify: o.verify, graceMs: config.gcGraceSeconds * 1000 });
  const rateLimiter = runtime.rateLimiter
    ? runtime.rateLimiter(settings)
    : createRateLimiter({ limitsOf: (tenantId) => rateLimitsOf(policies(tenantId)) });
  const recordPolicies = () =>
    recordPolicyChange(
      repo,
      { role: 'host', actorKind: 'config', actorId: runtime.hostActorId },
      { base: settings.base, tenants: settings.tenantPolicies },
    );
  const app = createApp({
    ...runtime.http,
    ...(runtime.logger ? { logger: runtime.logger } : {}),
    service,
    views,
    ops,
    auth,
    corsOrigins: config.corsOrigins,
    urlSigner: keys.urlSigner,
    publicUrl: config.publicUrl,
    ...(runtime.now ? { now: runtime.now } : {}),
    retention,
    fsck: check,
    rateLimiter,
    policies,
    ...(metrics ? { metrics } : {}),
    events: {
      heartbeatMs: config.eventsHeartbeatSeconds * 1000,
      // Where the database notifies new events (Postgres), streams read when woken; the timer is a safety net.
      ...(drivers.repo.waitForEvents
        ? { wake: () => drivers.repo.waitForEvents!(), pollMs: EVENTS_SAFETY_POLL_MS }
        : {}),
      ...runtime.http?.events,
    },
    maxRequestBodyBytes: config.maxRequestBodyBytes || runtime.http?.maxRequestBodyBytes,
  });
  return {
    app,
    service,
    views,
    ops,
    auth,
    settings,
    ...(metrics ? { metrics } : {}),
    retention,
    fsck: check,
    recordPolicies,
  };
}
