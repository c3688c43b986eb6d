import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '@hono/node-server';
import type { BlobStore } from './blob/blob-store.js';
import { createFsBlobStore } from './blob/fs.js';
import { createMemoryBlobStore } from './blob/memory.js';
import { nodeSha256 } from './blob/node-hash.js';
import { basePolicy, policiesOf, readTenantPolicies, type Config } from './core/config.js';
import { createRateLimiter, rateLimitsOf, type RateLimiter, type RateLimitReason } from './http/rate-limit.js';
import { recordPolicyChange, type AuditActor } from './service/audit.js';
import { fsck } from './service/fsck.js';
import { runRetention, type RetentionDeps, type RetentionReport } from './service/retention.js';
import type { Metrics } from './http/metrics.js';
import type { ArtifactRepository } from './db/repository.js';
import { createSqliteRepository } from './db/sqlite.js';
import { createApp } from './http/app.js';
import { LOOPBACK_HOSTS, registerMcpOnDemand } from './http/routes/mcp-on-demand.js';
import { createAuthenticator } from './http/auth.js';
import { createJsonLogger, type Logger } from './http/logger.js';
import { DOCS_ASSET_NAMES, type DocsAssets } from './http/routes/docs.js';
import { UI_ASSET_TYPES, type UiAssets } from './http/routes/ui.js';
import { resolveKeys, type ResolvedKeys } from './http/keys.js';
import { mintToken, type TokenClaims } from './http/tokens.js';
import { createArtifactService, type ArtifactService, type LinkSettings, type ServiceObserver } from './service/artifact-service.js';

/** The drivers a Node process runs on, chosen from config. The only place (with the CLI) that picks them. */
async function openBlobStore(config: Config): Promise<BlobStore> {
  switch (config.blobDriver) {
    case 'memory':
      return createMemoryBlobStore({ hash: nodeSha256 });
    case 's3': {
      // The AWS SDK is loaded only for the s3 driver (tens of MiB a process on fs does without).
      const { cloudFrontInvalidator, createS3BlobStore, createS3Client } = await import('./blob/s3.js');
      const CloudFrontClient = config.cdnDistributionId ? (await import('@aws-sdk/client-cloudfront')).CloudFrontClient : undefined;
      const client = createS3Client({
        region: config.s3Region,
        endpoint: config.s3Endpoint,
        forcePathStyle: config.s3ForcePathStyle,
        accessKeyId: config.s3AccessKeyId,
        secretAccessKey: config.s3SecretAccessKey,
      });
      const cdn = config.cdnUrl && config.cdnKeyPairId && config.cdnPrivateKeyFile
        ? {
            url: config.cdnUrl,
            keyPairId: config.cdnKeyPairId,
            privateKey: readFileSync(config.cdnPrivateKeyFile, 'utf8'),
            ...(config.cdnDistributionId && CloudFrontClient
              ? {
                  invalidate: cloudFrontInvalidator(
                    new CloudFrontClient({
                      region: 'us-east-1',
                      ...(config.s3AccessKeyId && config.s3SecretAccessKey ? { credentials: { accessKeyId: config.s3AccessKeyId, secretAccessKey: config.s3SecretAccessKey } } : {}),
                    }),
                    config.cdnDistributionId,
                  ),
                }
              : {}),
          }
        : undefined;
      return createS3BlobStore({ client, bucket: config.s3Bucket!, prefix: config.s3Prefix, hash: nodeSha256, ownsClient: true, cdn });
    }
    case 'fs':
      return createFsBlobStore({ root: resolve(config.blobDir ?? join(config.dataDir, 'blobs')), hash: nodeSha256 });
  }
}

export async function openNodeDrivers(config: Config, links?: LinkSettings, observer?: ServiceObserver): Promise<{ repo: ArtifactRepository; blobs: BlobStore; service: ArtifactService }> {
  // Memory blobs die with the process: metadata that outlived them would point at missing bytes.
  const dbPath = config.blobDriver === 'memory' ? ':memory:' : resolve(config.dbPath ?? join(config.dataDir, 'artifacts.db'));
  const repo = createSqliteRepository({ path: dbPath, busyTimeoutMs: config.sqliteBusyTimeoutMs });
  let blobs: BlobStore;
  try {
    blobs = await openBlobStore(config);
  } catch (err) {
    await repo.close();
    throw err;
  }
  const service = createArtifactService({
    repo,
    blobs,
    limits: { maxArtifactBytes: config.maxArtifactBytes, defaultTtlSeconds: config.defaultTtlSeconds, maxTtlSeconds: config.maxTtlSeconds, touchFlushMs: config.touchFlushMs, smallBlobCacheBytes: config.smallBlobCacheBytes },
    links: links ?? { defaultTtlSeconds: config.urlDefaultTtlSeconds, maxTtlSeconds: config.urlMaxTtlSeconds },
    policies: policiesOf(config),
    observer,
  });
  return { repo, blobs, service };
}

