/**
 * Puts: bytes first, metadata second. A put streams its body into the blob store (hashed and size
 * checked on the way in), pinned against garbage collection from the moment its hash is known, and
 * then commits its reference in one repository transaction (the put plan: quotas, evictions, the
 * version of a named put, the artifact.stored event). A failed put leaves no row; bytes whose
 * metadata never committed are collected by retention.
 */
import type { BlobStore } from '../blob/blob-store.js';
import type { Logger } from '../core/logger.js';
import { artifactId, DEFAULT_NAMESPACE } from '../core/ids.js';
import { DEFAULT_MIME, expiryOf } from '../core/put-options.js';
import type { ArtifactScope, PutOptions } from '../core/schemas.js';
import { narrowScope } from '../core/scope.js';
import type { ArtifactRepository } from '../db/repository.js';
import { discardBody } from './discard.js';
import type { CheckedPutOptions, PutPolicies } from './put-policy.js';
import { createPutPin, type PutPin } from './put-pin.js';
import { rowToRef } from '../core/refs.js';
import type { PutFaultPoint, PutResult, ServiceObserver } from './types.js';

export interface PutsDeps {
  repo: ArtifactRepository;
  blobs: BlobStore;
  policies: PutPolicies;
  now: () => number;
  /** How long a put's pin holds (its metadata must commit within it). */
  graceMs: number;
  logger: Logger;
  observer?: ServiceObserver;
  /** Fault injection for tests: awaited at named points of a put (crash, pause or fail there). */
  faults?: (point: PutFaultPoint) => Promise<void>;
}

export interface Puts {
  /**
   * Streams `body` into the blob store and commits its reference in `scope` narrowed by the options'
   * scope; with `name`, as the next version of that name (the options' namespace is the app).
   */
  stream(
    scope: ArtifactScope,
    body: ReadableStream<Uint8Array>,
    options?: PutOptions,
    name?: string,
  ): Promise<PutResult>;
  /**
   * The metadata half of a put whose bytes are already committed under their hash (a direct upload's
   * completion): the reference, quotas and event, removing `pin` with them.
   */
  commit(
    scope: ArtifactScope,
    blob: { sha256: string; sizeBytes: number },
    options: CheckedPutOptions,
    pin?: PutPin,
    name?: string,
  ): Promise<PutResult>;
  /** A new pin, for bytes committed outside `stream` (a direct upload's staged object). */
  pin(): PutPin;
  /** Puts begun and not yet answered (retention in the same process makes way for them). */
  inFlight(): number;
}

export function createPuts(deps: PutsDeps): Puts {
  const { repo, blobs, policies, now, faults } = deps;
  const pin = () => createPutPin({ repo, blobs, now, graceMs: deps.graceMs, logger: deps.logger });
  let inFlight = 0;

  async function commit(
    scope: ArtifactScope,
    blob: { sha256: string; sizeBytes: number },
    options: CheckedPutOptions,
    held?: PutPin,
    name?: string,
  ): Promise<PutResult> {
    const namespace = options.namespace ?? DEFAULT_NAMESPACE;
    const at = now();
    const policy = policies.of(scope.tenantId);
    // Named versions are meant to last: they expire only when the policy (or the save) says so.
    const ttl = options.ttl ?? (name ? policy.nameTtlSeconds || 'never' : policy.defaultTtlSeconds);
    // The put plan decides every limit, "larger than a whole scope" included (db/plans/put.ts).
    const { row, created, evicted } = await repo.commitPut({
      scope,
      artifactId: artifactId(namespace, blob.sha256),
      namespace,
      sha256: blob.sha256,
      sizeBytes: blob.sizeBytes,
      mimeType: options.mimeType ?? DEFAULT_MIME,
      filename: options.filename,
      meta: options.meta,
      source: options.source,
      now: at,
      expiresAt: expiryOf(at, ttl),
      quota: policies.quotaOf(scope.tenantId),
      clock: now,
      pinId: held?.id,
      ...(name ? { name } : {}),
    });
    if (created) deps.observer?.stored(blob.sizeBytes);
    if (evicted.length > 0) deps.observer?.evicted(evicted.length);
    return { ref: rowToRef(row), created };
  }

  return {
    async stream(scope, body, rawOptions = {}, name) {
      let options: CheckedPutOptions;
      let putScope: ArtifactScope;
      try {
        options = policies.check(scope.tenantId, rawOptions);
        putScope = narrowScope(scope, options.scope);
      } catch (err) {
        await discardBody(body, err, deps.logger);
        throw err;
      }
      const held = pin();
      inFlight++;
      try {
        const blob = await blobs.put(body, {
          maxBytes: policies.of(putScope.tenantId).maxArtifactBytes,
          expectedSha256: options.sha256,
          beforeCommit: async (b) => {
            await faults?.('put:after-staging');
            await held.take(b);
          },
        });
        await faults?.('put:after-blob-commit');
        const result = await commit(putScope, blob, options, held, name);
        await faults?.('put:after-db-commit');
        return result;
      } catch (err) {
        await held.release();
        throw err;
      } finally {
        inFlight--;
      }
    },
    commit,
    pin,
    inFlight: () => inFlight,
  };
}
