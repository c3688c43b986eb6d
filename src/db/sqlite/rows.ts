/** How the SQLite repository reads reference rows: the joined columns, the raw shapes, JSON columns. */
import type { RefRow } from '../repository.js';
import { artifactRefs, artifacts } from '../schema.js';

/** A reference joined with its artifact, as drizzle columns in RefRow's shape. */
export const refColumns = {
  refId: artifactRefs.refId,
  tenantId: artifactRefs.tenantId,
  artifactId: artifactRefs.artifactId,
  namespace: artifacts.namespace,
  sha256: artifacts.sha256,
  sizeBytes: artifacts.sizeBytes,
  userId: artifactRefs.userId,
  sessionId: artifactRefs.sessionId,
  traceId: artifactRefs.traceId,
  mimeType: artifactRefs.mimeType,
  filename: artifactRefs.filename,
  meta: artifactRefs.meta,
  source: artifactRefs.source,
  createdAt: artifactRefs.createdAt,
  lastAccessedAt: artifactRefs.lastAccessedAt,
  expiresAt: artifactRefs.expiresAt,
  name: artifactRefs.name,
  version: artifactRefs.version,
};

/** A reference row as SQLite returns it: meta and source still JSON text. */
export type RawRefRow = Omit<RefRow, 'meta' | 'source'> & { meta: string | null; source: string | null };

/** A removed reference as DELETE … RETURNING gives it (meta and source as stored JSON text, or parsed). */
export type RemovedRow = Omit<RefRow, 'namespace' | 'sha256' | 'meta' | 'source'> & { meta: unknown; source: unknown };

/** The columns of a removed reference, in RemovedRow's shape (for RETURNING). */
export const REMOVED_COLUMNS = `ref_id AS refId, tenant_id AS tenantId, artifact_id AS artifactId, user_id AS userId,
  session_id AS sessionId, trace_id AS traceId, size_bytes AS sizeBytes, mime_type AS mimeType, filename, meta, source,
  created_at AS createdAt, last_accessed_at AS lastAccessedAt, expires_at AS expiresAt, name, version`;

/** A JSON column's value: text is parsed, an already parsed value passes through. */
export function parseJson(value: unknown): Record<string, unknown> | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string'
    ? (JSON.parse(value) as Record<string, unknown>)
    : (value as Record<string, unknown>);
}
