/**
 * Blob rows on D1: the pins puts take before committing bytes, garbage collection of bytes that
 * nothing holds, and the rows fsck reads. Lists of sha256s travel as one JSON parameter
 * (json_each), since D1 takes at most 100 bound parameters per statement.
 */
import {
  BLOB_WINDOW_SQL,
  MARK_BLOB_WINDOW_SQL,
  UNFINISHED_BLOB_ROWS_SQL,
  UNHELD,
  UNPINNED,
  windowNext,
} from '../blob-sql.js';
import type { Stmt } from '../plans/sql.js';
import type { BlobRepository } from '../repository.js';
import type { StatementContext } from './binding.js';

/**
 * pinBlob as one batch: clear a stale collection mark (or create the row) and add the pin, both only when
 * no collection of the blob is under way. No row back from the second statement means 'collecting'.
 * (An upsert's DO UPDATE would consume an AUTOINCREMENT value, but blobs has none.)
 */
export function pinPlan(sha256: string, until: number, now: number, staleBefore: number): Stmt[] {
  const params = { sha256, until, now, staleBefore };
  const idle = 'NOT EXISTS (SELECT 1 FROM blobs WHERE sha256 = @sha256 AND doomed_at >= @staleBefore)';
  return [
    `INSERT INTO blobs (sha256, size_bytes, created_at, doomed_at) SELECT @sha256, 0, @now, NULL WHERE ${idle}
     ON CONFLICT (sha256) DO UPDATE SET doomed_at = NULL`,
    `INSERT INTO blob_pins (sha256, until) SELECT @sha256, @until WHERE ${idle} RETURNING id`,
  ].map((sql) => ({ sql, params }));
}

export function d1Blobs({ all, run, batch }: StatementContext): BlobRepository {
  return {
    async pinBlob(sha256, until, now, staleBefore) {
      const [, pinned] = await batch(pinPlan(sha256, until, now, staleBefore));
      const row = pinned![0] as { id: number } | undefined;
      return row ? row.id : 'collecting';
    },

    async releasePin(pinId) {
      await run('DELETE FROM blob_pins WHERE id = @pinId', { pinId });
    },

    async dropExpiredPins(now) {
      return run('DELETE FROM blob_pins WHERE until < @now', { now });
    },

    async markBlobsForCollection(now, createdBefore, staleBefore, after, limit) {
      const params = { now, createdBefore, staleBefore, after, limit };
      const [window, marked] = (await batch([
        { sql: BLOB_WINDOW_SQL, params },
        { sql: MARK_BLOB_WINDOW_SQL, params },
      ])) as [{ n: number; last: string | null }[], { sha256: string; sizeBytes: number }[]];
      return { marked, next: windowNext(window[0]!, limit) };
    },

    async dropOrUnmarkBlobs(collected, failed, markedAt) {
      if (collected.length === 0 && failed.length === 0) return;
      const params = { markedAt, collected: JSON.stringify(collected), failed: JSON.stringify(failed) };
      await batch([
        {
          sql: 'DELETE FROM blobs WHERE doomed_at = @markedAt AND sha256 IN (SELECT value FROM json_each(@collected))',
          params,
        },
        {
          sql: 'UPDATE blobs SET doomed_at = NULL WHERE doomed_at = @markedAt AND sha256 IN (SELECT value FROM json_each(@failed))',
          params,
        },
      ]);
    },

    async markBlobForPurge(sha256, now) {
      const sql = `UPDATE blobs AS b SET doomed_at = @now
        WHERE b.sha256 = @sha256 AND b.doomed_at IS NULL AND ${UNPINNED} AND ${UNHELD}`;
      return (await run(sql, { sha256, now })) > 0;
    },

    async blobRows(after, limit, now) {
      const rows = await all<{ sha256: string; sizeBytes: number; pinned: number | boolean; artifacts: number }>(
        `SELECT b.sha256, b.size_bytes AS sizeBytes, NOT ${UNPINNED} AS pinned,
                (SELECT count(*) FROM artifacts a WHERE a.sha256 = b.sha256) AS artifacts
         FROM blobs b WHERE b.sha256 > @after ORDER BY b.sha256 LIMIT @limit`,
        { after, limit, now },
      );
      return rows.map((r) => ({ ...r, pinned: Boolean(r.pinned) }));
    },

    async knownBlobs(sha256s) {
      if (sha256s.length === 0) return new Set();
      const sql = 'SELECT sha256 FROM blobs WHERE sha256 IN (SELECT value FROM json_each(@shas))';
      const rows = await all<{ sha256: string }>(sql, { shas: JSON.stringify(sha256s) });
      return new Set(rows.map((r) => r.sha256));
    },

    async artifactsOfBlob(sha256, limit) {
      const sql =
        'SELECT tenant_id AS tenantId, id FROM artifacts WHERE sha256 = @sha256 ORDER BY tenant_id, id LIMIT @limit';
      return all<{ tenantId: string; id: string }>(sql, { sha256, limit });
    },

    async unfinishedBlobRows(now, after, limit) {
      const rows = await all<{ sha256: string }>(UNFINISHED_BLOB_ROWS_SQL, { now, after, limit });
      return rows.map((r) => r.sha256);
    },

    async deleteIdleBlobRow(sha256, now) {
      const sql = `DELETE FROM blobs AS b WHERE b.sha256 = @sha256 AND ${UNPINNED} AND ${UNHELD}`;
      return (await run(sql, { sha256, now })) > 0;
    },
  };
}
