/**
 * Ending a session: what it answers, and who may end which session. One rule for the service (over
 * HTTP and embedded) and the in-memory store, so every store answers alike.
 */
import { errors } from './errors.js';
import { narrowFilter, type ReadFilter } from './scope.js';

/** What ending a session removed (DELETE /v1/sessions/{id}). */
export interface SessionEndReport {
  sessionId: string;
  /** References removed, named versions among them. */
  refs: number;
  /** The bytes those references held, each counting its artifact's size (as usage counts). */
  bytes: number;
  /** How many of the references were named versions (their names went with them). */
  versions: number;
}

/** The answer for a session that held nothing (or nothing the caller sees). */
export const emptySessionEnd = (sessionId: string): SessionEndReport => ({ sessionId, refs: 0, bytes: 0, versions: 0 });

/**
 * bad_request unless `sessionId` follows the scope rule (1-256 characters) and can travel as a URL
 * path segment: "." and ".." cannot (URLs drop them), so no store ends such a session.
 */
export function checkSessionId(sessionId: unknown): asserts sessionId is string {
  if (typeof sessionId !== 'string' || sessionId.length < 1 || sessionId.length > 256)
    throw errors.badRequest(
      typeof sessionId === 'string' && sessionId.length > 256
        ? `Invalid session id (${sessionId.length} characters): session ids have 1-256 characters.`
        : 'Invalid session id: give the session to end (1-256 characters).',
    );
  if (sessionId === '.' || sessionId === '..')
    throw errors.badRequest(`Invalid session id ${JSON.stringify(sessionId)}: it cannot travel in a URL path.`);
}

/** The session a store's endSession means: the one asked, else the store's own; bad_request for neither. */
export function sessionToEnd(asked: string | undefined, own: string | undefined): string {
  const sessionId = asked ?? own;
  if (sessionId === undefined)
    throw errors.badRequest(
      'Name the session to end: endSession(id). Only a store with a session of its own ends that one by default.',
    );
  checkSessionId(sessionId);
  return sessionId;
}

/**
 * What a caller whose reads see `bound` removes when it ends `sessionId`: that session, narrowed
 * by what the caller is bound to. bad_request for a malformed id; forbidden for a caller bound to a
 * trace (it sees only part of any session) or to another session, as a read naming another
 * session is refused.
 */
export function sessionEndFilter(bound: ReadFilter, sessionId: string): ReadFilter & { sessionId: string } {
  checkSessionId(sessionId);
  if (bound.traceId !== undefined)
    throw errors.forbidden(
      'You are bound to a trace, which sees only part of a session: ending one takes a session-bound or tenant-wide token.',
    );
  return { ...narrowFilter(bound, { sessionId }), sessionId };
}
