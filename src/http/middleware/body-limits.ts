/**
 * Body limits: a request whose Content-Length says it is larger than the largest artifact (413
 * payload_too_large) or than what the platform lets through (Workers: 413 payload_too_large with the
 * reason request_body_limit, pointing at direct uploads) is refused before any byte of it is read. Bodies without a length are
 * counted as they stream (blob/ingest.ts).
 */
import { errors } from '../../core/errors.js';
import { header } from '../fast-header.js';
import type { RequestStep } from './chain.js';

export interface BodyLimitsOptions {
  /** The service's largest artifact (ARTIFACT_STORE_MAX_ARTIFACT_BYTES). */
  maxArtifactBytes: number;
  /** The largest body the platform lets through; 0 or unset: no limit beyond the artifact size. */
  maxRequestBodyBytes?: number;
}

const DIGITS = /^\d+$/;

export function bodyLimits({ maxArtifactBytes, maxRequestBodyBytes = 0 }: BodyLimitsOptions): RequestStep {
  return {
    name: 'body-limits',
    enter(c) {
      const method = c.req.method;
      if (method === 'GET' || method === 'HEAD') return;
      const length = header(c, 'content-length');
      if (length === undefined || !DIGITS.test(length)) return;
      const bytes = Number(length);
      if (bytes > maxArtifactBytes) throw errors.payloadTooLarge(maxArtifactBytes);
      if (maxRequestBodyBytes > 0 && bytes > maxRequestBodyBytes) throw errors.requestTooLarge(maxRequestBodyBytes);
    },
  };
}
