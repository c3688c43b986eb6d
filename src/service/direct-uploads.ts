/**
 * Direct uploads: the client PUTs its bytes straight to the blob store through a presigned URL, and
 * the service commits them like a put once it has re-read and hashed them itself.
 */
import { ArtifactError, errors, isArtifactError } from '../core/errors.js';
import { SHA256_PATTERN } from '../core/ids.js';
import { narrowScope } from '../core/scope.js';
import type { ArtifactScope, PutOptions } from '../core/schemas.js';
import type { BlobStore } from '../blob/blob-store.js';
import { refusalBeforeBytes } from '../db/put-limits.js';
import type { ArtifactRepository } from '../db/repository.js';
import type { PutPolicies } from './put-policy.js';
import type { Puts } from './puts.js';
import type { Access, ArtifactService, PutResult, UploadTicket } from './types.js';

/** What direct uploads use: storage, the put's policies, and the put's metadata commit and pin. */
export interface DirectUploadsDeps {
  repo: ArtifactRepository;
  blobs: BlobStore;
  policies: PutPolicies;
  puts: Pick<Puts, 'commit' | 'pin'>;
  now: () => number;
  /** How long a direct upload may take from begin to complete (default 3600 s). */
  uploadTtlSeconds?: number;
}

export function createDirectUploads(deps: DirectUploadsDeps): Pick<ArtifactService, 'beginUpload' | 'completeUpload'> {
  const { repo, blobs, policies, puts, now } = deps;
  return {
    /**
     * Starts a direct upload: the client PUTs exactly `sizeBytes` to the returned url (no token),
     * then calls completeUpload. Every option is checked now, so a bad one costs no upload.
     */
    async beginUpload(
      scope: ArtifactScope,
      declared: { sizeBytes: number; sha256: string },
      rawOptions: PutOptions = {},
    ): Promise<UploadTicket> {
      if (!blobs.direct) {
        throw errors.badRequest(
          `This service's blob store (${blobs.driver}) takes no direct uploads: they need the s3 driver, or r2 with R2's S3 credentials set. Send the bytes to POST /v1/artifacts instead.`,
          { details: { reason: 'direct_uploads_unavailable' } },
        );
      }
      const options = policies.check(scope.tenantId, rawOptions);
      const putScope = narrowScope(scope, options.scope);
      if (!Number.isSafeInteger(declared.sizeBytes) || declared.sizeBytes < 1)
        throw errors.badRequest('sizeBytes must be a whole number of bytes, at least 1.');
      const maxBytes = policies.of(putScope.tenantId).maxArtifactBytes;
      if (declared.sizeBytes > maxBytes) throw errors.payloadTooLarge(maxBytes);
      // Bytes that could never fit are refused before any is uploaded, with the put plan's own refusal.
      const tooBig = refusalBeforeBytes({
        scope: putScope,
        sizeBytes: declared.sizeBytes,
        quota: policies.quotaOf(putScope.tenantId),
      });
      if (tooBig) throw tooBig;
      if (!SHA256_PATTERN.test(declared.sha256))
        throw errors.badRequest('sha256 must be 64 lowercase hex characters: the hash of the bytes you will upload.');
      const at = now();
      const ttl = deps.uploadTtlSeconds ?? 3600;
      const staged = await blobs.direct.presignUpload({
        sizeBytes: declared.sizeBytes,
        expiresInSeconds: ttl,
        sha256: declared.sha256,
      });
      const id = `up_${randomHex(16)}`;
      const { scope: _ignored, ...kept } = options;
      await repo.createUpload({
        id,
        tenantId: putScope.tenantId,
        userId: putScope.userId ?? '',
        sessionId: putScope.sessionId ?? '',
        traceId: putScope.traceId ?? '',
        stagingKey: staged.stagingKey,
        sizeBytes: declared.sizeBytes,
        sha256: declared.sha256,
        options: JSON.parse(JSON.stringify(kept)) as Record<string, unknown>,
        createdAt: at,
        expiresAt: at + ttl * 1000,
        kind: 'put',
        multipartId: null,
        partSize: null,
        receivedBytes: 0,
      });
      return {
        uploadId: id,
        url: staged.url,
        method: 'PUT',
        headers: staged.headers,
        expiresAt: new Date(at + ttl * 1000).toISOString(),
      };
    },

    /**
     * Finishes a direct upload: the service itself re-reads and hashes the staged bytes, and commits
     * exactly like a put when size and sha256 are as declared. Only the scope that began an upload
     * may complete it (anyone else gets the same not_found as for a missing one).
     */
    async completeUpload(access: Access, uploadId: string): Promise<PutResult> {
      const up = /^up_[0-9a-f]{32}$/.test(uploadId) ? await repo.findUpload(access.tenantId, uploadId) : undefined;
      const sameScope =
        up &&
        (['userId', 'sessionId', 'traceId'] as const).every(
          (k) => access.filter[k] === undefined || access.filter[k] === up[k],
        );
      if (!up || !sameScope)
        throw new ArtifactError(
          'not_found',
          `Upload ${JSON.stringify(uploadId)} was not found in your scope. Start a new one with POST /v1/uploads.`,
        );
      if (up.expiresAt <= now()) {
        await repo.deleteUpload(up.id);
        await blobs.direct?.discardUpload(up.stagingKey);
        throw new ArtifactError(
          'not_found',
          `Upload ${uploadId} expired at ${new Date(up.expiresAt).toISOString()}. Start a new one.`,
        );
      }
      if (!blobs.direct)
        throw errors.backendUnavailable(`The ${blobs.driver} blob store cannot complete direct uploads.`);
      let blob;
      const pin = puts.pin();
      try {
        blob = await blobs.direct.commitUpload(up.stagingKey, { sizeBytes: up.sizeBytes, sha256: up.sha256 }, (b) =>
          pin.take(b),
        );
      } catch (err) {
        await pin.release();
        // Wrong bytes end the upload (the staged object is gone); "nothing uploaded yet" does not.
        if (
          isArtifactError(err) &&
          (err.code === 'checksum_mismatch' ||
            (err.code === 'bad_request' && !/Nothing has been uploaded/.test(err.message)))
        )
          await repo.deleteUpload(up.id);
        throw err;
      }
      const putScope: ArtifactScope = {
        tenantId: up.tenantId,
        ...(up.userId ? { userId: up.userId } : {}),
        ...(up.sessionId ? { sessionId: up.sessionId } : {}),
        ...(up.traceId ? { traceId: up.traceId } : {}),
      };
      let result;
      try {
        result = await puts.commit(putScope, blob, policies.check(up.tenantId, up.options as PutOptions), pin);
      } catch (err) {
        await pin.release();
        throw err;
      }
      await repo.deleteUpload(up.id);
      return result;
    },
  };
}

function randomHex(bytes: number): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, '0')).join('');
}
