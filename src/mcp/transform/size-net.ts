/**
 * The size net, the last layer: any string or subtree still over maxInlineChars becomes a text or
 * JSON artifact, with a short preview in its place.
 */
import { jsonSize, type JsonValue, type WorkValue } from '../json.js';
import { isPlainObject } from '../paths.js';
import { formatCount, siblingVars } from '../summary.js';
import { measureChars, truncateToFit } from '../truncate.js';
import { shortPath } from './names.js';
import { holderOf, isOutcomePlaceholder, placeholder, storeText } from './payloads.js';
import { hideBase64Deep, previewText } from './previews.js';
import type { TransformRun } from './run.js';

/** Room a placeholder takes in its parent, when deciding whether an object fits once its big fields are stored. */
const PLACEHOLDER_CHARS = 1200;
/** Longest string the preview of a stored subtree keeps. */
const PREVIEW_FIELD_CHARS = 80;

/** Stores parent[key] if it is over maxInlineChars: an object that fits without its big fields keeps the rest. */
export async function applySizeNet(
  run: TransformRun,
  parent: Record<string, WorkValue> | WorkValue[],
  key: string | number,
  path: string,
): Promise<void> {
  const value = (parent as Record<string | number, WorkValue>)[key]!;
  const { maxInlineChars: max, previewChars } = run.config;
  // Sizes are capped at the limit: deciding "over or not" never walks more than `max` chars of a subtree.
  if (jsonSize(value, max) <= max || isOutcomePlaceholder(value)) return;
  const where = shortPath(path) || 'result';
  if (typeof value === 'string') {
    const outcome = await storeText(run, value, 'text/plain; charset=utf-8', {
      layer: 'size',
      where,
      vars: siblingVars(parent),
    });
    run.replace(parent, key, { ...placeholder(outcome), preview: previewText(value, previewChars, holderOf(outcome)) });
    return;
  }
  if (isPlainObject(value)) {
    // Keep the object and store only its big fields, when what is left (with a placeholder per big field) fits.
    const big: string[] = [];
    let residual = 1;
    for (const k of Object.keys(value)) {
      const size = jsonSize(value[k]!, max);
      if (size > max) big.push(k);
      residual += jsonSize(k) + 1 + (size > max ? PLACEHOLDER_CHARS : size) + 1;
      if (residual > max) break;
    }
    if (big.length > 0 && residual <= max) {
      for (const k of big) await applySizeNet(run, value, k, path ? `${path}.${k}` : k);
      return;
    }
  }
  const json = value as JsonValue;
  const outcome = await storeText(
    run,
    JSON.stringify(json),
    'application/json',
    { layer: 'size', where, vars: {} },
    describeShape(json),
  );
  // Strings are cut to 80 characters or fewer: none shows base64 in that much.
  const preview = truncateToFit(
    hideBase64Deep(json, PREVIEW_FIELD_CHARS, holderOf(outcome)),
    (v) => measureChars(v, previewChars) <= previewChars,
    { fieldChars: PREVIEW_FIELD_CHARS, arrayItems: 3 },
  );
  run.replace(parent, key, { ...placeholder(outcome), preview });
}

function describeShape(v: JsonValue): string {
  if (Array.isArray(v)) return `JSON array of ${formatCount(v.length)} items`;
  if (isPlainObject(v)) return `JSON object with ${formatCount(Object.keys(v).length)} keys`;
  return 'JSON';
}
