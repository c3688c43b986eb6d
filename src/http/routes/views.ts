/**
 * GET /v1/artifacts/{id}/text, /search and /query: what a model reads of a stored artifact (lines,
 * matching lines, JSONPath values), each answer within a budget and with `text` ready for the model.
 * The views themselves are the service's (service/views/).
 */
import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi';
import type { ArtifactViews } from '../../service/views/index.js';
import { readAccessOf, requirePerm } from '../auth.js';
import type { AppEnv } from '../context.js';
import { ArtifactIdParam, errorResponses, readScopeParameters } from '../openapi-schemas.js';
import { publicBaseUrl } from './artifact-url.js';

const whole = (description: string) =>
  z
    .string()
    .regex(/^\d{1,10}$/, 'a whole number')
    .optional()
    .openapi({ description });
const flag = (description: string) => z.enum(['true', 'false', '1', '0']).optional().openapi({ description });
const isOn = (v: string | undefined) => v === 'true' || v === '1';
const num = (v: string | undefined) => (v === undefined ? undefined : Number(v));

const budget = whole(
  'Characters the answer’s `text` may take (1,000 to 1,000,000). Default: the service’s view budget (ARTIFACT_STORE_VIEW_BUDGET_CHARS, 50,000).',
);
const page = whole('PDF: the page (1-based) to read, or to search from. Default 1.');
const entry = z.string().max(4096).optional().openapi({
  description:
    'ZIP: the entry to read, search or query (its path inside the archive). Default: the listing of entries.',
});

const ViewHeadDoc = {
  id: z.string(),
  mimeType: z.string(),
  sizeBytes: z.number().int(),
  filename: z.string().optional(),
  view: z.enum(['text', 'pdf', 'zip', 'image']),
  page: z.number().int().optional(),
  pageCount: z.number().int().optional(),
  entry: z.string().optional(),
  text: z
    .string()
    .openapi({ description: 'What a model reads: the lines, numbered, and how to go on; never over the budget.' }),
};

const ReadAnswerDoc = z
  .object({
    ...ViewHeadDoc,
    offset: z.number().int(),
    column: z.number().int().optional(),
    lines: z.array(z.string()),
    totalLines: z.number().int(),
    nextOffset: z.number().int().nullable(),
    nextColumn: z.number().int().optional(),
    width: z.number().int().optional(),
    height: z.number().int().optional(),
    url: z.string().optional(),
  })
  .openapi('ReadAnswer');

const SearchAnswerDoc = z
  .object({
    ...ViewHeadDoc,
    pattern: z.string(),
    regex: z.boolean(),
    ignoreCase: z.boolean(),
    totalMatches: z.number().int(),
    returnedMatches: z.number().int(),
    lines: z.array(
      z.object({ line: z.number().int(), page: z.number().int().optional(), text: z.string(), match: z.boolean() }),
    ),
    nextOffset: z.number().int().nullable(),
    nextPage: z.number().int().optional(),
    longLinesSkipped: z
      .object({ count: z.number().int(), first: z.number().int(), page: z.number().int().optional() })
      .optional()
      .openapi({ description: 'A regex search leaves out lines over 65,536 characters: how many, and the first.' }),
  })
  .openapi('SearchAnswer');

const QueryAnswerDoc = z
  .object({
    ...ViewHeadDoc,
    path: z.string(),
    totalMatches: z.number().int(),
    totalIsLowerBound: z.boolean().optional(),
    matches: z.array(z.object({ path: z.string(), value: z.unknown(), cut: z.string().optional() })),
  })
  .openapi('QueryAnswer');

const errorsOf = errorResponses(400, 401, 403, 404, 415, 422, 429, 503);

const readRoute = createRoute({
  method: 'get',
  path: '/v1/artifacts/{id}/text',
  tags: ['views'],
  summary: 'Lines of an artifact, numbered, within a budget',
  description:
    'Text of any text type, JSON, XML, YAML, CSV or source; a PDF page by page (`page`); a ZIP’s entries, or one entry’s text (`entry`); for an image, its type, pixel size and a link. `nextOffset` (and `nextColumn` inside a long line) says where to go on.',
  parameters: readScopeParameters,
  request: {
    params: ArtifactIdParam,
    query: z.object({
      offset: whole('First line, 1-based. Default 1.'),
      limit: whole('Lines at most. Default: as many as fit the budget.'),
      column: whole(
        'Within line `offset`, the first character (1-based): goes on inside a line too long for one answer.',
      ),
      page,
      entry,
      budget,
    }),
  },
  responses: {
    200: { description: 'The lines', content: { 'application/json': { schema: ReadAnswerDoc } } },
    ...errorsOf,
  },
});

