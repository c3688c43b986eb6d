/**
 * The SDK over the HTTP API: fetch and Web Streams only, so it runs in Node, browsers and Workers.
 * This module composes the parts: the transport and its retries (http-transport, http-retry), the
 * put headers (http-headers), direct uploads (http-direct-upload), the event stream (http-events),
 * the service's errors (http-errors) and the schemas its JSON answers are checked against
 * (http-response-schemas).
 */
import { decodeBase64 } from '../core/base64.js';
import { errors } from '../core/errors.js';
import { isArtifactId } from '../core/ids.js';
import { TEXT_MIME } from '../core/put-options.js';
import type { ArtifactRef, ListPage, ListQuery, PutOptions } from '../core/schemas.js';
import type { QueryAnswer, QueryOptions, ReadAnswer, ReadOptions, SearchAnswer, SearchOptions } from '../core/views.js';
import { sessionToEnd, type SessionEndReport } from '../core/sessions.js';
import { rangeHeaderOf } from '../core/store-scope.js';
import type {
  ArtifactStore,
  ArtifactStoreCapabilities,
  DownloadLink,
  GetStreamOptions,
  UrlOptions,
} from './artifact-store.js';
import {
  LINK_ANSWER,
  LIST_ANSWER,
  QUERY_ANSWER,
  READ_ANSWER,
  readAnswer,
  REF_ANSWER,
  SEARCH_ANSWER,
  SESSION_END_ANSWER,
} from './http-response-schemas.js';
import {
  type BigUploadOptions,
  type ByteSource,
  createDirectUploads,
  isByteSource,
  putSpooled,
  sha256OfBody,
  sizeOfBody,
  streamOf,
} from './http-direct-upload.js';
import { createTusUploads } from './http-tus-upload.js';
import { nullWhenNotFound } from './http-errors.js';
import { artifactEvents } from './http-events.js';
import { putHeaders, readHeaders, type ScopeNames } from './http-headers.js';
import { httpNames } from './http-names.js';
import { retryPolicyOf } from './http-retry.js';
import { emptyStream, sliceStream } from './http-streams.js';
import { createHttpTransport, type Call, type RequestBody } from './http-transport.js';
import type { UploadSpool } from './upload-spool.js';

export { retryAfterSeconds } from './http-retry.js';
export type { SpooledBody, UploadSpool } from './upload-spool.js';

export interface HttpArtifactStoreOptions {
  /** Where the service runs, for example `https://artifacts.example.com` (a path prefix is kept). */
  baseUrl: string;
  /** Bearer token, or a function asked before every request (so it can refresh). */
  token?: string | (() => string | Promise<string>);
  /** Default: the global fetch. */
  fetch?: typeof fetch;
  /** Retries of a replayable request after 429, 503 or a network error. Default 3. */
  retries?: number;
  /** First backoff delay; doubles per retry, with jitter. Default 250 ms. */
  retryBaseMs?: number;
  /** Cap on one wait, Retry-After included. Default 10 s. */
  retryMaxDelayMs?: number;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
  /**
   * The scope puts and listings name, for tenant-wide tokens (sent as X-Artifact-Session / -Trace /
   * -User); reads name its session and trace, so they see this scope's reference. A session-bound
   * token's scope comes from the token and cannot be widened.
   */
  scope?: ScopeNames;
  /**
   * Send putStream bodies as streams. Default: true, except in browsers, which stream request bodies
   * only over HTTP/2; there the stream is first collected into a Blob (which also makes it retryable).
   */
  streamUploads?: boolean;
  /**
   * Bodies larger than this (putBytes, putText, putBase64, and putStream where it is collected into
   * a Blob) go straight to the blob store through POST /v1/uploads when the service offers direct
   * uploads (its s3 driver does). Default 8 MiB; Infinity always sends through the service.
   */
  directUploadAboveBytes?: number;
  /**
   * Lets putStream go direct too. A stream's size and sha256 are unknown until it ends, and a direct
   * upload must declare both, so a putStream that outgrows directUploadAboveBytes is written to this
   * spool while it is hashed, then uploaded from it. Node: `createFileSpool()` from
   * `artifact-store/node` (a private temp folder). Without a spool, putStream streams through the
   * service.
   */
  spool?: UploadSpool;
  /**
   * Direct uploads in parts (the service's s3 driver, above its ARTIFACT_STORE_MULTIPART_UPLOAD_BYTES):
   * progress as parts are acknowledged, resume records that let the same bytes put again (here or
   * in a new process) resume an interrupted upload, and how many parts go at once.
   */
  uploads?: BigUploadOptions;
}

