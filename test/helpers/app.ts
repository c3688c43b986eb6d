import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JSONWebKeySet } from 'jose';
import { createFsBlobStore } from '../../src/blob/fs.js';
import { nodeSha256 } from '../../src/blob/node-hash.js';
import { createSqliteRepository } from '../../src/db/sqlite.js';
import { createApp } from '../../src/http/app.js';
import { createAuthenticator } from '../../src/http/auth.js';
import { createUrlSigner } from '../../src/core/url-signing.js';
import { mintToken, type TokenClaims } from '../../src/http/tokens.js';
import { createArtifactService, type ServiceLimits } from '../../src/service/artifact-service.js';

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
}

export const URL_KEYS = [
  { kid: 'l1', secret: 'link-key-one-for-tests-0123456789abcdef' },
  { kid: 'l0', secret: 'link-key-zero-for-tests-fedcba987654321' },
];

/** A real app over SQLite (temp file) and the fs blob store (temp dir), driven with app.request. */
export function createTestApp(options: TestAppOptions = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'artifact-store-http-'));
  const blobRoot = join(dir, 'blobs');
  const repo = createSqliteRepository({ path: join(dir, 'artifacts.db') });
  const blobs = createFsBlobStore({ root: blobRoot, hash: nodeSha256, fsync: false });
  const urlSigner = createUrlSigner(options.urlSigningKeys ?? URL_KEYS);
  const service = createArtifactService({
    repo,
    blobs,
    now: options.now,
    limits: { maxArtifactBytes: 1024 * 1024, defaultTtlSeconds: 3600, maxTtlSeconds: 7 * 24 * 3600, touchFlushMs: 0, smallBlobCacheBytes: 1024 * 1024, ...options.limits },
    links: { signer: urlSigner, defaultTtlSeconds: 900, maxTtlSeconds: 24 * 3600 },
  });
  const hmacSecrets = options.hmacSecrets ?? HMAC_KEYS.map((k) => ({ ...k }));
  const auth = createAuthenticator({ hmacSecrets, jwks: options.jwks, issuer: options.issuer, audience: options.audience, repo });
  const app = createApp({ service, repo, blobs, auth, corsOrigins: options.corsOrigins, urlSigner, publicUrl: options.publicUrl, now: options.now });

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
    dir,
    blobRoot,
    token,
    /** Files under the blob root other than directories (committed blobs and leftover uploads). */
    blobFiles: () => listFiles(blobRoot),
    async cleanup() {
      await service.close();
      await repo.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type TestApp = ReturnType<typeof createTestApp>;

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
