/**
 * The one error type of artifact-store. Every failure a caller can see carries a code from a closed
 * set; the HTTP status comes from one table, and the SDK rebuilds the same error from `{ code, message }`.
 */
export const ERROR_STATUS = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  quota_exceeded: 409,
  hash_collision: 409,
  payload_too_large: 413,
  unsupported_type: 415,
  invalid_range: 416,
  checksum_mismatch: 422,
  unprocessable: 422,
  rate_limited: 429,
  backend_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;
export const ERROR_CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_STATUS, value);
}

export interface ArtifactErrorOptions {
  cause?: unknown;
  /** Seconds a client should wait before retrying (429 / 503). */
  retryAfter?: number;
  /** Extra machine-readable facts (for example the limit and current usage of a quota). */
  details?: Record<string, unknown>;
}

/** An error with a closed `code`; `status` is derived from it. Messages say what to do next. */
export class ArtifactError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly retryAfter?: number;
  readonly details?: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: ArtifactErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ArtifactError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    if (options.retryAfter !== undefined) this.retryAfter = options.retryAfter;
    if (options.details !== undefined) this.details = options.details;
  }

  /** The wire body: `{ code, message }` plus details when there are any. */
  toJSON(): { code: ErrorCode; message: string; details?: Record<string, unknown> } {
    return this.details
      ? { code: this.code, message: this.message, details: this.details }
      : { code: this.code, message: this.message };
  }
}

export function isArtifactError(err: unknown): err is ArtifactError {
  return err instanceof ArtifactError;
}

/** Factories, one per code, so call sites read as what happened. */
export const errors = {
  badRequest: (message: string, options?: ArtifactErrorOptions) => new ArtifactError('bad_request', message, options),
  unauthorized: (message: string, options?: ArtifactErrorOptions) =>
    new ArtifactError('unauthorized', message, options),
  forbidden: (message: string, options?: ArtifactErrorOptions) => new ArtifactError('forbidden', message, options),
  /** The single answer for "missing" and "out of your scope": the same message for both. */
  notFound: (id: string) =>
    new ArtifactError(
      'not_found',
      `Artifact ${JSON.stringify(id)} was not found in your scope. Check the id, or whether it expired or was deleted.`,
    ),
  invalidRange: (message: string, options?: ArtifactErrorOptions) =>
    new ArtifactError('invalid_range', message, options),
  payloadTooLarge: (limit: number) =>
    new ArtifactError(
      'payload_too_large',
      `Artifact exceeds the maximum size of ${limit} bytes. Store a smaller payload or ask the operator to raise ARTIFACT_STORE_MAX_ARTIFACT_BYTES.`,
      { details: { limitBytes: limit } },
    ),
  requestTooLarge: (limit: number) =>
    new ArtifactError(
      'payload_too_large',
      `A request body over ${limit} bytes cannot pass through this service (the platform's request size limit). Send it as a direct upload: POST /v1/uploads, PUT the bytes to its url, then POST /v1/uploads/{id}/complete.`,
      { details: { limitBytes: limit, reason: 'request_body_limit' } },
    ),
  checksumMismatch: (expected: string, actual: string) =>
    new ArtifactError(
      'checksum_mismatch',
      `The body's sha256 is ${actual} but ${expected} was declared. Nothing was stored; re-send the exact bytes or fix the declared hash.`,
      { details: { expected, actual } },
    ),
  quotaExceeded: (message: string, details: Record<string, unknown>) =>
    new ArtifactError('quota_exceeded', message, { details }),
  hashCollision: (id: string) =>
    new ArtifactError(
      'hash_collision',
      `Artifact id ${id} already names different bytes in this tenant (24-hex prefix collision). Nothing was stored; put the bytes under another namespace.`,
    ),
  /** The artifact has no view of the kind asked for (lines of a binary file, say). */
  unsupportedType: (message: string, options?: ArtifactErrorOptions) =>
    new ArtifactError('unsupported_type', message, options),
  /** The content cannot be read this way: malformed, or over a limit that protects the service. */
  unprocessable: (message: string, options?: ArtifactErrorOptions) =>
    new ArtifactError('unprocessable', message, options),
  backendUnavailable: (message: string, options?: ArtifactErrorOptions) =>
    new ArtifactError('backend_unavailable', message, { retryAfter: 1, ...options }),
};
