/**
 * The service's errors, rebuilt on the client: a `{ code, message, details? }` body becomes the same
 * ArtifactError; anything else (a proxy's HTML page, a bodyless HEAD) the nearest code.
 */
import { ArtifactError, isArtifactError, isErrorCode, type ErrorCode } from '../core/errors.js';
import { retryAfterSeconds } from './http-retry.js';

/** The request an answer belongs to, as error messages name it. */
export interface RequestLine {
  method: string;
  path: string;
}

/** The ArtifactError an unsuccessful answer stands for, with its Retry-After. */
export async function errorFromResponse(res: Response, call: RequestLine): Promise<ArtifactError> {
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
  const status = `HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`;
  return new ArtifactError(code, `${call.method} ${call.path} answered ${status}${snippet ? `: ${snippet}` : ''}.`, {
    ...(retryAfter !== undefined ? { retryAfter } : {}),
    details: { status: res.status },
  });
}

/**
 * Only statuses that mean one thing anywhere map to a code; a HEAD answer has no body, so its status
 * is all there is.
 */
function fallbackCode(status: number, bodyless: boolean): ErrorCode {
  if (status >= 500) return 'backend_unavailable';
  if (status === 429) return 'rate_limited';
  if (status === 413) return 'payload_too_large';
  if (bodyless) {
    const code = BODYLESS_CODES[status];
    if (code) return code;
  }
  return 'bad_request';
}

const BODYLESS_CODES: Record<number, ErrorCode> = {
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  416: 'invalid_range',
  422: 'checksum_mismatch',
};

/** Missing and out of scope read as null; every other error propagates. */
export async function nullWhenNotFound<T>(run: () => Promise<T>): Promise<T | null> {
  try {
    return await run();
  } catch (err) {
    if (isArtifactError(err) && err.code === 'not_found') return null;
    throw err;
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
