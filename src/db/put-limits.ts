/**
 * The limits that apply to one put, and the refusal of a put larger than a whole session's, trace's
 * or tenant's byte limit. The one place those decisions are taken: the put plan's verdict
 * (`plans/put.ts`) embeds them in its SQL, and a direct upload, whose size is declared up front,
 * asks `refusalBeforeBytes` before any byte moves.
 */
import type { CleanupStrategy } from '../core/policy.js';
import { artifactTooBigForScope } from './put-errors.js';
import type { CommitPutInput } from './repository.js';

/** The limits that apply to one put (a 0 is no limit). */
export interface PutLimits {
  strategy: CleanupStrategy;
  session: { value: string; maxBytes: number; maxCount: number; limited: boolean; tooBig: boolean };
  trace: { value: string; maxBytes: number; maxCount: number; limited: boolean; tooBig: boolean };
  maxTenantBytes: number;
  /** Larger than the whole tenant quota: refused whatever the tenant holds. */
  tenantTooBig: boolean;
}

/** What a put's limits depend on: its scope, its size, the quota, and whether it saves a named version. */
export type PutLimitsInput = Pick<CommitPutInput, 'scope' | 'sizeBytes' | 'quota' | 'name'>;

/**
 * The limits that apply to one put, and whether it is too big for a whole scope. The one place those
 * decisions are taken: the plan's verdict embeds them, and refusalBeforeBytes asks them first.
 */
export function putLimits(input: PutLimitsInput): PutLimits {
  const q = input.quota;
  const scope = (value: string, maxBytes = 0, maxCount = 0) => {
    // A scope part that is absent, or has no limit, is not checked at all; nor is any under `never`.
    const limited = q !== undefined && q.strategy !== 'never' && value !== '' && (maxBytes > 0 || maxCount > 0);
    return {
      value,
      maxBytes: limited ? maxBytes : 0,
      maxCount: limited ? maxCount : 0,
      limited,
      tooBig: limited && maxBytes > 0 && input.sizeBytes > maxBytes,
    };
  };
  return {
    // Named versions are meant to last: their limits refuse, never evict.
    strategy: input.name ? (q?.strategy === 'never' ? 'never' : 'reject') : (q?.strategy ?? 'reject'),
    session: scope(input.scope.sessionId ?? '', q?.maxSessionBytes, q?.maxSessionCount),
    trace: scope(input.scope.traceId ?? '', q?.maxTraceBytes, q?.maxTraceCount),
    maxTenantBytes: q?.maxTenantBytes ?? 0,
    // The tenant quota applies whatever the strategy, `never` included.
    tenantTooBig: (q?.maxTenantBytes ?? 0) > 0 && input.sizeBytes > q!.maxTenantBytes!,
  };
}

/**
 * An artifact larger than a whole session's, trace's or tenant's byte limit can never fit: the
 * refusal it meets whatever the scopes hold (the plan's verdict gives the same one). Asked before
 * any byte moves where the size is declared up front (a direct upload).
 */
export function refusalBeforeBytes(input: PutLimitsInput): Error | undefined {
  const limits = putLimits(input);
  return tooBigRefusal(
    input,
    limits,
    limits.session.tooBig
      ? 'session_big'
      : limits.trace.tooBig
        ? 'trace_big'
        : limits.tenantTooBig
          ? 'tenant_big'
          : null,
  );
}

/** The refusal a too-big verdict gives: one message per scope kind, whichever path found it. */
export function tooBigRefusal(
  input: PutLimitsInput,
  limits: PutLimits,
  verdict: 'session_big' | 'trace_big' | 'tenant_big' | null,
): Error | undefined {
  const size = input.sizeBytes;
  switch (verdict) {
    case 'session_big':
      return artifactTooBigForScope('session', limits.session.value, size, limits.session.maxBytes);
    case 'trace_big':
      return artifactTooBigForScope('trace', limits.trace.value, size, limits.trace.maxBytes);
    case 'tenant_big':
      return artifactTooBigForScope('tenant', input.scope.tenantId, size, limits.maxTenantBytes);
    default:
      return undefined;
  }
}
