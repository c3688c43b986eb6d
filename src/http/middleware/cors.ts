/**
 * CORS for browser origins other than the service's own (ARTIFACT_STORE_CORS_ORIGINS): Hono's cors
 * middleware with the methods, request headers and exposed headers the API uses (tus's among them). With CORS on, the
 * direct download route is off (it does not run Hono middleware), so every answer carries the headers.
 */
import { cors } from 'hono/cors';
import type { MiddlewareHandler } from 'hono';
import { TUS_REQUEST_HEADERS, TUS_RESPONSE_HEADERS } from '../routes/tus.js';

/** The request headers a browser may send: the API's, the MCP transport's and the download's. */
export const CORS_ALLOW_HEADERS = [
  'Authorization',
  'Content-Type',
  'Mcp-Session-Id',
  'Mcp-Protocol-Version',
  'Last-Event-ID',
  'Range',
  'If-None-Match',
  'If-Range',
  'X-Request-Id',
  'X-Artifact-Filename',
  'X-Artifact-Namespace',
  'X-Artifact-Meta',
  'X-Artifact-Source',
  'X-Artifact-Ttl',
  'X-Artifact-Sha256',
  'X-Artifact-Session',
  'X-Artifact-Trace',
  'X-Artifact-User',
  ...TUS_REQUEST_HEADERS,
];

/** The answer headers a browser's script may read. */
export const CORS_EXPOSE_HEADERS = [
  'Mcp-Session-Id',
  'ETag',
  'Content-Range',
  'Content-Length',
  'Content-Disposition',
  'Accept-Ranges',
  'Location',
  'Retry-After',
  'X-Request-Id',
  ...TUS_RESPONSE_HEADERS,
];

/** `origins`: the allowed origins, or ['*'] for any. */
export function corsFor(origins: string[]): MiddlewareHandler {
  return cors({
    origin: origins.includes('*') ? '*' : origins,
    allowMethods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE', 'OPTIONS'],
    allowHeaders: CORS_ALLOW_HEADERS,
    exposeHeaders: CORS_EXPOSE_HEADERS,
    maxAge: 600,
  });
}