/** What a retention run needs under this configuration. */
export function retentionDepsOf(config: Config, repo: ArtifactRepository, blobs: BlobStore, extra: Partial<RetentionDeps> = {}): RetentionDeps {
  return {
    repo,
    blobs,
    policies: policiesOf(config),
    overriddenTenants: Object.keys(readTenantPolicies(config.tenantPolicies)),
    graceMs: config.gcGraceSeconds * 1000,
    auditKeptMs: config.auditRetentionDays * 86_400_000,
    ...extra,
  };
}

/** Runs retention; a call while a run is in progress gets that run's report (the run's starter is audited). */
export function createRetentionRunner(deps: RetentionDeps): (trigger: string, actor?: AuditActor) => Promise<RetentionReport> {
  let inFlight: Promise<RetentionReport> | undefined;
  return (trigger, actor) => (inFlight ??= runRetention(deps, trigger, actor).finally(() => (inFlight = undefined)));
}

/** Request rate and bytes in flight per tenant and per token, from each tenant's policy. */
export function rateLimiterOf(config: Config, onRefusal?: (reason: RateLimitReason) => void): RateLimiter {
  const policies = policiesOf(config);
  return createRateLimiter({ limitsOf: (tenantId) => rateLimitsOf(policies(tenantId)), ...(onRefusal ? { onRefusal } : {}) });
}

/** Named files read on first request and kept (a failed read is retried next time); other names are null. */
function filesOnDemand(files: Record<string, string>): DocsAssets & UiAssets {
  const cache = new Map<string, Promise<Uint8Array>>();
  return {
    get(name) {
      const file = Object.hasOwn(files, name) ? files[name] : undefined;
      if (!file) return Promise.resolve(null);
      let bytes = cache.get(name);
      if (!bytes) {
        bytes = readFile(file).then((b) => new Uint8Array(b));
        bytes.catch(() => cache.delete(name));
        cache.set(name, bytes);
      }
      return bytes;
    },
  };
}

/** Swagger UI's files from the swagger-ui-dist package. */
function nodeDocsAssets(): DocsAssets {
  // Resolve the package folder without loading its 1.7 MB bundle into this process.
  const root = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  return filesOnDemand(Object.fromEntries(DOCS_ASSET_NAMES.map((name) => [name, join(root, name)])));
}

/**
 * The artifact browser's files: src/ui/ of this package (one level above both src/ and dist/), and
 * the SSE parser from its own package.
 */
function nodeUiAssets(): UiAssets {
  const files: Record<string, string> = Object.fromEntries(Object.keys(UI_ASSET_TYPES).map((name) => [name, fileURLToPath(new URL(`../src/ui/${name}`, import.meta.url))]));
  // The package's ESM build sits beside the CommonJS entry require() resolves to.
  files['eventsource-parser.js'] = join(dirname(createRequire(import.meta.url).resolve('eventsource-parser')), 'index.js');
  return filesOnDemand(files);
}

/**
 * Log lines gathered and written once per turn of the event loop: writes to a pipe or file are
 * synchronous on Linux, and one write per request line cost a quarter of a small GET. Lines still
 * leave within the turn they were logged in, and everything pending is written before the process
 * exits.
 */
export function batchedLines(writeChunk: (chunk: string) => void, maxPending = 1000): (line: string) => void {
  let pending: string[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    const chunk = `${pending.join('\n')}\n`;
    pending = [];
    flushOnExit.delete(flush);
    writeChunk(chunk);
  };
  return (line) => {
    flushBeforeExit(flush);
    if (pending.push(line) === 1) setImmediate(flush);
    else if (pending.length >= maxPending) flush();
  };
}

const flushOnExit = new Set<() => void>();
let exitHooked = false;
/** The exit handler is added by the first line logged, not by importing this module. */
function flushBeforeExit(flush: () => void): void {
  flushOnExit.add(flush);
  if (exitHooked) return;
  exitHooked = true;
  process.on('exit', () => {
    for (const f of flushOnExit) f();
  });
}

const DEV_KID = 'dev';

/**
 * Development keeps one random secret in {dataDir}/dev-jwt-secret so the printed token survives
 * restarts; test mode uses a fresh secret per process.
 */
