/**
 * Error mapping: whatever escapes a handler or a step becomes one of the closed error codes
 * (core/errors.ts) as `{ code, message }` with its status, Retry-After where a retry helps and
 * WWW-Authenticate on 401. Failures of the backends are logged with their cause; a request nobody
 * routes is a 404 pointing at /docs.
 */
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { ArtifactError, errors, isArtifactError } from '../../core/errors.js';
import { errorText, type Logger } from '../../core/logger.js';
import type { AppEnv } from '../context.js';
import type { ErrorAnswer } from './chain.js';

export interface ErrorMappingOptions {
  /** Where backend failures are logged, with the request id and the cause. */
  logger: Logger;
}

/** The app's error handler (app.onError and the steps' runner use the same one). */
export function errorMapping({ logger }: ErrorMappingOptions): ErrorAnswer {
  return function answerError(err: Error, c: Context<AppEnv>): Response {
    const artifactError = toArtifactError(err);
    if (artifactError.code === 'backend_unavailable') {
      logger.error('backend unavailable', {
        requestId: c.get('requestId'),
        error: errorText(err),
        cause: causeText((err as { cause?: unknown }).cause),
      });
    }
    const headers: Record<string, string> = {};
    if (artifactError.retryAfter !== undefined) headers['Retry-After'] = String(artifactError.retryAfter);
    if (artifactError.status === 401) headers['WWW-Authenticate'] = 'Bearer';
    return c.json(artifactError.toJSON(), artifactError.status as 400, headers);
  };
}

/** The answer to a request no route takes. */
export function notFound(c: Context<AppEnv>): Response {
  return c.json({ code: 'not_found', message: `No route ${c.req.method} ${c.req.path}. See /docs.` }, 404);
}

/**
 * Everything that escapes a handler as one of the closed codes: an ArtifactError as it is (the db
 * and blob layers translate their own backends' errors into them), Hono's HTTPExceptions by status,
 * a request body cut off by the client as bad_request, and anything else as backend_unavailable.
 */
export function toArtifactError(err: unknown): ArtifactError {
  if (isArtifactError(err)) return err;
  if (err instanceof HTTPException) {
    if (err.status === 413) return new ArtifactError('payload_too_large', err.message);
    if (err.status === 401) return errors.unauthorized(err.message);
    return errors.badRequest(err.message || `Request refused (${err.status}).`);
  }
  if (isClientAbort(err))
    return errors.badRequest('The request body ended early (client disconnected).', { cause: err });
  return errors.backendUnavailable('Unexpected server error. Retry; if it persists, report the X-Request-Id.', {
    cause: err,
    retryAfter: 1,
  });
}

/** The request's body stream failed because the client went away mid-upload. */
function isClientAbort(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return (
    code === 'ECONNRESET' ||
    code === 'ERR_STREAM_PREMATURE_CLOSE' ||
    (err instanceof Error && err.message === 'aborted')
  );
}

const causeText = (cause: unknown): string | undefined => (cause === undefined ? undefined : errorText(cause));
