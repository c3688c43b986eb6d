import type { Context } from 'hono';

/**
 * A request header by lower-case name. On @hono/node-server the Node request's already-parsed
 * headers are read directly: going through `c.req.header()` builds a full Fetch `Headers` object
 * per request, which costs more than the rest of a small GET. Elsewhere (Workers, app.request in
 * tests) it is the ordinary `c.req.header()`.
 */
export function header(c: Context, name: string): string | undefined {
  const incoming = (c.env as { incoming?: { headers?: Record<string, string | string[] | undefined> } } | undefined)
    ?.incoming;
  if (incoming?.headers) {
    const value = incoming.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  }
  return c.req.header(name);
}
