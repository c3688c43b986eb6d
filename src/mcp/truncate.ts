import { jsonSize, setKey, type JsonValue } from './json.js';

/**
 * Structure-preserving truncation: keys are kept, long strings are cut with
 * `… [truncated: N chars]`, long arrays keep their first items and say how many more there were.
 * Limits halve until the value fits the budget; the last resort is the serialized text, cut.
 */

export interface TruncateLimits {
  /** Longest string kept whole. */
  fieldChars: number;
  /** Items kept per array. */
  arrayItems: number;
  /** Keys kept per object. */
  objectKeys: number;
}

export const truncatedSuffix = (n: number) => `… [truncated: ${n} chars]`;

export function truncateValue(value: JsonValue, limits: TruncateLimits): JsonValue {
  if (typeof value === 'string') return cutString(value, limits.fieldChars);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const kept = value.slice(0, limits.arrayItems).map((item) => truncateValue(item, limits));
    if (value.length > limits.arrayItems) kept.push(`… [${value.length - limits.arrayItems} more items]`);
    return kept;
  }
  const out: Record<string, JsonValue> = {};
  const keys = Object.keys(value);
  for (const key of keys.slice(0, limits.objectKeys)) setKey(out, key, truncateValue(value[key]!, limits));
  if (keys.length > limits.objectKeys) setKey(out, '…', `[${keys.length - limits.objectKeys} more keys]`);
  return out;
}

function cutString(s: string, max: number): string {
  if (s.length <= max) return s;
  let end = max;
  const code = s.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--; // never split a surrogate pair
  return s.slice(0, end) + truncatedSuffix(s.length - end);
}

/** Measures what the model reads: a string as itself, anything else as its JSON. With a cap, see jsonSize. */
export const measureChars = (v: JsonValue, cap?: number): number =>
  typeof v === 'string' ? v.length : jsonSize(v, cap);

/**
 * The largest structure-preserving truncation of `value` that `fits`. Always returns something that
 * fits, provided a short string does (the final fallback is the serialized text, cut).
 */
export function truncateToFit(
  value: JsonValue,
  fits: (v: JsonValue) => boolean,
  start: Partial<TruncateLimits> = {},
): JsonValue {
  if (fits(value)) return value;
  const limits: TruncateLimits = {
    fieldChars: start.fieldChars ?? 10_000,
    arrayItems: start.arrayItems ?? 100,
    objectKeys: start.objectKeys ?? 1000,
  };
  for (let round = 0; round < 64; round++) {
    const candidate = truncateValue(value, limits);
    if (fits(candidate)) return candidate;
    const before = { ...limits };
    limits.fieldChars = Math.max(16, Math.floor(limits.fieldChars / 2));
    limits.arrayItems = Math.max(1, Math.floor(limits.arrayItems / 2));
    if (limits.fieldChars === before.fieldChars && limits.arrayItems === before.arrayItems) {
      limits.objectKeys = Math.max(1, Math.floor(limits.objectKeys / 2));
      if (limits.objectKeys === before.objectKeys) break;
    }
  }
  const text = typeof value === 'string' ? value : JSON.stringify(truncateValue(value, limits));
  let keep = Math.max(0, text.length);
  let out = text;
  while (!fits(out) && keep > 0) {
    keep = Math.floor(keep / 2);
    out = cutString(text, keep);
  }
  return fits(out) ? out : '';
}
