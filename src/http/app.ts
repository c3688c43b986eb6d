import { OpenAPIHono } from '@hono/zod-openapi';
import { cors } from 'hono/cors';
import { HTTPException } from 'hono/http-exception';
import { Hono, type Context, type ExecutionContext, type MiddlewareHandler } from 'hono';
import { ArtifactError, errors, isArtifactError } from '../core/errors.js';
import type { ArtifactService } from '../service/artifact-service.js';
import type { ServiceOperations } from '../service/operations.js';
import type { Authenticator, Caller } from './auth.js';
import type { AppEnv } from './context.js';
import { header } from './fast-header.js';
import { silentLogger, type Logger } from '../core/logger.js';
import type { UrlSigner } from '../core/url-signing.js';
import { registerArtifactUrl } from './routes/artifact-url.js';
import { registerAdminAudit, registerAdminFsck, registerAdminPurge, registerAdminRetention } from './routes/admin.js';
import type { RateLimiter } from './rate-limit.js';
import type { AuditActor } from '../service/audit.js';
import type { FsckReport } from '../service/fsck.js';
import { registerEvents, type EventStreamSettings } from './routes/events.js';
import { registerUsage } from './routes/usage.js';
import type { GatewayMountDeps, registerGateway } from './routes/mcp-gateway.js';
import { registerNoGateway } from './routes/mcp-servers.js';
import type { McpMountSettings, registerMcp } from './routes/mcp.js';
import { routePath } from 'hono/route';
import type { Metrics } from './metrics.js';
import { createPolicies, DEFAULT_POLICY, type Policy } from '../core/policy.js';
import type { RetentionReport } from '../service/retention.js';
import { registerDeleteArtifact } from './routes/delete-artifact.js';
import { registerDocs, type DocsAssets } from './routes/docs.js';
import { registerUi, type UiAssets } from './routes/ui.js';
import { registerGetArtifactMeta } from './routes/get-artifact-meta.js';
import { registerViews } from './routes/views.js';
import type { ArtifactViews } from '../service/views/index.js';
import { registerGetArtifact } from './routes/get-artifact.js';
import { registerHealth } from './routes/health.js';
import { registerListArtifacts } from './routes/list-artifacts.js';
import { registerNames } from './routes/names.js';
import { registerPutArtifact } from './routes/put-artifact.js';
import { registerSessions } from './routes/sessions.js';
import { registerUploads } from './routes/uploads.js';

