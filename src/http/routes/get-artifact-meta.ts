import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { ArtifactService } from '../../service/artifact-service.js';
import { readAccessOf, requirePerm } from '../auth.js';
import type { AppEnv } from '../context.js';
import { withLinks } from './artifact-url.js';
import { ArtifactIdParam, ArtifactRefDoc, errorResponses, readScopeParameters } from '../openapi-schemas.js';

const route = createRoute({
  method: 'get',
  path: '/v1/artifacts/{id}/meta',
  tags: ['artifacts'],
  summary: 'The ArtifactRef of an artifact',
  parameters: readScopeParameters,
  request: {
    params: ArtifactIdParam,
    query: z.object({
      url: z
        .enum(['proxy', 'direct'])
        .optional()
        .openapi({ description: 'Add a download link (url, fetchMode, urlExpiresAt) of this mode.' }),
    }),
  },
  responses: {
    200: {
      description: 'The reference as the caller sees it',
      content: { 'application/json': { schema: ArtifactRefDoc } },
    },
    ...errorResponses(401, 403, 404),
  },
});

export function registerGetArtifactMeta(app: OpenAPIHono<AppEnv>, service: ArtifactService, publicUrl?: string) {
  app.openapi(route, async (c) => {
    const caller = c.get('caller');
    requirePerm(caller, 'read');
    const access = readAccessOf(c, caller);
    const ref = await service.getRef(access, c.req.valid('param').id);
    c.header('Cache-Control', c.req.valid('query').url ? 'no-store' : 'private, no-cache');
    const [answer] = await withLinks(c, service, access, [ref], publicUrl);
    return c.json(answer!, 200);
  });
}
