/**
 * Direct uploads: a large body goes straight to the blob store (POST /v1/uploads → PUT to the
 * presigned URL → complete), when the service offers it (its s3 driver does). Above the service's
 * threshold the ticket is in parts: each part is hashed, PUT to its own URL (signed with that hash,
 * retried on its own), a few at a time; an interrupted upload resumes from the parts the bucket
 * holds, found through a resume record kept by content. A stream, whose size and sha256 a direct
 * upload must declare, is first kept in a spool while it is hashed.
 */
import { concatBytes } from '../core/bytes.js';
import { errors, isArtifactError } from '../core/errors.js';
import { sha256Hex, sha256OfStream } from '../core/hash.js';
import type { ArtifactRef, PutOptions } from '../core/schemas.js';
import {
  PART_URLS_ANSWER,
  readAnswer,
  REF_ANSWER,
  TICKET_ANSWER,
  UPLOAD_STATUS_ANSWER,
  type UploadTicket,
} from './http-response-schemas.js';
import { scopeHeadersOf } from './http-headers.js';
import { backoffMs, describeError, isNetworkError, sleep } from './http-retry.js';
import type { HttpTransport } from './http-transport.js';
import type { UploadSpool } from './upload-spool.js';

/** How far a resumable upload has come: bytes the bucket (or the service) acknowledged. */
export interface UploadProgress {
  uploadId: string;
  sentBytes: number;
  totalBytes: number;
}

/**
 * Where resumable uploads are remembered, by the content they carry (`key` names the service, the
 * sha256 and the size), so that the same bytes put again, from this process or a new one, resume the
 * upload instead of starting over. A Map will do within a process; the CLI keeps a small JSON file.
 */
export interface ResumeRecords {
  get(key: string): Promise<string | undefined> | string | undefined;
  set(key: string, uploadId: string): Promise<unknown> | unknown;
  delete(key: string): Promise<unknown> | unknown;
}

/** Big uploads: progress, resume records, how many parts go at once, and when tus takes over. */
export interface BigUploadOptions {
  onProgress?: (progress: UploadProgress) => void;
  resume?: ResumeRecords;
  /** Parts in flight at once (default 4). */
  concurrency?: number;
  /**
   * Where the service takes no direct uploads (its fs driver), bodies larger than this go through
   * its tus endpoint, resumable (default 64 MiB); smaller ones, and services without tus, POST.
   */
  tusAboveBytes?: number;
  /** Bytes per tus PATCH (default 64 MiB): progress moves, and a retry resumes, at least this often. */
  tusChunkBytes?: number;
}

type PartsTicket = Extract<UploadTicket, { kind: 'multipart' }>;

/**
 * Bytes that can be read at any offset without holding them all: a file on Node (a FileHandle's
 * positioned reads), or anything else that can. `read` answers exactly bytes [start, end).
 */
export interface ByteSource {
  readonly size: number;
  read(start: number, end: number): Promise<Uint8Array>;
}

/** What a big put can be: bytes in memory, a Blob, or a ByteSource. */
export type UploadBody = Uint8Array | Blob | ByteSource;

export const isByteSource = (body: unknown): body is ByteSource =>
  typeof body === 'object' &&
  body !== null &&
  !(body instanceof Uint8Array) &&
  !(body instanceof Blob) &&
  typeof (body as ByteSource).read === 'function' &&
  typeof (body as ByteSource).size === 'number';

export const sizeOfBody = (body: UploadBody): number => (body instanceof Uint8Array ? body.byteLength : body.size);

/** Bytes [start, end) of a body. */
export async function rangeOf(body: UploadBody, start: number, end: number): Promise<Uint8Array<ArrayBuffer>> {
  if (body instanceof Uint8Array) return body.subarray(start, end) as Uint8Array<ArrayBuffer>;
  if (body instanceof Blob) return new Uint8Array(await body.slice(start, end).arrayBuffer());
  const bytes = await body.read(start, end);
  if (bytes.byteLength !== end - start)
    throw errors.badRequest(`The source read ${bytes.byteLength} bytes of [${start}, ${end}): did the file change?`);
  return bytes as Uint8Array<ArrayBuffer>;
}

/** A body as a stream, read in 8 MiB ranges. */
export function streamOf(body: UploadBody): ReadableStream<Uint8Array> {
  if (body instanceof Blob) return body.stream();
  const size = sizeOfBody(body);
  let at = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (at >= size) return controller.close();
      const end = Math.min(size, at + 8 * 1024 * 1024);
      controller.enqueue(await rangeOf(body, at, end));
      at = end;
    },
  });
}

