import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import { errors } from '../../core/errors.js';
import type { ArtifactService } from '../../service/artifact-service.js';
import { readAccessOf, requirePerm } from '../auth.js';
import type { AppEnv } from '../context.js';
import { ArtifactIdParam, errorResponses, readScopeParameters } from '../openapi-schemas.js';

const route = createRoute({
  method: 'delete',
  path: '/v1/artifacts/{id}',
  tags: ['artifacts'],
  summary: 'Delete your references to an artifact',
  parameters: readScopeParameters,
  description:
    "A session-bound caller removes its session's reference; a tenant-wide caller removes all of the tenant's references, or, naming a session / trace / user, that scope's. The artifact goes with its last reference; its bytes are garbage-collected.",
  request: { params: ArtifactIdParam },
  responses: { 204: { description: 'Deleted' }, ...errorResponses(401, 403, 404) },
});

export function registerDeleteArtifact(app: OpenAPIHono<AppEnv>, service: ArtifactService) {
  app.openapi(route, async (c) => {
    const caller = c.get('caller');
    const access = readAccessOf(c, caller);
    const id = c.req.valid('param').id;
    // Visibility first (one scoped query, same 404 for missing and out of scope), then permission.
    if (!(await service.exists(access, id))) throw errors.notFound(id);
    requirePerm(caller, 'write');
    if (!(await service.delete(access, id))) throw errors.notFound(id);
    return c.body(null, 204);
  });
}
