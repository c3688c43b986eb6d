import { isActiveType } from '../core/active-types.js';
import { decodeBase64 } from '../core/base64.js';
import { streamOfBytes } from '../core/bytes.js';
import { errors } from '../core/errors.js';
import { contentDisposition } from '../core/filename.js';
import { artifactId, DEFAULT_NAMESPACE, isArtifactId } from '../core/ids.js';
import { DEFAULT_MIME, expiryOf, TEXT_MIME, validatePutOptions } from '../core/put-options.js';
import { narrowFilter, narrowScope } from '../core/scope.js';
import {
  ListQuerySchema,
  type ArtifactRef,
  type ArtifactScope,
  type ByteRange,
  type FetchMode,
  type ListPage,
  type ListQuery,
  type PutOptions,
} from '../core/schemas.js';
import type { BlobStore } from '../blob/blob-store.js';
import type { ArtifactRepository, RefRow } from '../db/repository.js';
import { type QuotaLimits, quotaLimitsOf } from '../core/limits.js';
import type { Policy } from '../core/policy.js';
import { decodeCursor, encodeCursor } from '../core/cursor.js';
import { rowToRef } from './refs.js';
import { createSmallBlobCache } from './small-blob-cache.js';
import { createTouchBatcher } from './touch.js';
import { createDirectUploads } from './direct-uploads.js';
import { createNamedVersions } from './names.js';
import { createSessionEnding } from './sessions.js';
import { createPutPin } from './put-pin.js';
import { type ArtifactViews, type ArtifactViewsDeps, createArtifactViews } from './views/index.js';
import type {
  ServiceLimits,
  ServiceObserver,
  PutFaultPoint,
  LinkSettings,
  DownloadUrlOptions,
  DownloadUrl,
  Access,
  PutResult,
  DownloadEntity,
  RangeResolver,
  GetResult,
  ArtifactService,
  PutPolicy,
} from './types.js';
/** The service's shapes live in types.ts; importers of this module see them here too. */
export type * from './types.js';

export { STALE_COLLECTION_MS } from './put-pin.js';

export interface ArtifactServiceDeps {
  repo: ArtifactRepository;
  blobs: BlobStore;
  limits: ServiceLimits;
  /**
   * Each tenant's retention policy (quotas, TTLs, max artifact size), enforced in the put's own
   * transaction. Without it only `limits` apply and scopes have no quotas.
   */
  policies?: (tenantId: string) => Policy;
  links?: LinkSettings;
  /** Milliseconds since the epoch; injectable for tests. */
  now?: () => number;
  /** Told what moves, for metrics. */
  observer?: ServiceObserver;
  /** The views' sandbox (where PDFs are parsed and JSON queried) and default budget; default inline. */
  views?: Pick<ArtifactViewsDeps, 'sandbox' | 'budget'>;
  /** Fault injection for tests: awaited at named points of a put (crash, pause or fail there). */
  faults?: (point: PutFaultPoint) => Promise<void>;
}

/**
 * The artifact service: put / get / delete / list over a BlobStore and an ArtifactRepository. Knows
 * nothing of HTTP. Bytes are hashed while streaming and committed before any metadata row exists,
 * so no row ever points at missing bytes.
 */
