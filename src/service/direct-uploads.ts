/**
 * Direct uploads: the client PUTs its bytes straight to the blob store, in one presigned PUT or, above
 * `multipartUploadBytes` where the store takes parts, part by part (resumable: the bucket says which
 * parts it holds), and the service commits them like a put once it has re-read and hashed them itself.
 */
import { ArtifactError, errors, isArtifactError } from '../core/errors.js';
import { SHA256_PATTERN } from '../core/ids.js';
import type { ArtifactScope, PutOptions } from '../core/schemas.js';
import type { BlobStore, DirectParts, HeldPart } from '../blob/blob-store.js';
import { PARTS_MAX_AGE_MS } from '../blob/blob-keys.js';
import type { ArtifactRepository, UploadRecord } from '../db/repository.js';
import { numbers, partBytes, partCountOf, partSizeFor, partsShort } from './upload-parts.js';
import { admitUpload, type PutPolicies } from './put-policy.js';
import type { Puts } from './puts.js';
import type { Access, ArtifactService, PartUrl, PutResult, UploadStatus, UploadTicket } from './types.js';

/** What direct uploads use: storage, the put's policies, and the put's metadata commit and pin. */
export interface DirectUploadsDeps {
  repo: ArtifactRepository;
  blobs: BlobStore;
  policies: PutPolicies;
  puts: Pick<Puts, 'commit' | 'pin'>;
  now: () => number;
  /** How long a direct upload may take from begin to complete (default 3600 s). */
  uploadTtlSeconds?: number;
  /** Direct uploads larger than this come in parts where the store takes parts (default 64 MiB). */
  multipartUploadBytes?: number;
  /** The part size of uploads in parts (default 16 MiB). */
  uploadPartBytes?: number;
}

const MiB = 1024 * 1024;
/** How long a part's presigned URL lives. */
const PART_URL_SECONDS = 3600;

/** Drops what an upload staged: its object, or its parts. Retention and aborts share it. */
export async function discardStaged(blobs: BlobStore, up: UploadRecord): Promise<void> {
  // A tus upload's bytes are in the service's tus staging, not the blob store.
  if (up.kind === 'tus') return;
  if (up.kind === 'multipart' && up.multipartId) {
    await blobs.direct?.parts?.abort({ stagingKey: up.stagingKey, multipartId: up.multipartId });
    return;
  }
  await blobs.direct?.discardUpload(up.stagingKey);
}

