/**
 * Rate limits of /v1 requests, per tenant and per token (rate-limit.ts meters them): a request over
 * its tenant's or token's rate, or whose body would take the bytes in flight past the limit, is
 * refused with 429 before any byte of its body is read. The bytes a body reserved are given back
 * once its answer is made.
 */
import type { Policy } from '../../core/policy.js';
import { header } from '../fast-header.js';
import type { RateLimiter } from '../rate-limit.js';
import type { RequestStep } from './chain.js';

export interface RateLimitsOptions {
  limiter: RateLimiter;
  /** Each tenant's policy: a body of unknown length reserves the largest artifact it could be. */
  policies: (tenantId: string) => Policy;
}

/** What a request body reserves: its declared length; without one, the largest artifact it could be. */
function bodyBytesOf(req: Request, policies: (tenantId: string) => Policy, tenantId: string): number {
  const method = req.method;
  if (method === 'GET' || method === 'HEAD' || method === 'DELETE' || method === 'OPTIONS') return 0;
  const declared = Number(req.headers.get('content-length') ?? Number.NaN);
  if (Number.isSafeInteger(declared) && declared >= 0) return declared;
  return policies(tenantId).maxArtifactBytes;
}

/** Admits the authenticated caller's request, after authentication (it needs `caller`). */
export function rateLimits({ limiter, policies }: RateLimitsOptions): RequestStep {
  return {
    name: 'rate-limits',
    enter(c) {
      const caller = c.get('caller');
      // Signed download links have no caller here: their route admits the link's tenant itself.
      if (!caller) return;
      const admission = limiter.check(
        caller.tenantId,
        header(c, 'authorization'),
        bodyBytesOf(c.req.raw, policies, caller.tenantId),
      );
      if (admission instanceof Promise) return admission.then((a) => void c.set('admission', a));
      c.set('admission', admission);
    },
    leave(c) {
      c.get('admission')?.release();
    },
  };
}