export interface AppDeps {
  service: ArtifactService;
  /** What a model reads of an artifact: GET /v1/artifacts/{id}/text, /search and /query. */
  views?: ArtifactViews;
  /** Readiness, usage, events, audit and API keys: what the routes ask besides artifacts. */
  ops: ServiceOperations;
  auth: Authenticator;
  logger?: Logger;
  /** Browser origins allowed by CORS; empty = CORS off; ['*'] = any. */
  corsOrigins?: string[];
  docsAssets?: DocsAssets;
  /** The artifact browser's files, served at /ui; without them /ui answers 404. */
  uiAssets?: UiAssets;
  /** True once shutdown began: /readyz answers 503 so load balancers stop sending. */
  isDraining?: () => boolean;
  version?: string;
  /** Signs and checks proxy download links; without it /v1/download answers 403. */
  urlSigner?: UrlSigner;
  /** Public origin for links (ARTIFACT_STORE_PUBLIC_URL); default: the origin of each request. */
  publicUrl?: string;
  now?: () => number;
  /** Prometheus metrics, served at /metrics. */
  metrics?: Metrics;
  /** When set, /metrics wants `Authorization: Bearer <this>`. */
  metricsToken?: string;
  /** Each tenant's limits, for GET /v1/usage (default: no policy overrides, the service limits). */
  policies?: (tenantId: string) => Policy;
  /** Poll and heartbeat intervals of GET /v1/events. */
  events?: EventStreamSettings;
  /**
   * The artifact MCP server at /mcp (Streamable HTTP, same auth): `{ mount: registerMcp }` from
   * ./routes/mcp.js, plus its settings. Injected rather than imported, so builds without /mcp (the
   * Worker) carry no MCP SDK.
   */
  mcp?: (McpMountSettings & { mount: typeof registerMcp }) | false;
  /**
   * The MCP gateway at /mcp/gateway and its REST view at /v1/mcp/servers: `{ mount: registerGateway,
   * gateway }` from ./routes/mcp-gateway.js, when the service has a gateway config (Node only).
   */
  gateway?: { mount: typeof registerGateway; gateway: GatewayMountDeps['gateway'] };
  /**
   * The largest request body the platform lets through (Workers: 100 MB on most plans); a bigger
   * put gets 413 pointing at direct uploads. 0 or unset: no limit beyond the artifact size.
   */
  maxRequestBodyBytes?: number;
  /** Runs retention (POST /v1/admin/retention); concurrent calls share the run in progress. */
  retention?: (trigger: string, actor: AuditActor) => Promise<RetentionReport>;
  /** Runs fsck without repairing (POST /v1/admin/fsck, operators). */
  fsck?: (options: { verify: boolean }) => Promise<FsckReport>;
  /** Request rate and bytes in flight per tenant and per token; without it nothing is limited. */
  rateLimiter?: RateLimiter;
  /**
   * GET and HEAD of one artifact bypass the middleware chain (see routeDownloadsDirectly); default
   * true, and always off with CORS. false routes them like every other request: the tests compare both.
   */
  directDownloads?: boolean;
}

/** What an operator key may call: the service-wide views and actions. It holds no artifacts. */
const OPERATOR_PATHS = /^\/v1\/(usage|events|admin\/.*)$/;

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

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

