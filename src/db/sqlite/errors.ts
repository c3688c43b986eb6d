/**
 * SQLite's own errors in the service's words: a database locked by another process past the busy
 * timeout is backend_unavailable (503 with Retry-After), not an unexpected failure. The repository
 * translates here, so no layer above it knows SQLite's error codes.
 */
import { errors } from '../../core/errors.js';

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

const rethrowTranslated = (err: unknown): never => {
  throw translateSqliteError(err);
};

/**
 * The repository with every method's failures translated (thrown or rejected alike). Methods that
 * succeed cost one more call (and, when they return a promise, one more reaction on it).
 */
export function translatingErrors<T extends object>(repo: T): T {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(repo)) {
    if (typeof value !== 'function') {
      out[key] = value;
      continue;
    }
    const method = value as (...args: unknown[]) => unknown;
    out[key] = (...args: unknown[]) => {
      let result: unknown;
      try {
        result = method.apply(repo, args);
      } catch (err) {
        throw translateSqliteError(err);
      }
      return result instanceof Promise ? result.catch(rethrowTranslated) : result;
    };
  }
  return out as T;
}
