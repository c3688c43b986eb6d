/**
 * The service's HTTP app: the request steps (middleware/), then the routes (routes/, one module per
 * concern), the MCP mounts, the OpenAPI document, and the direct route of downloads. No I/O here:
 * drivers come in through the service and the operations.
 */
import { OpenAPIHono } from '@hono/zod-openapi';
import { createPolicies, DEFAULT_POLICY, type Policy } from '../core/policy.js';
import { silentLogger, type Logger } from '../core/logger.js';
import type { UrlSigner } from '../core/url-signing.js';
import type { ArtifactService } from '../service/artifact-service.js';
import type { AuditActor } from '../service/audit.js';
import type { FsckReport } from '../service/fsck.js';
import type { ServiceOperations } from '../service/operations.js';
import type { RetentionReport } from '../service/retention/index.js';
import type { ArtifactViews } from '../service/views/index.js';
import type { Authenticator } from './auth.js';
import type { AppEnv } from './context.js';
import { routeDownloadsDirectly } from './direct-route.js';
import type { Metrics } from './metrics.js';
import { accessLog } from './middleware/access-log.js';
import { authentication } from './middleware/authentication.js';
import { bodyLimits } from './middleware/body-limits.js';
import { chain, type RequestStep } from './middleware/chain.js';
import { corsFor } from './middleware/cors.js';
import { errorMapping, notFound } from './middleware/error-mapping.js';
import { rateLimits } from './middleware/rate-limits.js';
import { requestContext } from './middleware/request-context.js';
import type { RateLimiter } from './rate-limit.js';
import { registerAdminAudit, registerAdminFsck, registerAdminPurge, registerAdminRetention } from './routes/admin.js';
import { registerArtifactUrl } from './routes/artifact-url.js';
import { registerDeleteArtifact } from './routes/delete-artifact.js';
import { registerDocs, type DocsAssets } from './routes/docs.js';
import { registerEvents, type EventStreamSettings } from './routes/events.js';
import { registerGetArtifact } from './routes/get-artifact.js';
import { registerGetArtifactMeta } from './routes/get-artifact-meta.js';
import { registerHealth } from './routes/health.js';
import { registerListArtifacts } from './routes/list-artifacts.js';
import type { GatewayMountDeps, registerGateway } from './routes/mcp-gateway.js';
import { registerNoGateway } from './routes/mcp-servers.js';
import type { McpDeps, McpMountSettings, registerMcp } from './routes/mcp.js';
import { registerMetrics } from './routes/metrics.js';
import { registerNames } from './routes/names.js';
import { registerOpenApi } from './routes/openapi.js';
import { registerPutArtifact } from './routes/put-artifact.js';
import { registerSessions } from './routes/sessions.js';
import { registerUi, type UiAssets } from './routes/ui.js';
import { registerTus, tusProtocol } from './routes/tus.js';
import { registerUploads } from './routes/uploads.js';
import { registerUsage } from './routes/usage.js';
import { registerViews } from './routes/views.js';

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
   * GET and HEAD of one artifact take the direct route (direct-route.ts), which runs the same steps
   * without the router; default true, and always off with CORS. false routes them like every other
   * request: the tests compare both.
   */
  directDownloads?: boolean;
}

/** The steps of the app, in order: what every request goes through, then what every /v1 request does. */
export interface AppSteps {
  /** Every request: its id and the access log. */
  all: readonly RequestStep[];
  /** /v1 requests, after those: the caller, its rate limits, the body limits. */
  v1: readonly RequestStep[];
}

/** The request steps of an app with these deps (middleware/, one module each), in the order they run. */
export function appSteps(deps: AppDeps): AppSteps {
  const logger = deps.logger ?? silentLogger;
  const log = accessLog({ logger, ...(deps.metrics ? { metrics: deps.metrics } : {}) });
  const limiter = deps.rateLimiter;
  return {
    all: log ? [requestContext(), log] : [requestContext()],
    v1: [
      authentication({ auth: deps.auth }),
      ...(limiter ? [rateLimits({ limiter, policies: deps.policies ?? createPolicies(DEFAULT_POLICY) })] : []),
      bodyLimits({
        maxArtifactBytes: deps.service.limits.maxArtifactBytes,
        ...(deps.maxRequestBodyBytes ? { maxRequestBodyBytes: deps.maxRequestBodyBytes } : {}),
      }),
    ],
  };
}

