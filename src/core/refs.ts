/**
 * What callers see of a stored reference: one rule for the service (over SQLite or D1) and the SDK's
 * in-memory store, which keep references in the same shape ('' for an absent scope part or name).
 */
import { NEVER_EXPIRES_AT } from './put-options.js';
import type { ArtifactRef, ArtifactScope } from './schemas.js';

/** A reference as the stores hold it, with its artifact's namespace, hash and size. */
export interface StoredRef {
  tenantId: string;
  artifactId: string;
  namespace: string;
  sha256: string;
  sizeBytes: number;
  userId: string;
  sessionId: string;
  traceId: string;
  mimeType: string;
  filename: string | null;
  meta: Record<string, unknown> | null;
  source: Record<string, unknown> | null;
  createdAt: number;
  lastAccessedAt: number;
  expiresAt: number;
  /** The name this reference is a version of ('' or absent: none), and its version number. */
  name?: string;
  version?: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The scope of a stored reference, with absent parts left out. */
export function rowScope(row: Pick<StoredRef, 'tenantId' | 'userId' | 'sessionId' | 'traceId'>): ArtifactScope {
  const scope: ArtifactScope = { tenantId: row.tenantId };
  if (row.userId) scope.userId = row.userId;
  if (row.sessionId) scope.sessionId = row.sessionId;
  if (row.traceId) scope.traceId = row.traceId;
  return scope;
}

/** What the model and SDK see of a stored reference. */
export function rowToRef(row: StoredRef): ArtifactRef {
  const ref: ArtifactRef = {
    id: row.artifactId,
    mimeType: row.mimeType,
    sizeBytes: row.sizeBytes,
    sha256: row.sha256,
    namespace: row.namespace,
    scope: rowScope(row),
    createdAt: iso(row.createdAt),
    lastAccessedAt: iso(row.lastAccessedAt),
  };
  // A reference that never expires shows no expiry.
  if (row.expiresAt < NEVER_EXPIRES_AT) ref.expiresAt = iso(row.expiresAt);
  if (row.filename) ref.filename = row.filename;
  if (row.source) ref.source = row.source;
  if (row.meta) ref.meta = row.meta;
  if (row.name) {
    ref.name = row.name;
    ref.version = row.version!;
  }
  return ref;
}
