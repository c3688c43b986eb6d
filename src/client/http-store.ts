import { decodeBase64 } from '../core/base64.js';
import { concatBytes } from '../core/bytes.js';
import { ArtifactError, errors, isArtifactError, isErrorCode, type ErrorCode } from '../core/errors.js';
import { encodeExtValue } from '../core/filename.js';
import { TEXT_MIME } from '../core/put-options.js';
import { isArtifactId } from '../core/ids.js';
import { sha256Hex } from '../core/hash.js';
import type { ArtifactRef, ByteRange, ListPage, ListQuery, PutOptions } from '../core/schemas.js';
import { createParser } from 'eventsource-parser';
import type { ArtifactEvent, ArtifactStore, ArtifactStoreCapabilities, DownloadLink, EventsOptions, GetStreamOptions, UrlOptions } from './artifact-store.js';
import { rangeHeaderOf } from '../core/store-scope.js';

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
   * -User). A session-bound token's scope comes from the token and cannot be widened.
   */
  scope?: { sessionId?: string; traceId?: string; userId?: string };
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
}

/** Keeps a stream's bytes so they can be sent with a known size and sha256. */
export type UploadSpool = (stream: ReadableStream<Uint8Array>) => Promise<SpooledBody>;

export interface SpooledBody {
  /** The bytes, readable any number of times (a file-backed Blob in Node). */
  blob: Blob;
  sha256: string;
  /** Removes the spooled bytes; called once the put is over, whatever its outcome. */
  release(): Promise<void>;
}

export interface HttpArtifactStore extends ArtifactStore {
  readonly baseUrl: string;
}

type RequestBody = Uint8Array | Blob | ReadableStream<Uint8Array>;