export interface HttpArtifactStore extends ArtifactStore {
  readonly baseUrl: string;
  /**
   * Puts a Blob, or a ByteSource (bytes read at any offset: on Node, a file through a FileHandle's
   * positioned reads; Node 24's `fs.openAsBlob` reads nothing past 2 GiB of a file over 4 GiB). Above
   * directUploadAboveBytes it goes direct when the service offers it, in parts above the service's
   * threshold (resumable with `uploads.resume`); else it streams through the service.
   */
  putBlob(blob: Blob | ByteSource, options?: PutOptions): Promise<ArtifactRef>;
  /**
   * DELETE /v1/sessions/{id}: ends `sessionId`, by default the store's `scope.sessionId` (a
   * session-bound token's own session is not known here: name it). Retried like any delete.
   */
  endSession(sessionId?: string): Promise<SessionEndReport>;
}

/**
 * The SDK over the HTTP API. Replayable requests (buffered puts, reads, deletes, ending a session)
 * are retried on 429 / 503 / network errors with exponential backoff and jitter, honouring
 * Retry-After; a streamed put is sent once.
 *
 * @example
 * const store = createHttpArtifactStore({ baseUrl: 'http://127.0.0.1:8787', token: process.env.ARTIFACT_STORE_TOKEN });
 * const ref = await store.putBytes(pdf, { mimeType: 'application/pdf', filename: 'Sales.pdf' });
 */
