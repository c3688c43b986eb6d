/**
 * The HTTP service on Node: the composed app on the configured drivers, served by @hono/node-server,
 * with the in-process retention schedule and a draining shutdown.
 */
import { enableLinearRegExps } from './regexps.js';
import { countExternalMemoryInGlobalLimit } from './external-memory.js';
import { createNodeViewSandbox } from './view-sandbox.js';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { composeApp } from '../compose/compose-app.js';
import type { Config } from '../core/config.js';
import type { ArtifactRepository } from '../db/repository.js';
import type { Logger } from '../core/logger.js';
import type { Metrics } from '../http/metrics.js';
import { rateLimitsOf } from '../core/limits.js';
import { createRateLimiter } from '../http/rate-limit.js';
import { LOOPBACK_HOSTS, registerMcpOnDemand } from '../http/routes/mcp-on-demand.js';
import { mintToken, type TokenClaims } from '../http/tokens.js';
import type { RetentionReport } from '../service/retention/index.js';
import type { ArtifactService, ServiceObserver } from '../service/types.js';
import { nodeDocsAssets, nodeUiAssets } from './assets.js';
import { withNodeBodies } from './body-writer.js';
import { openNodeDrivers } from './drivers.js';
import { nodeKeySources } from './keys.js';
import { createServiceLogger } from './logger.js';
import { scheduleRetention } from './retention-schedule.js';
import { createTusFileStaging } from './tus-file-staging.js';

export interface RunningServer {
  url: string;
  /** A tenant-wide token (tenant "dev", read/write/admin) outside production; '' in production. */
  token: string;
  /** Signs a token with the dev/first secret (not in production). */
  mintToken(claims: TokenClaims, ttlSeconds?: number): Promise<string>;
  service: ArtifactService;
  repo: ArtifactRepository;
  server: Server;
  /** Stops accepting, drains in-flight transfers (up to shutdownGraceMs), then closes the drivers. */
  close(): Promise<void>;
  /** Runs retention now (as POST /v1/admin/retention does). */
  retention(trigger: string): Promise<RetentionReport>;
}

