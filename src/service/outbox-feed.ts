import type { ArtifactEvent } from '../core/events.js';
import type { ArtifactRepository } from '../db/repository.js';
import { rowToRef } from '../core/refs.js';

export interface OutboxFeedOptions {
  /** How often the outbox is read when it has nothing new (default 250 ms). */
  pollMs?: number;
  signal: AbortSignal;
}

/**
 * A tenant's artifact events from the outbox, from its current end on, narrowed to a session and/or
 * trace: what /v1/events streams, as an async iterator for in-process subscribers (the /mcp mount).
 * The outbox is shared by every process on the database, so their changes arrive too.
 */
export async function* tailOutbox(
  repo: ArtifactRepository,
  scope: { tenantId: string; sessionId?: string | undefined; traceId?: string | undefined },
  options: OutboxFeedOptions,
): AsyncGenerator<Pick<ArtifactEvent, 'type' | 'ref'>> {
  const pollMs = options.pollMs ?? 250;
  let after = await repo.lastEventSeq();
  while (!options.signal.aborted) {
    const batch = await repo.readEvents(scope.tenantId, after, 500);
    for (const e of batch) {
      after = e.seq;
      if (!e.ref) continue;
      if (scope.sessionId !== undefined && e.scope.sessionId !== scope.sessionId) continue;
      if (scope.traceId !== undefined && e.scope.traceId !== scope.traceId) continue;
      yield { type: e.type as ArtifactEvent['type'], ref: rowToRef(e.ref) };
    }
    if (batch.length < 500) await new Promise((r) => setTimeout(r, pollMs));
  }
}
