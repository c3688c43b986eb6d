/**
 * GET /v1/events as an async iterator. fetch, not EventSource (which cannot send Authorization), and
 * an SSE parser; a dropped connection or a 429 / 503 / network error reconnects with backoff and
 * Last-Event-ID, so no event is missed. Other errors (401, 403, 400) end it by throwing.
 */
import { createParser } from 'eventsource-parser';
import type { ArtifactEvent, EventsOptions } from '../core/artifact-store.js';
import { isArtifactError } from '../core/errors.js';
import { artifactEventOf } from './http-response-schemas.js';
import { errorFromResponse } from './http-errors.js';
import type { ScopeNames } from './http-headers.js';
import { backoffMs, isNetworkError, isRetryableStatus, sleep } from './http-retry.js';
import type { HttpTransport } from './http-transport.js';

export async function* artifactEvents(
  transport: HttpTransport,
  scope: ScopeNames,
  o: EventsOptions = {},
): AsyncGenerator<ArtifactEvent> {
  let lastEventId = o.lastEventId;
  const query = new URLSearchParams();
  if (o.sessionId ?? scope.sessionId) query.set('session', (o.sessionId ?? scope.sessionId)!);
  if (o.traceId ?? scope.traceId) query.set('trace', (o.traceId ?? scope.traceId)!);
  const url = `${transport.baseUrl}/v1/events${[...query.keys()].length ? `?${query}` : ''}`;
  const wait = (attempt: number) => sleep(backoffMs(transport.retry, attempt));
  for (let attempt = 0; !o.signal?.aborted; ) {
    let res: Response;
    try {
      const headers: Record<string, string> = { ...(await transport.authHeaders()), Accept: 'text/event-stream' };
      if (lastEventId) headers['Last-Event-ID'] = lastEventId;
      res = await transport.fetch(url, { headers, signal: o.signal });
    } catch (err) {
      if (o.signal?.aborted) return;
      if (!isNetworkError(err)) throw err;
      await wait(attempt++);
      continue;
    }
    if (!res.ok) {
      if (!isRetryableStatus(res.status)) throw await errorFromResponse(res, { method: 'GET', path: '/v1/events' });
      await res.body?.cancel().catch(() => {});
      await wait(attempt++);
      continue;
    }
    // Events, and positions: an id with no data moves where a reconnect resumes from.
    const queue: (ArtifactEvent | { position: string })[] = [];
    const parser = createParser({
      onEvent(ev) {
        if (!ev.id) return;
        if (ev.data === '') return void queue.push({ position: ev.id });
        // Only artifact events (a stream that asked for the audit trail carries others too).
        queue.push(artifactEventOf(ev.id, ev.data) ?? { position: ev.id });
      },
    });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        attempt = 0;
        parser.feed(value);
        while (queue.length > 0) {
          const ev = queue.shift()!;
          if ('position' in ev) {
            lastEventId = ev.position;
            continue;
          }
          lastEventId = ev.id;
          yield ev;
        }
      }
    } catch (err) {
      if (o.signal?.aborted) return;
      // An answer that does not match (artifactEventOf) ends the stream; a broken connection does not.
      if (isArtifactError(err)) throw err;
      if (!isNetworkError(err) && !isConnectionEnd(err)) throw err;
    } finally {
      await reader.cancel().catch(() => {});
    }
    // The stream ended (the service restarted or is draining): reconnect where it left off.
    await wait(attempt++);
  }
}

/** How fetch implementations report a response body cut off by the other side. */
function isConnectionEnd(err: unknown): boolean {
  return err instanceof Error && /terminated|aborted|other side closed/i.test(err.message);
}
