/**
 * One request to the service, with its token and extra headers, retried while that is safe: a
 * replayable body (bytes, a Blob, none) after 429 / 503 or a network error; a streamed body never.
 */
import { errors } from '../core/errors.js';
import { errorFromResponse } from './http-errors.js';
import {
  backoffMs,
  describeError,
  isNetworkError,
  isRetryableStatus,
  retryWaitMs,
  sleep,
  type RetryPolicy,
} from './http-retry.js';
import { stoppableStream } from './http-streams.js';

export type RequestBody = Uint8Array | Blob | ReadableStream<Uint8Array>;

export interface Call {
  method: 'GET' | 'HEAD' | 'POST' | 'DELETE';
  path: string;
  query?: URLSearchParams;
  headers?: Record<string, string>;
  body?: RequestBody;
  /**
   * Not idempotent (saving a name's next version): a network error is not retried, since the first
   * attempt may have committed. Refusals that commit nothing (429, 503) still are.
   */
  once?: boolean;
}

export interface HttpTransportOptions {
  /** Without trailing slashes. */
  baseUrl: string;
  fetch: typeof fetch;
  token?: string | (() => string | Promise<string>);
  /** Extra headers on every request. */
  headers: Record<string, string>;
  retry: RetryPolicy;
}

export interface HttpTransport {
  readonly baseUrl: string;
  readonly fetch: typeof fetch;
  readonly retry: RetryPolicy;
  /** The extra headers and the Authorization of the current token. */
  authHeaders(): Promise<Record<string, string>>;
  /** Any answer, retried while the body can be sent again. Never throws for an HTTP status. */
  send(call: Call): Promise<{ res: Response; stopUpload?: (reason: unknown) => void }>;
  /** A successful answer, or throws the ArtifactError the service sent. */
  request(call: Call): Promise<Response>;
}

export function createHttpTransport(options: HttpTransportOptions): HttpTransport {
  const { baseUrl, fetch: fetchImpl, retry } = options;

  async function authHeaders(): Promise<Record<string, string>> {
    const token = typeof options.token === 'function' ? await options.token() : options.token;
    return token ? { ...options.headers, Authorization: `Bearer ${token}` } : { ...options.headers };
  }

  async function send(call: Call): Promise<{ res: Response; stopUpload?: (reason: unknown) => void }> {
    // A streamed body goes through a wrapper we can stop: aborting fetch instead leaves Node's fetch
    // spinning on the request body after the server has answered.
    const body = call.body;
    const replayable = body === undefined || body instanceof Uint8Array || body instanceof Blob;
    const upload = replayable ? undefined : stoppableStream(body);
    const attempts = upload ? 1 : retry.retries + 1;
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
        if (attempt + 1 < attempts && !call.once) {
          await sleep(backoffMs(retry, attempt));
          continue;
        }
        const tries = attempts > 1 ? ` after ${attempts} attempts` : '';
        throw errors.backendUnavailable(
          `Could not reach the artifact store at ${baseUrl}${tries} (${describeError(err)}). ` +
            'Check the URL and that the service is running, then retry.',
          { cause: err },
        );
      }
      if (isRetryableStatus(res.status) && attempt + 1 < attempts) {
        await res.body?.cancel().catch(() => {});
        await sleep(retryWaitMs(retry, res, attempt));
        continue;
      }
      return upload ? { res, stopUpload: upload.stop } : { res };
    }
  }

  async function request(call: Call): Promise<Response> {
    const { res, stopUpload } = await send(call);
    if (res.ok) return res;
    const err = await errorFromResponse(res, call);
    // The server answered before reading the whole upload: stop producing it.
    stopUpload?.(err);
    throw err;
  }

  return { baseUrl, fetch: fetchImpl, retry, authHeaders, send, request };
}
