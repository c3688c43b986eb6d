/** How the D1 repository reads JSON columns and reference rows. */
import type { RefRow } from '../repository.js';

/** A JSON column's text as its value. */
export function parseJson<T = Record<string, unknown>>(value: unknown): T | null {
  return value === null || value === undefined ? null : (JSON.parse(value as string) as T);
}

/** A reference row as D1 returns it: meta and source still JSON text. */
export type RawRefRow = Omit<RefRow, 'meta' | 'source'> & { meta: string | null; source: string | null };

export const toRefRow = (raw: RawRefRow): RefRow => ({
  ...raw,
  meta: parseJson(raw.meta),
  source: parseJson(raw.source),
});
