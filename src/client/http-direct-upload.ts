/**
 * Direct uploads: a large body goes straight to the blob store (POST /v1/uploads → PUT to the
 * presigned URL → complete), when the service offers it (its s3 driver does). A stream, whose size
 * and sha256 a direct upload must declare, is first kept in a spool while it is hashed.
 */
import { concatBytes } from '../core/bytes.js';
import { errors, isArtifactError } from '../core/errors.js';
import { sha256Hex } from '../core/hash.js';
import type { ArtifactRef, PutOptions } from '../core/schemas.js';
import { readAnswer, REF_ANSWER, TICKET_ANSWER, type UploadTicket } from './http-response-schemas.js';
import { scopeHeadersOf } from './http-headers.js';
import { backoffMs, describeError, isNetworkError, sleep } from './http-retry.js';
import type { HttpTransport } from './http-transport.js';
import type { UploadSpool } from './upload-spool.js';

export interface DirectUploads {
  /** Learnt from the first answer: false once the service said it has no direct uploads. */
  readonly offered: boolean | undefined;
  /**
   * begin → PUT to the blob store (no token: the URL is presigned) → complete. Null when the service
   * offers no direct uploads; the caller then sends the bytes through the service.
   */
  put(data: Uint8Array | Blob, headers: Record<string, string>, o: PutOptions): Promise<ArtifactRef | null>;
}

export function createDirectUploads(transport: HttpTransport): DirectUploads {
  let offered: boolean | undefined;

  async function put(
    data: Uint8Array | Blob,
    headers: Record<string, string>,
    o: PutOptions,
  ): Promise<ArtifactRef | null> {
    const declared = {
      sizeBytes: data instanceof Blob ? data.size : data.byteLength,
      sha256: o.sha256 ?? (await sha256Hex(data instanceof Blob ? new Uint8Array(await data.arrayBuffer()) : data)),
      mimeType: headers['Content-Type'],
      filename: o.filename,
      namespace: o.namespace,
      meta: o.meta,
      source: o.source,
      ttl: o.ttl,
    };
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
    await putToBlobStore(ticket.url, ticket.headers ?? {}, data);
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