interface Call {
  method: 'GET' | 'HEAD' | 'POST' | 'DELETE';
  path: string;
  query?: URLSearchParams;
  headers?: Record<string, string>;
  body?: RequestBody;
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
// A plain value of this shape would be read by the service as an RFC 8187 ext-value.
const LOOKS_LIKE_EXT_VALUE = /^[A-Za-z0-9!#$&+^`{}~-]+'[A-Za-z0-9-]*'/;

/**
 * The SDK over the HTTP API: fetch and Web Streams only, so it runs in Node, browsers and Workers.
 * Replayable requests (buffered puts, reads, deletes) are retried on 429 / 503 / network errors with
 * exponential backoff and jitter, honouring Retry-After; a streamed put is sent once.
 *
 * @example
 * const store = createHttpArtifactStore({ baseUrl: 'http://127.0.0.1:8787', token: process.env.ARTIFACT_STORE_TOKEN });
 * const ref = await store.putBytes(pdf, { mimeType: 'application/pdf', filename: 'Sales.pdf' });
 */
export function createHttpArtifactStore(options: HttpArtifactStoreOptions): HttpArtifactStore {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  if (!/^https?:\/\//i.test(baseUrl)) throw errors.badRequest(`baseUrl ${JSON.stringify(options.baseUrl)} must be an http(s) URL.`);
  const fetchImpl: typeof fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const retries = Math.max(0, Math.trunc(options.retries ?? 3));
  const retryBaseMs = options.retryBaseMs ?? 250;
  const retryMaxDelayMs = options.retryMaxDelayMs ?? 10_000;
  const scope = options.scope ?? {};
  const streamUploads = options.streamUploads ?? !isBrowser();
  const extraHeaders = { ...(options.headers ?? {}) };
  const capabilities: ArtifactStoreCapabilities = { persistent: true, ranges: true, signedUrls: true, events: true };
  const directAbove = options.directUploadAboveBytes ?? 8 * 1024 * 1024;
  /** Learnt from the first answer: false once the service said it has no direct uploads. */
  let directUploads: boolean | undefined;

  async function authHeaders(): Promise<Record<string, string>> {
    const token = typeof options.token === 'function' ? await options.token() : options.token;
    return token ? { ...extraHeaders, Authorization: `Bearer ${token}` } : { ...extraHeaders };
  }

  function backoffMs(attempt: number): number {
    const ceiling = Math.min(retryMaxDelayMs, retryBaseMs * 2 ** attempt);
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }

  /** One logical request: retried while the body can be sent again. Never throws for an HTTP status. */
  async function send(call: Call): Promise<{ res: Response; stopUpload?: (reason: unknown) => void }> {
    // A streamed body goes through a wrapper we can stop: aborting fetch instead leaves Node's fetch
    // spinning on the request body after the server has answered.
    const upload = call.body === undefined || call.body instanceof Uint8Array || call.body instanceof Blob ? undefined : stoppableStream(call.body);
    const attempts = upload ? 1 : retries + 1;
    const url = `${baseUrl}${call.path}${call.query && [...call.query.keys()].length > 0 ? `?${call.query}` : ''}`;
    for (let attempt = 0; ; attempt++) {
      const headers = { ...(await authHeaders()), ...(call.headers ?? {}) };
      const init: RequestInit & { duplex?: 'half' } = { method: call.method, headers };
      if (upload) {
        init.body = upload.stream;
        init.duplex = 'half';
      } else if (call.body !== undefined) {
        init.body = call.body as BodyInit;
      }
      let res: Response;
      try {
        res = await fetchImpl(url, init);
      } catch (err) {
        upload?.stop(err);
        // The caller's own stream failed: that error, not a network one.
        const failure = upload?.sourceFailure();
        if (failure) throw failure.error;
        if (!isNetworkError(err)) throw err;
        if (attempt + 1 < attempts) {
          await sleep(backoffMs(attempt));
          continue;
        }
        const tries = attempts > 1 ? ` after ${attempts} attempts` : '';
        throw errors.backendUnavailable(`Could not reach the artifact store at ${baseUrl}${tries} (${describeError(err)}). Check the URL and that the service is running, then retry.`, { cause: err });
      }
      if ((res.status === 429 || res.status === 503) && attempt + 1 < attempts) {
        const wait = retryAfterSeconds(res.headers.get('retry-after'));
        await res.body?.cancel().catch(() => {});
        await sleep(Math.min(retryMaxDelayMs, wait !== undefined ? wait * 1000 : backoffMs(attempt)));
        continue;
      }
      return upload ? { res, stopUpload: upload.stop } : { res };
    }
  }

  /** Sends and returns a successful response, or throws the rebuilt ArtifactError. */
  async function request(call: Call): Promise<Response> {
    const { res, stopUpload } = await send(call);
    if (res.ok) return res;
    const err = await errorFromResponse(res, call);
    // The server answered before reading the whole upload: stop producing it.
    stopUpload?.(err);
    throw err;
  }

  async function put(body: RequestBody, headers: Record<string, string>, o?: PutOptions): Promise<ArtifactRef> {
    if (o && directUploads !== false && (body instanceof Uint8Array || body instanceof Blob)) {
      const size = body instanceof Blob ? body.size : body.byteLength;
      if (size > directAbove) {
        const ref = await putDirect(body, headers, o);
        if (ref) return ref;
      }
    }
    const res = await request({ method: 'POST', path: '/v1/artifacts', headers, body });
    return (await readJson(res, 'ArtifactRef')) as unknown as ArtifactRef;
  }

  /**
   * begin → PUT to the blob store (no token: the URL is presigned) → complete. Null when the service
   * offers no direct uploads; the caller then sends the bytes through the service.
   */
  async function putDirect(data: Uint8Array | Blob, headers: Record<string, string>, o: PutOptions): Promise<ArtifactRef | null> {
    const scopeHeaders = Object.fromEntries(Object.entries(headers).filter(([k]) => /^X-Artifact-(Session|Trace|User)$/.test(k)));
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
    let ticket: Record<string, unknown>;
    try {
      const res = await request({ method: 'POST', path: '/v1/uploads', headers: { ...scopeHeaders, 'Content-Type': 'application/json' }, body: new TextEncoder().encode(JSON.stringify(declared)) });
      ticket = await readJson(res, 'upload ticket');
    } catch (err) {
      // A driver without direct uploads, or a service that predates them.
      if (isArtifactError(err) && (err.details?.reason === 'direct_uploads_unavailable' || (err.code === 'not_found' && /No route/.test(err.message)))) {
        directUploads = false;
        return null;
      }
      throw err;
    }
    directUploads = true;
    const { uploadId, url } = ticket as { uploadId: string; url: string };
    const uploadHeaders = (ticket.headers ?? {}) as Record<string, string>;
    for (let attempt = 0; ; attempt++) {
      let failure: string;
      try {
        const res = await fetchImpl(url, { method: 'PUT', headers: uploadHeaders, body: data as Uint8Array<ArrayBuffer> | Blob });
        await res.body?.cancel().catch(() => {});
        if (res.ok) break;
        failure = `HTTP ${res.status}`;
        if (res.status < 500 && res.status !== 429) throw errors.backendUnavailable(`The blob store refused the direct upload (${failure}).`);
      } catch (err) {
        if (isArtifactError(err)) throw err;
        if (!isNetworkError(err)) throw err;
        failure = describeError(err);
      }
      if (attempt >= retries) throw errors.backendUnavailable(`The direct upload to the blob store failed after ${attempt + 1} attempts (${failure}).`);
      await sleep(backoffMs(attempt));
    }
    const done = await request({ method: 'POST', path: `/v1/uploads/${encodeURIComponent(uploadId)}/complete` });
    return (await readJson(done, 'ArtifactRef')) as unknown as ArtifactRef;
  }

  /**
   * A stream that ends within directUploadAboveBytes is sent from memory through the service; a
   * longer one is spooled (hashed on the way), then sent direct, or through the service from the
   * spool when the service has no direct uploads.
   */
  async function putSpooled(stream: ReadableStream<Uint8Array>, spool: UploadSpool, headers: Record<string, string>, o: PutOptions): Promise<ArtifactRef> {
    const reader = stream.getReader();
    const head: Uint8Array[] = [];
    let size = 0;
    try {
      while (size <= directAbove) {
        const { done, value } = await reader.read();
        if (done) return await put(concatBytes(head, size), headers, o);
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
      return await put(spooled.blob, headers, { ...o, sha256: spooled.sha256 });
    } finally {
      await spooled.release();
    }
  }

  /**
   * GET /v1/events as an async iterator: fetch (EventSource cannot send Authorization) and an SSE
   * parser; on a dropped connection or a 429 / 503 / network error it reconnects with backoff and
   * Last-Event-ID. Other errors (401, 403, 400) end it by throwing.
   */
  async function* events(o: EventsOptions = {}): AsyncGenerator<ArtifactEvent> {
    let lastEventId = o.lastEventId;
    const query = new URLSearchParams();
    if (o.sessionId ?? scope.sessionId) query.set('session', (o.sessionId ?? scope.sessionId)!);
    if (o.traceId ?? scope.traceId) query.set('trace', (o.traceId ?? scope.traceId)!);
    const url = `${baseUrl}/v1/events${[...query.keys()].length ? `?${query}` : ''}`;
    for (let attempt = 0; !o.signal?.aborted; ) {
      let res: Response;
      try {
        res = await fetchImpl(url, { headers: { ...(await authHeaders()), Accept: 'text/event-stream', ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}) }, signal: o.signal });
      } catch (err) {
        if (o.signal?.aborted) return;
        if (!isNetworkError(err)) throw err;
        await sleep(backoffMs(attempt++));
        continue;
      }
      if (!res.ok) {
        if (res.status !== 429 && res.status !== 503) throw await errorFromResponse(res, { method: 'GET', path: '/v1/events' });
        await res.body?.cancel().catch(() => {});
        await sleep(backoffMs(attempt++));
        continue;
      }
      // Events, and positions: an id with no data moves where a reconnect resumes from.
      const queue: (ArtifactEvent | { position: string })[] = [];
      const parser = createParser({
        onEvent(ev) {
          if (!ev.id) return;
          if (ev.data === '') return void queue.push({ position: ev.id });
          const data = JSON.parse(ev.data) as Omit<ArtifactEvent, 'id'>;
          // Only artifact events (a stream that asked for the audit trail carries others too).
          if (!data.ref) return void queue.push({ position: ev.id });
          queue.push({ id: ev.id, type: data.type, ref: data.ref, at: data.at });
        },
      });
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          attempt = 0;
          parser.feed(value);
          while (queue.length > 0) {
            const ev = queue.shift()!;
            if ('position' in ev) {
              lastEventId = ev.position;
              continue;
            }
            lastEventId = ev.id;
            yield ev;
          }
        }
      } catch (err) {
        if (o.signal?.aborted) return;
        if (!isNetworkError(err) && !(err instanceof Error && /terminated|aborted|other side closed/i.test(err.message))) throw err;
      } finally {
        await reader.cancel().catch(() => {});
      }
      // The stream ended (the service restarted or is draining): reconnect where it left off.
      await sleep(backoffMs(attempt++));
    }
  }

