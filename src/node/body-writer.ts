/**
 * Downloads on Node without web streams: when a download's body came from a driver that reads
 * through Node (fs, S3; blob/node-body.ts), the server writes the answer's status and headers and
 * hands the response to the driver's writer, instead of @hono/node-server reading the web stream
 * and writing it chunk by chunk. Every other answer (small bodies, errors, HEAD, other routes, a
 * body from a driver without a writer) goes out as before.
 */
import { ServerResponse } from 'node:http';
import { nodeWriterOf } from '../blob/node-body.js';
import { streamedBodyOf } from '../http/streamed-bodies.js';

/** What @hono/node-server passes as the app's env (HTTP/1: the response is a ServerResponse). */
interface NodeBindings {
  outgoing?: unknown;
}

type Fetch<Env extends NodeBindings> = (request: Request, env: Env) => Response | Promise<Response>;

/**
 * `fetch` with downloads written by their driver's Node writer. `onError` hears of a body that
 * failed after its headers were sent (the client's response is cut short).
 */
export function withNodeBodies<Env extends NodeBindings>(
  fetch: Fetch<Env>,
  onError: (err: unknown) => void,
): Fetch<Env> {
  const send = (res: Response, env: Env): Response => {
    const body = streamedBodyOf(res);
    if (!body) return res;
    const writer = nodeWriterOf(body);
    const out = env?.outgoing;
    if (!writer || !(out instanceof ServerResponse) || out.headersSent || out.destroyed) return res;
    const headers: Record<string, string> = {};
    for (const [name, value] of res.headers) headers[name] = value;
    out.writeHead(res.status, headers);
    writer(out).catch((err: unknown) => {
      // The headers are out: the client must see the body cut short, not wait for the rest.
      if (!out.writableEnded) out.destroy(err instanceof Error ? err : new Error(String(err)));
      onError(err);
    });
    return alreadySent();
  };
  return (request, env) => {
    const res = fetch(request, env);
    return res instanceof Promise ? res.then((r) => send(r, env)) : send(res, env);
  };
}

/**
 * The answer that tells @hono/node-server the handler has written the response itself (its
 * RESPONSE_ALREADY_SENT: the header x-hono-already-sent on a Fetch Response). Made through clone()
 * so that it is the runtime's own Response class even after @hono/node-server replaced the global
 * one with its lighter class, which it would try to write out.
 */
const alreadySent = () => new Response(null, { headers: { 'x-hono-already-sent': 'true' } }).clone();
