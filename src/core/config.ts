import { z } from 'zod';
import {
  CleanupStrategySchema,
  createPolicies,
  NO_RATE_LIMITS,
  policyProblems,
  PRODUCTION_RATE_LIMITS,
  PolicyOverrideSchema,
  TenantPoliciesSchema,
  type Policy,
  type RateLimitPolicy,
  type TenantPolicies,
} from './policy.js';
import { closestName, didYouMean } from './suggest.js';

const MiB = 1024 * 1024;

const intFromEnv = (def: number) => z.coerce.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).default(def);
/** Unset: the environment's default (see basePolicy). */
const optionalLimit = z.coerce.number().nonnegative().max(Number.MAX_SAFE_INTEGER).optional();
const positiveFromEnv = (def: number) => z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER).default(def);
const list = z
  .string()
  .default('')
  .transform((s) =>
    s
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean),
  );

/**
 * Every setting of the service, parsed from the environment (ARTIFACT_STORE_*). Defaults run on one
 * machine with nothing else installed. docs/configuration.md lists this schema (a test checks every setting is there).
 */
const PORT_RULE = 'must be a whole number from 0 to 65535 (0 takes any free port)';

export const ConfigSchema = z.object({
  env: z.enum(['development', 'production', 'test']).default('development'),
  host: z.string().default('127.0.0.1'),
  port: z
    .preprocess(
      // An empty value is a mistake, not port 0.
      (v) => (typeof v === 'string' && v.trim() === '' ? Number.NaN : v),
      z.coerce
        .number({ error: PORT_RULE })
        .int({ error: PORT_RULE })
        .min(0, { error: PORT_RULE })
        .max(65535, { error: PORT_RULE }),
    )
    .default(8787),
  dataDir: z.string().default('./data'),
  /** SQLite file; defaults to {dataDir}/artifacts.db. */
  dbPath: z.string().optional(),
  /**
   * postgres://user:password@host:port/database (TLS from `sslmode` in it): the metadata in Postgres,
   * shared by any number of replicas, instead of SQLite in the data dir.
   */
  databaseUrl: z.string().optional(),
  /** Postgres: connections in each process's pool. */
  databasePoolSize: z.coerce.number().int().min(1).max(1000).default(10),
  /** Postgres: how long a request waits for a free connection before answering 503 with Retry-After. */
  databasePoolWaitMs: z.coerce.number().int().min(1).max(600_000).default(5000),
  blobDriver: z.enum(['fs', 'memory', 's3']).default('fs'),
  /** Blob folder of the fs driver; defaults to {dataDir}/blobs. */
  blobDir: z.string().optional(),
  /** S3 driver: bucket (required with blobDriver s3), region, endpoint for MinIO / Ceph RGW / R2. */
  s3Bucket: z.string().optional(),
  s3Region: z.string().default('us-east-1'),
  s3Endpoint: z.url().optional(),
  /** Key prefix inside the bucket, e.g. "artifacts/". */
  s3Prefix: z.string().default(''),
  /** Path-style URLs (bucket in the path); default on when an endpoint is set. */
  s3ForcePathStyle: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional(),
  /** Static credentials; unset = the AWS default chain (env, profile, instance role). */
  s3AccessKeyId: z.string().optional(),
  s3SecretAccessKey: z.string().optional(),
  /** CloudFront in front of the bucket: direct links become CloudFront signed URLs. All three or none. */
  cdnUrl: z.url().optional(),
  cdnKeyPairId: z.string().optional(),
  cdnPrivateKeyFile: z.string().optional(),
  /** The CloudFront distribution's id: purges then invalidate the blob's path. */
  cdnDistributionId: z.string().optional(),
  maxArtifactBytes: positiveFromEnv(50 * MiB),
  /** Direct uploads larger than this come in parts, where the blob store takes parts (s3). */
  multipartUploadBytes: positiveFromEnv(64 * MiB),
  /** The part size of direct uploads in parts (at least 5 MiB; raised for files over 10,000 parts). */
  uploadPartBytes: positiveFromEnv(16 * MiB),
  /** Largest request body the platform in front lets through (0 = none; the Worker defaults to 100 MB): bigger puts are told to upload directly. */
  maxRequestBodyBytes: intFromEnv(0),
  defaultTtlSeconds: positiveFromEnv(3600),
  maxTtlSeconds: positiveFromEnv(7 * 24 * 3600),
  /** Retention limits; they count references (see docs/operations.md). */
  maxSessionBytes: positiveFromEnv(500 * MiB),
  maxTraceBytes: positiveFromEnv(100 * MiB),
  maxArtifactsPerSession: positiveFromEnv(1000),
  maxArtifactsPerTrace: positiveFromEnv(100),
  /** Bytes of live references per tenant; 0 = no tenant quota. */
  maxTenantBytes: intFromEnv(0),
  cleanupStrategy: CleanupStrategySchema.default('lru'),
  /** Puts may ask for references that never expire (ttl "never"); they still count against every limit. */
  allowNoExpiry: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
  /** Seconds a named version lives unless its save says otherwise; 0 = it does not expire. */
  nameTtlSeconds: intFromEnv(0),
  /**
   * Rate limits per tenant and per token, in each process (0 = off). Unset: on in production with
   * PRODUCTION_RATE_LIMITS, off in development and tests.
   */
  tenantRequestsPerSecond: optionalLimit,
  tenantRequestBurst: optionalLimit,
  tenantBytesInFlight: optionalLimit,
  tokenRequestsPerSecond: optionalLimit,
  tokenRequestBurst: optionalLimit,
  tokenBytesInFlight: optionalLimit,
  /** Audit entries (admin and operator actions) are kept this many days; retention trims only older ones. */
  auditRetentionDays: positiveFromEnv(90),
  /** Per-tenant overrides of the policy, as JSON (from a file: ARTIFACT_STORE_TENANT_POLICIES="$(cat policies.json)"). */
  tenantPolicies: z.string().optional(),
  /**
   * Run retention in the service every this many seconds (0 = only from the CLI or the admin
   * endpoint). Processes sharing the database take turns through a lease: one of them runs it.
   */
  retentionIntervalSeconds: intFromEnv(600),
  /** Unreferenced blobs, staging objects and unfinished direct uploads younger than this are left alone. */
  gcGraceSeconds: intFromEnv(3600),
  /** Prometheus metrics at GET /metrics (off by default: recording costs small GETs a few percent). */
  metrics: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true'),
  /** When set, GET /metrics wants this bearer token (and metrics are on). */
  metricsToken: z.string().optional(),
  /** A comment line on idle event streams this often, so proxies keep them open. */
  eventsHeartbeatSeconds: positiveFromEnv(15),
  /** HS256 secrets as `kid:secret` pairs, comma separated; several at once so keys rotate. */
  jwtSecrets: list,
  /** A JWKS document (file path) with public keys (RS256, ES256, EdDSA) selected by `kid`. */
  jwksFile: z.string().optional(),
  /** An MCP gateway config ("mcpServers" JSON): mounts the gateway at /mcp/gateway and /v1/mcp/servers. */
  gatewayConfig: z.string().min(1).optional(),
  /** A JWKS URL, fetched and cached. */
  jwksUrl: z.url().optional(),
  jwtIssuer: z.string().optional(),
  jwtAudience: z.string().optional(),
  /** HMAC keys for proxy download links as `kid:secret` pairs (first signs); default: derived from the JWT secrets. */
  urlSigningKeys: list,
  /** Public origin of the service for download links, e.g. https://artifacts.example.com; default: each request's origin. */
  publicUrl: z
    .url()
    .transform((u) => u.replace(/\/+$/, ''))
    .optional(),
  /** Default and maximum lifetime of download links (S3 presigned URLs cap at 7 days). */
  urlDefaultTtlSeconds: z.coerce.number().int().positive().default(900),
  urlMaxTtlSeconds: z.coerce
    .number()
    .int()
    .positive()
    .max(7 * 24 * 3600)
    .default(7 * 24 * 3600),
  /** Browser origins allowed by CORS, comma separated; `*` for any. Empty: CORS off. */
  corsOrigins: list,
  /** Host names /mcp answers to (DNS-rebinding protection), comma separated. Default: the loopback names when listening on loopback, else any. */
  mcpAllowedHosts: list,
  logLevel: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  /** How long SIGTERM waits for in-flight transfers before closing them. */
  shutdownGraceMs: intFromEnv(30_000),
  /** SQLite busy timeout: how long a writer waits for another process's lock. */
  sqliteBusyTimeoutMs: intFromEnv(5000),
  /** SQLite's page cache (per connection); the OS page cache serves what falls out of it. */
  sqliteCacheBytes: positiveFromEnv(4 * MiB),
  /** Memory for the bytes of hot small (≤ 64 KiB) artifacts; 0 turns the cache off. */
  smallBlobCacheBytes: intFromEnv(8 * MiB),
  /** Last-accessed updates are batched and flushed at this interval (0 = write on every read). */
  touchFlushMs: intFromEnv(1000),
  /**
   * Characters a model-facing view answer (read, search, query) takes when the caller names no budget:
   * the observation guardrail's default.
   */
  viewBudgetChars: z.coerce.number().int().min(1000).max(1_000_000).default(50_000),
});

