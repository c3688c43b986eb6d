import { isActiveType } from '../core/active-types.js';
import { contentDisposition } from '../core/filename.js';
import type { DownloadEntity } from '../service/artifact-service.js';

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
export function downloadHeaders(
  entity: DownloadEntity,
  disposition: 'inline' | 'attachment' | undefined,
  requestId?: string,
  cacheControl?: string,
): Record<string, string> {
  const headers: Record<string, string> = {
    'Content-Type': entity.mimeType,
    'Content-Disposition': contentDisposition(
      isActiveType(entity.mimeType) ? 'attachment' : (disposition ?? 'inline'),
      entity.filename ?? undefined,
    ),
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': 'sandbox',
    'Cache-Control': cacheControl ?? CACHE_CONTROL,
    Vary: 'Authorization',
    ETag: etagOf(entity),
    'Accept-Ranges': 'bytes',
  };
  if (requestId !== undefined) headers['X-Request-Id'] = requestId;
  return headers;
}

/** A 304 keeps the validators and caching headers, not the entity ones. */
export function notModifiedHeaders(entity: { sha256: string }, cacheControl?: string): Record<string, string> {
  return {
    ETag: etagOf(entity),
    'Cache-Control': cacheControl ?? CACHE_CONTROL,
    Vary: 'Authorization',
    'X-Content-Type-Options': 'nosniff',
  };
}

/**
 * A signed link's response may sit in shared caches (a CDN in front of the service), but never
 * longer than the link is valid.
 */
export const signedLinkCacheControl = (secondsLeft: number) =>
  `public, max-age=${Math.max(0, Math.floor(secondsLeft))}, immutable`;
