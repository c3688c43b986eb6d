/**
 * Scope and range rules shared by the stores that run in-process (the SDK's in-memory store and the
 * service's embedded store), so they answer exactly as the HTTP service does.
 */
import { readFilterOf } from './scope.js';
import type { ArtifactScope, ByteRange } from './schemas.js';
import { parseRange } from './range.js';

/** What a caller may read: its tenant, narrowed to a session and / or trace (the service's Access has this shape). */
export interface ReadAccess {
  tenantId: string;
  filter: { sessionId?: string; traceId?: string };
}

/** What a store bound to `scope` may read: its tenant, narrowed to its session / trace (as over HTTP). */
export function readAccessOf(scope: ArtifactScope): ReadAccess {
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
