/**
 * The app under the shared HTTP suite, on Node: composed from its parts over SQLite in a temp file
 * and the fs blob store, as src/node.ts composes it. The workerd project of vitest.config.ts swaps
 * this module for drivers.workerd.ts (the Worker's own app on D1 and R2), so the same suite runs on
 * both runtimes.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFsBlobStore } from '../../src/blob/fs.js';
import { nodeSha256 } from '../../src/blob/node-hash.js';
import { createPolicies, DEFAULT_POLICY } from '../../src/core/policy.js';
import { createUrlSigner } from '../../src/core/url-signing.js';
import { createSqliteRepository } from '../../src/db/sqlite.js';
import { createApp } from '../../src/http/app.js';
import { createAuthenticator } from '../../src/http/auth.js';
import { registerMcp } from '../../src/http/routes/mcp.js';
import { createArtifactService } from '../../src/service/artifact-service.js';
import { runRetention } from '../../src/service/retention.js';
import { createRateLimiter, rateLimitsOf } from '../../src/http/rate-limit.js';
import type { AuditActor } from '../../src/service/audit.js';
import { fsck } from '../../src/service/fsck.js';
import { HMAC_KEYS, TEST_LIMITS, URL_KEYS, type TestAppOptions } from './test-app-options.js';

export const RUNTIME: 'node' | 'workerd' = 'node';

export async function openTestApp(options: TestAppOptions) {
  const dir = mkdtempSync(join(tmpdir(), 'artifact-store-http-'));
  const blobRoot = join(dir, 'blobs');
  const repo = createSqliteRepository({ path: join(dir, 'artifacts.db') });
  const blobs = createFsBlobStore({ root: blobRoot, hash: nodeSha256, fsync: false });
  const urlSigner = createUrlSigner(options.urlSigningKeys ?? URL_KEYS);
  const policies = options.policy || options.tenantPolicies ? createPolicies({ ...DEFAULT_POLICY, ...options.policy }, options.tenantPolicies ?? {}) : undefined;
  const service = createArtifactService({
    repo,
    blobs,
    now: options.now,
    limits: { ...TEST_LIMITS, ...options.limits },
    links: { signer: urlSigner, defaultTtlSeconds: 900, maxTtlSeconds: 24 * 3600 },
    ...(policies ? { policies } : {}),
  });
  const hmacSecrets = options.hmacSecrets ?? HMAC_KEYS.map((k) => ({ ...k }));
  const auth = createAuthenticator({ hmacSecrets, jwks: options.jwks, issuer: options.issuer, audience: options.audience, repo });
  const policyOf = policies ?? (() => ({ ...DEFAULT_POLICY }));
  const retention = (trigger: string, actor?: AuditActor) => runRetention({ repo, blobs, policies: policyOf, overriddenTenants: Object.keys(options.tenantPolicies ?? {}), graceMs: options.gcGraceMs ?? 3_600_000, now: options.now }, trigger, actor);
  const rateLimiter = createRateLimiter({ limitsOf: (tenantId) => rateLimitsOf(policyOf(tenantId)) });
  const check = (o: { verify: boolean }) => fsck({ repo, blobs, hash: nodeSha256, verify: o.verify, graceMs: options.gcGraceMs ?? 3_600_000 });
  const app = createApp({ service, repo, blobs, auth, corsOrigins: options.corsOrigins, urlSigner, publicUrl: options.publicUrl, now: options.now, retention, fsck: check, rateLimiter, mcp: { mount: registerMcp }, events: options.events, ...(policies ? { policies } : {}) });
  return {
    app,
    service,
    repo,
    blobs,
    /** Stored objects other than directories (committed blobs and leftover uploads). */
    blobFiles: async () => listFiles(blobRoot),
    cleanup: async () => {
      await service.close();
      await repo.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function listFiles(root: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(root);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const name of entries) {
    const p = join(root, name);
    if (statSync(p).isDirectory()) out.push(...listFiles(p));
    else out.push(p);
  }
  return out;
}
