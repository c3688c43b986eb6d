/**
 * Output schemas as the host sees them through the gateway. The transformer may put
 * `{ artifact, summary }` (or `{ error, summary }`) where a value was, and the guardrail may replace
 * the whole structured result by `{ artifact, summary, preview }`. A host's SDK checks
 * structuredContent against the tool's outputSchema, so every place a value can be replaced also
 * accepts the stand-in; everything else about the schema is unchanged.
 */

type Schema = Record<string, unknown>;

/** What the transformer puts where a value was. */
export const STAND_IN: Schema = {
  type: 'object',
  description: 'Stored as an artifact: { artifact, summary } (or { error, summary }) in place of the value.',
  properties: { summary: { type: 'string' }, artifact: { type: 'object' }, error: { type: 'string' } },
  required: ['summary'],
};

/** What the guardrail returns for a whole result over budget. */
export const CLAMPED: Schema = {
  type: 'object',
  description: 'The whole result was over the budget and is stored as an artifact: ref, summary and a preview.',
  properties: { artifact: { type: 'object' }, summary: { type: 'string' }, preview: {} },
  required: ['artifact', 'summary'],
};

const isSchema = (v: unknown): v is Schema => v !== null && typeof v === 'object' && !Array.isArray(v);
const orStandIn = (s: unknown): unknown => (isSchema(s) ? { anyOf: [relax(s), STAND_IN] } : s);

function relax(schema: Schema): Schema {
  const out: Schema = { ...schema };
  if (isSchema(schema.properties))
    out.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, orStandIn(v)]));
  if (isSchema(schema.additionalProperties)) out.additionalProperties = orStandIn(schema.additionalProperties);
  if (isSchema(schema.items)) out.items = orStandIn(schema.items);
  if (Array.isArray(schema.prefixItems)) out.prefixItems = schema.prefixItems.map(orStandIn);
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const)
    if (Array.isArray(schema[key])) out[key] = (schema[key] as unknown[]).map((s) => (isSchema(s) ? relax(s) : s));
  for (const key of ['$defs', 'definitions'] as const)
    if (isSchema(schema[key]))
      out[key] = Object.fromEntries(
        Object.entries(schema[key] as Schema).map(([k, v]) => [k, isSchema(v) ? relax(v) : v]),
      );
  return out;
}

/** The tool's outputSchema, relaxed where the gateway may replace a value. */
export function relaxOutputSchema(schema: Schema): Schema {
  const { $schema, $defs, definitions, $id, ...rest } = relax(schema);
  return {
    ...($schema !== undefined ? { $schema } : {}),
    ...($id !== undefined ? { $id } : {}),
    type: 'object',
    anyOf: [rest, CLAMPED],
    ...($defs !== undefined ? { $defs } : {}),
    ...(definitions !== undefined ? { definitions } : {}),
  };
}
