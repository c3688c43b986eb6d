import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { ArtifactService } from '../../service/artifact-service.js';
import { accessOf, requirePerm } from '../auth.js';
import type { AppEnv } from '../context.js';
import { ArtifactIdParam, ArtifactRefDoc, errorResponses } from '../openapi-schemas.js';

const route = createRoute({
  method: 'get',
  path: '/v1/artifacts/{id}/meta',
  tags: ['artifacts'],
  summary: 'The ArtifactRef of an artifact',
  request: { params: ArtifactIdParam },
  responses: {
    200: { description: 'The reference as the caller sees it', content: { 'application/json': { schema: ArtifactRefDoc } } },
    ...errorResponses(401, 403, 404),
  },
});

export function registerGetArtifactMeta(app: OpenAPIHono<AppEnv>, service: ArtifactService) {
  app.openapi(route, async (c) => {
    const caller = c.get('caller');
    requirePerm(caller, 'read');
    const ref = await service.getRef(accessOf(caller), c.req.valid('param').id);
    c.header('Cache-Control', 'private, no-cache');
    return c.json(ref, 200);
  });
}