export type Config = z.infer<typeof ConfigSchema>;
export type ConfigInput = z.input<typeof ConfigSchema>;

/** Environment variable name of each setting. */
export const ENV_NAMES: Record<keyof Config, string> = {
  env: 'ARTIFACT_STORE_ENV',
  host: 'ARTIFACT_STORE_HOST',
  port: 'ARTIFACT_STORE_PORT',
  dataDir: 'ARTIFACT_STORE_DATA_DIR',
  dbPath: 'ARTIFACT_STORE_DB_PATH',
  databaseUrl: 'ARTIFACT_STORE_DATABASE_URL',
  databasePoolSize: 'ARTIFACT_STORE_DATABASE_POOL_SIZE',
  databasePoolWaitMs: 'ARTIFACT_STORE_DATABASE_POOL_WAIT_MS',
  blobDriver: 'ARTIFACT_STORE_BLOB_DRIVER',
  blobDir: 'ARTIFACT_STORE_BLOB_DIR',
  s3Bucket: 'ARTIFACT_STORE_S3_BUCKET',
  s3Region: 'ARTIFACT_STORE_S3_REGION',
  s3Endpoint: 'ARTIFACT_STORE_S3_ENDPOINT',
  s3Prefix: 'ARTIFACT_STORE_S3_PREFIX',
  s3ForcePathStyle: 'ARTIFACT_STORE_S3_FORCE_PATH_STYLE',
  s3AccessKeyId: 'ARTIFACT_STORE_S3_ACCESS_KEY_ID',
  s3SecretAccessKey: 'ARTIFACT_STORE_S3_SECRET_ACCESS_KEY',
  cdnUrl: 'ARTIFACT_STORE_CDN_URL',
  cdnKeyPairId: 'ARTIFACT_STORE_CDN_KEY_PAIR_ID',
  cdnPrivateKeyFile: 'ARTIFACT_STORE_CDN_PRIVATE_KEY_FILE',
  cdnDistributionId: 'ARTIFACT_STORE_CDN_DISTRIBUTION_ID',
  maxArtifactBytes: 'ARTIFACT_STORE_MAX_ARTIFACT_BYTES',
  maxRequestBodyBytes: 'ARTIFACT_STORE_MAX_REQUEST_BODY_BYTES',
  multipartUploadBytes: 'ARTIFACT_STORE_MULTIPART_UPLOAD_BYTES',
  uploadPartBytes: 'ARTIFACT_STORE_UPLOAD_PART_BYTES',
  defaultTtlSeconds: 'ARTIFACT_STORE_DEFAULT_TTL_SECONDS',
  maxTtlSeconds: 'ARTIFACT_STORE_MAX_TTL_SECONDS',
  jwtSecrets: 'ARTIFACT_STORE_JWT_SECRETS',
  jwksFile: 'ARTIFACT_STORE_JWKS_FILE',
  jwksUrl: 'ARTIFACT_STORE_JWKS_URL',
  jwtIssuer: 'ARTIFACT_STORE_JWT_ISSUER',
  jwtAudience: 'ARTIFACT_STORE_JWT_AUDIENCE',
  corsOrigins: 'ARTIFACT_STORE_CORS_ORIGINS',
  mcpAllowedHosts: 'ARTIFACT_STORE_MCP_ALLOWED_HOSTS',
  gatewayConfig: 'ARTIFACT_STORE_GATEWAY_CONFIG',
  urlSigningKeys: 'ARTIFACT_STORE_URL_SIGNING_KEYS',
  publicUrl: 'ARTIFACT_STORE_PUBLIC_URL',
  urlDefaultTtlSeconds: 'ARTIFACT_STORE_URL_DEFAULT_TTL_SECONDS',
  urlMaxTtlSeconds: 'ARTIFACT_STORE_URL_MAX_TTL_SECONDS',
  logLevel: 'ARTIFACT_STORE_LOG_LEVEL',
  shutdownGraceMs: 'ARTIFACT_STORE_SHUTDOWN_GRACE_MS',
  sqliteBusyTimeoutMs: 'ARTIFACT_STORE_SQLITE_BUSY_TIMEOUT_MS',
  sqliteCacheBytes: 'ARTIFACT_STORE_SQLITE_CACHE_BYTES',
  smallBlobCacheBytes: 'ARTIFACT_STORE_SMALL_BLOB_CACHE_BYTES',
  touchFlushMs: 'ARTIFACT_STORE_TOUCH_FLUSH_MS',
  viewBudgetChars: 'ARTIFACT_STORE_VIEW_BUDGET_CHARS',
  maxSessionBytes: 'ARTIFACT_STORE_MAX_SESSION_BYTES',
  maxTraceBytes: 'ARTIFACT_STORE_MAX_TRACE_BYTES',
  maxArtifactsPerSession: 'ARTIFACT_STORE_MAX_ARTIFACTS_PER_SESSION',
  maxArtifactsPerTrace: 'ARTIFACT_STORE_MAX_ARTIFACTS_PER_TRACE',
  maxTenantBytes: 'ARTIFACT_STORE_MAX_TENANT_BYTES',
  cleanupStrategy: 'ARTIFACT_STORE_CLEANUP_STRATEGY',
  allowNoExpiry: 'ARTIFACT_STORE_ALLOW_NO_EXPIRY',
  nameTtlSeconds: 'ARTIFACT_STORE_NAME_TTL_SECONDS',
  tenantPolicies: 'ARTIFACT_STORE_TENANT_POLICIES',
  tenantRequestsPerSecond: 'ARTIFACT_STORE_TENANT_REQUESTS_PER_SECOND',
  tenantRequestBurst: 'ARTIFACT_STORE_TENANT_REQUEST_BURST',
  tenantBytesInFlight: 'ARTIFACT_STORE_TENANT_BYTES_IN_FLIGHT',
  tokenRequestsPerSecond: 'ARTIFACT_STORE_TOKEN_REQUESTS_PER_SECOND',
  tokenRequestBurst: 'ARTIFACT_STORE_TOKEN_REQUEST_BURST',
  tokenBytesInFlight: 'ARTIFACT_STORE_TOKEN_BYTES_IN_FLIGHT',
  auditRetentionDays: 'ARTIFACT_STORE_AUDIT_RETENTION_DAYS',
  retentionIntervalSeconds: 'ARTIFACT_STORE_RETENTION_INTERVAL_SECONDS',
  gcGraceSeconds: 'ARTIFACT_STORE_GC_GRACE_SECONDS',
  eventsHeartbeatSeconds: 'ARTIFACT_STORE_EVENTS_HEARTBEAT_SECONDS',
  metrics: 'ARTIFACT_STORE_METRICS',
  metricsToken: 'ARTIFACT_STORE_METRICS_TOKEN',
};

