import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { streamSSE } from 'hono/streaming';
import { errors } from '../../core/errors.js';
import type { OutboxEvent, ServiceOperations } from '../../service/operations.js';
import { rowToRef } from '../../core/refs.js';
import { accessOf, adminTenantOf, isTenantAdmin, requirePerm } from '../auth.js';
import type { AppEnv } from '../context.js';
import { header } from '../fast-header.js';
import { errorResponses } from '../openapi-schemas.js';

export interface EventStreamSettings {
  /**
   * How often the outbox is read for new events (default 250 ms); with `wake`, how often it is read
   * when no wake-up came (a safety net for a notification lost with a connection).
   */
  pollMs?: number;
  /**
   * A promise that resolves when new events may be in the outbox (Postgres: a NOTIFY from the
   * transaction that appended them, on any replica). Streams then read the outbox when woken, not
   * on a timer. Each call returns the promise of the next wake-up after it.
   */
  wake?: () => Promise<void>;
  /** How often an idle stream gets a comment line, so proxies keep it open (default 15 s). */
  heartbeatMs?: number;
  /**
   * A stream ends after this many outbox reads (default: never), and the client resumes with
   * Last-Event-ID. Workers cap D1 queries per invocation (1,000 on the paid plan), so the Worker sets it.
   */
  maxPolls?: number;
  /** True once shutdown began: streams end, and clients reconnect (to another instance) with Last-Event-ID. */
  isDraining?: () => boolean;
}

const route = createRoute({
  method: 'get',
  path: '/v1/events',
  tags: ['events'],
  summary:
    'Server-Sent Events: artifact.stored, artifact.deleted, artifact.evicted, artifact.expired, resource.updated, audit.recorded',
  description:
    "Events of the caller's scope (its session or trace for a bound token, else the tenant; `session` / `trace` narrow a tenant-wide one; an operator key gets every tenant's, or `tenant`'s). Each event's id is its outbox position: send it back as Last-Event-ID (or ?lastEventId=) to resume. Data is `{ type, ref, at }` with the ArtifactRef as it was at the change, never bytes. With the MCP gateway mounted, a resource the scope read or subscribed to through it that changed upstream comes as `resource.updated` with `{ type, resource: { server, uri }, at }`. With `audit=true` (operators, and a tenant's admins for their tenant), admin and operator actions come too, as `audit.recorded` with `{ type, audit, at }`. Comment lines keep idle streams alive. Events come from the outbox every instance writes to, so changes made by another process (a CLI retention run, a second instance) arrive too.",
  request: {
    query: z.object({
      tenant: z
        .string()
        .min(1)
        .optional()
        .openapi({ description: 'Operators: only this tenant. A tenant token may name only its own.' }),
      session: z.string().optional().openapi({ description: 'Only this session (tenant-wide callers).' }),
      trace: z.string().optional().openapi({ description: 'Only this trace (tenant-wide callers).' }),
      lastEventId: z
        .string()
        .optional()
        .openapi({ description: 'Resume after this event id (same as the Last-Event-ID header).' }),
      audit: z.enum(['true', 'false']).default('false').openapi({
        description: "Also stream the audit trail's new entries (audit.recorded): operators, and a tenant's admins.",
      }),
    }),
  },
  responses: {
    200: { description: 'text/event-stream', content: { 'text/event-stream': { schema: z.string() } } },
    ...errorResponses(400, 401, 403),
  },
});

