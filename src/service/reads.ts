/**
 * Reads of one artifact: the caller's reference looked up under its scope (another scope's artifact
 * is the same not_found as a missing one), and its bytes, or a range of them, through ONE read path
 * (`body`): an empty blob or a small cached one at hand, else from the blob store (a small one whole,
 * then cached; a larger one as a stream), then touched (last access, batched) and counted as served.
 * Downloads, getStream and named versions all read through it.
 */
import type { BlobStore } from '../blob/blob-store.js';
import { errors } from '../core/errors.js';
import { isArtifactId } from '../core/ids.js';
import type { Logger } from '../core/logger.js';
import type { ByteRange } from '../core/schemas.js';
import type { ArtifactRepository, RefRow } from '../db/repository.js';
import { createSmallBlobCache } from './small-blob-cache.js';
import { createTouchBatcher } from './touch.js';
import type { Access, DownloadEntity, RangeResolver, ServiceObserver } from './types.js';

/** The bytes of a read: one buffer (a small body) or a stream. */
export type Body = ReadableStream<Uint8Array> | Uint8Array;

/** What a read gives: the entity, the range served (when one was asked) and the bytes. */
export interface ReadResult {
  entity: DownloadEntity;
  range?: ByteRange;
  body: Body;
}

export interface ReadsDeps {
  repo: ArtifactRepository;
  blobs: BlobStore;
  now: () => number;
  /** Memory for the bytes of hot small artifacts (0 = no cache). */
  smallBlobCacheBytes: number;
  /** Batch last-accessed writes over this many ms (0 = write on every read). */
  touchFlushMs: number;
  logger: Logger;
  observer?: ServiceObserver;
}

export interface Reads {
  /** The reference `id` names for this access; not_found when missing, expired or out of scope. */
  find(access: Access, id: string): Promise<RefRow>;
  exists(access: Access, id: string): Promise<boolean>;
  /**
   * The bytes of a found reference (or a range of them), touched and counted as served: a body of
   * at most `smallBytes` comes as one buffer, larger ones stream (0: always a stream, but an empty
   * body is an empty buffer).
   */
  body(row: RefRow, range: ByteRange | undefined, smallBytes: number): Promise<ReadResult>;
  /**
   * find + body, where a small cached download awaits nothing but its lookup (the HTTP hot path).
   * `resolveRange` sees the size and hash before any byte is read.
   */
  download(
    access: Access,
    id: string,
    resolveRange: RangeResolver | undefined,
    smallBytes: number,
  ): Promise<ReadResult>;
  /** Drops what is cached of a blob's bytes (after a purge deleted them). */
  forget(sha256: string): void;
  /** Writes pending last-accessed times. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export function createReads(deps: ReadsDeps): Reads {
  const { repo, blobs, now } = deps;
  const smallBlobs = createSmallBlobCache(deps.smallBlobCacheBytes);
  const touches = createTouchBatcher((ids, at) => repo.touch(ids, at), deps.touchFlushMs, now, deps.logger);

  const noRow: Promise<undefined> = Promise.resolve(undefined);
  /** The reference `id` names for this access, if there is one (anything that is not an id names none). */
  const lookup = (access: Access, id: string): Promise<RefRow | undefined> =>
    isArtifactId(id) ? repo.findRef(access.tenantId, id, access.filter, now()) : noRow;
  const notFound = (id: string): never => {
    throw errors.notFound(id);
  };
  const missingBytes = (id: string) =>
    errors.backendUnavailable(
      `The bytes of ${id} are missing from the blob store although the database references them. Tell the operator; retrying will not help.`,
    );

  // A read in three plain steps, so that a small cached one awaits nothing but its lookup: the bytes
  // at hand (cachedBytes), else read (readBytes), then counted as served (served).

  /** The bytes of an empty or a small cached blob (a copy of the range): no I/O. */
  function cachedBytes(row: RefRow, range: ByteRange | undefined, smallBytes: number): Body | undefined {
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

  /** The one place a read is touched (last access, for LRU) and counted as served. */
  function served(row: RefRow, range: ByteRange | undefined, body: Body): ReadResult {
    touches.add(row.refId);
    deps.observer?.served(range ? range.end - range.start + 1 : row.sizeBytes);
    return { entity: row as DownloadEntity, range, body };
  }

  return {
    async find(access, id) {
      return (await lookup(access, id)) ?? notFound(id);
    },
    async exists(access, id) {
      return (await lookup(access, id)) !== undefined;
    },
    async body(row, range, smallBytes) {
      return served(row, range, cachedBytes(row, range, smallBytes) ?? (await readBytes(row, range, smallBytes)));
    },
    async download(access, id, resolveRange, smallBytes) {
      const row = (await lookup(access, id)) ?? notFound(id);
      const range = resolveRange?.({ sizeBytes: row.sizeBytes, sha256: row.sha256 });
      return served(row, range, cachedBytes(row, range, smallBytes) ?? (await readBytes(row, range, smallBytes)));
    },
    forget: (sha256) => smallBlobs.delete(sha256),
    flush: () => touches.flush(),
    close: () => touches.close(),
  };
}

async function readAll(stream: ReadableStream<Uint8Array> | null): Promise<Uint8Array | null> {
  return stream ? new Uint8Array(await new Response(stream).arrayBuffer()) : null;
}
