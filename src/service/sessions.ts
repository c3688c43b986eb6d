/**
 * Ending a session in the service: when an agent's session is over, everything it still holds goes
 * at once instead of waiting for expiry. Who may end which session is core/sessions.ts's rule; the
 * removal itself, in bounded batches with an artifact.deleted per reference, is the repository's.
 * Bytes are not deleted here: retention's garbage collector takes what nothing holds any more.
 */
import { sessionEndFilter, type SessionEndReport } from '../core/sessions.js';
import type { ArtifactRepository } from '../db/repository.js';
import type { Access } from './types.js';

export interface SessionEndingDeps {
  repo: Pick<ArtifactRepository, 'endSession'>;
  now: () => number;
}

export function createSessionEnding(deps: SessionEndingDeps) {
  return {
    /**
     * Removes every reference of `sessionId` the caller sees (named versions too, with their names;
     * user-wide names have no session and stay) and says what went: zeros for a session that held
     * nothing. bad_request for a malformed id; forbidden for a caller bound to another session or
     * to a trace.
     */
    async endSession(access: Access, sessionId: string): Promise<SessionEndReport> {
      const { sessionId: _session, ...filter } = sessionEndFilter(access.filter, sessionId);
      const tally = await deps.repo.endSession(access.tenantId, sessionId, filter, deps.now());
      return { sessionId, refs: tally.refs, bytes: tally.bytes, versions: tally.versions };
    },
  };
}

export type SessionEnding = ReturnType<typeof createSessionEnding>;