/** Builds the Hono app. No I/O here: drivers come in through deps. */
export function createApp(deps: AppDeps): App {
  const logger = deps.logger ?? silentLogger;
  const logRequests = logger.isEnabled?.('info') ?? true;
  const logLater = typeof logger.infoLater === 'function';
  const metrics = deps.metrics;
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result, c) => {
      if (!result.success) {
        const issue = result.error.issues[0];
        const where = issue ? `${issue.path.join('.') || 'request'}: ${issue.message}` : 'invalid request';
        return c.json({ code: 'bad_request', message: `Invalid ${result.target} (${where}).` }, 400);
      }
    },
  });

  // Every request's id, its answer's Connection: close when the body went unread, the metrics and
  // the access log: the request middleware's two halves, shared with downloadArtifact (the direct
  // route of a download). One middleware, since a level of middleware costs a small GET more than
  // any of these.
  const beginRequest = (c: Context<AppEnv>): string => {
    const incoming = header(c, 'x-request-id');
    const requestId = incoming && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
    c.set('requestId', requestId);
    return requestId;
  };
  const endRequest = (c: Context<AppEnv>, requestId: string, started: number): void => {
    closeIfBodyUnread(c);
    if (!c.get('requestIdSent')) c.res.headers.set('X-Request-Id', requestId);
    if (metrics) {
      const route = routePath(c, -1);
      metrics.request(
        c.req.method,
        route.endsWith('*') ? 'unmatched' : route,
        c.res.status,
        (performance.now() - started) / 1000,
      );
    }
    if (!logRequests) return;
    // One object of one shape (no spread): `tenant` undefined is left out of the line, as JSON.stringify leaves it.
    const fields = {
      requestId,
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      durationMs: Math.round((performance.now() - started) * 10) / 10,
      tenant: c.get('caller')?.tenantId,
    };
    // Handed over: a logger that holds lines formats it after this turn's answers are written.
    if (logLater) logger.infoLater!('request', fields);
    else logger.info('request', fields);
  };
  const requestContext: MiddlewareHandler<AppEnv> = async function requestContext(c, next) {
    const requestId = beginRequest(c);
    const started = logRequests || metrics ? performance.now() : 0;
    await next();
    endRequest(c, requestId, started);
  };
  app.use('*', requestContext);

  const origins = deps.corsOrigins ?? [];
  const corsOn = origins.length > 0;
  if (corsOn) {
    app.use(
      '*',
      cors({
        origin: origins.includes('*') ? '*' : origins,
        allowMethods: ['GET', 'HEAD', 'POST', 'DELETE', 'OPTIONS'],
        allowHeaders: [
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
        ],
        exposeHeaders: [
          'Mcp-Session-Id',
          'ETag',
          'Content-Range',
          'Content-Length',
          'Content-Disposition',
          'Accept-Ranges',
          'Location',
          'Retry-After',
          'X-Request-Id',
        ],
        maxAge: 600,
      }),
    );
  }

  const limiter = deps.rateLimiter;
  const policies = deps.policies ?? createPolicies(DEFAULT_POLICY);
  /**
   * A /v1 request's caller, set on the context, and what it holds of its tenant's limits until the
   * answer. A promise only where there is something to wait for (a token not verified recently, the
   * Worker's limiter): a small GET with a known token spends no turn here.
   */
  const admit = (c: Context<AppEnv>) => {
    const authorization = header(c, 'authorization');
    const found = deps.auth.authenticate(authorization);
    return found instanceof Promise
      ? found.then((caller) => admitCaller(c, caller, authorization))
      : admitCaller(c, found, authorization);
  };
  const admitCaller = (c: Context<AppEnv>, caller: Caller, authorization: string | undefined) => {
    c.set('caller', caller);
    if (caller.role === 'operator' && !OPERATOR_PATHS.test(c.req.path)) {
      throw errors.forbidden(
        'An operator key runs the service and holds no artifacts: use it for /v1/usage, /v1/events and /v1/admin/*. Store and read artifacts with a tenant token.',
      );
    }
    // Before any body is read: a refusal costs a map lookup.
    return limiter?.check(caller.tenantId, authorization, bodyBytesOf(c.req.raw, caller.tenantId));
  };
  const authenticate: MiddlewareHandler<AppEnv> = async function authenticate(c, next) {
    // Signed download links carry their own proof and no token (the route limits their tenant).
    if (c.req.path.startsWith('/v1/download/')) return next();
    const checked = admit(c);
    const admission = checked instanceof Promise ? await checked : checked;
    try {
      await next();
    } finally {
      admission?.release();
    }
  };
  app.use('/v1/*', authenticate);
  /** What a request body reserves: its declared length; without one, the largest artifact it could be. */
  const bodyBytesOf = (req: Request, tenantId: string): number => {
    if (req.method === 'GET' || req.method === 'HEAD' || req.method === 'DELETE' || req.method === 'OPTIONS') return 0;
    const declared = Number(req.headers.get('content-length') ?? NaN);
    if (Number.isSafeInteger(declared) && declared >= 0) return declared;
    return policies(tenantId).maxArtifactBytes;
  };

  registerPutArtifact(app, deps.service, deps.publicUrl, deps.maxRequestBodyBytes);
  registerNames(app, deps.service, deps.publicUrl, deps.maxRequestBodyBytes);
  registerGetArtifactMeta(app, deps.service, deps.publicUrl);
  if (deps.views) registerViews(app, deps.views, deps.publicUrl);
  const getArtifact = registerGetArtifact(
    app,
    deps.service,
    deps.urlSigner,
    deps.now,
    limiter ? async (tenantId) => void (await limiter.check(tenantId, undefined, 0)) : undefined,
  );
  registerArtifactUrl(app, deps.service, deps.publicUrl);
  registerUploads(app, deps.service, deps.publicUrl);
  registerDeleteArtifact(app, deps.service);
  registerSessions(app, deps.service);
  registerAdminRetention(app, deps.retention);
  registerAdminPurge(app, deps.service, deps.ops);
  registerAdminFsck(app, deps.ops, deps.fsck);
  registerAdminAudit(app, deps.ops);
  registerEvents(app, deps.ops, { ...deps.events, isDraining: deps.isDraining });
  registerUsage(app, deps.ops, limiter);
  if (metrics) {
    // Outside /v1 and its bearer tokens: scrapers send ARTIFACT_STORE_METRICS_TOKEN when one is set.
    app.get('/metrics', async (c) => {
      if (deps.metricsToken && header(c, 'authorization') !== `Bearer ${deps.metricsToken}`) {
        return c.json(
          { code: 'unauthorized', message: 'Send Authorization: Bearer <ARTIFACT_STORE_METRICS_TOKEN>.' },
          401,
          { 'WWW-Authenticate': 'Bearer' },
        );
      }
      return c.body(await metrics.registry.metrics(), 200, {
        'Content-Type': metrics.registry.contentType,
        'Cache-Control': 'no-store',
      });
    });
  }
  registerListArtifacts(app, deps.service, deps.publicUrl);
  registerHealth(app, { ops: deps.ops, isDraining: deps.isDraining ?? (() => false) });
  registerDocs(app, deps.docsAssets);
  registerUi(app, deps.uiAssets);
  const { mount: mountMcp, ...mcpSettings } = deps.mcp || { mount: undefined };
  const mcp = mountMcp?.(
    app,
    {
      service: deps.service,
      ops: deps.ops,
      auth: deps.auth,
      ...(limiter ? { rateLimiter: limiter } : {}),
      ...(deps.publicUrl ? { publicUrl: deps.publicUrl } : {}),
    },
    {
      ...(deps.version ? { version: deps.version } : {}),
      ...(deps.corsOrigins ? { allowedOrigins: deps.corsOrigins } : {}),
      ...mcpSettings,
    },
  );

  if (!deps.gateway) registerNoGateway(app);
  const gatewayMount = deps.gateway?.mount(
    app,
    {
      service: deps.service,
      ops: deps.ops,
      auth: deps.auth,
      gateway: deps.gateway.gateway,
      ...(limiter ? { rateLimiter: limiter } : {}),
      ...(deps.publicUrl ? { publicUrl: deps.publicUrl } : {}),
    },
    {
      ...(deps.version ? { version: deps.version } : {}),
      ...(deps.corsOrigins ? { allowedOrigins: deps.corsOrigins } : {}),
      ...mcpSettings,
    },
  );

  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'A JWT (claims tenant, sub, session, trace, perms) or an API key ask_…',
  });
  app.doc31('/openapi.json', {
    openapi: '3.1.0',
    info: {
      title: 'artifact-store',
      version: deps.version ?? '0.1.0',
      description:
        'Keeps binary and oversized tool outputs out of LLM context: bytes stored once by content hash, scoped to tenant / user / session / trace; the model gets a small ArtifactRef.',
    },
    security: [{ bearer: [] }],
  });

  app.notFound((c) =>
    c.json({ code: 'not_found', message: `No route ${c.req.method} ${c.req.path}. See /docs.` }, 404),
  );

  const answerError = (err: Error, c: Context<AppEnv>) => {
    const artifactError = toArtifactError(err);
    if (artifactError.code === 'backend_unavailable') {
      logger.error('backend unavailable', {
        requestId: c.get('requestId'),
        error: describe(err),
        cause: describe((err as { cause?: unknown }).cause),
      });
    }
    const headers: Record<string, string> = {};
    if (artifactError.retryAfter !== undefined) headers['Retry-After'] = String(artifactError.retryAfter);
    if (artifactError.status === 401) headers['WWW-Authenticate'] = 'Bearer';
    return c.json(artifactError.toJSON(), artifactError.status as 400, headers);
  };
  app.onError(answerError);

  // GET and HEAD of one artifact: what requestContext and authenticate do around getArtifact, in one
  // handler (see routeDownloadsDirectly).
  async function downloadArtifact(c: Context<AppEnv, '/v1/artifacts/:id'>) {
    const requestId = beginRequest(c);
    const started = logRequests || metrics ? performance.now() : 0;
    try {
      const checked = admit(c);
      const admission = checked instanceof Promise ? await checked : checked;
      try {
        c.res = await getArtifact(c);
      } finally {
        admission?.release();
      }
    } catch (err) {
      // As Hono's chain does: an Error becomes the error answer, anything else propagates.
      if (!(err instanceof Error)) throw err;
      c.error = err;
      c.res = answerError(err, c);
    }
    endRequest(c, requestId, started);
    return c.res;
  }
  if (deps.directDownloads !== false && !corsOn) routeDownloadsDirectly(app, downloadArtifact, answerError);

  // Open MCP sessions hold SSE streams; shutdown closes them so the server can drain.
  return Object.assign(app, {
    closeMcpSessions: async () => {
      await mcp?.closeAll();
      await gatewayMount?.closeAll();
    },
  });
}

