import { createHash } from 'node:crypto';
import { mintToken, type TokenClaims } from '../../src/http/tokens.js';
import { issueApiKey } from '../../src/service/api-keys.js';
import { openTestApp, RUNTIME } from './drivers.js';
import { HMAC_KEYS, URL_KEYS, type TestAppOptions } from './test-app-options.js';

export { HMAC_KEYS, URL_KEYS, type TestAppOptions };
/** Which runtime the suite runs on: 'node' (SQLite + fs) or 'workerd' (the Worker on D1 + R2). */
export { RUNTIME };

/**
 * A real app on real drivers, driven with app.request: on Node composed over SQLite (temp file) and
 * the fs blob store; in workerd the Worker's own app over D1 and R2 (see drivers.ts).
 */
export async function createTestApp(options: TestAppOptions = {}) {
  const opened = await openTestApp(options);
  const token = (
    claims: TokenClaims,
    opts: { kid?: 'k1' | 'k2'; ttlSeconds?: number; issuer?: string; audience?: string } = {},
  ) => {
    const key = HMAC_KEYS.find((k) => k.kid === (opts.kid ?? 'k1'))!;
    return mintToken(key, claims, opts.ttlSeconds ?? 3600, {
      issuer: opts.issuer ?? options.issuer,
      audience: opts.audience ?? options.audience,
    });
  };
  /** An operator key, as `artifact-store keys create --operator` makes on the host. */
  const operatorKey = async () => (await issueApiKey(opened.repo, { operator: true, label: 'tests' })).key;
  return { ...opened, token, operatorKey };
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
    const res = await app.request(
      `/v1/artifacts?${query}${sep}limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      { headers: bearer(token) },
    );
    if (res.status !== 200) throw new Error(`list answered ${res.status}: ${await res.text()}`);
    const page = (await res.json()) as { items: Record<string, any>[]; nextCursor?: string };
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

export const sha256 = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest('hex');