/** Builds the Hono app: the steps, then one mount per concern. */
export function createApp(deps: AppDeps): App {
  const app = new OpenAPIHono<AppEnv>({ defaultHook: invalidRequest });
  const onError = errorMapping({ logger: deps.logger ?? silentLogger });
  const steps = appSteps(deps);
  const corsOn = (deps.corsOrigins ?? []).length > 0;

  app.use('*', chain(steps.all, onError));
  if (corsOn) app.use('*', corsFor(deps.corsOrigins!));
  // tus's own rules (OPTIONS, Tus-Resumable, its statuses) wrap /v1/tus before authentication.
  if (deps.service.tus) app.use('/v1/tus/*', tusProtocol(deps.service.limits.maxArtifactBytes));
  app.use('/v1/*', chain(steps.v1, onError));

  const { service, publicUrl } = deps;
  registerPutArtifact(app, service, publicUrl);
  registerNames(app, service, publicUrl);
  registerGetArtifactMeta(app, service, publicUrl);
  if (deps.views) registerViews(app, deps.views, publicUrl);
  const getArtifact = registerGetArtifact(app, service, deps.urlSigner, deps.now, linkAdmission(deps.rateLimiter));
  registerArtifactUrl(app, service, publicUrl);
  registerUploads(app, service, publicUrl);
  if (service.tus) registerTus(app, service.tus, publicUrl);
  registerDeleteArtifact(app, service);
  registerSessions(app, service);
  registerAdminRetention(app, deps.retention);
  registerAdminPurge(app, service, deps.ops);
  registerAdminFsck(app, deps.ops, deps.fsck);
  registerAdminAudit(app, deps.ops);
  registerEvents(app, deps.ops, { ...deps.events, isDraining: deps.isDraining });
  registerUsage(app, deps.ops, deps.rateLimiter);
  if (deps.metrics) registerMetrics(app, deps.metrics, deps.metricsToken);
  registerListArtifacts(app, service, publicUrl);
  registerHealth(app, { ops: deps.ops, isDraining: deps.isDraining ?? (() => false) });
  registerDocs(app, deps.docsAssets);
  registerUi(app, deps.uiAssets);
  const mcpSessions = mountMcpServers(app, deps);
  registerOpenApi(app, deps.version);

  app.notFound(notFound);
  app.onError(onError);
  const everyStep = Object.freeze([...steps.all, ...steps.v1]);
  if (deps.directDownloads !== false && !corsOn) routeDownloadsDirectly(app, everyStep, getArtifact, onError);

  return Object.assign(app, {
    steps: everyStep,
    // Open MCP sessions hold SSE streams; shutdown closes them so the server can drain.
    closeMcpSessions: async () => {
      for (const mount of mcpSessions) await mount.closeAll();
    },
  });
}

/** The service's HTTP app: Hono's fetch handler and routes, plus what shutdown needs. */
export type App = OpenAPIHono<AppEnv> & {
  /** The request steps a /v1 request goes through, in order: the routes' middleware and the direct route run these. */
  readonly steps: readonly RequestStep[];
  /** Ends open MCP sessions (their SSE streams), so the server can drain. */
  closeMcpSessions(): Promise<void>;
};

/** A request whose parameters fail their schema: 400 naming the first part that is wrong. */
function invalidRequest(
  result: { success: boolean; target: string; error?: { issues: { path: PropertyKey[]; message: string }[] } },
  c: { json(body: unknown, status: 400): Response },
): Response | undefined {
  if (result.success) return undefined;
  const issue = result.error?.issues[0];
  const where = issue ? `${issue.path.join('.') || 'request'}: ${issue.message}` : 'invalid request';
  return c.json({ code: 'bad_request', message: `Invalid ${result.target} (${where}).` }, 400);
}

/** A signed link's tenant is admitted by the rate limiter once the link is proven (no token to meter). */
function linkAdmission(limiter: RateLimiter | undefined) {
  return limiter ? async (tenantId: string) => void (await limiter.check(tenantId, undefined, 0)) : undefined;
}

/**
 * The artifact MCP server at /mcp and the gateway at /mcp/gateway (with GET /v1/mcp/servers), over
 * the same deps and settings; without a gateway, GET /v1/mcp/servers answers an empty list.
 */
function mountMcpServers(app: OpenAPIHono<AppEnv>, deps: AppDeps): { closeAll(): Promise<void> }[] {
  const mounted: { closeAll(): Promise<void> }[] = [];
  const { mount: mountMcp, ...configured } = deps.mcp || { mount: undefined };
  const mcpDeps: McpDeps = {
    service: deps.service,
    ops: deps.ops,
    auth: deps.auth,
    ...(deps.rateLimiter ? { rateLimiter: deps.rateLimiter } : {}),
    ...(deps.publicUrl ? { publicUrl: deps.publicUrl } : {}),
  };
  const settings: McpMountSettings = {
    ...(deps.version ? { version: deps.version } : {}),
    ...(deps.corsOrigins ? { allowedOrigins: deps.corsOrigins } : {}),
    ...configured,
  };
  if (mountMcp) mounted.push(mountMcp(app, mcpDeps, settings));
  if (deps.gateway)
    mounted.push(deps.gateway.mount(app, { ...mcpDeps, ops: deps.ops, gateway: deps.gateway.gateway }, settings));
  else registerNoGateway(app);
  return mounted;
}
