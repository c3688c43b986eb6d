/**
 * Authentication of /v1 requests: the bearer token (a JWT or an API key) becomes the request's
 * `caller`, or the request is refused with 401. An operator key is let through only to what an
 * operator runs (usage, events, admin): it holds no artifacts.
 */
import { errors } from '../../core/errors.js';
import type { Authenticator, Caller } from '../auth.js';
import { header } from '../fast-header.js';
import type { Context } from 'hono';
import type { AppEnv } from '../context.js';
import type { RequestStep } from './chain.js';

/** What an operator key may call: the service-wide views and actions. */
const OPERATOR_PATHS = /^\/v1\/(usage|events|admin\/.*)$/;

/** Signed download links carry their own proof and no token (their route checks the link). */
const SIGNED_LINKS = '/v1/download/';

export interface AuthenticationOptions {
  auth: Authenticator;
}

/** Sets `caller` from the Authorization header. */
export function authentication({ auth }: AuthenticationOptions): RequestStep {
  return {
    name: 'authentication',
    enter(c) {
      if (c.req.path.startsWith(SIGNED_LINKS)) return;
      const found = auth.authenticate(header(c, 'authorization'));
      // A token verified moments ago comes back without a promise: no await on the hot path.
      if (found instanceof Promise) return found.then((caller) => admit(c, caller));
      admit(c, found);
    },
  };
}

function admit(c: Context<AppEnv>, caller: Caller): void {
  c.set('caller', caller);
  if (caller.role === 'operator' && !OPERATOR_PATHS.test(c.req.path)) {
    throw errors.forbidden(
      'An operator key runs the service and holds no artifacts: use it for /v1/usage, /v1/events and /v1/admin/*. Store and read artifacts with a tenant token.',
    );
  }
}
