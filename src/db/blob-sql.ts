/** Statements on blob rows, the same text for SQLite and D1. */

/** No live pin: no put is between knowing these bytes' hash and committing its metadata. */
export const UNPINNED = 'NOT EXISTS (SELECT 1 FROM blob_pins p WHERE p.sha256 = b.sha256 AND p.until >= @now)';
/** No artifact holds the blob @sha256. */
export const UNHELD = 'NOT EXISTS (SELECT 1 FROM artifacts a WHERE a.sha256 = @sha256)';

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
