import { contentDisposition } from '../core/filename.js';
import type { ArtifactRef } from '../core/schemas.js';

// Types a browser would execute or render actively: never inline from the API origin.
const ACTIVE_TYPES = /^(text\/html|application\/xhtml\+xml|image\/svg\+xml|text\/xml|application\/xml|[a-z]+\/[a-z0-9.+-]*\+xml|text\/javascript|application\/javascript|application\/ecmascript|text\/ecmascript|application\/x-javascript|text\/xsl|application\/pdf-active)$/i;

export function isActiveType(mimeType: string): boolean {
  return ACTIVE_TYPES.test(mimeType.split(';')[0]!.trim());
}

/** The strong ETag of an artifact: its sha256. */
export const etagOf = (ref: Pick<ArtifactRef, 'sha256'>) => `"${ref.sha256}"`;

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

/**
 * Headers of every download: untrusted bytes never run in our origin (nosniff + CSP sandbox; active
 * types as attachments), content-hash ids are immutable, bearer responses are private.
 */
export function downloadHeaders(ref: ArtifactRef, options: { disposition?: 'inline' | 'attachment'; cache: 'private' }): Record<string, string> {
  const disposition = isActiveType(ref.mimeType) ? 'attachment' : (options.disposition ?? 'inline');
  return {
    'Content-Type': ref.mimeType,
    'Content-Disposition': contentDisposition(disposition, ref.filename),
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': 'sandbox',
    'Cache-Control': 'private, max-age=31536000, immutable',
    Vary: 'Authorization',
    ETag: etagOf(ref),
    'Accept-Ranges': 'bytes',
  };
}
