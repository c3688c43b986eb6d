import { errors } from '../core/errors.js';
import type { ArtifactScope, ByteRange } from '../core/schemas.js';
import { parseRange } from '../core/range.js';
import type { Access } from '../service/artifact-service.js';

const BOUND_PARTS = ['sessionId', 'traceId', 'userId'] as const;

/**
 * The scope of a put by an in-process store: the store's scope, narrowed by `options.scope`. Like a
 * session-bound token over HTTP, a part the store is bound to can never change (forbidden).
 */
export function putScopeFor(bound: ArtifactScope, asked: Partial<ArtifactScope> | undefined): ArtifactScope {
  if (!asked) return bound;
  if (asked.tenantId !== undefined && asked.tenantId !== bound.tenantId) {
    throw errors.forbidden(`This store is bound to tenant ${JSON.stringify(bound.tenantId)}; it cannot store for tenant ${JSON.stringify(asked.tenantId)}.`);
  }
  const scope: ArtifactScope = { ...bound };
  for (const part of BOUND_PARTS) {
    const value = asked[part];
    if (value === undefined) continue;
    if (bound[part] !== undefined && bound[part] !== value) {
      throw errors.forbidden(`This store is bound to ${part} ${JSON.stringify(bound[part])}; it cannot store for ${JSON.stringify(value)}. Use a store for that scope.`);
    }
    scope[part] = value;
  }
  return scope;
}

/** What a store bound to `scope` may read: its tenant, narrowed to its session / trace (as over HTTP). */
export function readAccessOf(scope: ArtifactScope): Access {
  const filter: Access['filter'] = {};
  if (scope.sessionId !== undefined) filter.sessionId = scope.sessionId;
  if (scope.traceId !== undefined) filter.traceId = scope.traceId;
  return { tenantId: scope.tenantId, filter };
}

/** `Range` header value of a byte range (inclusive ends). */
export function rangeHeaderOf(range: ByteRange): string {
  return `bytes=${range.start}-${range.end}`;
}

/**
 * Resolves a requested range against a size exactly as the HTTP service does (end clamped to the
 * last byte; start past the end is invalid_range), so every store answers the same.
 */
export function resolveByteRange(range: ByteRange | undefined, sizeBytes: number): ByteRange | undefined {
  return range ? parseRange(rangeHeaderOf(range), sizeBytes) : undefined;
}