/** Starts the HTTP service on the configured drivers. */
export async function startServer(config: Config, options: { logger?: Logger } = {}): Promise<RunningServer> {
  const logger = options.logger ?? createServiceLogger(config.logLevel);
  const jwks = config.jwksFile ? JSON.parse(readFileSync(config.jwksFile, 'utf8')) : undefined;
  let metrics: Metrics | undefined;
  const observer: ServiceObserver = {
    stored: (n) => metrics?.observer.stored(n),
    served: (n) => metrics?.observer.served(n),
    evicted: (n) => metrics?.observer.evicted(n),
  };
  let draining = false;
  // A gateway config is checked and its servers started before anything opens: a bad file fails the start.
  const gateway = config.gatewayConfig ? await startGateway(config.gatewayConfig, logger) : undefined;
  enableLinearRegExps();
  countExternalMemoryInGlobalLimit();
  const viewSandbox = createNodeViewSandbox();
  const drivers = await openNodeDrivers(config).catch(async (err) => {
    await gateway?.gateway.close();
    throw err;
  });
  let composed: Awaited<ReturnType<typeof composeApp>>;
  try {
    composed = await composeApp(config, drivers, {
      keys: nodeKeySources(config),
      viewSandbox,
      jwks,
      observer,
      hostActorId: `pid ${process.pid}`,
      logger,
      tusStaging: createTusFileStaging({ dir: resolve(config.dataDir, 'tus') }),
      // prom-client is loaded only when metrics are on.
      metrics: async (ops) =>
        config.metrics || config.metricsToken ? (await import('../http/metrics.js')).createMetrics(ops) : undefined,
      // Runs in the process that serves requests: short transactions, each followed by a pause as
      // long, and longer while puts are in flight (bench/retention.ts measures puts during a run).
      retention: {
        shareRuns: true,
        pause: 1,
        batchTargetMs: 25,
        yieldToPuts: true,
        onReport: (report) => metrics?.retention(report),
      },
      rateLimiter: ({ policies }) =>
        createRateLimiter({
          limitsOf: (tenantId) => rateLimitsOf(policies(tenantId)),
          onRefusal: (reason) => metrics?.rateLimited(reason),
          // On Postgres, tenants' request rates hold across replicas: tokens leased from shared buckets.
          ...(drivers.repo.leaseRateTokens
            ? { leases: { lease: drivers.repo.leaseRateTokens.bind(drivers.repo) } }
            : {}),
        }),
      http: {
        docsAssets: nodeDocsAssets(),
        uiAssets: nodeUiAssets(),
        isDraining: () => draining,
        metricsToken: config.metricsToken,
        mcp: { mount: registerMcpOnDemand, ...mcpHostsOf(config) },
        ...(gateway ? { gateway } : {}),
      },
    });
    metrics = composed.metrics;
    // Policies come from configuration: a start with other ones than last time is a policy change.
    await composed.recordPolicies();
  } catch (err) {
    await gateway?.gateway.close();
    await drivers.close();
    throw err;
  }
  const { app, service, retention } = composed;
  const { devSecret } = composed.settings.keys;

  const server = await new Promise<Server>((ok, fail) => {
    // Downloads of fs and S3 blobs are written by their driver's Node writer (body-writer.ts).
    const fetch = withNodeBodies(app.fetch, (err) =>
      logger.warn('download cut short: its bytes could not be read', { error: String(err) }),
    );
    const s = serve({ fetch, port: config.port, hostname: config.host }, () => ok(s as Server)) as Server;
    s.once('error', fail);
  }).catch(async (err) => {
    await gateway?.gateway.close();
    await service.close();
    await viewSandbox.close();
    await drivers.close();
    throw err;
  });
  // The in-process schedule: the same run as the CLI and the admin endpoint, taking turns with the other
  // processes on this database (retention-schedule.ts).
  const schedule = scheduleRetention({
    repo: drivers.repo,
    intervalSeconds: config.retentionIntervalSeconds,
    run: retention,
    logger,
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;

  const mint = async (claims: TokenClaims, ttlSeconds = 3600) => {
    if (!devSecret) throw new Error('No dev signing secret in production: mint tokens in the host application.');
    return mintToken(devSecret, claims, ttlSeconds, { issuer: config.jwtIssuer, audience: config.jwtAudience });
  };
  const token = devSecret
    ? await mint({ tenant: 'dev', sub: 'dev', perms: ['read', 'write', 'admin'] }, 30 * 24 * 3600)
    : '';

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      draining = true;
      // Stops the timer now; a run in progress is awaited once no request is left.
      const stopped = schedule.stop();
      const closed = new Promise<void>((ok) => server.close(() => ok()));
      await app.closeMcpSessions();
      server.closeIdleConnections();
      // A keep-alive connection whose last response ends while draining goes idle: close it then,
      // rather than waiting out its keep-alive timeout.
      const sweep = setInterval(() => server.closeIdleConnections(), 100);
      sweep.unref();
      const timer = setTimeout(() => server.closeAllConnections(), config.shutdownGraceMs);
      timer.unref();
      await closed;
      clearInterval(sweep);
      clearTimeout(timer);
      await stopped;
      await gateway?.gateway.close();
      await service.close();
      await viewSandbox.close();
      await drivers.close();
    })());

  return { url, token, mintToken: mint, service, repo: drivers.repo, server, close, retention };
}

/** Loads the gateway (and the MCP SDK) only when a gateway config is set. */
async function startGateway(path: string, logger: Logger) {
  const [{ loadGatewayConfig, nodeUpstreamConnector }, { createMcpGateway }, { registerGateway }] = await Promise.all([
    import('./gateway.js'),
    import('../mcp/gateway/gateway.js'),
    import('../http/routes/mcp-gateway.js'),
  ]);
  const gatewayConfig = loadGatewayConfig(path);
  const log = (line: string, level: 'debug' | 'info' | 'warn' = 'info') => logger[level]('mcp gateway', { line });
  const gateway = createMcpGateway({
    config: gatewayConfig,
    connect: nodeUpstreamConnector({ baseDir: gatewayConfig.dir, log }),
    log,
  });
  await gateway.start();
  return { mount: registerGateway, gateway };
}

/**
 * DNS-rebinding protection for /mcp: a service on loopback answers only to loopback names (and its
 * public URL's host), so a web page whose name was rebound to 127.0.0.1 cannot reach it. Elsewhere
 * it answers to any Host unless ARTIFACT_STORE_MCP_ALLOWED_HOSTS lists them.
 */
function mcpHostsOf(config: Config): { allowedHosts?: string[] } {
  if (config.mcpAllowedHosts.length > 0) return { allowedHosts: config.mcpAllowedHosts };
  if (!['127.0.0.1', 'localhost', '::1', '[::1]'].includes(config.host)) return {};
  const extra = config.publicUrl ? [new URL(config.publicUrl).hostname.toLowerCase()] : [];
  return { allowedHosts: [...LOOPBACK_HOSTS, ...extra] };
}