/** A URL the Postgres driver takes: postgres:// or postgresql://, with a host. */
function isPostgresUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'postgres:' || url.protocol === 'postgresql:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/** A database URL as messages and logs show it: without its password. */
export function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(not a URL)';
  }
}

/** The base policy of a configuration (before per-tenant overrides). */
export function basePolicy(c: Config): Policy {
  return {
    defaultTtlSeconds: c.defaultTtlSeconds,
    maxTtlSeconds: c.maxTtlSeconds,
    maxArtifactBytes: c.maxArtifactBytes,
    maxSessionBytes: c.maxSessionBytes,
    maxTraceBytes: c.maxTraceBytes,
    maxArtifactsPerSession: c.maxArtifactsPerSession,
    maxArtifactsPerTrace: c.maxArtifactsPerTrace,
    maxTenantBytes: c.maxTenantBytes,
    cleanupStrategy: c.cleanupStrategy,
    allowNoExpiry: c.allowNoExpiry,
    nameTtlSeconds: c.nameTtlSeconds,
    ...rateLimitsOf(c),
  };
}

/** The configured rate limits; an unset one takes production's default in production, else 0 (off). */
function rateLimitsOf(c: Config): RateLimitPolicy {
  const defaults = c.env === 'production' ? PRODUCTION_RATE_LIMITS : NO_RATE_LIMITS;
  const out = { ...defaults };
  for (const key of Object.keys(defaults) as (keyof RateLimitPolicy)[]) out[key] = c[key] ?? defaults[key];
  return out;
}

