/**
 * Blob rows on SQLite: the pins puts take before committing bytes, garbage collection of bytes that
 * nothing holds (against puts committing the same bytes), and the rows fsck reads.
 */
import { eq, lt } from 'drizzle-orm';
import type { BlobRepository } from '../repository.js';
import {
  BLOB_WINDOW_SQL,
  MARK_BLOB_WINDOW_SQL,
  UNFINISHED_BLOB_ROWS_SQL,
  UNHELD,
  UNPINNED,
  windowNext,
} from '../blob-sql.js';
import { blobPins } from '../schema.js';
import type { SqliteContext } from './connection.js';

export function sqliteBlobs({ sqlite, db, writing }: SqliteContext): BlobRepository {
  const selectBlob = sqlite.prepare('SELECT doomed_at AS markedAt FROM blobs WHERE sha256 = @sha256');
  const upsertBlobRow = sqlite.prepare(`
    INSERT INTO blobs (sha256, size_bytes, created_at, doomed_at) VALUES (@sha256, 0, @now, NULL)
    ON CONFLICT (sha256) DO UPDATE SET doomed_at = NULL`);
  const insertPin = sqlite.prepare('INSERT INTO blob_pins (sha256, until) VALUES (@sha256, @until)');
  const blobWindow = sqlite.prepare(BLOB_WINDOW_SQL);
  const markWindow = sqlite.prepare(MARK_BLOB_WINDOW_SQL);
  const unfinishedRows = sqlite.prepare(UNFINISHED_BLOB_ROWS_SQL);
  const dropBlobRow = sqlite.prepare('DELETE FROM blobs WHERE sha256 = @sha256 AND doomed_at = @markedAt');
  const unmarkBlob = sqlite.prepare(
    'UPDATE blobs SET doomed_at = NULL WHERE sha256 = @sha256 AND doomed_at = @markedAt',
  );

  return {
    async pinBlob(sha256, until, now, staleBefore) {
      return writing(() =>
        sqlite
          .transaction((): number | 'collecting' => {
            const row = selectBlob.get({ sha256 }) as { markedAt: number | null } | undefined;
            if (row?.markedAt != null && row.markedAt >= staleBefore) return 'collecting' as const;
            upsertBlobRow.run({ sha256, now });
            return Number(insertPin.run({ sha256, until }).lastInsertRowid);
          })
          .immediate(),
      );
    },

    async releasePin(pinId) {
      writing(() => db.delete(blobPins).where(eq(blobPins.id, pinId)).run());
    },

    async dropExpiredPins(now) {
      return writing(() => db.delete(blobPins).where(lt(blobPins.until, now)).run().changes);
    },

    async markBlobsForCollection(now, createdBefore, staleBefore, after, limit) {
      return writing(() =>
        sqlite
          .transaction(() => {
            const window = blobWindow.get({ after, limit }) as { n: number; last: string | null };
            const marked = markWindow.all({ now, createdBefore, staleBefore, after, limit }) as {
              sha256: string;
              sizeBytes: number;
            }[];
            return { marked, next: windowNext(window, limit) };
          })
          .immediate(),
      );
    },

    async dropOrUnmarkBlobs(collected, failed, markedAt) {
      writing(() =>
        sqlite
          .transaction(() => {
            for (const sha256 of collected) dropBlobRow.run({ sha256, markedAt });
            for (const sha256 of failed) unmarkBlob.run({ sha256, markedAt });
          })
          .immediate(),
      );
    },

    async markBlobForPurge(sha256, now) {
      const mark = sqlite.prepare(`UPDATE blobs AS b SET doomed_at = @now
        WHERE b.sha256 = @sha256 AND b.doomed_at IS NULL AND ${UNPINNED} AND ${UNHELD}`);
      return writing(() => mark.run({ sha256, now }).changes > 0);
    },

    async blobRows(after, limit, now) {
      const rows = sqlite
        .prepare(
          `SELECT b.sha256, b.size_bytes AS sizeBytes, NOT ${UNPINNED} AS pinned,
                  (SELECT count(*) FROM artifacts a WHERE a.sha256 = b.sha256) AS artifacts
           FROM blobs b WHERE b.sha256 > @after ORDER BY b.sha256 LIMIT @limit`,
        )
        .all({ after, limit, now }) as { sha256: string; sizeBytes: number; pinned: number; artifacts: number }[];
      return rows.map((r) => ({ ...r, pinned: r.pinned === 1 }));
    },

    async knownBlobs(sha256s) {
      const known = new Set<string>();
      const stmt = sqlite.prepare('SELECT 1 FROM blobs WHERE sha256 = ?').pluck();
      for (const sha of sha256s) if (stmt.get(sha) !== undefined) known.add(sha);
      return known;
    },

    async artifactsOfBlob(sha256, limit) {
      const stmt = sqlite.prepare(`SELECT tenant_id AS tenantId, id FROM artifacts WHERE sha256 = ?
        ORDER BY tenant_id, id LIMIT ?`);
      return stmt.all(sha256, limit) as { tenantId: string; id: string }[];
    },

    async unfinishedBlobRows(now, after, limit) {
      return (unfinishedRows.all({ now, after, limit }) as { sha256: string }[]).map((r) => r.sha256);
    },

    async deleteIdleBlobRow(sha256, now) {
      const drop = sqlite.prepare(`DELETE FROM blobs AS b WHERE b.sha256 = @sha256 AND ${UNPINNED} AND ${UNHELD}`);
      return writing(() => drop.run({ sha256, now }).changes > 0);
    },
  };
}
