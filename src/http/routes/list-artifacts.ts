import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import { LIST_SORTS } from '../../core/schemas.js';
import type { ArtifactService } from '../../service/artifact-service.js';
import { accessOf, namedScope, requirePerm } from '../auth.js';
import { withLinks } from './artifact-url.js';
import type { AppEnv } from '../context.js';
import { errorResponses, ListPageDoc } from '../openapi-schemas.js';

const query = z.object({
  session: z.string().optional().openapi({
    description:
      'Only this session (a session-bound token always lists its own). Also accepted as the X-Artifact-Session header, as are X-Artifact-Trace and X-Artifact-User.',
  }),
  trace: z.string().optional(),
  user: z.string().optional(),
  namespace: z.string().optional(),
  mimePrefix: z.string().optional().openapi({ description: 'For example image/ or application/pdf' }),
  createdAfter: z.string().optional().openapi({ description: 'ISO 8601, inclusive' }),
  createdBefore: z.string().optional().openapi({ description: 'ISO 8601, exclusive' }),
  q: z.string().optional().openapi({
    description:
      'Only references whose id, filename or name holds this text (1-200 characters; letters match either case, % _ and \\ match themselves).',
    example: 'report',
  }),
  sort: z.enum(LIST_SORTS).optional().openapi({
    description:
      'newest (default) or oldest by creation time; largest or smallest by size; name: by filename (else name, else id), A→Z in byte order. Ties: by creation time.',
  }),
  cursor: z
    .string()
    .optional()
    .openapi({ description: 'nextCursor of the previous page, sent with the same filters and sort' }),
  limit: z
    .string()
    .regex(/^\d{1,4}$/, 'a whole number 1-1000')
    .optional()
    .openapi({ description: '1-1000, default 100' }),
  url: z
    .enum(['proxy', 'direct'])
    .optional()
    .openapi({ description: 'Give every item a download link (url, fetchMode, urlExpiresAt) of this mode.' }),
});

const route = createRoute({
  method: 'get',
  path: '/v1/artifacts',
  tags: ['artifacts'],
  summary: 'List references: filtered, searched, sorted (newest first by default)',
  description:
    'One row per scope holding an id. The order is stable: pages never repeat or skip items that existed when listing began.',
  request: { query },
  responses: {
    200: { description: 'A page', content: { 'application/json': { schema: ListPageDoc } } },
    ...errorResponses(400, 401, 403),
  },
});

export function registerListArtifacts(app: OpenAPIHono<AppEnv>, service: ArtifactService, publicUrl?: string) {
  app.openapi(route, async (c) => {
    const caller = c.get('caller');
    requirePerm(caller, 'read');
    const q = c.req.valid('query');
    // The scope of a listing may be named like a put's: X-Artifact-* headers, else query parameters.
    const access = accessOf(caller);
    const page = await service.list(access, {
      ...namedScope(c),
      namespace: q.namespace,
      mimePrefix: q.mimePrefix,
      createdAfter: q.createdAfter,
      createdBefore: q.createdBefore,
      q: q.q,
      sort: q.sort,
      cursor: q.cursor,
      limit: q.limit === undefined ? undefined : Number(q.limit),
    });
    c.header('Cache-Control', q.url ? 'no-store' : 'private, no-cache');
    return c.json({ ...page, items: await withLinks(c, service, access, page.items, publicUrl) }, 200);
  });
}
