import type { McpGateway } from '../../src/mcp/gateway/gateway.js';
import type { JSONWebKeySet } from 'jose';
import { ENV_NAMES, type Config } from '../../src/core/config.js';
import type { Policy, TenantPolicies } from '../../src/core/policy.js';
import type { EventStreamSettings } from '../../src/http/routes/events.js';
import type { ServiceLimits } from '../../src/service/artifact-service.js';

export const HMAC_KEYS = [
  { kid: 'k1', secret: 'k1-secret-for-tests-0123456789abcdef' },
  { kid: 'k2', secret: 'k2-secret-for-tests-fedcba9876543210' },
] as const;

export const URL_KEYS = [
  { kid: 'l1', secret: 'link-key-one-for-tests-0123456789abcdef' },
  { kid: 'l0', secret: 'link-key-zero-for-tests-fedcba987654321' },
];

/** The limits every test app starts from. */
export const TEST_LIMITS: ServiceLimits = {
  maxArtifactBytes: 1024 * 1024,
  defaultTtlSeconds: 3600,
  maxTtlSeconds: 7 * 24 * 3600,
  touchFlushMs: 0,
  smallBlobCacheBytes: 1024 * 1024,
};

export interface TestAppOptions {
  limits?: Partial<ServiceLimits>;
  corsOrigins?: string[];
  /** Replaces the HS256 keys (pass [] for a JWKS-only setup). */
  hmacSecrets?: { kid: string; secret: string }[];
  jwks?: JSONWebKeySet;
  issuer?: string;
  audience?: string;
  /** The service clock (ms since the epoch); reference times and expiry follow it. */
  now?: () => number;
  /** Download link keys (the first signs); default URL_KEYS. */
  urlSigningKeys?: { kid: string; secret: string }[];
  publicUrl?: string;
  /** The base policy (quotas, TTLs); default: no quotas on Node, the configuration's defaults on Workers. */
  policy?: Partial<Policy>;
  /** Per-tenant overrides of the policy (ARTIFACT_STORE_TENANT_POLICIES). */
  tenantPolicies?: TenantPolicies;
  /** Blob GC grace of POST /v1/admin/retention (default 1 h). */
  gcGraceMs?: number;
  /** GET /v1/events polling. */
  events?: EventStreamSettings;
  /** An MCP gateway to mount at /mcp/gateway and /v1/mcp/servers (Node only; started by the test). */
  gateway?: McpGateway;
}

const keyList = (keys: readonly { kid: string; secret: string }[]) => keys.map((k) => `${k.kid}:${k.secret}`).join(',');

/** The policy settings a test app passes by their own names (TTLs and the size cap come from the limits). */
const POLICY_VARS = [
  'maxSessionBytes',
  'maxTraceBytes',
  'maxArtifactsPerSession',
  'maxArtifactsPerTrace',
  'maxTenantBytes',
  'cleanupStrategy',
  'allowNoExpiry',
  'nameTtlSeconds',
  'tenantRequestsPerSecond',
  'tenantRequestBurst',
  'tenantBytesInFlight',
  'tokenRequestsPerSecond',
  'tokenRequestBurst',
  'tokenBytesInFlight',
] as const;

/**
 * A test app's options as ARTIFACT_STORE_* variables: both runtimes' test apps are configured the way
 * a deployment is, through the same configuration and the same composition root. No HS256 keys (a
 * JWKS-only setup) means the variable is absent.
 */
export function testAppVars(
  options: TestAppOptions,
  extra: Partial<Record<keyof Config, string | number>> = {},
): Record<string, string> {
  const limits = { ...TEST_LIMITS, ...options.limits };
  const settings: Partial<Record<keyof Config, string | number | undefined>> = {
    jwtSecrets: keyList(options.hmacSecrets ?? HMAC_KEYS),
    urlSigningKeys: keyList(options.urlSigningKeys ?? URL_KEYS),
    urlMaxTtlSeconds: 24 * 3600,
    jwtIssuer: options.issuer,
    jwtAudience: options.audience,
    publicUrl: options.publicUrl,
    corsOrigins: options.corsOrigins?.join(','),
    maxArtifactBytes: options.policy?.maxArtifactBytes ?? limits.maxArtifactBytes,
    defaultTtlSeconds: options.policy?.defaultTtlSeconds ?? limits.defaultTtlSeconds,
    maxTtlSeconds: options.policy?.maxTtlSeconds ?? limits.maxTtlSeconds,
    touchFlushMs: limits.touchFlushMs,
    smallBlobCacheBytes: limits.smallBlobCacheBytes,
    gcGraceSeconds: options.gcGraceMs === undefined ? undefined : Math.ceil(options.gcGraceMs / 1000),
    ...Object.fromEntries(POLICY_VARS.map((key) => [key, options.policy?.[key]])),
    tenantPolicies: options.tenantPolicies ? JSON.stringify(options.tenantPolicies) : undefined,
    ...extra,
  };
  return Object.fromEntries(
    Object.entries(settings)
      .filter(([, v]) => v !== undefined && v !== '')
      .map(([k, v]) => [ENV_NAMES[k as keyof Config], String(v)]),
  );
}
