/**
 * When the HTTP store sends a request again: after 429 / 503 or a network error, waiting an
 * exponential backoff with jitter, or what the answer's Retry-After asks, never longer than a cap.
 */

export interface RetryPolicy {
  /** Retries after the first attempt. */
  retries: number;
  /** First backoff delay; doubles per retry. */
  baseMs: number;
  /** Cap on one wait, Retry-After included. */
  maxDelayMs: number;
}

export function retryPolicyOf(options: {
  retries?: number;
  retryBaseMs?: number;
  retryMaxDelayMs?: number;
}): RetryPolicy {
  return {
    retries: Math.max(0, Math.trunc(options.retries ?? 3)),
    baseMs: options.retryBaseMs ?? 250,
    maxDelayMs: options.retryMaxDelayMs ?? 10_000,
  };
}

/** The wait before retry `attempt` (from 0): the doubled delay, capped, with jitter over its upper half. */
export function backoffMs(policy: RetryPolicy, attempt: number): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseMs * 2 ** attempt);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/** Answers that say "try again later". */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status === 503;
}

/** The wait after a retryable answer: its Retry-After when it has one, else the backoff; capped. */
export function retryWaitMs(policy: RetryPolicy, res: Response, attempt: number): number {
  const wait = retryAfterSeconds(res.headers.get('retry-after'));
  return Math.min(policy.maxDelayMs, wait !== undefined ? wait * 1000 : backoffMs(policy, attempt));
}

/** Retry-After as seconds: delta-seconds or an HTTP date. */
export function retryAfterSeconds(value: string | null): number | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/** fetch rejects with a TypeError when no HTTP answer came back (DNS, refused, reset). */
export function isNetworkError(err: unknown): boolean {
  return err instanceof TypeError;
}

/** A network error with its cause's code (ECONNREFUSED, ...) when there is one. */
export function describeError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  const inner = cause instanceof Error ? `: ${(cause as { code?: string }).code ?? cause.message}` : '';
  return `${err.message}${inner}`;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
