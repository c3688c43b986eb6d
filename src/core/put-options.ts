import { errors } from './errors.js';
import { sanitizeFilename } from './filename.js';
import { assertNamespace } from './ids.js';
import { PutOptionsSchema, type PutOptions } from './schemas.js';

const MIME_PATTERN = /^[a-z0-9!#$&^_.+-]{1,127}\/[a-z0-9!#$&^_.+-]{1,127}(\s*;[\x20-\x7e]*)?$/i;
export const META_MAX_BYTES = 8 * 1024;
export const DEFAULT_MIME = 'application/octet-stream';
export const TEXT_MIME = 'text/plain; charset=utf-8';

/**
 * The expiry stored for a reference that never expires: the last millisecond of year 9999, a date
 * every runtime and SQLite's date functions still handle. Refs show no expiresAt for it.
 */
export const NEVER_EXPIRES_AT = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** When a reference put at `at` with this ttl expires (ms since the epoch). */
export function expiryOf(at: number, ttl: number | 'never'): number {
  return ttl === 'never' ? NEVER_EXPIRES_AT : at + ttl * 1000;
}

/**
 * Validates the options of a put the same way in every store: schema, mime syntax, TTL bound, meta
 * and source size, and the filename reduced to a safe display name. Throws bad_request.
 */
export function validatePutOptions(raw: PutOptions, limits: { maxTtlSeconds: number; allowNoExpiry?: boolean }) {
  const parsed = PutOptionsSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.join('.') || 'options';
    if (field === 'namespace' && typeof raw.namespace === 'string') assertNamespace(raw.namespace);
    throw errors.badRequest(`Invalid put option ${field}: ${issue.message}.`);
  }
  const options = parsed.data;
  const mimeType = options.mimeType?.trim();
  if (mimeType !== undefined && !MIME_PATTERN.test(mimeType)) {
    throw errors.badRequest(
      `Invalid mime type ${JSON.stringify(options.mimeType)}: use type/subtype, for example application/pdf.`,
    );
  }
  if (options.ttl === 'never' && !limits.allowNoExpiry) {
    throw errors.badRequest(
      'ttl "never" is not allowed here: references expire, after at most ' +
        `${limits.maxTtlSeconds}s. Ask for seconds, or ask the operator to set ARTIFACT_STORE_ALLOW_NO_EXPIRY=true ` +
        "(or allowNoExpiry in your tenant's policy).",
    );
  }
  if (typeof options.ttl === 'number' && options.ttl > limits.maxTtlSeconds) {
    throw errors.badRequest(
      `ttl ${options.ttl}s is over the maximum of ${limits.maxTtlSeconds}s. Ask for less, or raise ARTIFACT_STORE_MAX_TTL_SECONDS.`,
    );
  }
  for (const [name, value] of [
    ['meta', options.meta],
    ['source', options.source],
  ] as const) {
    if (value !== undefined && new TextEncoder().encode(JSON.stringify(value)).byteLength > META_MAX_BYTES) {
      throw errors.badRequest(
        `${name} is larger than ${META_MAX_BYTES} bytes of JSON. Keep it small; store big data as an artifact.`,
      );
    }
  }
  return { ...options, mimeType, filename: sanitizeFilename(options.filename) };
}
