/**
 * What a put is held to in its tenant: the TTLs and the size cap (the tenant's policy, or the
 * service's limits where there are no policies), the quotas the put plan enforces, and the put's
 * options checked against them. Shared by puts, direct uploads and named versions.
 */
import { type QuotaLimits, quotaLimitsOf } from '../core/limits.js';
import type { Policy } from '../core/policy.js';
import { validatePutOptions } from '../core/put-options.js';
import type { ArtifactScope, PutOptions } from '../core/schemas.js';
import { errors } from '../core/errors.js';
import { narrowScope } from '../core/scope.js';
import { refusalBeforeBytes } from '../db/put-limits.js';
import type { PutPolicy, ServiceLimits } from './types.js';

/** A put's options once checked: what validatePutOptions returns. */
export type CheckedPutOptions = ReturnType<typeof validatePutOptions>;

export interface PutPolicies {
  /** The TTLs and size cap of a tenant's puts. */
  of(tenantId: string): PutPolicy;
  /** The quotas a put into this tenant is held to; none without policies. */
  quotaOf(tenantId: string): QuotaLimits | undefined;
  /** A put's options checked against its tenant's policy (bad_request when they break it). */
  check(tenantId: string, raw: PutOptions): CheckedPutOptions;
}

export interface PutPoliciesDeps {
  limits: ServiceLimits;
  /** Each tenant's policy; without it only `limits` apply and scopes have no quotas. */
  policies?: (tenantId: string) => Policy;
}

export function createPutPolicies({ limits, policies }: PutPoliciesDeps): PutPolicies {
  const of = (tenantId: string): PutPolicy => policies?.(tenantId) ?? limits;
  return {
    of,
    quotaOf(tenantId) {
      const p = policies?.(tenantId);
      return p ? quotaLimitsOf(p) : undefined;
    },
    check: (tenantId, raw) => validatePutOptions(raw, of(tenantId)),
  };
}

/**
 * An upload's admission before any byte moves (direct uploads, tus): its options checked, the scope
 * it puts into, and its declared size against the tenant's largest artifact and the put plan's own
 * "larger than a whole scope may hold" refusal.
 */
export function admitUpload(
  policies: PutPolicies,
  scope: ArtifactScope,
  rawOptions: PutOptions,
  sizeBytes: number,
): { options: CheckedPutOptions; putScope: ArtifactScope } {
  const options = policies.check(scope.tenantId, rawOptions);
  const putScope = narrowScope(scope, options.scope);
  const maxBytes = policies.of(putScope.tenantId).maxArtifactBytes;
  if (sizeBytes > maxBytes) throw errors.payloadTooLarge(maxBytes);
  const tooBig = refusalBeforeBytes({ scope: putScope, sizeBytes, quota: policies.quotaOf(putScope.tenantId) });
  if (tooBig) throw tooBig;
  return { options, putScope };
}
