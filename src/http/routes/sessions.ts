/**
 * DELETE /v1/sessions/{id}: ends a session. Everything of it the caller sees goes at once (named
 * versions and their names too; user-wide names stay), with an artifact.deleted event each, and the
 * answer says what went. A session-bound token ends its own session only, a trace-bound one none; a
 * tenant-wide token any of its tenant's, or one user's part of it (X-Artifact-User / ?user=).
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { errors } from '../../core/errors.js';
import { narrowFilter } from '../../core/scope.js';
import type { ArtifactService } from '../../service/artifact-service.js';
import { accessOf, namedScope, requirePerm } from '../auth.js';
import type { AppEnv } from '../context.js';
import { errorResponses } from '../openapi-schemas.js';

const SessionEndDoc = z
  .object({
    sessionId: z.string(),
    refs: z.number().int().openapi({ description: 'References removed, named versions among them' }),
    bytes: z.number().int().openapi({ description: 'The bytes they held, each counting its artifact’s size' }),
    versions: z.number().int().openapi({ description: 'How many of them were named versions' }),
  })
  .openapi('SessionEnd');

const route = createRoute({
  method: 'delete',
  path: '/v1/sessions/{id}',
  tags: ['sessions'],
  summary: 'End a session: remove everything it holds',
  description:
    "Removes every reference of the session the caller sees, at once: its artifacts' references and its named versions, with the names themselves (a later save starts at version 0); user-wide names stay. Each reference goes with an artifact.deleted event; bytes nothing else holds are collected by the next retention run. A session-bound token may end only its own session (another: 403), a trace-bound token none (403); a tenant-wide token ends any session of its tenant, or with X-Artifact-User / ?user= only that user's part of it. Idempotent: a session that holds nothing answers zeros.",
  request: {
    params: z.object({
      id: z
        .string()
        .openapi({ param: { name: 'id', in: 'path' }, description: 'The session (1-256 characters)', example: 's-42' }),
    }),
  },
  responses: {
    200: { description: 'What went', content: { 'application/json': { schema: SessionEndDoc } } },
    ...errorResponses(400, 401, 403),
  },
});

export function registerSessions(app: OpenAPIHono<AppEnv>, service: ArtifactService) {
  app.openapi(route, async (c) => {
    const caller = c.get('caller');
    requirePerm(caller, 'write');
    const id = c.req.valid('param').id;
    const named = namedScope(c);
    if (named.traceId !== undefined)
      throw errors.badRequest('A session ends whole: leave X-Artifact-Trace / ?trace= out.');
    if (named.sessionId !== undefined && named.sessionId !== id)
      throw errors.badRequest(
        'The session to end is the one in the path: leave X-Artifact-Session / ?session= out, or name the same one.',
      );
    const access = accessOf(caller);
    const filter = named.userId === undefined ? access.filter : narrowFilter(access.filter, { userId: named.userId });
    return c.json(await service.endSession({ tenantId: access.tenantId, filter }, id), 200);
  });
}
