/**
 * Resumable uploads through the service (the tus protocol's model, without HTTP): an upload of a
 * declared length is created with a put's options and checks, takes its bytes in appends at the
 * acknowledged offset, and is committed like a put when the last byte has arrived. The bytes wait in
 * a staged file (the TusStaging port), hashed as they arrive; an append is acknowledged only once its
 * bytes are durable and the offset moved in the repository, so a crash between appends loses nothing
 * acknowledged.
 */
import type { BlobInfo, BlobStore } from '../blob/blob-store.js';
import { ArtifactError, errors, isArtifactError } from '../core/errors.js';
import { artifactId, DEFAULT_NAMESPACE, SHA256_PATTERN } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
import { errorText } from '../core/logger.js';
import type { ArtifactScope, PutOptions } from '../core/schemas.js';
import type { ArtifactRepository, UploadRecord } from '../db/repository.js';
import { admitUpload, type PutPolicies } from './put-policy.js';
import type { Puts } from './puts.js';
import type { ChunkChecksum, TusStaging } from './tus-staging.js';
import type { Access, PutResult } from './types.js';

/** An upload as a client sees it: HEAD's answer. */
export interface TusUploadState {
  id: string;
  sizeBytes: number;
  /** Bytes acknowledged (Upload-Offset). */
  offset: number;
  /** When the upload goes if no byte arrives (ms since the epoch). */
  expiresAt: number;
  /** Once every byte has arrived and been committed: the artifact's id. */
  artifactId?: string;
}

/** What an append (or a creation that needed no byte) answers; `stored` when it committed the artifact. */
export interface TusAppendResult extends TusUploadState {
  stored?: PutResult;
}

export interface TusUploads {
  /**
   * Creates an upload of exactly `sizeBytes` in `scope` narrowed by the options' scope: every option,
   * the size cap and the "larger than a whole scope" quota refusal are checked now, as for a direct
   * upload. `sha256`, when declared, is what the bytes must hash to. An empty upload is stored at once.
   */
  create(
    scope: ArtifactScope,
    declared: { sizeBytes: number; sha256?: string },
    options?: PutOptions,
  ): Promise<TusAppendResult>;
  /** The upload's acknowledged offset; not_found when missing, expired or out of the caller's scope. */
  status(access: Access, id: string): Promise<TusUploadState>;
  /**
   * Appends `body` at `offset`, which must be the acknowledged offset (else bad_request with
   * details.reason `offset_mismatch` and details.offset). The last byte commits the artifact like a
   * put (its quotas, its event); a declared sha256 the bytes do not hash to ends the upload
   * (checksum_mismatch) and stores nothing.
   */
  append(
    access: Access,
    id: string,
    chunk: {
      offset: number;
      body: ReadableStream<Uint8Array>;
      /** The body's declared length (Content-Length), refused before any byte is read when too long. */
      length?: number;
      checksum?: ChunkChecksum;
    },
  ): Promise<TusAppendResult>;
  /** Ends an upload and drops its bytes (tus termination); not_found as for status. */
  terminate(access: Access, id: string): Promise<void>;
}

export interface TusUploadsDeps {
  repo: ArtifactRepository;
  blobs: BlobStore;
  staging: TusStaging;
  policies: PutPolicies;
  puts: Pick<Puts, 'commit' | 'pin'>;
  now: () => number;
  logger: Logger;
  /** How long an upload lives after its last append (default 24 h); a finished one is remembered as long. */
  ttlSeconds?: number;
}

const UPLOAD_ID = /^up_[0-9a-f]{32}$/;
/** How long a status waits for an append of the same upload in this process to settle. */
const STATUS_WAIT_MS = 2000;

