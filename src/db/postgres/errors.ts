/**
 * Postgres's errors in the service's words: the server down, restarting or out of connections, a
 * connection lost mid-query, no free connection in the pool within the queue timeout, and a
 * transaction chosen as a deadlock's victim are all backend_unavailable (503 with Retry-After): the
 * transaction did not commit, and the same request succeeds once the database is back.
 */
import { errors } from '../../core/errors.js';

/** postgres.js's own codes for a connection that failed, closed or could not be had in time. */
const CONNECTION_CODES = new Set([
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  'QUEUE_TIMEOUT',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
]);

/**
 * SQLSTATEs that mean "not now": connection exceptions (08), the server shutting down or starting
 * (57P01-57P03), too many connections (53300), serialization failure and deadlock (40001, 40P01),
 * a read-only server (25006, a replica promoted or demoted under us).
 */
const UNAVAILABLE_STATES = /^(08|57P0[123]|53300|40001|40P01|25006)/;

export function translatePostgresError(err: unknown): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return err;
  if (CONNECTION_CODES.has(code) || UNAVAILABLE_STATES.test(code)) {
    const why = code === 'QUEUE_TIMEOUT' ? 'Every database connection is busy.' : 'The database is unavailable.';
    return errors.backendUnavailable(`${why} Retry shortly.`, { cause: err, retryAfter: 1 });
  }
  return err;
}