  async function getStream(id: string, getOptions: GetStreamOptions = {}): Promise<ReadableStream<Uint8Array> | null> {
    if (!isArtifactId(id)) return null;
    const headers: Record<string, string> = getOptions.range ? { Range: rangeHeaderOf(getOptions.range) } : {};
    const res = await nullWhenNotFound(() => request({ method: 'GET', path: artifactPath(id), headers }));
    if (!res) return null;
    const body = res.body ?? emptyStream();
    // An intermediary that ignored Range sent the whole body: cut the range out here.
    return getOptions.range && res.status === 200 ? sliceStream(body, getOptions.range) : body;
  }

  return {
    baseUrl,
    capabilities,

    putBytes: async (data: Uint8Array, o: PutOptions = {}) => put(data, putHeaders(o, scope, undefined), o),
    putText: async (text: string, o: PutOptions = {}) => put(new TextEncoder().encode(text), putHeaders(o, scope, TEXT_MIME), o),
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
      if (!options.spool || directUploads === false || !Number.isFinite(directAbove)) return put(stream, headers, o);
      return putSpooled(stream, options.spool, headers, o);
    },

    async get(id: string) {
      const body = await getStream(id);
      return body ? new Uint8Array(await new Response(body).arrayBuffer()) : null;
    },
    getStream,
    events,
    async getRef(id: string) {
      if (!isArtifactId(id)) return null;
      const res = await nullWhenNotFound(() => request({ method: 'GET', path: `${artifactPath(id)}/meta` }));
      return res ? ((await readJson(res, 'ArtifactRef')) as unknown as ArtifactRef) : null;
    },
    async url(id: string, o: UrlOptions = {}): Promise<DownloadLink> {
      const body = new TextEncoder().encode(JSON.stringify({ mode: o.mode, expiresIn: o.expiresIn, disposition: o.disposition }));
      const res = await request({ method: 'POST', path: `${artifactPath(id)}/url`, headers: { 'Content-Type': 'application/json' }, body });
      return (await readJson(res, 'download link')) as unknown as DownloadLink;
    },
    async exists(id: string) {
      if (!isArtifactId(id)) return false;
      const res = await nullWhenNotFound(() => request({ method: 'HEAD', path: artifactPath(id) }));
      await res?.body?.cancel();
      return res !== null;
    },
    async delete(id: string) {
      if (!isArtifactId(id)) return false;
      const res = await nullWhenNotFound(() => request({ method: 'DELETE', path: artifactPath(id) }));
      await res?.body?.cancel();
      return res !== null;
    },
    async list(query: ListQuery = {}): Promise<ListPage> {
      const params = new URLSearchParams();
      const named: [string, string | number | undefined][] = [
        ['session', query.sessionId ?? scope.sessionId],
        ['trace', query.traceId ?? scope.traceId],
        ['user', query.userId ?? scope.userId],
        ['namespace', query.namespace],
        ['mimePrefix', query.mimePrefix],
        ['createdAfter', query.createdAfter],
        ['createdBefore', query.createdBefore],
        ['cursor', query.cursor],
        ['limit', query.limit],
      ];
      for (const [name, value] of named) if (value !== undefined) params.set(name, String(value));
      const res = await request({ method: 'GET', path: '/v1/artifacts', query: params });
      const page = await readJson(res, 'ArtifactList');
      if (!Array.isArray(page.items)) throw unexpectedAnswer('ArtifactList', 'no items array');
      return page as unknown as ListPage;
    },
  };
}