export function createTusUploads(deps: TusUploadsDeps): TusUploads {
  const { repo, blobs, staging, policies, puts, now, logger } = deps;
  const ttlMs = (deps.ttlSeconds ?? 86_400) * 1000;
  // One append at a time per upload in this process: two writers at one offset would interleave in
  // the file. An append that comes while another runs (a client resuming after a dropped
  // connection, whose old request has not ended yet) waits for it, then meets the offset it left.
  const busy = new Map<string, Promise<void>>();

  async function exclusive<T>(id: string, work: () => Promise<T>): Promise<T> {
    for (let held = busy.get(id); held; held = busy.get(id)) await held;
    let done!: () => void;
    busy.set(id, new Promise<void>((ok) => (done = ok)));
    try {
      return await work();
    } finally {
      busy.delete(id);
      done();
    }
  }

  const notFound = (id: string) =>
    new ArtifactError(
      'not_found',
      `Upload ${JSON.stringify(id)} was not found in your scope (it may have expired or been terminated). Start a new one with POST /v1/tus.`,
    );

  /** The caller's upload: another tenant's or another scope's is exactly as missing. */
  async function findOwn(access: Access, id: string): Promise<UploadRecord> {
    const up = UPLOAD_ID.test(id) ? await repo.findUpload(access.tenantId, id) : undefined;
    const visible =
      up &&
      up.kind === 'tus' &&
      (['userId', 'sessionId', 'traceId'] as const).every(
        (k) => access.filter[k] === undefined || access.filter[k] === up[k],
      );
    if (!up || !visible) throw notFound(id);
    if (up.expiresAt <= now()) {
      await end(up);
      throw notFound(id);
    }
    return up;
  }

  /** Ends an upload: its staged bytes first, then its row (a crash between leaves a row retention finds). */
  async function end(up: UploadRecord): Promise<void> {
    await staging.discard(up.id);
    await repo.deleteUpload(up.id);
  }

  /** A finished upload's row is kept (no staged file, the full offset, the sha256) to answer a late HEAD. */
  const finished = (up: UploadRecord) => up.stagingKey === '';
  const stateOf = (up: UploadRecord): TusUploadState => ({
    id: up.id,
    sizeBytes: up.sizeBytes,
    offset: up.receivedBytes,
    expiresAt: up.expiresAt,
    ...(finished(up)
      ? { artifactId: artifactId((up.options.namespace as string | undefined) ?? DEFAULT_NAMESPACE, up.sha256) }
      : {}),
  });

  const scopeOf = (up: UploadRecord): ArtifactScope => ({
    tenantId: up.tenantId,
    ...(up.userId ? { userId: up.userId } : {}),
    ...(up.sessionId ? { sessionId: up.sessionId } : {}),
    ...(up.traceId ? { traceId: up.traceId } : {}),
  });

  const offsetMismatch = (id: string, asked: number, offset: number) =>
    errors.badRequest(
      `Upload-Offset ${asked} is not where upload ${id} stands: ${offset} bytes are acknowledged. Resume from byte ${offset} (HEAD the upload to ask again).`,
      { details: { reason: 'offset_mismatch', offset } },
    );

  /**
   * The last byte has arrived: verify, commit, and remember the upload as finished (its row now holds
   * the sha256 and the full offset, so a client that lost the answer learns the artifact's id from a
   * HEAD). Refusals that no retry can cure end the upload; others leave it where it was.
   */
  async function finish(up: UploadRecord): Promise<TusAppendResult> {
    const sha256 = await staging.sha256(up.id, up.sizeBytes);
    if (up.sha256 !== '' && up.sha256 !== sha256) {
      await end(up);
      throw errors.checksumMismatch(up.sha256, sha256);
    }
    // Committed as a put: a pin, the bytes into the blob store (taken by rename where the store adopts
    // files, else streamed in), then the put's own metadata commit with its quotas.
    const pin = puts.pin();
    let stored: PutResult;
    let taken = false;
    try {
      const known = { sha256, sizeBytes: up.sizeBytes };
      let blob: BlobInfo;
      if (blobs.adoptFile) {
        blob = await blobs.adoptFile(staging.fileOf(up.id), known, (b) => pin.take(b));
        taken = true;
      } else {
        blob = await blobs.put(staging.read(up.id), {
          maxBytes: up.sizeBytes,
          expectedSha256: sha256,
          beforeCommit: (b) => pin.take(b),
        });
      }
      stored = await puts.commit(scopeOf(up), blob, policies.check(up.tenantId, up.options as PutOptions), pin);
    } catch (err) {
      await pin.release();
      // A passing failure leaves the upload where it was, to be retried with its last bytes; a refusal
      // no retry cures ends it, and so does any failure once the store took the staged file.
      if (taken || !isArtifactError(err) || err.code !== 'backend_unavailable') await end(up);
      throw err;
    }
    const done: UploadRecord = {
      ...up,
      sha256,
      stagingKey: '',
      receivedBytes: up.sizeBytes,
      expiresAt: now() + ttlMs,
    };
    try {
      await repo.deleteUpload(up.id);
      await repo.createUpload(done);
      await staging.discard(up.id);
    } catch (err) {
      // Stored all the same: the client gets its artifact; retention removes what is left.
      logger.warn('tus upload stored, its record not updated', { uploadId: up.id, error: errorText(err) });
    }
    return { ...stateOf(done), stored };
  }

  return {
    async create(scope, declared, rawOptions = {}) {
      if (!Number.isSafeInteger(declared.sizeBytes) || declared.sizeBytes < 0)
        throw errors.badRequest('Upload-Length must be a whole number of bytes.');
      const { options, putScope } = admitUpload(policies, scope, rawOptions, declared.sizeBytes);
      const sha256 = declared.sha256 ?? '';
      if (sha256 !== '' && !SHA256_PATTERN.test(sha256))
        throw errors.badRequest('The sha256 in Upload-Metadata must be 64 lowercase hex characters.');
      const at = now();
      const { scope: _ignored, sha256: _declared, ...kept } = options;
      const id = `up_${randomHex(16)}`;
      const up: UploadRecord = {
        id,
        tenantId: putScope.tenantId,
        userId: putScope.userId ?? '',
        sessionId: putScope.sessionId ?? '',
        traceId: putScope.traceId ?? '',
        // Until the upload finishes its staging key is its id (the staged file's name); then ''.
        stagingKey: id,
        sizeBytes: declared.sizeBytes,
        sha256,
        options: JSON.parse(JSON.stringify(kept)) as Record<string, unknown>,
        createdAt: at,
        expiresAt: at + ttlMs,
        kind: 'tus',
        multipartId: null,
        partSize: null,
        receivedBytes: 0,
      };
      // The row first: a staged file never exists without one, so retention finds every file.
      await repo.createUpload(up);
      try {
        await staging.create(up.id);
      } catch (err) {
        await repo.deleteUpload(up.id);
        throw err;
      }
      return up.sizeBytes === 0 ? exclusive(up.id, () => finish(up)) : stateOf(up);
    },

    async status(access, id) {
      const held = busy.get(id);
      if (held) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([held, new Promise((ok) => (timer = setTimeout(ok, STATUS_WAIT_MS)))]);
        clearTimeout(timer);
      }
      return stateOf(await findOwn(access, id));
    },

    append(access, id, { offset, body, length, checksum }) {
      return exclusive(id, async () => {
        let up: UploadRecord;
        try {
          up = await findOwn(access, id);
          if (offset !== up.receivedBytes) throw offsetMismatch(id, offset, up.receivedBytes);
          if (length !== undefined && offset + length > up.sizeBytes)
            throw new ArtifactError(
              'payload_too_large',
              `This PATCH carries ${length} bytes but upload ${id} has ${up.sizeBytes - offset} left (Upload-Length ${up.sizeBytes}). Nothing of it was kept.`,
              { details: { limitBytes: up.sizeBytes - offset } },
            );
        } catch (err) {
          await body.cancel().catch(() => {});
          throw err;
        }
        if (finished(up)) {
          await body.cancel().catch(() => {});
          return stateOf(up);
        }
        // Staged bytes missing here (another replica holds them) answer not_found from the staging,
        // leaving the upload to the process that has them.
        const { written, interrupted } = await staging.append(id, offset, body, {
          maxBytes: up.sizeBytes - offset,
          ...(checksum ? { checksum } : {}),
        });
        const to = offset + written;
        if (to === up.sizeBytes) return finish(up);
        const expiresAt = now() + ttlMs;
        if (!(await repo.advanceUpload(id, offset, to, expiresAt))) {
          // Another process moved the offset (or ended the upload): this process's hash is stale.
          staging.forget(id);
          const current = await findOwn(access, id);
          throw offsetMismatch(id, offset, current.receivedBytes);
        }
        if (interrupted !== undefined) throw interrupted;
        return { ...stateOf(up), offset: to, expiresAt };
      });
    },

    terminate(access, id) {
      return exclusive(id, async () => end(await findOwn(access, id)));
    },
  };
}

function randomHex(bytes: number): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, '0')).join('');
}