/**
 * ARTIFACT_STORE_TENANT_POLICIES: a JSON object from tenant id to overrides, e.g.
 * {"acme": {"maxSessionBytes": 1073741824, "cleanupStrategy": "reject"}}.
 */
export function readTenantPolicies(value: string | undefined): TenantPolicies {
  if (!value) return {};
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch (err) {
    throw new Error(`not valid JSON (${(err as Error).message})`);
  }
  const parsed = TenantPoliciesSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    if (issue.code === 'unrecognized_keys') {
      const key = issue.keys[0]!;
      throw new Error(
        `tenant ${JSON.stringify(String(issue.path[0]))}: unknown key ${JSON.stringify(key)}.${didYouMean(key, Object.keys(PolicyOverrideSchema.shape))}`,
      );
    }
    throw new Error(`${issue.path.join('.') || 'value'}: ${issue.message}`);
  }
  return parsed.data;
}

/** The policy of each tenant under this configuration. */
export function policiesOf(c: Config): (tenantId: string) => Policy {
  return createPolicies(basePolicy(c), readTenantPolicies(c.tenantPolicies));
}

/**
 * Parses config from an environment map plus explicit overrides (CLI flags win over env). `flags`
 * names the flag each override came from, so an error names what the user typed (`--port`), not
 * the variable it stands for.
 */