export function registerEvents(
  app: OpenAPIHono<AppEnv>,
  ops: Pick<ServiceOperations, 'lastEventSeq' | 'readEvents'> | undefined,
  settings: EventStreamSettings = {},
) {
  const pollMs = settings.pollMs ?? 250;
  const heartbeatMs = settings.heartbeatMs ?? 15_000;
  const maxPolls = settings.maxPolls ?? Infinity;
  app.openapi(route, async (c) => {
    const caller = c.get('caller');
    requirePerm(caller, 'read');
    if (!ops) throw errors.backendUnavailable('This service keeps no event outbox.', { retryAfter: 60 });
    const query = c.req.valid('query');
    // A tenant token reads its tenant's events; an operator every tenant's, or the one it names.
    const tenantId = adminTenantOf(caller, query.tenant);
    // The audit trail goes to operators and to a tenant's admins who ask for it, not to its agents.
    const seesAudit = query.audit === 'true';
    if (seesAudit && caller.role !== 'operator' && !isTenantAdmin(caller))
      throw errors.forbidden(
        "The audit trail is for operators and a tenant's admins (a tenant-wide token with the admin permission).",
      );
    const access = accessOf(caller);
    // A bound token's scope cannot be widened: asking for another session sees nothing of it.
    const filter = { ...access.filter };
    if (query.session !== undefined) filter.sessionId = filter.sessionId ?? query.session;
    if (query.trace !== undefined) filter.traceId = filter.traceId ?? query.trace;
    const narrowedAway =
      (query.session !== undefined && filter.sessionId !== query.session) ||
      (query.trace !== undefined && filter.traceId !== query.trace);
    const resumeFrom = query.lastEventId ?? header(c, 'last-event-id');
    let after: number;
    if (resumeFrom !== undefined) {
      if (!/^\d{1,15}$/.test(resumeFrom))
        throw errors.badRequest(
          `Last-Event-ID ${JSON.stringify(resumeFrom)} is not an event id from this stream (a whole number).`,
        );
      after = Number(resumeFrom);
    } else {
      after = await ops.lastEventSeq();
    }
    const isResource = (e: OutboxEvent) => e.type === 'resource.updated' && e.data !== null;
    const visible = (e: OutboxEvent) =>
      !narrowedAway &&
      (e.ref !== null ||
        isResource(e) ||
        (seesAudit && e.data !== null && filter.sessionId === undefined && filter.traceId === undefined)) &&
      (filter.sessionId === undefined || e.scope.sessionId === filter.sessionId) &&
      (filter.traceId === undefined || e.scope.traceId === filter.traceId);

    return streamSSE(c, async (stream) => {
      let open = true;
      stream.onAbort(() => {
        open = false;
      });
      let quietSince = Date.now();
      // The stream's position as an id with no data: EventSource (and the SDK) take it as the
      // Last-Event-ID to resume from without dispatching an event, so a client that saw no event
      // before the stream ended still misses nothing stored while it reconnects.
      const position = () => stream.write(`id: ${after}\ndata\n\n`);
      await stream.write(': connected\n\n');
      await position();
      let polls = 0;
      for (; polls < maxPolls && open && !stream.aborted && !stream.closed && !settings.isDraining?.(); polls++) {
        // Taken before the read: a wake-up that comes while it runs is not lost.
        const woken = settings.wake?.();
        const batch = await ops.readEvents(tenantId, after, 500);
        for (const e of batch) {
          after = e.seq;
          if (!visible(e)) continue;
          const at = new Date(e.createdAt).toISOString();
          const data = e.ref
            ? { type: e.type, ref: rowToRef(e.ref), at }
            : isResource(e)
              ? { type: e.type, resource: e.data, at }
              : { type: e.type, audit: { ...e.data, at: new Date(e.data!.at as number).toISOString() }, at };
          await stream.writeSSE({ id: String(e.seq), event: e.type, data: JSON.stringify(data) });
          quietSince = Date.now();
        }
        if (batch.length === 500) continue;
        if (Date.now() - quietSince >= heartbeatMs) {
          await stream.write(': heartbeat\n\n');
          quietSince = Date.now();
        }
        await (woken ? Promise.race([woken, stream.sleep(Math.min(pollMs, heartbeatMs))]) : stream.sleep(pollMs));
      }
      if (polls >= maxPolls && !stream.aborted) await position();
    });
  });
}
