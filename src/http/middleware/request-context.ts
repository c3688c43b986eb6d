/**
 * The request context: every request's id (the caller's X-Request-Id when it is a plain token, else a
 * new UUID), sent back as X-Request-Id, and `Connection: close` on an answer sent before its request
 * body was read.
 */
import type { Context } from 'hono';
import type { AppEnv } from '../context.js';
import { header } from '../fast-header.js';
import type { RequestStep } from './chain.js';

/** What an incoming X-Request-Id may be to be kept (anything else gets a new id). */
export const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** What the Node adapter's request (an IncomingMessage) tells about its body. */
interface UnreadBodyProbe {
  /** The body was read to its end. */
  readableEnded?: boolean;
  /** Every byte of the message arrived (read or not). */
  complete?: boolean;
  /** null: nobody began to read the body. */
  readableFlowing?: boolean | null;
}

/**
 * On Node (c.env.incoming): an answer sent before the request body was read to its end says
 * Connection: close. The Node adapter gives an unread body a short drain window and then destroys
 * the socket, and a body that a handler began to read and gave up stalls that drain, so a client
 * reusing the connection would meet a dead socket on its next request. A body never touched and
 * already received in full is discarded by Node itself, and the connection stays open.
 */
function closeIfBodyUnread(c: Context): void {
  if (c.req.method === 'GET' || c.req.method === 'HEAD') return;
  const incoming = (c.env as { incoming?: UnreadBodyProbe } | undefined)?.incoming;
  if (
    incoming &&
    incoming.readableEnded === false &&
    (incoming.complete === false || incoming.readableFlowing !== null)
  )
    c.res.headers.set('Connection', 'close');
}

/** Sets `requestId` on the context; answers carry it as X-Request-Id (see respondsWithRequestId). */
export function requestContext(): RequestStep {
  return {
    name: 'request-context',
    enter(c) {
      const incoming = header(c, 'x-request-id');
      c.set('requestId', incoming && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID());
    },
    leave(c: Context<AppEnv>) {
      closeIfBodyUnread(c);
      if (!c.get('requestIdSent')) c.res.headers.set('X-Request-Id', c.get('requestId'));
    },
  };
}