export function loadConfig(
  env: Record<string, string | undefined>,
  overrides: Partial<ConfigInput> = {},
  flags: Partial<Record<keyof Config, string>> = {},
): Config {
  const fromEnv: Record<string, unknown> = {};
  for (const [key, name] of Object.entries(ENV_NAMES)) {
    const v = env[name];
    if (v !== undefined && v !== '') fromEnv[key] = v;
  }
  if (fromEnv.env === undefined && env.NODE_ENV === 'production') fromEnv.env = 'production';
  const parsed = ConfigSchema.superRefine((c, ctx) => {
    if (c.blobDriver === 's3' && !c.s3Bucket)
      ctx.addIssue({ code: 'custom', path: ['s3Bucket'], message: 'required when the blob driver is s3' });
    if (c.databaseUrl !== undefined && !isPostgresUrl(c.databaseUrl))
      ctx.addIssue({
        code: 'custom',
        path: ['databaseUrl'],
        message: 'must be a postgres:// URL, as in postgres://user:password@host:5432/database?sslmode=require',
      });
    if (c.s3Prefix && !c.s3Prefix.endsWith('/'))
      ctx.addIssue({ code: 'custom', path: ['s3Prefix'], message: 'must end with "/" (e.g. "artifacts/")' });
    const cdnParts = [c.cdnUrl, c.cdnKeyPairId, c.cdnPrivateKeyFile].filter(Boolean).length;
    if (cdnParts !== 0 && cdnParts !== 3)
      ctx.addIssue({
        code: 'custom',
        path: ['cdnUrl'],
        message:
          'set ARTIFACT_STORE_CDN_URL, ARTIFACT_STORE_CDN_KEY_PAIR_ID and ARTIFACT_STORE_CDN_PRIVATE_KEY_FILE together',
      });
    if (c.cdnDistributionId && cdnParts !== 3)
      ctx.addIssue({
        code: 'custom',
        path: ['cdnDistributionId'],
        message: 'needs the CDN itself: ARTIFACT_STORE_CDN_URL, _KEY_PAIR_ID and _PRIVATE_KEY_FILE',
      });
    if (cdnParts === 3 && c.blobDriver !== 's3')
      ctx.addIssue({ code: 'custom', path: ['cdnUrl'], message: 'a CDN needs the s3 blob driver' });
    if (c.urlDefaultTtlSeconds > c.urlMaxTtlSeconds)
      ctx.addIssue({
        code: 'custom',
        path: ['urlDefaultTtlSeconds'],
        message: 'must not exceed ARTIFACT_STORE_URL_MAX_TTL_SECONDS',
      });
    for (const [key, message] of policyProblems(basePolicy(c))) ctx.addIssue({ code: 'custom', path: [key], message });
    try {
      for (const [tenant, override] of Object.entries(readTenantPolicies(c.tenantPolicies))) {
        for (const [key, message] of policyProblems({ ...basePolicy(c), ...override }))
          ctx.addIssue({
            code: 'custom',
            path: ['tenantPolicies'],
            message: `tenant ${JSON.stringify(tenant)}: ${key} ${message}`,
          });
      }
    } catch (err) {
      ctx.addIssue({ code: 'custom', path: ['tenantPolicies'], message: (err as Error).message });
    }
    if (Boolean(c.s3AccessKeyId) !== Boolean(c.s3SecretAccessKey))
      ctx.addIssue({
        code: 'custom',
        path: ['s3AccessKeyId'],
        message: 'set both the access key id and the secret access key, or neither',
      });
  }).safeParse({ ...fromEnv, ...overrides });
  const known = new Set<string>([...Object.values(ENV_NAMES), ...OTHER_ENV_NAMES]);
  const unknown = Object.keys(env).filter((name) => name.startsWith(PREFIX) && !known.has(name));
  if (!parsed.success || unknown.length > 0) {
    const lines = [
      ...unknown.map((name) => {
        const near = closestName(
          name.slice(PREFIX.length),
          [...known].map((k) => k.slice(PREFIX.length)),
        );
        return `  ${name}: not a setting.${near ? ` Did you mean "${PREFIX}${near}"?` : ''}`;
      }),
      ...(parsed.success
        ? []
        : parsed.error.issues.map((i) => {
            const key = i.path[0] as keyof Config;
            const flag = key in overrides ? flags[key] : undefined;
            // What a flag was given is echoed; environment values are not (some are secrets).
            const got = flag ? ` (got ${JSON.stringify(overrides[key])})` : '';
            return `  ${flag ?? ENV_NAMES[key] ?? String(key)}: ${i.message}${got}`;
          })),
    ];
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return parsed.data;
}

const PREFIX = 'ARTIFACT_STORE_';

/** ARTIFACT_STORE_* variables that are not service settings: the CLI's client commands and scripts/dev-worker.ts read them. */
const OTHER_ENV_NAMES = [
  'ARTIFACT_STORE_URL',
  'ARTIFACT_STORE_TOKEN',
  'ARTIFACT_STORE_SESSION',
  'ARTIFACT_STORE_CONFIG',
  'ARTIFACT_STORE_DEV_VARS',
  'ARTIFACT_STORE_DEV_STATE',
];
