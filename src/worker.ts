/**
 * The Cloudflare Workers entry: the same Hono app as `npm start`, on D1 (metadata) and R2 (bytes).
 * Only Workers-safe modules are imported from here: the Node drivers (better-sqlite3, fs, node:crypto
 * streams) stay behind their seams in src/node.ts and out of this bundle (scripts/worker-size.ts
 * checks).
 *
 *   fetch      the HTTP API, exactly as on Node (minus /mcp, /metrics and /docs: see the README)
 *   scheduled  the cron trigger of wrangler.toml: one retention run, the same function as
 *              `artifact-store retention run` and POST /v1/admin/retention
 */
import { S3Client } from '@aws-sdk/client-s3';
import { digestStreamSha256 } from './blob/digest-stream-hash.js';
import { createR2BlobStore, type R2BucketLike } from './blob/r2.js';
import { s3Presigner } from './blob/s3-presign.js';
import { basePolicy, ENV_NAMES, loadConfig, policiesOf, readTenantPolicies, type Config } from './core/config.js';
import { createD1Repository, type D1DatabaseLike } from './db/d1.js';
import { createApp } from './http/app.js';
import { createAuthenticator } from './http/auth.js';
import type { JSONWebKeySet } from 'jose';
import { createJsonLogger, type Logger } from './http/logger.js';
import type { EventStreamSettings } from './http/routes/events.js';
import { resolveKeys } from './http/keys.js';
import { createArtifactService, type ServiceLimits } from './service/artifact-service.js';
import { runRetention, type RetentionReport } from './service/retention.js';
import { createRateLimiter, rateLimitsOf, type RateLimitBinding } from './http/rate-limit.js';
import type { Policy } from './core/policy.js';
import { recordPolicyChange, type AuditActor } from './service/audit.js';
import { fsck } from './service/fsck.js';

/** Bindings, vars and secrets (wrangler.toml names them; secrets are set with `wrangler secret put`). */
export interface WorkerEnv {
  DB: D1DatabaseLike;
  BLOBS: R2BucketLike;
  /** Secret. HS256 keys as `kid:secret` pairs (at least 32 characters each). */
  ARTIFACT_STORE_JWT_SECRETS?: string;
  /** Secret (optional). Keys of proxy download links; default: derived from the JWT secrets. */
  ARTIFACT_STORE_URL_SIGNING_KEYS?: string;
  /**
   * R2's S3 API, for `direct` links and direct uploads (presigned URLs): the bucket's name and the
   * account id (or a full endpoint) are vars, the access key pair is secret. All unset: downloads go
   * through the Worker and direct uploads are refused.
   */
  R2_BUCKET_NAME?: string;
  R2_ACCOUNT_ID?: string;
  R2_S3_ENDPOINT?: string;
  R2_ACCESS_KEY_ID?: string;
  R2_SECRET_ACCESS_KEY?: string;
  /**
   * Rate Limiting API bindings (wrangler.toml `[[ratelimits]]`): each tenant's and each token's
   * requests, counted across isolates. Unset: those rates are counted per isolate.
   */
  TENANT_RATE_LIMITER?: RateLimitBinding;
  TOKEN_RATE_LIMITER?: RateLimitBinding;
  /** Every other ARTIFACT_STORE_* setting of the README's configuration table, as vars. */
  [name: string]: unknown;
}

interface ExecutionContextLike {
  waitUntil(promise: Promise<unknown>): void;
}

interface ScheduledControllerLike {
  readonly cron: string;
  readonly scheduledTime: number;
}

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

/**
 * Settings that mean nothing on Workers: set, they are a mistake worth refusing loudly (an S3 key
 * pair that silently did nothing would leave direct links off without a word). R2's S3 API has its
 * own names (R2_*); ARTIFACT_STORE_S3_PREFIX is the key prefix inside the R2 bucket.
 */
const NODE_ONLY = [
  'host', 'port', 'dataDir', 'dbPath', 'sqliteBusyTimeoutMs', 'blobDriver', 'blobDir',
  's3Bucket', 's3Region', 's3Endpoint', 's3ForcePathStyle', 's3AccessKeyId', 's3SecretAccessKey',
  'cdnUrl', 'cdnKeyPairId', 'cdnPrivateKeyFile', 'cdnDistributionId',
  'jwksFile', 'metrics', 'metricsToken', 'retentionIntervalSeconds', 'shutdownGraceMs', 'mcpAllowedHosts',
] as const;

/** Cloudflare's request body limit on the Free and Pro plans (Business: 200 MB, Enterprise: 500 MB). */
const WORKERS_BODY_LIMIT = 100_000_000;

/** The ARTIFACT_STORE_* strings of a Worker env (bindings and other values left out). */
function stringVars(env: WorkerEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (typeof v === 'string') out[k] = v;
  return out;
}

