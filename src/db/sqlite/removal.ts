/**
 * Removing references on SQLite, shared by deletes, quotas and retention: one event per removed
 * reference, then each artifact goes with its last reference. Also the eviction statement that
 * quotas (at a put) and retention (enforceScope) both run.
 */
import type Database from 'better-sqlite3';
import type { RefRow } from '../repository.js';
import { parseJson, REMOVED_COLUMNS, type RemovedRow } from './rows.js';

export const SCOPE_COLUMNS = { session: 'session_id', trace: 'trace_id' } as const;
export type ScopeKind = keyof typeof SCOPE_COLUMNS;

export type RemovalEvent = 'artifact.evicted' | 'artifact.expired' | 'artifact.deleted';

export interface Removal {
  /**
   * Eviction of one session or trace, as one statement: rank the scope's live references (the one
   * with ref id @keep first, then most recently accessed, or most recently created, first), keep the
   * longest run that fits both limits (@maxBytes, @maxCount; 0 = none), delete the rest. Parameters
   * @tenantId, @value, @now, @keep, @maxBytes, @maxCount; returns the removed rows.
   */
  evictStatement(kind: ScopeKind, strategy: 'lru' | 'fifo'): Database.Statement;
  /** Events for removed references; then each artifact goes with its last reference. */
  recordRemoved(removed: RemovedRow[], type: RemovalEvent, now: number): void;
  /** Appends one event with the reference as it is (or was) in its payload. */
  appendRefEvent(type: string, row: RefRow, now: number): void;
}

export function createRemoval(sqlite: Database.Database): Removal {
  const evictStatements = new Map<string, Database.Statement>();
  const dropOrphanArtifact = sqlite.prepare(`DELETE FROM artifacts WHERE tenant_id = @tenantId AND id = @artifactId
    AND NOT EXISTS (SELECT 1 FROM artifact_refs r WHERE r.tenant_id = @tenantId AND r.artifact_id = @artifactId)`);
  const appendEvent = sqlite.prepare(`INSERT INTO outbox (tenant_id, type, artifact_id, scope, ref, created_at)
    VALUES (@tenantId, @type, @artifactId, @scope, @ref, @now)`);
  const artifactFacts = sqlite.prepare('SELECT namespace, sha256 FROM artifacts WHERE tenant_id = @tenantId AND id = @artifactId');

  function appendRefEvent(type: string, row: RefRow, now: number): void {
    appendEvent.run({
      tenantId: row.tenantId,
      type,
      artifactId: row.artifactId,
      scope: JSON.stringify({ userId: row.userId, sessionId: row.sessionId, traceId: row.traceId }),
      ref: JSON.stringify(row),
      now,
    });
  }

  return {
    evictStatement(kind, strategy) {
      const key = `${kind}:${strategy}`;
      let stmt = evictStatements.get(key);
      if (!stmt) {
        const recency = strategy === 'lru' ? 'last_accessed_at' : 'created_at';
        stmt = sqlite.prepare(`
          DELETE FROM artifact_refs WHERE ref_id IN (
            SELECT ref_id FROM (
              SELECT ref_id, sum(size_bytes) OVER w AS running, row_number() OVER w AS position
              FROM artifact_refs
              WHERE tenant_id = @tenantId AND ${SCOPE_COLUMNS[kind]} = @value AND expires_at > @now
              WINDOW w AS (ORDER BY ref_id = @keep DESC, ${recency} DESC, ref_id DESC ROWS UNBOUNDED PRECEDING)
            )
            WHERE (@maxBytes > 0 AND running > @maxBytes) OR (@maxCount > 0 AND position > @maxCount)
          )
          RETURNING ${REMOVED_COLUMNS}`);
        evictStatements.set(key, stmt);
      }
      return stmt;
    },

    recordRemoved(removed, type, now) {
      for (const r of removed) {
        const facts = artifactFacts.get({ tenantId: r.tenantId, artifactId: r.artifactId }) as { namespace: string; sha256: string } | undefined;
        const row = { ...r, namespace: facts?.namespace ?? '', sha256: facts?.sha256 ?? '', meta: parseJson(r.meta), source: parseJson(r.source) };
        appendRefEvent(type, row, now);
      }
      for (const r of removed) dropOrphanArtifact.run({ tenantId: r.tenantId, artifactId: r.artifactId });
    },

    appendRefEvent,
  };
}