const artifactPath = (id: string) => `/v1/artifacts/${encodeURIComponent(id)}`;

function isBrowser(): boolean {
  return typeof window !== 'undefined' && typeof document !== 'undefined';
}

/** fetch rejects with a TypeError when no HTTP answer came back (DNS, refused, reset). */
function isNetworkError(err: unknown): boolean {
  return err instanceof TypeError;
}

function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  const inner = cause instanceof Error ? `: ${(cause as { code?: string }).code ?? cause.message}` : '';
  return `${err.message}${inner}`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Retry-After as seconds: delta-seconds or an HTTP date. */
export function retryAfterSeconds(value: string | null): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

async function nullWhenNotFound<T>(run: () => Promise<T>): Promise<T | null> {
  try {
    return await run();
  } catch (err) {
    if (isArtifactError(err) && err.code === 'not_found') return null;
    throw err;
  }
}

/**
 * Rebuilds the service's typed error from a `{ code, message, details? }` body. Anything else (a
 * proxy's HTML page, a bodyless HEAD) becomes the nearest code, with the status in the message.
 */
async function errorFromResponse(res: Response, call: Call): Promise<ArtifactError> {
  const retryAfter = retryAfterSeconds(res.headers.get('retry-after'));
  let text = '';
  try {
    text = call.method === 'HEAD' ? '' : await res.text();
  } catch {
    // The body broke off; the status still says what happened.
  }
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (isRecord(body) && isErrorCode(body.code) && typeof body.message === 'string') {
    return new ArtifactError(body.code, body.message, {
      ...(isRecord(body.details) ? { details: body.details } : {}),
      ...(retryAfter !== undefined ? { retryAfter } : {}),
    });
  }
  const code = fallbackCode(res.status, call.method === 'HEAD');
  const snippet = text.trim().replace(/\s+/g, ' ').slice(0, 200);
  return new ArtifactError(code, `${call.method} ${call.path} answered HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}${snippet ? `: ${snippet}` : ''}.`, {
    ...(retryAfter !== undefined ? { retryAfter } : {}),
    details: { status: res.status },
  });
}