/** The sha256 of a body, read as a stream. */
export const sha256OfBody = (body: UploadBody): Promise<string> =>
  body instanceof Uint8Array ? sha256Hex(body) : sha256OfStream(streamOf(body));

export interface DirectUploads {
  /** Learnt from the first answer: false once the service said it has no direct uploads. */
  readonly offered: boolean | undefined;
  /**
   * begin → PUT to the blob store (no token: the URL is presigned) → complete. Null when the service
   * offers no direct uploads; the caller then sends the bytes through the service.
   */
  put(data: UploadBody, headers: Record<string, string>, o: PutOptions): Promise<ArtifactRef | null>;
}

export function createDirectUploads(transport: HttpTransport, big: BigUploadOptions = {}): DirectUploads {
  let offered: boolean | undefined;

  /** The upload a resume record names, when it is still open and for these bytes; else null. */
  async function recorded(key: string, declared: { sizeBytes: number; sha256: string }) {
    const uploadId = await big.resume?.get(key);
    if (!uploadId) return null;
    const call = { method: 'GET', path: `/v1/uploads/${encodeURIComponent(uploadId)}` } as const;
    try {
      const status = await readAnswer(await transport.request(call), UPLOAD_STATUS_ANSWER, call);
      if (
        status.kind === 'multipart' &&
        status.sizeBytes === declared.sizeBytes &&
        status.sha256 === declared.sha256 &&
        status.partSize &&
        status.partCount
      ) {
        const ticket: PartsTicket = {
          kind: 'multipart',
          uploadId,
          sizeBytes: status.sizeBytes,
          partSize: status.partSize,
          partCount: status.partCount,
        };
        return { ticket, held: status.parts ?? [] };
      }
    } catch (err) {
      // Gone (completed, expired, aborted): start a new one.
      if (!isArtifactError(err) || err.code !== 'not_found') throw err;
    }
    await big.resume?.delete(key);
    return null;
  }

  /**
   * Sends the parts the bucket does not hold yet, `concurrency` at a time, each hashed, presigned
   * with that hash, PUT (retried on its own), then completes. The record goes once the upload is over.
   */
  async function putParts(
    ticket: PartsTicket,
    data: UploadBody,
    held: { partNumber: number; sizeBytes: number }[],
    key: string,
  ): Promise<ArtifactRef> {
    const { uploadId, partSize, partCount, sizeBytes } = ticket;
    const sizeOf = (n: number) => Math.min(partSize, sizeBytes - (n - 1) * partSize);
    const have = new Set(held.filter((p) => p.sizeBytes === sizeOf(p.partNumber)).map((p) => p.partNumber));
    let sent = [...have].reduce((sum, n) => sum + sizeOf(n), 0);
    big.onProgress?.({ uploadId, sentBytes: sent, totalBytes: sizeBytes });
    const todo: number[] = [];
    for (let n = 1; n <= partCount; n++) if (!have.has(n)) todo.push(n);
    const path = `/v1/uploads/${encodeURIComponent(uploadId)}`;
    const worker = async () => {
      for (let n = todo.shift(); n !== undefined; n = todo.shift()) {
        const start = (n - 1) * partSize;
        const bytes = await rangeOf(data, start, start + sizeOf(n));
        const ask = { method: 'POST', path: `${path}/parts` } as const;
        const body = new TextEncoder().encode(
          JSON.stringify({ parts: [{ partNumber: n, sha256: await sha256Hex(bytes) }] }),
        );
        const res = await transport.request({ ...ask, headers: { 'Content-Type': 'application/json' }, body });
        const [part] = (await readAnswer(res, PART_URLS_ANSWER, ask)).parts;
        if (!part) throw errors.backendUnavailable(`The service sent no URL for part ${n} of upload ${uploadId}.`);
        await putToBlobStore(part.url, part.headers, bytes);
        sent += bytes.byteLength;
        big.onProgress?.({ uploadId, sentBytes: sent, totalBytes: sizeBytes });
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, big.concurrency ?? 4) }, worker));
    const complete = { method: 'POST', path: `${path}/complete` } as const;
    const ref = await readAnswer(await transport.request(complete), REF_ANSWER, complete);
    await big.resume?.delete(key);
    return ref;
  }

  async function put(data: UploadBody, headers: Record<string, string>, o: PutOptions): Promise<ArtifactRef | null> {
    const declared = {
      sizeBytes: sizeOfBody(data),
      sha256: o.sha256 ?? (await sha256OfBody(data)),
      mimeType: headers['Content-Type'],
      filename: o.filename,
      namespace: o.namespace,
      meta: o.meta,
      source: o.source,
      ttl: o.ttl,
    };
    const key = `${transport.baseUrl} ${declared.sha256} ${declared.sizeBytes}`;
    const resumed = await recorded(key, declared);
    if (resumed) {
      offered = true;
      return putParts(resumed.ticket, data, resumed.held, key);
    }
    const begin = { method: 'POST', path: '/v1/uploads' } as const;
    let ticket: UploadTicket;
    try {
      const body = new TextEncoder().encode(JSON.stringify(declared));
      const beginHeaders = { ...scopeHeadersOf(headers), 'Content-Type': 'application/json' };
      const res = await transport.request({ ...begin, headers: beginHeaders, body });
      ticket = await readAnswer(res, TICKET_ANSWER, begin);
    } catch (err) {
      // A driver without direct uploads, or a service that predates them.
      if (!isArtifactError(err)) throw err;
      const unavailable = err.details?.reason === 'direct_uploads_unavailable';
      const noRoute = err.code === 'not_found' && /No route/.test(err.message);
      if (!unavailable && !noRoute) throw err;
      offered = false;
      return null;
    }
    offered = true;
    if (ticket.kind === 'multipart') {
      await big.resume?.set(key, ticket.uploadId);
      return putParts(ticket, data, [], key);
    }
    // One PUT (below the service's threshold for parts): a ByteSource is read whole for it.
    const whole = isByteSource(data) ? await rangeOf(data, 0, data.size) : data;
    await putToBlobStore(ticket.url, ticket.headers ?? {}, whole);
    const complete = { method: 'POST', path: `/v1/uploads/${encodeURIComponent(ticket.uploadId)}/complete` } as const;
    return readAnswer(await transport.request(complete), REF_ANSWER, complete);
  }

  /** The PUT to the presigned URL, retried on 5xx, 429 and network errors. */
  async function putToBlobStore(url: string, headers: Record<string, string>, data: Uint8Array | Blob): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      let failure: string;
      try {
        const body = data as Uint8Array<ArrayBuffer> | Blob;
        const res = await transport.fetch(url, { method: 'PUT', headers, body });
        await res.body?.cancel().catch(() => {});
        if (res.ok) return;
        failure = `HTTP ${res.status}`;
        if (res.status < 500 && res.status !== 429) {
          throw errors.backendUnavailable(`The blob store refused the direct upload (${failure}).`);
        }
      } catch (err) {
        if (isArtifactError(err)) throw err;
        if (!isNetworkError(err)) throw err;
        failure = describeError(err);
      }
      if (attempt >= transport.retry.retries) {
        const tries = `${attempt + 1} attempts`;
        throw errors.backendUnavailable(`The direct upload to the blob store failed after ${tries} (${failure}).`);
      }
      await sleep(backoffMs(transport.retry, attempt));
    }
  }

  return {
    get offered() {
      return offered;
    },
    put,
  };
}

