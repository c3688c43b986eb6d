/**
 * Download links: a URL a browser downloads with and no token, that never outlives the reference.
 * Direct links come from the blob store (S3 presigned, or a CDN); proxy links are signed by the
 * service and answered by GET /v1/download/{id}.
 */
import type { BlobStore } from '../blob/blob-store.js';
import { isActiveType } from '../core/active-types.js';
import { errors } from '../core/errors.js';
import { contentDisposition } from '../core/filename.js';
import type { FetchMode } from '../core/schemas.js';
import type { RefRow } from '../db/repository.js';
import type { DownloadUrl, DownloadUrlOptions, LinkSettings } from './types.js';

export interface LinksDeps {
  blobs: BlobStore;
  /** Who signs proxy links and how long links may live; without a signer only direct links work. */
  settings?: LinkSettings;
  now: () => number;
}

export interface Links {
  /** A link's lifetime as asked (or the default); bad_request outside 1 s to the maximum. */
  ttlOf(options: DownloadUrlOptions): number;
  /** A link to the bytes of a found reference (not_found once the reference has expired). */
  linkOf(tenantId: string, row: RefRow, options: DownloadUrlOptions): Promise<DownloadUrl>;
}

export function createLinks({ blobs, settings, now }: LinksDeps): Links {
  function ttlOf(o: DownloadUrlOptions): number {
    const ttl = o.expiresIn ?? settings?.defaultTtlSeconds ?? 900;
    const maxTtl = settings?.maxTtlSeconds ?? 7 * 24 * 3600;
    if (!Number.isInteger(ttl) || ttl < 1 || ttl > maxTtl)
      throw errors.badRequest(`expiresIn must be a whole number of seconds from 1 to ${maxTtl}.`);
    return ttl;
  }

  return {
    ttlOf,
    async linkOf(tenantId, row, o) {
      const ttl = ttlOf(o);
      const id = row.artifactId;
      const nowS = Math.floor(now() / 1000);
      const expiresAt = Math.min(nowS + ttl, Math.floor(row.expiresAt / 1000));
      if (expiresAt <= nowS) throw errors.notFound(id);
      const disposition = isActiveType(row.mimeType) ? 'attachment' : (o.disposition ?? 'inline');
      const answer = (url: string, fetchMode: FetchMode): DownloadUrl => ({
        url,
        fetchMode,
        urlExpiresAt: new Date(expiresAt * 1000).toISOString(),
        mimeType: row.mimeType,
        sizeBytes: row.sizeBytes,
      });
      if (o.mode === 'direct' && blobs.direct) {
        const url = await blobs.direct.presignGet(row.sha256, {
          expiresInSeconds: expiresAt - nowS,
          contentType: row.mimeType,
          contentDisposition: contentDisposition(disposition, row.filename ?? undefined),
        });
        return answer(url, 'direct');
      }
      if (!settings?.signer) {
        throw errors.backendUnavailable(
          'This service has no key to sign download links. The operator sets ARTIFACT_STORE_URL_SIGNING_KEYS (or HS256 JWT secrets).',
          { retryAfter: 3600 },
        );
      }
      const query = await settings.signer.sign({ tenantId, artifactId: id, expiresAt, disposition });
      return answer(`${o.baseUrl.replace(/\/+$/, '')}/v1/download/${encodeURIComponent(id)}?${query}`, 'proxy');
    },
  };
}
