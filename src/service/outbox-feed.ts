import type { ArtifactEvent } from '../core/events.js';
import type { ArtifactRepository } from '../db/repository.js';
import { rowToRef } from '../core/refs.js';

export interface OutboxFeedOptions {
  /** How often the outbox is read when it has nothing new (default 250 ms); with `wake`, a safety net. */
  pollMs?: number;
  /** Resolves when new events may be there (see EventStreamSettings.wake): read then, not on a timer. */
  wake?: () => Promise<void>;
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
    const woken = (options.wake ?? repo.waitForEvents?.bind(repo))?.();
    const batch = await repo.readEvents(scope.tenantId, after, 500);
    for (const e of batch) {
      after = e.seq;
      if (!e.ref) continue;
      if (scope.sessionId !== undefined && e.scope.sessionId !== scope.sessionId) continue;
      if (scope.traceId !== undefined && e.scope.traceId !== scope.traceId) continue;
      yield { type: e.type as ArtifactEvent['type'], ref: rowToRef(e.ref) };
    }
    if (batch.length < 500) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const slept = new Promise((r) => {
        timer = setTimeout(r, pollMs);
      });
      await (woken ? Promise.race([woken, slept]) : slept);
      clearTimeout(timer);
    }
  }
}