function workerConfig(env: WorkerEnv): Config {
  const vars = stringVars(env);
  const set = NODE_ONLY.map((key) => ENV_NAMES[key]).filter((name) => vars[name]);
  if (set.length > 0) throw new Error(`Invalid configuration: ${set.join(', ')} do not apply on Workers (D1 and R2 are bindings, R2's S3 API is set with R2_*, JWKS comes from ARTIFACT_STORE_JWKS_URL, the schedule is the cron trigger).`);
  return loadConfig(vars, { env: 'production' });
}

function r2Presigner(env: WorkerEnv) {
  const { R2_BUCKET_NAME: bucket, R2_ACCOUNT_ID: account, R2_ACCESS_KEY_ID: accessKeyId, R2_SECRET_ACCESS_KEY: secretAccessKey } = env;
  const endpoint = env.R2_S3_ENDPOINT || (account ? `https://${account}.r2.cloudflarestorage.com` : undefined);
  const parts = [bucket, endpoint, accessKeyId, secretAccessKey];
  if (parts.every((p) => !p)) return undefined;
  if (!parts.every(Boolean)) throw new Error('Invalid configuration: R2 presigning needs R2_BUCKET_NAME, R2_ACCOUNT_ID (or R2_S3_ENDPOINT), R2_ACCESS_KEY_ID and R2_SECRET_ACCESS_KEY together.');
  const client = new S3Client({ region: 'auto', endpoint, forcePathStyle: true, credentials: { accessKeyId: accessKeyId!, secretAccessKey: secretAccessKey! } });
  return s3Presigner(client, bucket!);
}

/** Requests per second → the bindings' period (wrangler.toml: `simple = { limit, period = 10 }`). */
const RATE_LIMIT_PERIOD_SECONDS = 10;

/**
 * Request rates across isolates through the Rate Limiting API bindings when they are bound (their
 * limit is wrangler.toml's, the same for every tenant); a tenant whose policy overrides a rate, and
 * every bytes-in-flight budget, are counted in this isolate's buckets.
 */
function workerRateLimiter(env: WorkerEnv, config: Config, policies: (tenantId: string) => Policy) {
  const overrides = readTenantPolicies(config.tenantPolicies);
  const covers = (tenantId: string) => {
    const o = overrides[tenantId] ?? {};
    return {
      tenant: env.TENANT_RATE_LIMITER !== undefined && o.tenantRequestsPerSecond === undefined && o.tenantRequestBurst === undefined,
      token: env.TOKEN_RATE_LIMITER !== undefined && o.tokenRequestsPerSecond === undefined && o.tokenRequestBurst === undefined,
    };
  };
  const limitsOf = (tenantId: string) => {
    const limits = rateLimitsOf(policies(tenantId));
    const shared = covers(tenantId);
    // What a binding counts is not counted again here.
    return {
      tenant: shared.tenant ? { ...limits.tenant, requestsPerSecond: 0 } : limits.tenant,
      token: shared.token ? { ...limits.token, requestsPerSecond: 0 } : limits.token,
    };
  };
  const bound = env.TENANT_RATE_LIMITER !== undefined || env.TOKEN_RATE_LIMITER !== undefined;
  return createRateLimiter({
    limitsOf,
    ...(bound ? { shared: { tenant: env.TENANT_RATE_LIMITER, token: env.TOKEN_RATE_LIMITER, periodSeconds: RATE_LIMIT_PERIOD_SECONDS, covers } } : {}),
  });
}