function devSecretOf(config: Config): { kid: string; secret: string } {
  if (config.env === 'test') return { kid: DEV_KID, secret: randomBytes(32).toString('base64url') };
  const file = resolve(config.dataDir, 'dev-jwt-secret');
  if (existsSync(file)) return { kid: DEV_KID, secret: readFileSync(file, 'utf8').trim() };
  mkdirSync(resolve(config.dataDir), { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return { kid: DEV_KID, secret };
}

/** The signing keys in force on Node (the rules are resolveKeys'; the dev secret is a file here). */
export function resolveNodeKeys(config: Config): Promise<ResolvedKeys> {
  return resolveKeys(config, {
    hasJwks: Boolean(config.jwksFile || config.jwksUrl),
    devSecret: () => devSecretOf(config),
    howToSetKeys: 'set ARTIFACT_STORE_JWT_SECRETS (kid:secret,...), ARTIFACT_STORE_JWKS_FILE or ARTIFACT_STORE_JWKS_URL.',
  });
}

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
  const logger = options.logger ?? createJsonLogger(config.logLevel, batchedLines((chunk) => process.stdout.write(chunk)));
  const { hmacSecrets: secrets, devSecret, urlSigner } = await resolveNodeKeys(config);
  const jwks = config.jwksFile ? JSON.parse(readFileSync(config.jwksFile, 'utf8')) : undefined;
  let metrics: Metrics | undefined;
  const observer: ServiceObserver = { stored: (n) => metrics?.observer.stored(n), served: (n) => metrics?.observer.served(n), evicted: (n) => metrics?.observer.evicted(n) };
  const { repo, blobs, service } = await openNodeDrivers(config, { signer: urlSigner, defaultTtlSeconds: config.urlDefaultTtlSeconds, maxTtlSeconds: config.urlMaxTtlSeconds }, observer);
  // prom-client is loaded only when metrics are on.
  if (config.metrics || config.metricsToken) metrics = (await import('./http/metrics.js')).createMetrics(repo);
  const auth = createAuthenticator({ hmacSecrets: secrets, jwks, jwksUrl: config.jwksUrl, issuer: config.jwtIssuer, audience: config.jwtAudience, repo });
  let draining = false;
  const runRetentionNow = createRetentionRunner(retentionDepsOf(config, repo, blobs));
  const retention = async (trigger: string, actor?: AuditActor) => {
    const report = await runRetentionNow(trigger, actor);
    metrics?.retention(report);
    return report;
  };
  const rateLimiter = rateLimiterOf(config, (reason) => metrics?.rateLimited(reason));
  const check = (o: { verify: boolean }) => fsck({ repo, blobs, hash: nodeSha256, verify: o.verify, graceMs: config.gcGraceSeconds * 1000 });
  // Policies come from configuration: a start with other ones than last time is a policy change.
  await recordPolicyChange(repo, { role: 'host', actorKind: 'config', actorId: `pid ${process.pid}` }, { base: basePolicy(config), tenants: readTenantPolicies(config.tenantPolicies) });
  const app = createApp({ service, repo, blobs, auth, logger, rateLimiter, fsck: check, corsOrigins: config.corsOrigins, docsAssets: nodeDocsAssets(), uiAssets: nodeUiAssets(), isDraining: () => draining, urlSigner, publicUrl: config.publicUrl, retention, policies: policiesOf(config), metrics, metricsToken: config.metricsToken, maxRequestBodyBytes: config.maxRequestBodyBytes, events: { heartbeatMs: config.eventsHeartbeatSeconds * 1000 }, mcp: { mount: registerMcpOnDemand, ...mcpHostsOf(config) } });
  // The in-process schedule: the same run as the CLI and the admin endpoint.
  let scheduledRun: Promise<unknown> | undefined;
  const schedule =
    config.retentionIntervalSeconds > 0
      ? setInterval(() => {
          scheduledRun = retention('schedule').then(
            (report) => logger.info('retention run', { ...report }),
            (err) => logger.error('retention run failed', { error: err instanceof Error ? err.message : String(err) }),
          );
        }, config.retentionIntervalSeconds * 1000)
      : undefined;
  schedule?.unref();

  const server = await new Promise<Server>((ok, fail) => {
    const s = serve({ fetch: app.fetch, port: config.port, hostname: config.host }, () => ok(s as Server)) as Server;
    s.once('error', fail);
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;

  const mint = async (claims: TokenClaims, ttlSeconds = 3600) => {
    if (!devSecret) throw new Error('No dev signing secret in production: mint tokens in the host application.');
    return mintToken(devSecret, claims, ttlSeconds, { issuer: config.jwtIssuer, audience: config.jwtAudience });
  };
  const token = devSecret ? await mint({ tenant: 'dev', sub: 'dev', perms: ['read', 'write', 'admin'] }, 30 * 24 * 3600) : '';

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      draining = true;
      if (schedule) clearInterval(schedule);
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
      await scheduledRun;
      await service.close();
      await repo.close();
      await blobs.close?.();
    })());

  return { url, token, mintToken: mint, service, repo, server, close, retention };
}

export { createFsBlobStore } from './blob/fs.js';
export { createFileSpool } from './node/file-spool.js';
export { nodeSha256 } from './blob/node-hash.js';
export { createSqliteRepository } from './db/sqlite.js';
export { loadConfig, type Config } from './core/config.js';

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