/** The service's HTTP app: Hono's fetch handler and routes, plus what shutdown needs. */
export type App = OpenAPIHono<AppEnv> & {
  /** Ends open MCP sessions (their SSE streams), so the server can drain. */
  closeMcpSessions(): Promise<void>;
};

const DOWNLOAD_PREFIX = '/v1/artifacts/';

/** GET or HEAD of /v1/artifacts/{id}, with or without a query: what the direct route answers. */
function isArtifactDownload(request: Request): boolean {
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
 * GET and HEAD of one artifact, the service's hot path, go to an app of that one route, whose
 * handler does the request middleware's and authenticate's work itself; every other request goes
 * through the app's router and middleware. A level of middleware (Hono's compose, an async frame
 * and a promise per level) cost a small GET more than the middleware's own work. The route answers,
 * logs and counts the same either way (test/direct-downloads.test.ts compares them): a middleware
 * added to createApp is added to downloadArtifact too or, as CORS does, turns the direct route off.
 */
function routeDownloadsDirectly(
  app: OpenAPIHono<AppEnv>,
  handler: (c: Context<AppEnv, '/v1/artifacts/:id'>) => Promise<Response>,
  onError: (err: Error, c: Context<AppEnv>) => Response,
): void {
  const direct = new Hono<AppEnv>();
  direct.get('/v1/artifacts/:id', handler);
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
    return undefined;
  }
}

