/** A Worker's configuration: its bindings, vars and secrets, read into the same Config as on Node. */
import { type Config, ENV_NAMES, loadConfig } from '../core/config.js';
import type { D1DatabaseLike } from '../db/d1.js';
import type { R2BucketLike } from '../blob/r2.js';
import type { RateLimitBinding } from '../http/rate-limit.js';

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
  /** Every other ARTIFACT_STORE_* setting of docs/configuration.md, as vars. */
  [name: string]: unknown;
}

/**
 * Settings that mean nothing on Workers: set, they are a mistake worth refusing loudly (an S3 key
 * pair that silently did nothing would leave direct links off without a word). R2's S3 API has its
 * own names (R2_*); ARTIFACT_STORE_S3_PREFIX is the key prefix inside the R2 bucket.
 */
const NODE_ONLY = [
  'host',
  'port',
  'dataDir',
  'dbPath',
  'sqliteBusyTimeoutMs',
  'sqliteCacheBytes',
  'blobDriver',
  'blobDir',
  's3Bucket',
  's3Region',
  's3Endpoint',
  's3ForcePathStyle',
  's3AccessKeyId',
  's3SecretAccessKey',
  'cdnUrl',
  'cdnKeyPairId',
  'cdnPrivateKeyFile',
  'cdnDistributionId',
  'jwksFile',
  'metrics',
  'metricsToken',
  'retentionIntervalSeconds',
  'shutdownGraceMs',
  'mcpAllowedHosts',
] as const;

/** Cloudflare's request body limit on the Free and Pro plans (Business: 200 MB, Enterprise: 500 MB). */
export const WORKERS_BODY_LIMIT = 100_000_000;

/** The ARTIFACT_STORE_* strings of a Worker env (bindings and other values left out). */
function stringVars(env: WorkerEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (typeof v === 'string') out[k] = v;
  return out;
}

export function workerConfig(env: WorkerEnv): Config {
  const vars = stringVars(env);
  const set = NODE_ONLY.map((key) => ENV_NAMES[key]).filter((name) => vars[name]);
  if (set.length > 0)
    throw new Error(
      `Invalid configuration: ${set.join(', ')} do not apply on Workers (D1 and R2 are bindings, R2's S3 API is set with R2_*, JWKS comes from ARTIFACT_STORE_JWKS_URL, the schedule is the cron trigger).`,
    );
  return loadConfig(vars, { env: 'production' });
}
