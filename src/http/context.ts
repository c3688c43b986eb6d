import type { Context } from 'hono';
import type { Caller } from './auth.js';

/** Per-request values set by middleware. */
export interface AppEnv {
  Variables: {
    requestId: string;
    caller: Caller;
    /** Set by handlers that put X-Request-Id into the response they built (see respondsWithRequestId). */
    requestIdSent?: boolean;
  };
}

/**
 * For a handler that builds its response from a plain header object: returns the request id to put
 * in X-Request-Id there, and tells the request middleware to leave the response alone. Adding a
 * header afterwards turns @hono/node-server's lightweight response into a full Fetch Response with
 * a `Headers` object, which costs a quarter of a small download's time.
 */
export function respondsWithRequestId(c: Context<AppEnv>): string {
  c.set('requestIdSent', true);
  return c.get('requestId');
}