/** The service on one env's bindings: what `fetch` and `scheduled` run, and what the workerd tests drive. */
export async function createWorkerApp(env: WorkerEnv, overrides: WorkerOverrides = {}) {
  const config = workerConfig(env);
  const logger = overrides.logger ?? createJsonLogger(config.logLevel, (line) => console.log(line));
  const { hmacSecrets: secrets, urlSigner } = await resolveKeys(config, {
    hasJwks: overrides.jwks !== undefined || Boolean(config.jwksUrl),
    howToSetKeys: 'set the secret ARTIFACT_STORE_JWT_SECRETS (kid:secret,..., `wrangler secret put`; .dev.vars for `npm run dev:worker`) or the var ARTIFACT_STORE_JWKS_URL.',
  });
  const repo = createD1Repository({ db: env.DB, clock: overrides.now ? 'caller' : 'database' });
  const blobs = createR2BlobStore({ bucket: env.BLOBS, hash: digestStreamSha256, prefix: config.s3Prefix, presigner: r2Presigner(env) });
  const policies = policiesOf(config);
  const service = createArtifactService({
    repo,
    blobs,
    now: overrides.now,
    limits: {
      maxArtifactBytes: config.maxArtifactBytes,
      defaultTtlSeconds: config.defaultTtlSeconds,
      maxTtlSeconds: config.maxTtlSeconds,
      // Flushed by waitUntil after each response: a timer may never fire once a request is done.
      touchFlushMs: config.touchFlushMs,
      // An isolate has 128 MB: at most 8 MiB (the default), whatever the setting.
      smallBlobCacheBytes: Math.min(config.smallBlobCacheBytes, 8 * 1024 * 1024),
      ...overrides.limits,
    },
    links: { signer: urlSigner, defaultTtlSeconds: config.urlDefaultTtlSeconds, maxTtlSeconds: config.urlMaxTtlSeconds },
    policies,
  });
  const auth = createAuthenticator({ hmacSecrets: secrets, jwks: overrides.jwks, jwksUrl: config.jwksUrl, issuer: config.jwtIssuer, audience: config.jwtAudience, repo });
  // Runs are not shared between requests as on Node: a request's I/O belongs to that request, and
  // concurrent runs are safe anyway (each step re-checks its condition in its own batch). Batches
  // of 100 keep a step's D1 queries and R2 calls well under the per-invocation caps.
  const retention = (trigger: string, actor?: AuditActor): Promise<RetentionReport> =>
    runRetention({ repo, blobs, policies, overriddenTenants: Object.keys(readTenantPolicies(config.tenantPolicies)), graceMs: config.gcGraceSeconds * 1000, auditKeptMs: config.auditRetentionDays * 86_400_000, now: overrides.now, batchSize: 100 }, trigger, actor);
  const rateLimiter = workerRateLimiter(env, config, policies);
  const check = (o: { verify: boolean }) => fsck({ repo, blobs, hash: digestStreamSha256, verify: o.verify, graceMs: config.gcGraceSeconds * 1000 });
  /** Policies come from vars: the cron records a change since the last recorded ones. */
  const recordPolicies = () => recordPolicyChange(repo, { role: 'host', actorKind: 'config', actorId: 'worker' }, { base: basePolicy(config), tenants: readTenantPolicies(config.tenantPolicies) });
  const app = createApp({
    service,
    repo,
    blobs,
    auth,
    logger,
    corsOrigins: config.corsOrigins,
    urlSigner,
    publicUrl: config.publicUrl,
    maxRequestBodyBytes: config.maxRequestBodyBytes || WORKERS_BODY_LIMIT,
    retention,
    fsck: check,
    rateLimiter,
    policies,
    now: overrides.now,
    // SSE polls the D1 outbox (every isolate sees every write there). Once a second is enough for a
    // UI, and a stream ends after 15 minutes, within the per-invocation query cap; clients resume
    // with Last-Event-ID.
    events: { heartbeatMs: config.eventsHeartbeatSeconds * 1000, pollMs: 1000, maxPolls: 900, ...overrides.events },
    // No /mcp: MCP sessions live in one process's memory, and a Worker's requests land on many
    // isolates. `artifact-store mcp --url` (stdio) reaches the Worker's API instead.
  });
  return { app, service, repo, blobs, retention, recordPolicies, logger, config };
}

export type WorkerApp = Awaited<ReturnType<typeof createWorkerApp>>;

// One service per isolate, rebuilt if the runtime hands over a different env.
let current: { env: WorkerEnv; app: Promise<WorkerApp> } | undefined;
function appFor(env: WorkerEnv): Promise<WorkerApp> {
  if (current?.env !== env) {
    const app = createWorkerApp(env);
    current = { env, app };
    // A bad configuration is reported on every request until it is fixed, not cached forever.
    app.catch(() => {
      if (current?.app === app) current = undefined;
    });
  }
  return current.app;
}

/** The details go to the Worker's logs (`wrangler tail`), not to whoever asked. */
function misconfigured(err: unknown): Response {
  console.error(err instanceof Error ? err.message : String(err));
  return Response.json({ code: 'backend_unavailable', message: "The service is misconfigured; its operator can see why in the Worker's logs (wrangler tail)." }, { status: 503 });
}

export default {
  async fetch(request: Request, env: WorkerEnv, ctx: ExecutionContextLike): Promise<Response> {
    let w: WorkerApp;
    try {
      w = await appFor(env);
    } catch (err) {
      return misconfigured(err);
    }
    const response = await w.app.fetch(request, env, ctx as never);
    ctx.waitUntil(w.service.flush());
    return response;
  },

  async scheduled(controller: ScheduledControllerLike, env: WorkerEnv, ctx: ExecutionContextLike): Promise<void> {
    const w = await appFor(env);
    const run = w.recordPolicies().then(() => w.retention(`cron ${controller.cron}`)).then(
      (report) => w.logger.info('retention run', { ...report }),
      (err: unknown) => {
        w.logger.error('retention run failed', { error: err instanceof Error ? err.message : String(err) });
        throw err;
      },
    );
    ctx.waitUntil(run);
    await run;
  },
};