/** Everything that escapes a handler becomes one of the closed codes. */
function toArtifactError(err: unknown): ArtifactError {
  if (isArtifactError(err)) return err;
  if (err instanceof HTTPException) {
    if (err.status === 413) return new ArtifactError('payload_too_large', err.message);
    if (err.status === 401) return errors.unauthorized(err.message);
    return errors.badRequest(err.message || `Request refused (${err.status}).`);
  }
  // drizzle wraps driver errors: the SQLite code may sit on a cause.
  if (
    causeChain(err).some(
      (e) => (e as { code?: unknown })?.code === 'SQLITE_BUSY' || (e as { code?: unknown })?.code === 'SQLITE_LOCKED',
    )
  ) {
    return errors.backendUnavailable('The database is busy. Retry shortly.', { cause: err, retryAfter: 1 });
  }
  if (isClientAbort(err))
    return errors.badRequest('The request body ended early (client disconnected).', { cause: err });
  return errors.backendUnavailable('Unexpected server error. Retry; if it persists, report the X-Request-Id.', {
    cause: err,
    retryAfter: 1,
  });
}

function causeChain(err: unknown): unknown[] {
  const out: unknown[] = [];
  for (let e = err; e !== undefined && e !== null && out.length < 5; e = (e as { cause?: unknown }).cause) out.push(e);
  return out;
}

function isClientAbort(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return (
    code === 'ECONNRESET' ||
    code === 'ERR_STREAM_PREMATURE_CLOSE' ||
    (err instanceof Error && err.message === 'aborted')
  );
}

function describe(err: unknown): string | undefined {
  if (err === undefined) return undefined;
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
