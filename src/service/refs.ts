import { NEVER_EXPIRES_AT } from '../core/put-options.js';
import type { ArtifactRef, ArtifactScope } from '../core/schemas.js';
import type { RefRow } from '../db/repository.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** The scope of a stored reference, with absent parts left out. */
export function rowScope(row: Pick<RefRow, 'tenantId' | 'userId' | 'sessionId' | 'traceId'>): ArtifactScope {
  const scope: ArtifactScope = { tenantId: row.tenantId };
  if (row.userId) scope.userId = row.userId;
  if (row.sessionId) scope.sessionId = row.sessionId;
  if (row.traceId) scope.traceId = row.traceId;
  return scope;
}

/** What the model and SDK see of a stored reference. */
export function rowToRef(row: RefRow): ArtifactRef {
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