const searchRoute = createRoute({
  method: 'get',
  path: '/v1/artifacts/{id}/search',
  tags: ['views'],
  summary: 'Matching lines of an artifact, as grep -n finds them',
  description:
    'A fixed string, or a regular expression (JavaScript syntax, run in linear time: backreferences, lookahead and lookbehind with a capture group are refused). The whole artifact is counted; the answer holds the first matches that fit, with `context` lines, and `nextOffset` to search on from.',
  parameters: readScopeParameters,
  request: {
    params: ArtifactIdParam,
    query: z.object({
      pattern: z.string().max(1000).openapi({ description: 'What to look for (at most 1,000 characters).' }),
      regex: flag('pattern is a regular expression. Default false.'),
      ignoreCase: flag('Match either case. Default false.'),
      context: whole('Lines shown before and after each match (0 to 20). Default 0.'),
      maxMatches: whole('Matching lines returned at most (1 to 500). Default 20.'),
      offset: whole('Search from this line (1-based). Default 1.'),
      page,
      entry,
      budget,
    }),
  },
  responses: {
    200: { description: 'The matches', content: { 'application/json': { schema: SearchAnswerDoc } } },
    ...errorsOf,
  },
});

const queryRoute = createRoute({
  method: 'get',
  path: '/v1/artifacts/{id}/query',
  tags: ['views'],
  summary: 'Values an RFC 9535 JSONPath selects in a JSON artifact',
  description:
    'Each value with its normalized path, cut to fit the budget (long strings, arrays and objects say what was left out).',
  parameters: readScopeParameters,
  request: {
    params: ArtifactIdParam,
    query: z.object({
      path: z.string().max(2000).openapi({ description: 'An RFC 9535 JSONPath, e.g. $.issues[?@.number == 42].title' }),
      entry,
      budget,
    }),
  },
  responses: {
    200: { description: 'The values', content: { 'application/json': { schema: QueryAnswerDoc } } },
    ...errorsOf,
  },
});

export function registerViews(app: OpenAPIHono<AppEnv>, views: ArtifactViews, publicUrl?: string) {
  const start = (c: Parameters<Parameters<typeof app.openapi>[1]>[0]) => {
    const caller = c.get('caller');
    requirePerm(caller, 'read');
    c.header('Cache-Control', 'private, no-store');
    return { access: readAccessOf(c, caller), call: { baseUrl: publicBaseUrl(publicUrl, c.req.url) } };
  };

  app.openapi(readRoute, async (c) => {
    const { access, call } = start(c);
    const q = c.req.valid('query');
    const answer = await views.read(
      access,
      c.req.valid('param').id,
      {
        offset: num(q.offset),
        limit: num(q.limit),
        column: num(q.column),
        page: num(q.page),
        entry: q.entry,
        budget: num(q.budget),
      },
      call,
    );
    return c.json(answer, 200);
  });

  app.openapi(searchRoute, async (c) => {
    const { access, call } = start(c);
    const q = c.req.valid('query');
    const answer = await views.search(
      access,
      c.req.valid('param').id,
      {
        pattern: q.pattern,
        regex: isOn(q.regex),
        ignoreCase: isOn(q.ignoreCase),
        context: num(q.context),
        maxMatches: num(q.maxMatches),
        offset: num(q.offset),
        page: num(q.page),
        entry: q.entry,
        budget: num(q.budget),
      },
      call,
    );
    return c.json(answer, 200);
  });

  app.openapi(queryRoute, async (c) => {
    const { access, call } = start(c);
    const q = c.req.valid('query');
    const answer = await views.query(
      access,
      c.req.valid('param').id,
      { path: q.path, entry: q.entry, budget: num(q.budget) },
      call,
    );
    return c.json(answer, 200);
  });
}
