import { narrowScope, readFilterOf } from '../core/scope.js';
import type { ArtifactScope, ByteRange } from '../core/schemas.js';
import { parseRange } from '../core/range.js';
import type { Access } from '../service/artifact-service.js';

/** The scope of a put by an in-process store bound to `bound`: the same rule as over HTTP. */
export const putScopeFor = (bound: ArtifactScope, asked: Partial<ArtifactScope> | undefined): ArtifactScope => narrowScope(bound, asked);

/** What a store bound to `scope` may read: its tenant, narrowed to its session / trace (as over HTTP). */
export function readAccessOf(scope: ArtifactScope): Access {
  return { tenantId: scope.tenantId, filter: readFilterOf(scope) };
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
