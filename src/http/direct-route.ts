/**
 * The direct route of the service's hot path: GET and HEAD of one artifact (/v1/artifacts/{id}) go
 * to an app of that one route, which runs the app's own request steps around the download handler
 * (middleware/chain.ts `runSteps`); every other request goes through the app's router and middleware.
 * The steps are the same list the app's middleware runs, so a step added to the app applies here too.
 * What the direct route saves is the router and the levels of Hono's compose: on a small GET they
 * cost more than the steps' own work. test/direct-downloads.test.ts holds both routes to the same
 * answers, log lines and counts.
 */
import { Hono, type Context, type ExecutionContext } from 'hono';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from './context.js';
import { runSteps, type ErrorAnswer, type RequestStep } from './middleware/chain.js';

const DOWNLOAD_PREFIX = '/v1/artifacts/';

/** GET or HEAD of /v1/artifacts/{id}, with or without a query: what the direct route answers. */
export function isArtifactDownload(request: Request): boolean {
  const method = request.method;
  if (method !== 'GET' && method !== 'HEAD') return false;
  const url = request.url;
  const path = url.indexOf('/', url.indexOf('://') + 3);
  if (path < 0 || !url.startsWith(DOWNLOAD_PREFIX, path)) return false;
  const id = path + DOWNLOAD_PREFIX.length;
  const query = url.indexOf('?', id);
  const end = query < 0 ? url.length : query;
  return end > id && url.lastIndexOf('/', end - 1) < id;
}

/**
 * Sends artifact downloads to `handler` run inside `steps`, bypassing the app's router. Replaces
 * `app.fetch`; the app still documents and routes the same path for everything else (a request the
 * direct app does not match falls through to the app).
 */
export function routeDownloadsDirectly(
  app: OpenAPIHono<AppEnv>,
  steps: readonly RequestStep[],
  handler: (c: Context<AppEnv, '/v1/artifacts/:id'>) => Promise<Response>,
  onError: ErrorAnswer,
): void {
  const direct = new Hono<AppEnv>();
  direct.get('/v1/artifacts/:id', (c) =>
    runSteps(c, steps, handler as (c: Context<AppEnv>) => Promise<Response>, onError),
  );
  direct.onError(onError);
  const routed = app.fetch;
  // Not reached while isArtifactDownload matches what the route does; if it ever differs, the app decides.
  direct.notFound((c) => routed(c.req.raw, c.env, executionCtxOf(c)));
  app.fetch = (request: Request, env?: unknown, executionCtx?: ExecutionContext) =>
    isArtifactDownload(request) ? direct.fetch(request, env, executionCtx) : routed(request, env, executionCtx);
}

/** Hono's executionCtx getter throws where the platform gives none (Node). */
function executionCtxOf(c: Context): ExecutionContext | undefined {
  try {
    return c.executionCtx;
  } catch {
    // No execution context on this platform: the app is called without one, as the platform did.
    return undefined;
  }
}
