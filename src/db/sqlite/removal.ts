/**
 * Removing references on SQLite, shared by deletes and retention: one event per removed reference,
 * then each artifact goes with its last reference.
 */
import type Database from 'better-sqlite3';
import { parseJson, type RemovedRow } from './rows.js';

type ArtifactFacts = { namespace: string; sha256: string };

export type RemovalEvent = 'artifact.evicted' | 'artifact.expired' | 'artifact.deleted';

export interface Removal {
  /** Events for removed references; then each artifact goes with its last reference. */
  recordRemoved(removed: RemovedRow[], type: RemovalEvent, now: number): void;
}

export function createRemoval(sqlite: Database.Database): Removal {
  const dropOrphanArtifact = sqlite.prepare(`DELETE FROM artifacts WHERE tenant_id = @tenantId AND id = @artifactId
    AND NOT EXISTS (SELECT 1 FROM artifact_refs r WHERE r.tenant_id = @tenantId AND r.artifact_id = @artifactId)`);
  const appendEvent = sqlite.prepare(`INSERT INTO outbox (tenant_id, type, artifact_id, scope, ref, created_at)
    VALUES (@tenantId, @type, @artifactId, @scope, @ref, @now)`);
  const artifactFacts = sqlite.prepare(
    'SELECT namespace, sha256 FROM artifacts WHERE tenant_id = @tenantId AND id = @artifactId',
  );

  return {
    recordRemoved(removed, type, now) {
      for (const r of removed) {
        const facts = artifactFacts.get({ tenantId: r.tenantId, artifactId: r.artifactId }) as
          | ArtifactFacts
          | undefined;
        // The reference as it was, in the event's payload (its artifact's facts last).
        const { namespace = '', sha256 = '' } = facts ?? {};
        const row = { ...r, namespace, sha256, meta: parseJson(r.meta), source: parseJson(r.source) };
        appendEvent.run({
          tenantId: row.tenantId,
          type,
          artifactId: row.artifactId,
          scope: JSON.stringify({ userId: row.userId, sessionId: row.sessionId, traceId: row.traceId }),
          ref: JSON.stringify(row),
          now,
        });
      }
      for (const r of removed) dropOrphanArtifact.run({ tenantId: r.tenantId, artifactId: r.artifactId });
    },
  };
}
