/**
 * SQLite's own errors in the service's words: a database locked by another process past the busy
 * timeout is backend_unavailable (503 with Retry-After), not an unexpected failure. The repository
 * translates here, so no layer above it knows SQLite's error codes.
 */
import { errors } from '../../core/errors.js';
import { withTranslatedErrors } from '../translate-errors.js';

/** SQLITE_BUSY and SQLITE_LOCKED, with their extended codes (SQLITE_BUSY_SNAPSHOT, …). */
const CONTENTION = /^SQLITE_(BUSY|LOCKED)/;

/** The error as the service reports it: contention becomes backend_unavailable; anything else is kept. */
export function translateSqliteError(err: unknown): unknown {
  // drizzle wraps driver errors: the SQLite code may sit on a cause.
  for (
    let e = err, depth = 0;
    e !== undefined && e !== null && depth < 5;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && CONTENTION.test(code)) {
      return errors.backendUnavailable('The database is busy. Retry shortly.', { cause: err, retryAfter: 1 });
    }
  }
  return err;
}

/** The repository with every method's failures translated (see ../translate-errors.ts). */
export function translatingErrors<T extends object>(repo: T): T {
  return withTranslatedErrors(repo, translateSqliteError);
}