export function createDirectUploads(
  deps: DirectUploadsDeps,
): Pick<ArtifactService, 'beginUpload' | 'completeUpload' | 'uploadParts' | 'getUpload' | 'abortUpload'> {
  const { repo, blobs, policies, puts, now } = deps;

  /** The caller's upload, live: anyone else's, or one expired, is the same not_found as a missing one. */
  async function ownUpload(access: Access, uploadId: string): Promise<UploadRecord> {
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
      // A tus upload's staged file is the tus staging's to drop (retention does it).
      if (up.kind !== 'tus') {
        await discardStaged(blobs, up);
        await repo.deleteUpload(up.id);
      }
      throw new ArtifactError(
        'not_found',
        `Upload ${uploadId} expired at ${new Date(up.expiresAt).toISOString()}. Start a new one.`,
      );
    }
    return up;
  }

  /** The store's parts, for an upload in parts. */
  function partsOf(up: UploadRecord): { parts: DirectParts; upload: { stagingKey: string; multipartId: string } } {
    const parts = blobs.direct?.parts;
    if (up.kind !== 'multipart' || !up.multipartId) {
      const how =
        up.kind === 'tus'
          ? `a tus upload: PATCH its bytes to /v1/tus/${up.id}`
          : 'one PUT, not in parts: PUT the bytes to its url, then complete it';
      throw errors.badRequest(`Upload ${up.id} is ${how}.`, { details: { reason: 'not_multipart' } });
    }
    if (!parts) throw errors.backendUnavailable(`The ${blobs.driver} blob store cannot take uploads in parts.`);
    return { parts, upload: { stagingKey: up.stagingKey, multipartId: up.multipartId } };
  }

  /** Checks a client's list of parts against the ticket: ascending, within it, every one. */
  function checkListed(up: UploadRecord, listed: { partNumber: number; etag?: string }[], held: HeldPart[]) {
    const count = partCountOf(up);
    for (const [i, p] of listed.entries()) {
      if (!Number.isSafeInteger(p.partNumber) || p.partNumber < 1 || p.partNumber > count)
        throw errors.badRequest(
          `Part ${p.partNumber} is not a part of this upload: it has parts 1 to ${count}. Nothing was committed.`,
          { details: { reason: 'part_out_of_range', partCount: count } },
        );
      if (i > 0 && p.partNumber <= listed[i - 1]!.partNumber)
        throw errors.badRequest(
          `Parts must be listed in ascending order, each once: part ${p.partNumber} comes after part ${listed[i - 1]!.partNumber}. Nothing was committed.`,
          { details: { reason: 'parts_out_of_order' } },
        );
    }
    const byNumber = new Map(held.map((p) => [p.partNumber, p.etag]));
    const stale = listed.filter(
      (p) => p.etag !== undefined && byNumber.has(p.partNumber) && byNumber.get(p.partNumber) !== p.etag,
    );
    if (stale.length > 0)
      throw errors.badRequest(
        `The bucket holds other bytes for part ${numbers(stale.map((p) => p.partNumber))} than your list says (another ETag): upload them again or list what GET /v1/uploads/${up.id} shows. Nothing was committed.`,
        { details: { reason: 'part_mismatch', parts: stale.map((p) => p.partNumber) } },
      );
  }

  async function completeParts(up: UploadRecord, listed: { partNumber: number; etag?: string }[] | undefined) {
    const { parts, upload } = partsOf(up);
    const held = await parts.listParts(upload);
    // Null: assembled already by a complete that died before it checked; complete checks that object.
    if (held) {
      if (listed) checkListed(up, listed, held);
      const { missing, wrongSize } = partsShort(up, held);
      const count = partCountOf(up);
      if (missing.length > 0)
        throw errors.badRequest(
          `Part ${numbers(missing)} of ${count} is not in the bucket: upload it (POST /v1/uploads/${up.id}/parts), then complete again. Nothing was committed; the upload stays open.`,
          { details: { reason: 'parts_missing', missing, partCount: count } },
        );
      if (listed && listed.length !== count) {
        const left = [...Array(count).keys()].map((i) => i + 1).filter((n) => !listed.some((p) => p.partNumber === n));
        throw errors.badRequest(
          `Your list leaves out part ${numbers(left)} of ${count}: list every part, ascending, or send no body. Nothing was committed; the upload stays open.`,
          { details: { reason: 'parts_missing', missing: left, partCount: count } },
        );
      }
      if (wrongSize.length > 0)
        throw errors.badRequest(
          `Part ${numbers(wrongSize)} is not the size the ticket says (every part ${up.partSize} bytes, the last the rest): upload it again, then complete. Nothing was committed.`,
          { details: { reason: 'part_size', parts: wrongSize } },
        );
    }
    return (pin: { take(b: { sha256: string }): Promise<void> }) =>
      parts.complete(upload, held ?? [], { sizeBytes: up.sizeBytes, sha256: up.sha256 }, (b) => pin.take(b));
  }

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
      if (!Number.isSafeInteger(declared.sizeBytes) || declared.sizeBytes < 1)
        throw errors.badRequest('sizeBytes must be a whole number of bytes, at least 1.');
      // Bytes that could never fit are refused before any is uploaded, with the put plan's own refusal.
      const { options, putScope } = admitUpload(policies, scope, rawOptions, declared.sizeBytes);
      if (!SHA256_PATTERN.test(declared.sha256))
        throw errors.badRequest('sha256 must be 64 lowercase hex characters: the hash of the bytes you will upload.');
      const at = now();
      const { scope: _ignored, ...kept } = options;
      const record = {
        tenantId: putScope.tenantId,
        userId: putScope.userId ?? '',
        sessionId: putScope.sessionId ?? '',
        traceId: putScope.traceId ?? '',
        sizeBytes: declared.sizeBytes,
        sha256: declared.sha256,
        options: JSON.parse(JSON.stringify(kept)) as Record<string, unknown>,
        createdAt: at,
        receivedBytes: 0,
      };
      const parts = blobs.direct.parts;
      if (parts && declared.sizeBytes > (deps.multipartUploadBytes ?? 64 * MiB)) {
        const partSize = partSizeFor(declared.sizeBytes, deps.uploadPartBytes ?? 16 * MiB, parts);
        const opened = await parts.begin();
        const id = `up_${randomHex(16)}`;
        const expiresAt = at + PARTS_MAX_AGE_MS;
        try {
          await repo.createUpload({
            ...record,
            id,
            stagingKey: opened.stagingKey,
            expiresAt,
            kind: 'multipart',
            multipartId: opened.multipartId,
            partSize,
          });
        } catch (err) {
          await parts.abort(opened).catch(() => {});
          throw err;
        }
        return {
          uploadId: id,
          kind: 'multipart',
          sizeBytes: declared.sizeBytes,
          partSize,
          partCount: Math.ceil(declared.sizeBytes / partSize),
          expiresAt: new Date(expiresAt).toISOString(),
        };
      }
      const ttl = deps.uploadTtlSeconds ?? 3600;
      const staged = await blobs.direct.presignUpload({
        sizeBytes: declared.sizeBytes,
        expiresInSeconds: ttl,
        sha256: declared.sha256,
      });
      const id = `up_${randomHex(16)}`;
      await repo.createUpload({
        ...record,
        id,
        stagingKey: staged.stagingKey,
        expiresAt: at + ttl * 1000,
        kind: 'put',
        multipartId: null,
        partSize: null,
      });
      return {
        uploadId: id,
        kind: 'put',
        url: staged.url,
        method: 'PUT',
        headers: staged.headers,
        expiresAt: new Date(at + ttl * 1000).toISOString(),
      };
    },

    async uploadParts(
      access: Access,
      uploadId: string,
      wanted: { partNumber: number; sha256: string }[],
    ): Promise<PartUrl[]> {
      const up = await ownUpload(access, uploadId);
      const { parts, upload } = partsOf(up);
      const count = partCountOf(up);
      if (wanted.length === 0 || wanted.length > 1000)
        throw errors.badRequest('Ask for 1 to 1000 parts at a time: [{ partNumber, sha256 }].');
      for (const p of wanted) {
        if (!Number.isSafeInteger(p.partNumber) || p.partNumber < 1 || p.partNumber > count)
          throw errors.badRequest(
            `Part ${p.partNumber} is not a part of this upload: it has parts 1 to ${count}, each ${up.partSize} bytes but the last.`,
            { details: { reason: 'part_out_of_range', partCount: count } },
          );
        if (!SHA256_PATTERN.test(p.sha256))
          throw errors.badRequest(
            `Part ${p.partNumber}: sha256 must be 64 lowercase hex characters, the hash of that part's bytes.`,
          );
      }
      const partSize = up.partSize ?? up.sizeBytes;
      return Promise.all(
        wanted.map(async (p) => {
          const sizeBytes = partBytes(up.sizeBytes, partSize, p.partNumber);
          const signed = await parts.presignPart(upload, {
            partNumber: p.partNumber,
            sizeBytes,
            sha256: p.sha256,
            expiresInSeconds: Math.min(PART_URL_SECONDS, Math.ceil((up.expiresAt - now()) / 1000)),
          });
          return { partNumber: p.partNumber, sizeBytes, method: 'PUT' as const, ...signed };
        }),
      );
    },

    async getUpload(access: Access, uploadId: string): Promise<UploadStatus> {
      const up = await ownUpload(access, uploadId);
      const status: UploadStatus = {
        uploadId: up.id,
        kind: up.kind,
        sizeBytes: up.sizeBytes,
        sha256: up.sha256,
        expiresAt: new Date(up.expiresAt).toISOString(),
      };
      if (up.kind === 'tus') return { ...status, receivedBytes: up.receivedBytes };
      if (up.kind !== 'multipart') return status;
      const { parts, upload } = partsOf(up);
      // Null: the parts were assembled by a complete that died; complete again to finish.
      const held = (await parts.listParts(upload)) ?? [];
      return { ...status, partSize: up.partSize ?? up.sizeBytes, partCount: partCountOf(up), parts: held };
    },

    async abortUpload(access: Access, uploadId: string): Promise<boolean> {
      const up = await ownUpload(access, uploadId).catch((err: unknown) => {
        if (isArtifactError(err) && err.code === 'not_found') return undefined;
        throw err;
      });
      if (!up) return false;
      if (up.kind === 'tus')
        throw errors.badRequest(`Upload ${up.id} is a tus upload: end it with DELETE /v1/tus/${up.id}.`, {
          details: { reason: 'tus_upload' },
        });
      await discardStaged(blobs, up);
      await repo.deleteUpload(up.id);
      return true;
    },

    /**
     * Finishes a direct upload: the service itself re-reads and hashes the staged bytes, and commits
     * exactly like a put when size and sha256 are as declared. Only the scope that began an upload
     * may complete it (anyone else gets the same not_found as for a missing one).
     */
    async completeUpload(
      access: Access,
      uploadId: string,
      listed?: { partNumber: number; etag?: string }[],
    ): Promise<PutResult> {
      const up = await ownUpload(access, uploadId);
      if (!blobs.direct)
        throw errors.backendUnavailable(`The ${blobs.driver} blob store cannot complete direct uploads.`);
      if (up.kind === 'tus') partsOf(up);
      const direct = blobs.direct;
      const commit =
        up.kind === 'multipart'
          ? await completeParts(up, listed)
          : (pin: { take(b: { sha256: string }): Promise<void> }) =>
              direct.commitUpload(up.stagingKey, { sizeBytes: up.sizeBytes, sha256: up.sha256 }, (b) => pin.take(b));
      let blob;
      const pin = puts.pin();
      try {
        blob = await commit(pin);
      } catch (err) {
        await pin.release();
        // Wrong bytes end the upload (the staged object is gone); "nothing uploaded yet" does not.
        if (
          isArtifactError(err) &&
          (err.code === 'checksum_mismatch' ||
            (err.code === 'bad_request' && !/Nothing has been uploaded|no assembled object/.test(err.message)))
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
