/** Statements on blob rows, and on the artifact rows that hold blobs: the same text for SQLite and D1. */

/** No live pin: no put is between knowing these bytes' hash and committing its metadata. */
export const UNPINNED = 'NOT EXISTS (SELECT 1 FROM blob_pins p WHERE p.sha256 = b.sha256 AND p.until >= @now)';
/** No artifact holds the blob @sha256. */
export const UNHELD = 'NOT EXISTS (SELECT 1 FROM artifacts a WHERE a.sha256 = @sha256)';

/**
 * The next window of blob rows by sha256, after @after, @limit of them: how many and the last one.
 * A collection walks the blobs a window per statement, whatever part of it is collectable.
 */
export const BLOB_WINDOW_SQL = `SELECT count(*) AS n, max(sha256) AS last
  FROM (SELECT sha256 FROM blobs WHERE sha256 > @after ORDER BY sha256 LIMIT @limit) AS w`;

/**
 * Marks for collection the blobs of that window that no artifact holds, no put has pinned (created
 * before @createdBefore), or that a run which started before @staleBefore marked and never finished.
 * Looking for @limit such blobs through the whole table instead read every blob row in one statement
 * when there were few, which is the usual case: most blobs are held.
 */
export const MARK_BLOB_WINDOW_SQL = `UPDATE blobs SET doomed_at = @now WHERE sha256 IN (
  SELECT b.sha256 FROM (SELECT sha256 FROM blobs WHERE sha256 > @after ORDER BY sha256 LIMIT @limit) w
    JOIN blobs b ON b.sha256 = w.sha256
  WHERE ((b.doomed_at IS NULL AND ${UNPINNED} AND b.created_at < @createdBefore) OR b.doomed_at < @staleBefore)
    AND NOT EXISTS (SELECT 1 FROM artifacts a WHERE a.sha256 = b.sha256))
  RETURNING sha256, size_bytes AS sizeBytes`;

/**
 * Rows of puts that pinned their bytes and never stored them (size_bytes still 0), in sha256 order
 * after @after. It reads the partial index blobs_unfinished, which holds only rows whose put has not
 * stored the bytes: through every blob row, this one statement held a retention run for as long as
 * the table is big.
 */
export const UNFINISHED_BLOB_ROWS_SQL = `SELECT b.sha256 FROM blobs AS b
  WHERE b.sha256 > @after AND b.size_bytes = 0 AND b.doomed_at IS NULL AND ${UNPINNED}
    AND NOT EXISTS (SELECT 1 FROM artifacts a WHERE a.sha256 = b.sha256)
  ORDER BY b.sha256 LIMIT @limit`;

/** Where the walk goes on after a window (the `n` and `last` of a *_WINDOW_SQL row): null once a window came up short. */
export function windowNext<K>(window: { n: number; last: K | null }, limit: number): K | null {
  return window.n < limit ? null : window.last;
}

/** The next window of artifact rows by rowid, after @after, @limit of them: how many and the last one. */
export const ARTIFACT_WINDOW_SQL = `SELECT count(*) AS n, max(rowid) AS last
  FROM (SELECT rowid FROM artifacts WHERE rowid > @after ORDER BY rowid LIMIT @limit) AS w`;

/** Drops the artifacts of that window that no reference holds. */
export const DROP_UNREFERENCED_WINDOW_SQL = `DELETE FROM artifacts WHERE rowid IN (
  SELECT a.rowid FROM (SELECT rowid, tenant_id, id FROM artifacts WHERE rowid > @after ORDER BY rowid LIMIT @limit) a
  WHERE NOT EXISTS (SELECT 1 FROM artifact_refs r WHERE r.tenant_id = a.tenant_id AND r.artifact_id = a.id))`;