export function createArtifactService(deps: ArtifactServiceDeps): ArtifactService {
  const { repo, blobs, limits } = deps;
  const now = deps.now ?? Date.now;
  const smallBlobs = createSmallBlobCache(limits.smallBlobCacheBytes ?? 0);
  const touches = createTouchBatcher((ids, at) => repo.touch(ids, at), limits.touchFlushMs, now);

  /** TTLs and the size cap of a tenant: its policy when there is one. */
  const limitsOf = (tenantId: string): PutPolicy => deps.policies?.(tenantId) ?? limits;
  const checkPutOptions = (tenantId: string, raw: PutOptions) => validatePutOptions(raw, limitsOf(tenantId));

  function quotaOf(tenantId: string): QuotaLimits | undefined {
    const p = deps.policies?.(tenantId);
    return p ? quotaLimitsOf(p) : undefined;
  }

  /** An artifact larger than a whole scope's byte limit can never fit: refused before any byte moves. */
  function checkFitsScopes(scope: ArtifactScope, sizeBytes: number): void {
    const p = deps.policies?.(scope.tenantId);
    if (!p) return;
    // Under `never` session and trace limits do not apply at all; the tenant quota always does.
    const scoped = p.cleanupStrategy !== 'never';
    const limitsInPlay: [string, string | undefined, number, string][] = [
      ['session', scoped ? scope.sessionId : undefined, p.maxSessionBytes, 'maxSessionBytes'],
      ['trace', scoped ? scope.traceId : undefined, p.maxTraceBytes, 'maxTraceBytes'],
      ['tenant', scope.tenantId, p.maxTenantBytes, 'maxTenantBytes'],
    ];
    for (const [kind, id, max, limit] of limitsInPlay) {
      if (!id || !max || sizeBytes <= max) continue;
      throw errors.quotaExceeded(
        `The artifact (${sizeBytes} bytes) is larger than the whole ${kind} limit of ${max} bytes (${limit}), so it can never fit. Store a smaller artifact, or ask the operator to raise ${limit}.`,
        { scope: kind, id, limit, limitValue: max, neededBytes: sizeBytes },
      );
    }
  }

  const pinForPut = () => createPutPin({ repo, blobs, now, graceMs: limits.gcGraceMs ?? 3_600_000 });
  let putsInFlight = 0;

  async function putStream(
    scope: ArtifactScope,
    body: ReadableStream<Uint8Array>,
    rawOptions: PutOptions = {},
    name?: string,
  ): Promise<PutResult> {
    let options: ReturnType<typeof checkPutOptions>;
    let putScope: ArtifactScope;
    try {
      options = checkPutOptions(scope.tenantId, rawOptions);
      putScope = narrowScope(scope, options.scope);
    } catch (err) {
      await body.cancel(err).catch(() => {});
      throw err;
    }
    const pin = pinForPut();
    putsInFlight++;
    try {
      const beforeCommit = async (b: { sha256: string }) => {
        await deps.faults?.('put:after-staging');
        await pin.take(b);
      };
      const blob = await blobs.put(body, {
        maxBytes: limitsOf(putScope.tenantId).maxArtifactBytes,
        expectedSha256: options.sha256,
        beforeCommit,
      });
      await deps.faults?.('put:after-blob-commit');
      const result = await commitMetadata(putScope, blob, options, pin.id, name);
      await deps.faults?.('put:after-db-commit');
      return result;
    } catch (err) {
      await pin.release();
      throw err;
    } finally {
      putsInFlight--;
    }
  }

  /** The metadata half of every put, once the bytes are committed under their hash. */
  async function commitMetadata(
    putScope: ArtifactScope,
    blob: { sha256: string; sizeBytes: number },
    options: ReturnType<typeof checkPutOptions>,
    pinId?: number,
    name?: string,
  ): Promise<PutResult> {
    const namespace = options.namespace ?? DEFAULT_NAMESPACE;
    const at = now();
    const policy = limitsOf(putScope.tenantId);
    // Named versions are meant to last: they expire only when the policy (or the save) says so.
    const ttl = options.ttl ?? (name ? policy.nameTtlSeconds || 'never' : policy.defaultTtlSeconds);
    checkFitsScopes(putScope, blob.sizeBytes);
    const { row, created, evicted } = await repo.commitPut({
      scope: putScope,
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
      quota: quotaOf(putScope.tenantId),
      clock: now,
      pinId,
      ...(name ? { name } : {}),
    });
    if (created) deps.observer?.stored(blob.sizeBytes);
    if (evicted.length > 0) deps.observer?.evicted(evicted.length);
    return { ref: rowToRef(row), created };
  }

  async function open(access: Access, id: string, resolveRange: RangeResolver | undefined) {
    const row = (await lookup(access, id)) ?? notFound(id);
    return { row, range: resolveRange?.({ sizeBytes: row.sizeBytes, sha256: row.sha256 }) };
  }

  const missingBytes = (id: string) =>
    errors.backendUnavailable(
      `The bytes of ${id} are missing from the blob store although the database references them. Tell the operator; retrying will not help.`,
    );

  const noRow: Promise<undefined> = Promise.resolve(undefined);
  /** The reference `id` names for this access, if there is one (anything that is not an id names none). */
  function lookup(access: Access, id: string): Promise<RefRow | undefined> {
    return isArtifactId(id) ? repo.findRef(access.tenantId, id, access.filter, now()) : noRow;
  }
  function notFound(id: string): never {
    throw errors.notFound(id);
  }
  async function find(access: Access, id: string): Promise<RefRow> {
    return (await lookup(access, id)) ?? notFound(id);
  }

  // A download in three parts, so that a small cached one awaits nothing but its lookup: the bytes
  // at hand (heldBytes), else read (readBytes), then counted as served (served).
  type Body = ReadableStream<Uint8Array> | Uint8Array;

  /** The bytes of an empty or a small cached blob (a copy of the range): no I/O. */
  function heldBytes(row: RefRow, range: ByteRange | undefined, smallBytes: number): Body | undefined {
    // Nothing to read (and no range can be asked of it: invalid_range before here).
    if (row.sizeBytes === 0) return new Uint8Array(0);
    if (row.sizeBytes > smallBytes) return undefined;
    return smallBlobs.get(row.sha256, range?.start, range?.end);
  }

  /** The bytes from the blob store: a small blob whole in one read (then cached), a larger one as a stream. */
  async function readBytes(row: RefRow, range: ByteRange | undefined, smallBytes: number): Promise<Body> {
    const id = row.artifactId;
    if (row.sizeBytes <= smallBytes) {
      const whole = blobs.readSmall
        ? await blobs.readSmall(row.sha256, { start: 0, end: row.sizeBytes - 1 })
        : await readAll(await blobs.get(row.sha256));
      if (!whole) throw missingBytes(id);
      if (whole.byteLength !== row.sizeBytes) {
        throw errors.backendUnavailable(
          `The stored bytes of ${id} do not have the recorded size. Tell the operator; retrying will not help.`,
        );
      }
      smallBlobs.set(row.sha256, whole);
      return range ? whole.subarray(range.start, range.end + 1) : whole;
    }
    const body = await blobs.get(row.sha256, range ?? { start: 0, end: row.sizeBytes - 1 });
    if (!body) throw missingBytes(id);
    return body;
  }

  /** Touches last-accessed (batched) and counts the bytes served. */
  function served(row: RefRow, range: ByteRange | undefined, body: Body) {
    touches.add(row.refId);
    deps.observer?.served(range ? range.end - range.start + 1 : row.sizeBytes);
    return { entity: row as DownloadEntity, range, body };
  }

  /** The bytes of one reference (or a range), a small body as one buffer; touches last-accessed. */
  async function bodyOf(row: RefRow, range: ByteRange | undefined, smallBytes: number) {
    return served(row, range, heldBytes(row, range, smallBytes) ?? (await readBytes(row, range, smallBytes)));
  }

  /** A link's lifetime as asked (or the default); bad_request outside 1 s to the maximum. */
  function linkTtl(o: DownloadUrlOptions): number {
    const ttl = o.expiresIn ?? deps.links?.defaultTtlSeconds ?? 900;
    const maxTtl = deps.links?.maxTtlSeconds ?? 7 * 24 * 3600;
    if (!Number.isInteger(ttl) || ttl < 1 || ttl > maxTtl)
      throw errors.badRequest(`expiresIn must be a whole number of seconds from 1 to ${maxTtl}.`);
    return ttl;
  }

  async function linkOf(tenantId: string, row: RefRow, o: DownloadUrlOptions): Promise<DownloadUrl> {
    const links = deps.links;
    const ttl = linkTtl(o);
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
    if (o.mode === 'direct' && blobs.presignGet) {
      const url = await blobs.presignGet(row.sha256, {
        expiresInSeconds: expiresAt - nowS,
        contentType: row.mimeType,
        contentDisposition: contentDisposition(disposition, row.filename ?? undefined),
      });
      return answer(url, 'direct');
    }
    if (!links?.signer) {
      throw errors.backendUnavailable(
        'This service has no key to sign download links. The operator sets ARTIFACT_STORE_URL_SIGNING_KEYS (or HS256 JWT secrets).',
        { retryAfter: 3600 },
      );
    }
    const query = await links.signer.sign({ tenantId, artifactId: id, expiresAt, disposition });
    return answer(`${o.baseUrl.replace(/\/+$/, '')}/v1/download/${encodeURIComponent(id)}?${query}`, 'proxy');
  }

  let views: ArtifactViews | undefined;
  const service: ArtifactService = {
    limits,

    /** Made on first use: most processes never read a view. */
    get views() {
      views ??= createArtifactViews({ service, blobs, ...deps.views, ...(deps.now ? { now: deps.now } : {}) });
      return views;
    },

    putStream,

    putsInFlight: () => putsInFlight,

    /** Buffered put of bytes already in memory. */
    putBytes(scope: ArtifactScope, bytes: Uint8Array, options: PutOptions = {}) {
      return putStream(scope, streamOfBytes(bytes), options);
    },

    /** A UTF-8 text artifact; mime defaults to text/plain. */
    putText(scope: ArtifactScope, text: string, options: PutOptions = {}) {
      return putStream(scope, streamOfBytes(new TextEncoder().encode(text)), { mimeType: TEXT_MIME, ...options });
    },

    /** base64, base64url or a data: URL (whose media type is used unless mimeType is given). */
    async putBase64(scope: ArtifactScope, data: string, options: PutOptions = {}): Promise<PutResult> {
      const decoded = decodeBase64(data);
      return putStream(scope, streamOfBytes(decoded.bytes), {
        ...(decoded.mimeType ? { mimeType: decoded.mimeType } : {}),
        ...options,
      });
    },

    /** The reference visible to this caller; not_found when missing or out of scope (one path). */
    async getRef(access: Access, id: string): Promise<ArtifactRef> {
      return rowToRef(await find(access, id));
    },

    /**
     * A link a browser can download with, no token needed. It never outlives the reference, and the
     * caller must see the artifact now (the same 404 as a download otherwise).
     */
    async downloadUrl(access: Access, id: string, o: DownloadUrlOptions): Promise<DownloadUrl> {
      linkTtl(o);
      return linkOf(access.tenantId, await find(access, id), o);
    },

    async exists(access: Access, id: string): Promise<boolean> {
      if (!isArtifactId(id)) return false;
      return (await repo.findRef(access.tenantId, id, access.filter, now())) !== undefined;
    },

    /**
     * Streams the bytes (or a range). `resolveRange` sees the size and hash before any byte is read, so a bad
     * range is refused without opening the blob. Touches last-accessed (batched).
     */
    async getStream(access: Access, id: string, resolveRange?: RangeResolver): Promise<GetResult> {
      const found = await open(access, id, resolveRange);
      const body =
        found.row.sizeBytes === 0
          ? new ReadableStream<Uint8Array>({ start: (controller) => controller.close() })
          : await blobs.get(found.row.sha256, found.range ?? { start: 0, end: found.row.sizeBytes - 1 });
      if (!body) throw missingBytes(id);
      touches.add(found.row.refId);
      deps.observer?.served(found.range ? found.range.end - found.range.start + 1 : found.row.sizeBytes);
      return { ref: rowToRef(found.row), sizeBytes: found.row.sizeBytes, range: found.range, body };
    },

    /** What a download of this id would carry, without opening the bytes (HEAD, If-None-Match). */
    async getEntity(access: Access, id: string): Promise<DownloadEntity> {
      return find(access, id);
    },

    /**
     * The download path of the HTTP layer. Like getStream, but a body of at most `smallBytes` comes
     * as one buffer (the driver's small-read path when it has one), written in one go with the
     * headers; larger bodies stream. Returns the entity rather than a full ArtifactRef: building the
     * ref's dates costs more than a small download can spare.
     */
    async getBody(
      access: Access,
      id: string,
      resolveRange: RangeResolver | undefined,
      smallBytes: number,
    ): Promise<{ entity: DownloadEntity; range?: ByteRange; body: ReadableStream<Uint8Array> | Uint8Array }> {
      // bodyOf inlined: a small cached download awaits only its lookup.
      const row = (await lookup(access, id)) ?? notFound(id);
      const range = resolveRange?.({ sizeBytes: row.sizeBytes, sha256: row.sha256 });
      return served(row, range, heldBytes(row, range, smallBytes) ?? (await readBytes(row, range, smallBytes)));
    },

    ...createNamedVersions({ repo, now, putStream, bodyOf, linkOf }),

    ...createSessionEnding({ repo, now }),

    ...createDirectUploads({
      repo,
      blobs,
      limits,
      now,
      checkPutOptions,
      limitsOf,
      checkFitsScopes,
      pinForPut,
      commitMetadata,
    }),

    /** Removes the caller's visible references; the artifact goes with its last reference. */
    async delete(access: Access, id: string): Promise<boolean> {
      if (!isArtifactId(id)) return false;
      return (await repo.deleteRefs(access.tenantId, id, access.filter, now())) > 0;
    },

    /**
     * Admin purge: every reference of the tenant to `id` goes at once (artifact.deleted each), and the
     * bytes too unless another tenant holds them or a put is committing them. Proxy links stop at
     * once; direct links die with the object. Returns what went.
     */
    async purge(
      tenantId: string,
      id: string,
    ): Promise<{ refs: number; bytesDeleted: boolean; cdnInvalidated?: boolean }> {
      const found = isArtifactId(id) ? await repo.findRef(tenantId, id, {}, now()) : undefined;
      if (!found) throw errors.notFound(id);
      const refs = await repo.deleteRefs(tenantId, id, {}, now());
      smallBlobs.delete(found.sha256);
      const markedAt = now();
      if (!(await repo.markBlobForPurge(found.sha256, markedAt))) return { refs, bytesDeleted: false };
      try {
        await blobs.delete(found.sha256);
      } catch (err) {
        await repo.dropOrUnmarkBlobs([], [found.sha256], markedAt);
        throw err;
      }
      await repo.dropOrUnmarkBlobs([found.sha256], [], markedAt);
      if (!blobs.invalidateCdn) return { refs, bytesDeleted: true };
      // The bytes are gone either way; a failed invalidation leaves cached copies until their TTL.
      const cdnInvalidated = await blobs.invalidateCdn(found.sha256).then(
        () => true,
        () => false,
      );
      return { refs, bytesDeleted: true, cdnInvalidated };
    },

    async list(access: Access, rawQuery: ListQuery = {}): Promise<ListPage> {
      const parsed = ListQuerySchema.safeParse(rawQuery);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        throw errors.badRequest(`Invalid list filter ${issue.path.join('.')}: ${issue.message}.`);
      }
      const q = parsed.data;
      const filter = narrowFilter(access.filter, q);
      const limit = q.limit ?? 100;
      const rows = await repo.list(access.tenantId, {
        userId: filter.userId,
        sessionId: filter.sessionId,
        traceId: filter.traceId,
        namespace: q.namespace,
        mimePrefix: q.mimePrefix,
        createdAfter: q.createdAfter ? Date.parse(q.createdAfter) : undefined,
        createdBefore: q.createdBefore ? Date.parse(q.createdBefore) : undefined,
        after: q.cursor ? decodeCursor(q.cursor) : undefined,
        limit: limit + 1,
        now: now(),
      });
      const page = rows.slice(0, limit);
      const last = page[page.length - 1];
      return rows.length > limit && last
        ? { items: page.map(rowToRef), nextCursor: encodeCursor(last) }
        : { items: page.map(rowToRef) };
    },

    /** Flushes pending last-accessed writes. */
    async flush() {
      await touches.flush();
    },

    async close() {
      await touches.close();
      await views?.close();
    },
  };
  return service;
}

async function readAll(stream: ReadableStream<Uint8Array> | null): Promise<Uint8Array | null> {
  return stream ? new Uint8Array(await new Response(stream).arrayBuffer()) : null;
}
