import { z } from '@hono/zod-openapi';
import { ERROR_CODES } from '../core/errors.js';
import { ArtifactRefSchema } from '../core/schemas.js';

/**
 * Schemas as they appear in /openapi.json. Zod 4 attaches `.openapi()` to schemas created after
 * @hono/zod-openapi loaded; the core schemas may be older (core does not depend on Hono), so the
 * documented object is rebuilt here from their shapes.
 */
export const ArtifactRefDoc = z.object(ArtifactRefSchema.shape).openapi('ArtifactRef');

export const ErrorDoc = z
  .object({
    code: z.enum(ERROR_CODES as [string, ...string[]]),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  })
  .openapi('Error');

export const ListPageDoc = z
  .object({ items: z.array(ArtifactRefDoc), nextCursor: z.string().optional() })
  .openapi('ArtifactList');

export const ArtifactIdParam = z.object({
  id: z
    .string()
    .min(1)
    .max(200)
    .openapi({ param: { name: 'id', in: 'path' }, example: 'art_3f1c0a9be2d4c6f8a0b1c2d3' }),
});

const READ_SCOPE_HELP =
  'reference a read means when several scopes hold the same bytes (tenant-wide tokens; a bound token may only repeat its own). Also the X-Artifact-Session / X-Artifact-Trace / X-Artifact-User header.';

/** The scope parts a read may be narrowed by, as OpenAPI parameters (headers win over the query). */
export const readScopeParameters = (['session', 'trace', 'user'] as const).map((name) => ({
  name,
  in: 'query' as const,
  required: false,
  schema: { type: 'string' as const },
  description: `Only this ${name}'s reference: names the ${READ_SCOPE_HELP}`,
}));

/** Standard error responses for a route: each status with the shared error body. */
export function errorResponses(...statuses: number[]) {
  const out: Record<number, { description: string; content: { 'application/json': { schema: typeof ErrorDoc } } }> = {};
  for (const s of statuses)
    out[s] = { description: DESCRIPTIONS[s] ?? 'Error', content: { 'application/json': { schema: ErrorDoc } } };
  return out;
}

const DESCRIPTIONS: Record<number, string> = {
  400: 'Bad request (bad_request)',
  401: 'Missing or invalid token (unauthorized)',
  403: 'Permission missing (forbidden)',
  404: 'Missing or out of scope (not_found)',
  409: 'Quota or hash collision (quota_exceeded, hash_collision)',
  413: 'Body over the maximum artifact size (payload_too_large)',
  415: 'The artifact has no view of this kind, e.g. lines of a binary file (unsupported_type)',
  416: 'Bad range (invalid_range)',
  422: 'Declared sha256 does not match (checksum_mismatch); or content that cannot be read this way, malformed or over a limit (unprocessable)',
  429: 'Rate limited (rate_limited), with Retry-After',
  503: 'Backend unavailable (backend_unavailable), with Retry-After',
};
