/**
 * The X-Artifact-* request parameters: each may come as the header X-Artifact-{Name} or, for clients
 * that cannot set headers (a browser's link, curl's -G), as the query parameter {name}. The header
 * wins when both are sent.
 */
import type { Context } from 'hono';
import { header } from './fast-header.js';

/** The parameters a request may carry as X-Artifact-{name} or ?{name}. */
export type ArtifactParam =
  | 'filename'
  | 'namespace'
  | 'meta'
  | 'source'
  | 'ttl'
  | 'sha256'
  | 'session'
  | 'trace'
  | 'user';

/** Header names made once: a small GET reads three of them and should make no string for it. */
const HEADER_OF: Record<ArtifactParam, string> = {
  filename: 'x-artifact-filename',
  namespace: 'x-artifact-namespace',
  meta: 'x-artifact-meta',
  source: 'x-artifact-source',
  ttl: 'x-artifact-ttl',
  sha256: 'x-artifact-sha256',
  session: 'x-artifact-session',
  trace: 'x-artifact-trace',
  user: 'x-artifact-user',
};

/** X-Artifact-{name}, else the query parameter {name} (the query is parsed only when there is one). */
export function artifactParam(c: Context, name: ArtifactParam): string | undefined {
  return header(c, HEADER_OF[name]) ?? (c.req.url.includes('?') ? c.req.query(name) : undefined);
}