export function createHttpArtifactStore(options: HttpArtifactStoreOptions): HttpArtifactStore {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  if (!/^https?:\/\//i.test(baseUrl)) {
    throw errors.badRequest(`baseUrl ${JSON.stringify(options.baseUrl)} must be an http(s) URL.`);
  }
  const transport = createHttpTransport({
    baseUrl,
    fetch: options.fetch ?? ((input, init) => globalThis.fetch(input, init)),
    token: options.token,
    headers: { ...(options.headers ?? {}) },
    retry: retryPolicyOf(options),
  });
  const { request } = transport;
  const scope = options.scope ?? {};
  const reading = readHeaders(scope);
  const streamUploads = options.streamUploads ?? !isBrowser();
  const capabilities: ArtifactStoreCapabilities = {
    persistent: true,
    ranges: true,
    signedUrls: true,
    events: true,
    names: true,
    views: true,
  };
  const directAbove = options.directUploadAboveBytes ?? 8 * 1024 * 1024;
  const direct = createDirectUploads(transport, options.uploads);
  const tus = createTusUploads(transport, options.uploads);
  const tusAbove = options.uploads?.tusAboveBytes ?? 64 * 1024 * 1024;

  /** Direct to the blob store when the body is large and the service offers it; else POST /v1/artifacts. */
  async function put(
    body: RequestBody | ByteSource,
    headers: Record<string, string>,
    o?: PutOptions,
  ): Promise<ArtifactRef> {
    if (o && (body instanceof Uint8Array || body instanceof Blob || isByteSource(body))) {
      const size = sizeOfBody(body);
      if (size > directAbove && direct.offered !== false) {
        const ref = await direct.put(body, headers, o);
        if (ref) return ref;
      }
      // No direct uploads (the fs driver): a big body goes resumable, through the service's tus.
      if (size > tusAbove && direct.offered === false && tus.offered !== false) {
        const sha256 = o.sha256 ?? (await sha256OfBody(body));
        const ref = await tus.put(body, { sizeBytes: size, sha256 }, headers, o);
        if (ref) return ref;
      }
    }
    const call: Call = {
      method: 'POST',
      path: '/v1/artifacts',
      headers,
      body: isByteSource(body) ? streamOf(body) : body,
    };
    return readAnswer(await request(call), REF_ANSWER, call);
  }

  async function getStream(id: string, getOptions: GetStreamOptions = {}): Promise<ReadableStream<Uint8Array> | null> {
    if (!isArtifactId(id)) return null;
    const headers: Record<string, string> = getOptions.range
      ? { ...reading, Range: rangeHeaderOf(getOptions.range) }
      : reading;
    const res = await nullWhenNotFound(() => request({ method: 'GET', path: artifactPath(id), headers }));
    if (!res) return null;
    const body = res.body ?? emptyStream();
    // An intermediary that ignored Range sent the whole body: cut the range out here.
    return getOptions.range && res.status === 200 ? sliceStream(body, getOptions.range) : body;
  }

  return {
    baseUrl,
    capabilities,
    names: httpNames(request, scope),

    putBytes: async (data: Uint8Array, o: PutOptions = {}) => put(data, putHeaders(o, scope, undefined), o),
    putBlob: async (blob: Blob | ByteSource, o: PutOptions = {}) => put(blob, putHeaders(o, scope, undefined), o),
    putText: async (text: string, o: PutOptions = {}) =>
      put(new TextEncoder().encode(text), putHeaders(o, scope, TEXT_MIME), o),
    async putBase64(data: string, o: PutOptions = {}) {
      const decoded = decodeBase64(data);
      return put(decoded.bytes, putHeaders(o, scope, decoded.mimeType), o);
    },
    async putStream(stream: ReadableStream<Uint8Array>, o: PutOptions = {}) {
      let headers: Record<string, string>;
      try {
        headers = putHeaders(o, scope, undefined);
      } catch (err) {
        await stream.cancel(err).catch(() => {});
        throw err;
      }
      // Collected into a Blob, the body can be sent again, so it is retried like a buffered put.
      if (!streamUploads) return put(await new Response(stream).blob(), headers, o);
      if (!options.spool || direct.offered === false || !Number.isFinite(directAbove)) return put(stream, headers, o);
      const putBody = (body: Uint8Array | Blob, spooledOptions: PutOptions) => put(body, headers, spooledOptions);
      return putSpooled(stream, options.spool, directAbove, o, putBody);
    },

    async get(id: string) {
      const body = await getStream(id);
      return body ? new Uint8Array(await new Response(body).arrayBuffer()) : null;
    },
    getStream,
    events: (o) => artifactEvents(transport, scope, o),
    async getRef(id: string) {
      if (!isArtifactId(id)) return null;
      const call: Call = { method: 'GET', path: `${artifactPath(id)}/meta`, headers: reading };
      const res = await nullWhenNotFound(() => request(call));
      return res ? readAnswer(res, REF_ANSWER, call) : null;
    },
    async url(id: string, o: UrlOptions = {}): Promise<DownloadLink> {
      const asked = { mode: o.mode, expiresIn: o.expiresIn, disposition: o.disposition };
      const body = new TextEncoder().encode(JSON.stringify(asked));
      const headers = { ...reading, 'Content-Type': 'application/json' };
      const call: Call = { method: 'POST', path: `${artifactPath(id)}/url`, headers, body };
      return readAnswer(await request(call), LINK_ANSWER, call);
    },
    async exists(id: string) {
      if (!isArtifactId(id)) return false;
      const res = await nullWhenNotFound(() => request({ method: 'HEAD', path: artifactPath(id), headers: reading }));
      await res?.body?.cancel();
      return res !== null;
    },
    async delete(id: string) {
      if (!isArtifactId(id)) return false;
      const res = await nullWhenNotFound(() => request({ method: 'DELETE', path: artifactPath(id), headers: reading }));
      await res?.body?.cancel();
      return res !== null;
    },
    async read(id: string, o: ReadOptions = {}): Promise<ReadAnswer> {
      const call: Call = { method: 'GET', path: `${artifactPath(id)}/text`, headers: reading, query: viewParams(o) };
      return readAnswer(await request(call), READ_ANSWER, call);
    },
    async search(id: string, o: SearchOptions): Promise<SearchAnswer> {
      const call: Call = { method: 'GET', path: `${artifactPath(id)}/search`, headers: reading, query: viewParams(o) };
      return readAnswer(await request(call), SEARCH_ANSWER, call);
    },
    async query(id: string, o: QueryOptions): Promise<QueryAnswer> {
      const call: Call = { method: 'GET', path: `${artifactPath(id)}/query`, headers: reading, query: viewParams(o) };
      return readAnswer(await request(call), QUERY_ANSWER, call);
    },
    async list(query: ListQuery = {}): Promise<ListPage> {
      const call: Call = { method: 'GET', path: '/v1/artifacts', query: listParams(query, scope) };
      return readAnswer(await request(call), LIST_ANSWER, call);
    },
    async endSession(sessionId?: string): Promise<SessionEndReport> {
      // Idempotent, and the route takes the session from its path alone: nothing of the store's
      // scope goes with it.
      const session = sessionToEnd(sessionId, scope.sessionId);
      const call: Call = { method: 'DELETE', path: `/v1/sessions/${encodeURIComponent(session)}` };
      return readAnswer(await request(call), SESSION_END_ANSWER, call);
    },
  };
}

const artifactPath = (id: string) => `/v1/artifacts/${encodeURIComponent(id)}`;

/** A view's options as query parameters (their names are the API's). */
function viewParams(o: ReadOptions | SearchOptions | QueryOptions): URLSearchParams {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(o)) if (value !== undefined) params.set(name, String(value));
  return params;
}

/** A listing's query with the API's parameter names; the store's scope fills what the query leaves out. */
function listParams(query: ListQuery, scope: ScopeNames): URLSearchParams {
  const params = new URLSearchParams();
  const named: [string, string | number | undefined][] = [
    ['session', query.sessionId ?? scope.sessionId],
    ['trace', query.traceId ?? scope.traceId],
    ['user', query.userId ?? scope.userId],
    ['namespace', query.namespace],
    ['mimePrefix', query.mimePrefix],
    ['createdAfter', query.createdAfter],
    ['createdBefore', query.createdBefore],
    ['q', query.q],
    ['sort', query.sort],
    ['cursor', query.cursor],
    ['limit', query.limit],
  ];
  for (const [name, value] of named) if (value !== undefined) params.set(name, String(value));
  return params;
}

function isBrowser(): boolean {
  return typeof window !== 'undefined' && typeof document !== 'undefined';
}
