import { createHash } from 'node:crypto';
import type { JSONWebKeySet } from 'jose';
import { createApp } from '../../src/http/app.js';
import { registerMcp } from '../../src/http/routes/mcp.js';
import type { EventStreamSettings } from '../../src/http/routes/events.js';
import { createAuthenticator } from '../../src/http/auth.js';
import { createUrlSigner } from '../../src/core/url-signing.js';
import { mintToken, type TokenClaims } from '../../src/http/tokens.js';
import { createArtifactService, type ServiceLimits } from '../../src/service/artifact-service.js';
import { runRetention } from '../../src/service/retention.js';
import { createPolicies, DEFAULT_POLICY, type Policy } from '../../src/core/policy.js';
import { openTestDrivers, RUNTIME } from './drivers.js';

/** Which runtime the suite runs on: 'node' (SQLite + fs) or 'workerd' (D1 + R2, in the Workers runtime). */
export { RUNTIME };

export const HMAC_KEYS = [
  { kid: 'k1', secret: 'k1-secret-for-tests-0123456789abcdef' },
  { kid: 'k2', secret: 'k2-secret-for-tests-fedcba9876543210' },
] as const;

export interface TestAppOptions {
  limits?: Partial<ServiceLimits>;
  corsOrigins?: string[];
  /** Replaces the HS256 keys (pass [] for a JWKS-only setup). */
  hmacSecrets?: { kid: string; secret: string }[];
  jwks?: JSONWebKeySet;
  issuer?: string;
  audience?: string;
  /** The service clock (ms since the epoch); reference times and expiry follow it. */
  now?: () => number;
  /** Download link keys (the first signs); default URL_KEYS. */
  urlSigningKeys?: { kid: string; secret: string }[];
  publicUrl?: string;
  /** The base policy (quotas, TTLs); default: the service limits with DEFAULT_POLICY's quotas. */
  policy?: Partial<Policy>;
  /** Blob GC grace of POST /v1/admin/retention (default 1 h). */
  gcGraceMs?: number;
  /** GET /v1/events polling. */
  events?: EventStreamSettings;
}

export const URL_KEYS = [
  { kid: 'l1', secret: 'link-key-one-for-tests-0123456789abcdef' },
  { kid: 'l0', secret: 'link-key-zero-for-tests-fedcba987654321' },
];

/**
 * A real app on real drivers, driven with app.request: SQLite (temp file) and the fs blob store on
 * Node; D1 and R2 with the DigestStream hasher in workerd (see drivers.ts).
 */
export async function createTestApp(options: TestAppOptions = {}) {
  const { repo, blobs, blobFiles, cleanup } = await openTestDrivers({ manualClock: options.now !== undefined });
  const urlSigner = createUrlSigner(options.urlSigningKeys ?? URL_KEYS);
  const policies = options.policy ? createPolicies({ ...DEFAULT_POLICY, ...options.policy }, {}) : undefined;
  const service = createArtifactService({
    repo,
    blobs,
    now: options.now,
    limits: { maxArtifactBytes: 1024 * 1024, defaultTtlSeconds: 3600, maxTtlSeconds: 7 * 24 * 3600, touchFlushMs: 0, smallBlobCacheBytes: 1024 * 1024, ...options.limits },
    links: { signer: urlSigner, defaultTtlSeconds: 900, maxTtlSeconds: 24 * 3600 },
    ...(policies ? { policies } : {}),
  });
  const hmacSecrets = options.hmacSecrets ?? HMAC_KEYS.map((k) => ({ ...k }));
  const auth = createAuthenticator({ hmacSecrets, jwks: options.jwks, issuer: options.issuer, audience: options.audience, repo });
  const retention = (trigger: string) => runRetention({ repo, blobs, policies: policies ?? (() => ({ ...DEFAULT_POLICY })), graceMs: options.gcGraceMs ?? 3_600_000, now: options.now }, trigger);
  const app = createApp({ service, repo, blobs, auth, corsOrigins: options.corsOrigins, urlSigner, publicUrl: options.publicUrl, now: options.now, retention, mcp: { mount: registerMcp }, events: options.events, ...(policies ? { policies } : {}) });

  const token = (claims: TokenClaims, opts: { kid?: 'k1' | 'k2'; ttlSeconds?: number; issuer?: string; audience?: string } = {}) => {
    const key = HMAC_KEYS.find((k) => k.kid === (opts.kid ?? 'k1'))!;
    return mintToken(key, claims, opts.ttlSeconds ?? 3600, {
      issuer: opts.issuer ?? options.issuer,
      audience: opts.audience ?? options.audience,
    });
  };

  return {
    app,
    service,
    repo,
    blobs,
    token,
    /** Objects the blob store holds (committed blobs and leftover uploads). */
    blobFiles,
    async cleanup() {
      await service.close();
      await repo.close();
      await cleanup();
    },
  };
}

export type TestApp = Awaited<ReturnType<typeof createTestApp>>;

export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** Deterministic pseudo-random bytes. */
export function bytesOf(size: number, seed = 1): Uint8Array {
  const out = new Uint8Array(size);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

type Body = string | Uint8Array;

/** POSTs bytes as a put; returns the response and its parsed JSON. */
export async function putArtifact(
  app: TestApp['app'],
  token: string,
  body: Body,
  headers: Record<string, string> = {},
  query = '',
): Promise<{ res: Response; json: Record<string, any> }> {
  const res = await app.request(`/v1/artifacts${query}`, {
    method: 'POST',
    headers: { ...bearer(token), 'Content-Type': 'application/octet-stream', ...headers },
    body: typeof body === 'string' ? body : (body as Uint8Array<ArrayBuffer>),
  });
  return { res, json: (await res.json()) as Record<string, any> };
}

/** The ids (and scopes) a token lists, following every page. */
export async function listAll(app: TestApp['app'], token: string, query = ''): Promise<Record<string, any>[]> {
  const items: Record<string, any>[] = [];
  let cursor: string | undefined;
  do {
    const sep = query ? '&' : '';
    const res = await app.request(`/v1/artifacts?${query}${sep}limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, { headers: bearer(token) });
    if (res.status !== 200) throw new Error(`list answered ${res.status}: ${await res.text()}`);
    const page = (await res.json()) as { items: Record<string, any>[]; nextCursor?: string };
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

export const sha256 = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest('hex');