/**
 * A stream that ends within `aboveBytes` is put from memory; a longer one is spooled (hashed on the
 * way) and put from the spool, with its sha256 declared: `put` then sends it direct, or through the
 * service when the service has no direct uploads.
 */
export async function putSpooled(
  stream: ReadableStream<Uint8Array>,
  spool: UploadSpool,
  aboveBytes: number,
  o: PutOptions,
  put: (body: Uint8Array | Blob, o: PutOptions) => Promise<ArtifactRef>,
): Promise<ArtifactRef> {
  const reader = stream.getReader();
  const head: Uint8Array[] = [];
  let size = 0;
  try {
    while (size <= aboveBytes) {
      const { done, value } = await reader.read();
      if (done) return await put(concatBytes(head, size), o);
      head.push(value);
      size += value.byteLength;
    }
  } catch (err) {
    await reader.cancel(err).catch(() => {});
    throw err;
  }
  const spooled = await spool(
    new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        const queued = head.shift();
        if (queued) return controller.enqueue(queued);
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      cancel: (reason) => reader.cancel(reason),
    }),
  );
  try {
    if (o.sha256 !== undefined && o.sha256 !== spooled.sha256) {
      throw errors.checksumMismatch(o.sha256, spooled.sha256);
    }
    return await put(spooled.blob, { ...o, sha256: spooled.sha256 });
  } finally {
    await spooled.release();
  }
}
