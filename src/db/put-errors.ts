import { errors } from '../core/errors.js';

// The errors a put's metadata commit can end with. Every repository builds them here, so the codes,
// messages and details a client sees do not depend on the metadata backend.

const BYTE_LIMIT = { session: 'maxSessionBytes', trace: 'maxTraceBytes', tenant: 'maxTenantBytes' } as const;

/** The artifact is larger than the whole byte limit of its session, trace or tenant: it can never fit. */
export function artifactTooBigForScope(
  kind: 'session' | 'trace' | 'tenant',
  value: string,
  bytes: number,
  maxBytes: number,
) {
  const limit = BYTE_LIMIT[kind];
  const instead = kind === 'tenant' ? 'Store a smaller artifact' : `Store it without a ${kind}`;
  return errors.quotaExceeded(
    `The artifact (${bytes} bytes) is larger than the whole ${kind} limit of ${maxBytes} bytes (${limit}), so it can never fit in ${kind} ${JSON.stringify(value)}. ${instead}, or ask the operator to raise ${limit}.`,
    { scope: kind, id: value, limit, limitValue: maxBytes, neededBytes: bytes },
  );
}

/** A session or trace under the `none` strategy that the put would overfill; `usage` includes the put. */
export function scopeFull(
  kind: string,
  value: string,
  usage: { n: number; bytes: number },
  newBytes: number,
  maxBytes: number,
  maxCount: number,
) {
  const byBytes = maxBytes > 0 && usage.bytes > maxBytes;
  const limit = byBytes
    ? kind === 'session'
      ? 'maxSessionBytes'
      : 'maxTraceBytes'
    : kind === 'session'
      ? 'maxArtifactsPerSession'
      : 'maxArtifactsPerTrace';
  const what = byBytes ? `${usage.bytes - newBytes} of ${maxBytes} bytes` : `${usage.n - 1} of ${maxCount} artifacts`;
  return errors.quotaExceeded(
    `${kind[0]!.toUpperCase()}${kind.slice(1)} ${JSON.stringify(value)} is full: it holds ${what} (${limit}), and the cleanup strategy is none. Nothing was stored. Delete artifacts from the ${kind}, or wait for them to expire.`,
    {
      scope: kind,
      id: value,
      limit,
      limitValue: byBytes ? maxBytes : maxCount,
      usageBytes: usage.bytes - newBytes,
      usageCount: usage.n - 1,
      neededBytes: newBytes,
    },
  );
}

/** The tenant would hold `bytes` (the put included, after any evictions) over `maxBytes`. */
export function tenantFull(tenantId: string, bytes: number, newBytes: number, maxBytes: number) {
  return errors.quotaExceeded(
    `Tenant ${JSON.stringify(tenantId)} would hold ${bytes} bytes, over its quota of ${maxBytes} (maxTenantBytes). Nothing was stored. Delete artifacts or wait for them to expire, or ask the operator for a larger quota.`,
    {
      scope: 'tenant',
      tenantId,
      limit: 'maxTenantBytes',
      limitValue: maxBytes,
      usageBytes: bytes - newBytes,
      neededBytes: newBytes,
    },
  );
}

/** The put's pin was gone or had run out at commit: garbage collection may have taken the bytes. */
export function pinLost() {
  return errors.backendUnavailable(
    'The put took longer than the garbage-collection grace period (ARTIFACT_STORE_GC_GRACE_SECONDS), so its bytes may be gone. Nothing was stored; send it again.',
    { retryAfter: 1 },
  );
}
