import { contentDisposition } from '../core/filename.js';
import type { DownloadEntity } from '../service/artifact-service.js';

// Types a browser would execute or render actively: never inline from the API origin.
const ACTIVE_TYPES = /^(text\/html|application\/xhtml\+xml|image\/svg\+xml|text\/xml|application\/xml|[a-z]+\/[a-z0-9.+-]*\+xml|text\/javascript|application\/javascript|application\/ecmascript|text\/ecmascript|application\/x-javascript|text\/xsl|application\/pdf-active)$/i;

export function isActiveType(mimeType: string): boolean {
  return ACTIVE_TYPES.test(mimeType.split(';')[0]!.trim());
}

/** The strong ETag of an artifact: its sha256. */
export const etagOf = (entity: { sha256: string }) => `"${entity.sha256}"`;

/** Does an If-None-Match / If-Range value name this entity? */
export function etagMatches(header: string | undefined, etag: string, allowWeak: boolean): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((raw) => {
    const t = raw.trim();
    if (t.startsWith('W/')) return allowWeak && t.slice(2) === etag;
    return t === etag;
  });
}

const CACHE_CONTROL = 'private, max-age=31536000, immutable';

/**
 * Headers of every download: untrusted bytes never run in our origin (nosniff + CSP sandbox; active
 * types as attachments), content-hash ids are immutable, bearer responses are private. One object
 * literal, extended in place by the caller (Content-Length, Content-Range): it is built on every GET.
 */
export function downloadHeaders(entity: DownloadEntity, disposition: 'inline' | 'attachment' | undefined, requestId?: string): Record<string, string> {
  const headers: Record<string, string> = {
    'Content-Type': entity.mimeType,
    'Content-Disposition': contentDisposition(isActiveType(entity.mimeType) ? 'attachment' : (disposition ?? 'inline'), entity.filename ?? undefined),
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': 'sandbox',
    'Cache-Control': CACHE_CONTROL,
    Vary: 'Authorization',
    ETag: etagOf(entity),
    'Accept-Ranges': 'bytes',
  };
  if (requestId !== undefined) headers['X-Request-Id'] = requestId;
  return headers;
}

/** A 304 keeps the validators and caching headers, not the entity ones. */
export function notModifiedHeaders(entity: { sha256: string }): Record<string, string> {
  return { ETag: etagOf(entity), 'Cache-Control': CACHE_CONTROL, Vary: 'Authorization', 'X-Content-Type-Options': 'nosniff' };
}