/** Only statuses that mean one thing anywhere map to a code; a HEAD answer has no body, so its status is all there is. */
function fallbackCode(status: number, bodyless: boolean): ErrorCode {
  if (status >= 500) return 'backend_unavailable';
  if (status === 429) return 'rate_limited';
  if (status === 413) return 'payload_too_large';
  if (bodyless) {
    const byStatus: Record<number, ErrorCode> = { 401: 'unauthorized', 403: 'forbidden', 404: 'not_found', 416: 'invalid_range', 422: 'checksum_mismatch' };
    const code = byStatus[status];
    if (code) return code;
  }
  return 'bad_request';
}

async function readJson(res: Response, what: string): Promise<Record<string, unknown>> {
  let body: unknown;
  try {
    body = await res.json();
  } catch (err) {
    throw unexpectedAnswer(what, 'not JSON', err);
  }
  if (!isRecord(body)) throw unexpectedAnswer(what, 'not an object');
  if (what === 'ArtifactRef' && typeof body.id !== 'string') throw unexpectedAnswer(what, 'no id');
  return body;
}

function unexpectedAnswer(what: string, why: string, cause?: unknown): ArtifactError {
  return errors.backendUnavailable(`The service answered with something other than an ${what} (${why}). Is baseUrl pointing at artifact-store?`, cause === undefined ? {} : { cause });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The X-Artifact-* headers of a put. Values that are not printable ASCII go as RFC 8187 ext-values. */
function putHeaders(o: PutOptions, scope: NonNullable<HttpArtifactStoreOptions['scope']>, defaultMime: string | undefined): Record<string, string> {
  const h: Record<string, string> = { 'Content-Type': asciiHeader('mime type', o.mimeType ?? defaultMime ?? 'application/octet-stream') };
  if (o.filename !== undefined) h['X-Artifact-Filename'] = textHeader(o.filename);
  if (o.namespace !== undefined) h['X-Artifact-Namespace'] = asciiHeader('namespace', o.namespace);
  if (o.meta !== undefined) h['X-Artifact-Meta'] = jsonHeader(o.meta);
  if (o.source !== undefined) h['X-Artifact-Source'] = jsonHeader(o.source);
  if (o.ttl !== undefined) h['X-Artifact-Ttl'] = asciiHeader('ttl', String(o.ttl));
  if (o.sha256 !== undefined) h['X-Artifact-Sha256'] = asciiHeader('sha256', o.sha256);
  const session = o.scope?.sessionId ?? scope.sessionId;
  const trace = o.scope?.traceId ?? scope.traceId;
  const user = o.scope?.userId ?? scope.userId;
  if (session !== undefined) h['X-Artifact-Session'] = asciiHeader('sessionId', session);
  if (trace !== undefined) h['X-Artifact-Trace'] = asciiHeader('traceId', trace);
  if (user !== undefined) h['X-Artifact-User'] = asciiHeader('userId', user);
  return h;
}

function asciiHeader(name: string, value: string): string {
  if (!PRINTABLE_ASCII.test(value) || value !== value.trim()) {
    throw errors.badRequest(`${name} ${JSON.stringify(value)} must be printable ASCII without surrounding spaces: it travels in an HTTP header.`);
  }
  return value;
}

/** Plain when the service would read it back unchanged; otherwise `UTF-8''<percent-encoded>`. */
function textHeader(value: string): string {
  const plain = PRINTABLE_ASCII.test(value) && value === value.trim() && !LOOKS_LIKE_EXT_VALUE.test(value);
  return plain ? value : encodeExtValue(value);
}

function jsonHeader(value: Record<string, unknown>): string {
  return textHeader(JSON.stringify(value));
}

/** Passes a stream through, pulling only on demand, and can be stopped: errors the copy, cancels the source. */
function stoppableStream(source: ReadableStream<Uint8Array>): { stream: ReadableStream<Uint8Array>; stop(reason: unknown): void; sourceFailure(): { error: unknown } | undefined } {
  const reader = source.getReader();
  let failure: { error: unknown } | undefined;
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let finished = false;
  const stream = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
      },
      async pull(c) {
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch (error) {
          failure = { error };
          throw error;
        }
        const { done, value } = chunk;
        if (done) {
          finished = true;
          c.close();
        } else {
          c.enqueue(value);
        }
      },
      cancel(reason) {
        finished = true;
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
  return {
    stream,
    sourceFailure: () => failure,
    stop(reason) {
      if (finished) return;
      finished = true;
      try {
        controller.error(reason);
      } catch {
        // Already closed or errored.
      }
      reader.cancel(reason).catch(() => {});
    },
  };
}

function emptyStream(): ReadableStream<Uint8Array> {
  return new ReadableStream({ start: (c) => c.close() });
}

/** Bytes `range.start..range.end` (inclusive) of a whole-body stream. */
function sliceStream(body: ReadableStream<Uint8Array>, range: ByteRange): ReadableStream<Uint8Array> {
  let offset = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        const from = Math.max(0, range.start - offset);
        const to = Math.min(chunk.byteLength, range.end + 1 - offset);
        offset += chunk.byteLength;
        if (to > from) controller.enqueue(chunk.subarray(from, to));
        if (offset > range.end) controller.terminate();
      },
    }),
  );
}
