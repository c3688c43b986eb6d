/**
 * A put's options as request headers (Content-Type and X-Artifact-*). Values that are not printable
 * ASCII go as RFC 8187 ext-values (`UTF-8''<percent-encoded>`); where that cannot work (a mime type,
 * a scope part) the put is refused before anything is sent.
 */
import { errors } from '../core/errors.js';
import { encodeExtValue } from '../core/filename.js';
import type { PutOptions } from '../core/schemas.js';

/** The scope a tenant-wide token names for its puts, listings and reads. */
export interface ScopeNames {
  sessionId?: string;
  traceId?: string;
  userId?: string;
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
// A plain value of this shape would be read by the service as an RFC 8187 ext-value.
const LOOKS_LIKE_EXT_VALUE = /^[A-Za-z0-9!#$&+^`{}~-]+'[A-Za-z0-9-]*'/;
const SCOPE_HEADER = /^X-Artifact-(Session|Trace|User)$/;

/** The headers of a put; a per-put scope wins over the store's. */
export function putHeaders(o: PutOptions, scope: ScopeNames, defaultMime: string | undefined): Record<string, string> {
  const mimeType = o.mimeType ?? defaultMime ?? 'application/octet-stream';
  const h: Record<string, string> = { 'Content-Type': asciiHeader('mime type', mimeType) };
  if (o.filename !== undefined) h['X-Artifact-Filename'] = textHeader(o.filename);
  if (o.namespace !== undefined) h['X-Artifact-Namespace'] = asciiHeader('namespace', o.namespace);
  if (o.meta !== undefined) h['X-Artifact-Meta'] = jsonHeader(o.meta);
  if (o.source !== undefined) h['X-Artifact-Source'] = jsonHeader(o.source);
  if (o.ttl !== undefined) h['X-Artifact-Ttl'] = asciiHeader('ttl', String(o.ttl));
  if (o.sha256 !== undefined) h['X-Artifact-Sha256'] = asciiHeader('sha256', o.sha256);
  const session = o.scope?.sessionId ?? scope.sessionId;
  const trace = o.scope?.traceId ?? scope.traceId;
  const user = o.scope?.userId ?? scope.userId;
  if (session !== undefined) h['X-Artifact-Session'] = asciiHeader('sessionId', session);
  if (trace !== undefined) h['X-Artifact-Trace'] = asciiHeader('traceId', trace);
  if (user !== undefined) h['X-Artifact-User'] = asciiHeader('userId', user);
  return h;
}

/**
 * The scope a read names (GET, HEAD, meta, DELETE, links): the store's session and trace, as a token
 * bound to them would read and as the in-process stores read. When several scopes hold the same
 * bytes, this picks the store's own reference.
 */
export function readHeaders(scope: ScopeNames): Record<string, string> {
  const h: Record<string, string> = {};
  if (scope.sessionId !== undefined) h['X-Artifact-Session'] = asciiHeader('sessionId', scope.sessionId);
  if (scope.traceId !== undefined) h['X-Artifact-Trace'] = asciiHeader('traceId', scope.traceId);
  return h;
}

/** Only the scope headers of a put (X-Artifact-Session / -Trace / -User). */
export function scopeHeadersOf(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => SCOPE_HEADER.test(name)));
}

function asciiHeader(name: string, value: string): string {
  if (!PRINTABLE_ASCII.test(value) || value !== value.trim()) {
    throw errors.badRequest(
      `${name} ${JSON.stringify(value)} must be printable ASCII without surrounding spaces: ` +
        'it travels in an HTTP header.',
    );
  }
  return value;
}

/** Plain when the service would read it back unchanged; otherwise `UTF-8''<percent-encoded>`. */
function textHeader(value: string): string {
  const plain = PRINTABLE_ASCII.test(value) && value === value.trim() && !LOOKS_LIKE_EXT_VALUE.test(value);
  return plain ? value : encodeExtValue(value);
}

function jsonHeader(value: Record<string, unknown>): string {
  return textHeader(JSON.stringify(value));
}
