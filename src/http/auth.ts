// jose's subpath modules: the package root loads JWE and every key tool too, which no check here uses.
import { decodeProtectedHeader } from 'jose/decode/protected_header';
import * as joseErrors from 'jose/errors';
import type { JSONWebKeySet } from 'jose';
import { createLocalJWKSet } from 'jose/jwks/local';
import { createRemoteJWKSet } from 'jose/jwks/remote';
import { jwtVerify, type JWTVerifyGetKey } from 'jose/jwt/verify';
import { errors } from '../core/errors.js';
import { sha256Hex } from '../core/hash.js';
import type { Context } from 'hono';
import { narrowFilter, type ReadFilter, readFilterOf } from '../core/scope.js';
import type { Access } from '../service/artifact-service.js';
import type { ServiceOperations } from '../service/operations.js';
import { PERMS, type Perm } from '../core/perms.js';
import { artifactParam } from './artifact-params.js';
import { TokenClaimsSchema } from './tokens.js';

/**
 * An authenticated caller: a tenant, the scope it is bound to, and what it may do. `operator` comes
 * only from an operator API key (`artifact-store keys create --operator`), which a host app's
 * token-signing key cannot produce: no JWT is ever an operator, whatever its claims.
 */
export interface Caller {
  kind: 'jwt' | 'api_key';
  role: 'tenant' | 'operator';
  /** The token's subject, or the API key's id: who acted, for the audit trail. */
  actorId: string;
  /** '' for an operator, which belongs to no tenant. */
  tenantId: string;
  userId?: string;
  sessionId?: string;
  traceId?: string;
  perms: ReadonlySet<Perm>;
}

export interface AuthOptions {
  /** HS256 secrets by kid. */
  hmacSecrets?: { kid: string; secret: string }[];
  /** Public keys (RS256, ES256, EdDSA, PS256) selected by kid. */
  jwks?: JSONWebKeySet;
  jwksUrl?: string;
  issuer?: string;
  audience?: string;
  /** Looks up API keys (`ask_…`); without it every API key is refused. */
  apiKeys?: Pick<ServiceOperations, 'findApiKey'>;
  /** Added to "The token signature is invalid." (development: where the signing secret lives). */
  signatureHint?: string;
}

const CACHE_TTL_MS = 60_000;
const CACHE_MAX_ENTRIES = 10_000;
const ASYMMETRIC_ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
export const API_KEY_PATTERN = /^ask_([A-Za-z0-9]{12})_([A-Za-z0-9_-]{32,})$/;

/** Turns an Authorization header into a Caller: HS256 or JWKS-verified JWTs, or API keys. */
export interface Authenticator {
  /**
   * Resolves an Authorization header into a Caller; a refusal rejects with unauthorized (always a
   * rejected promise, never a throw). A token verified moments ago is one map lookup and comes back
   * as the Caller itself, without a promise: the common case of a small GET, where the promise and
   * its await measured 5-10% of throughput (docs/performance.md, "The request steps"). Callers await
   * it either way.
   */
  authenticate(authorization: string | undefined | null): Caller | Promise<Caller>;
}

/** What a caller may read: its tenant, narrowed to the session / trace its token is bound to. */
export function accessOf(caller: Caller): Access {
  return { tenantId: caller.tenantId, filter: readFilterOf(caller) };
}

/** The scope a request names, as a put names it: X-Artifact-Session / -Trace / -User, else ?session / ?trace / ?user. */
export function namedScope(c: Context): ReadFilter {
  return {
    sessionId: artifactParam(c, 'session'),
    traceId: artifactParam(c, 'trace'),
    userId: artifactParam(c, 'user'),
  };
}

/**
 * What a read (GET, HEAD, meta, DELETE, a link) may see: the caller's access narrowed by the scope the
 * request names. A tenant-wide token uses it to mean one scope's reference when several hold the same
 * bytes; a bound token may repeat its own session or trace, never another (403).
 */
export function readAccessOf(c: Context, caller: Caller): Access {
  const access = accessOf(caller);
  return { tenantId: access.tenantId, filter: narrowFilter(access.filter, namedScope(c)) };
}

/** A tenant's admin: `admin` in a tenant-wide token of that tenant (never an operator). */
export function isTenantAdmin(caller: Caller): boolean {
  return caller.role === 'tenant' && caller.perms.has('admin') && caller.sessionId === undefined;
}

/** Operator-only actions: a tenant admin is refused with what to do instead. */
export function requireOperator(caller: Caller, what: string): void {
  if (caller.role !== 'operator') {
    throw errors.forbidden(
      `${what} is for the service's operator (an operator key made on the host with \`artifact-store keys create --operator\`); a tenant's token cannot do it, whatever its claims.`,
    );
  }
}

/**
 * The tenant an admin route acts on: a tenant admin's own (naming another is refused); for an
 * operator, the one it names with ?tenant=, or undefined for every tenant.
 */
export function adminTenantOf(caller: Caller, named: string | undefined): string | undefined {
  if (caller.role === 'operator') return named;
  if (named !== undefined && named !== caller.tenantId)
    throw errors.forbidden(
      `Your token belongs to tenant ${JSON.stringify(caller.tenantId)}; it cannot act on another tenant.`,
    );
  return caller.tenantId;
}

export function requirePerm(caller: Caller, perm: Perm): void {
  if (!caller.perms.has(perm)) {
    throw errors.forbidden(`This token lacks the '${perm}' permission. Ask for a token whose perms include '${perm}'.`);
  }
}

/**
 * Verifies bearer tokens: JWTs (HS256 secrets and/or public keys, chosen by `kid`, several at once
 * so keys rotate; `exp` required; `iss`/`aud` checked when configured) or API keys.
 */
export function createAuthenticator(options: AuthOptions): Authenticator {
  const hmac = new Map((options.hmacSecrets ?? []).map((s) => [s.kid, new TextEncoder().encode(s.secret)]));
  const publicKeys: JWTVerifyGetKey | undefined = options.jwks
    ? createLocalJWKSet(options.jwks)
    : options.jwksUrl
      ? createRemoteJWKSet(new URL(options.jwksUrl))
      : undefined;
  const algorithms = [...(hmac.size > 0 ? ['HS256'] : []), ...(publicKeys ? ASYMMETRIC_ALGS : [])];
  const onlyHmacKey = hmac.size === 1 ? [...hmac.values()][0] : undefined;

  const getKey: JWTVerifyGetKey = async (header, token) => {
    if (header.alg === 'HS256') {
      const key = header.kid !== undefined ? hmac.get(header.kid) : onlyHmacKey;
      if (!key)
        throw errors.unauthorized(
          header.kid !== undefined
            ? `Unknown token key id ${JSON.stringify(header.kid)}.`
            : 'The token has no kid and several keys are configured; sign it with a kid.',
        );
      return key;
    }
    if (!publicKeys) throw errors.unauthorized(`Token algorithm ${header.alg} is not accepted here.`);
    return publicKeys(header, token);
  };

  // Verified tokens are remembered briefly: an HMAC or signature check per request would dominate
  // small GETs. An entry lives until the token's exp or CACHE_TTL_MS, whichever is first, so a key
  // removed from the configuration stops working within that window.
  const verified = new Map<string, { caller: Caller; until: number }>();

  /** `key` is the whole Authorization header: a repeat request is one map lookup, before any parsing. */
  async function verifyJwt(token: string, key: string): Promise<Caller> {
    const { caller, exp } = await verifyJwtUncached(token);
    if (verified.size >= CACHE_MAX_ENTRIES) verified.delete(verified.keys().next().value!);
    verified.set(key, { caller, until: Math.min(exp * 1000, Date.now() + CACHE_TTL_MS) });
    return caller;
  }

  async function verifyJwtUncached(token: string): Promise<{ caller: Caller; exp: number }> {
    let alg: string | undefined;
    try {
      alg = decodeProtectedHeader(token).alg;
    } catch {
      throw errors.unauthorized('The bearer token is neither a JWT nor an API key.');
    }
    if (!alg || !algorithms.includes(alg)) {
      throw errors.unauthorized(
        `Token algorithm ${alg ?? 'none'} is not accepted here${algorithms.length ? ` (accepted: ${algorithms.join(', ')})` : ''}.`,
      );
    }
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, getKey, {
        algorithms,
        requiredClaims: ['exp'],
        ...(options.issuer ? { issuer: options.issuer } : {}),
        ...(options.audience ? { audience: options.audience } : {}),
      }));
    } catch (err) {
      throw errors.unauthorized(explainJoseError(err, options.signatureHint), { cause: err });
    }
    const claims = TokenClaimsSchema.safeParse(payload);
    if (!claims.success) {
      const issue = claims.error.issues[0]!;
      throw errors.unauthorized(
        `Token claim ${issue.path.join('.') || '?'} is invalid: ${issue.message}. Tokens carry tenant, and optionally sub, session, trace and perms (${PERMS.join(', ')}).`,
      );
    }
    const c = claims.data;
    const caller: Caller = {
      kind: 'jwt',
      role: 'tenant',
      actorId: c.sub ?? '-',
      tenantId: c.tenant,
      userId: c.sub,
      sessionId: c.session,
      traceId: c.trace,
      perms: new Set(c.perms),
    };
    return { caller, exp: payload.exp as number };
  }

  async function verifyApiKey(token: string): Promise<Caller> {
    const m = API_KEY_PATTERN.exec(token);
    const record = m && options.apiKeys ? await options.apiKeys.findApiKey(m[1]!) : undefined;
    if (!m || !record || !constantTimeEqual(await sha256Hex(new TextEncoder().encode(m[2]!)), record.secretHash)) {
      throw errors.unauthorized('Unknown or revoked API key.');
    }
    const perms = new Set(record.perms.filter((p): p is Perm => (PERMS as readonly string[]).includes(p)));
    if (record.operator)
      return { kind: 'api_key', role: 'operator', actorId: record.id, tenantId: '', perms: new Set(PERMS) };
    return { kind: 'api_key', role: 'tenant', actorId: record.id, tenantId: record.tenantId, perms };
  }

  return {
    authenticate(authorization: string | undefined | null): Caller | Promise<Caller> {
      if (!authorization)
        return Promise.reject(errors.unauthorized('Missing Authorization header. Send Authorization: Bearer <token>.'));
      // The common case first: a JWT verified moments ago, sent exactly as before.
      const hit = verified.get(authorization);
      if (hit) {
        if (Date.now() < hit.until) return hit.caller;
        verified.delete(authorization);
      }
      const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
      if (!m)
        return Promise.reject(
          errors.unauthorized('Malformed Authorization header. Send Authorization: Bearer <token>.'),
        );
      const token = m[1]!;
      return token.startsWith('ask_') ? verifyApiKey(token) : verifyJwt(token, authorization);
    },
  };
}

function explainJoseError(err: unknown, signatureHint?: string): string {
  if (err instanceof joseErrors.JWTExpired) return 'The token has expired. Mint a new one.';
  if (err instanceof joseErrors.JWTClaimValidationFailed)
    return `Token claim check failed (${err.claim}): ${err.reason}.`;
  if (err instanceof joseErrors.JWSSignatureVerificationFailed)
    return signatureHint ? `The token signature is invalid. ${signatureHint}` : 'The token signature is invalid.';
  if (err instanceof joseErrors.JWKSNoMatchingKey) return 'No configured key matches the token kid.';
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return 'The token algorithm is not accepted here.';
  if (err instanceof Error && 'code' in err && err.code === 'unauthorized') return err.message;
  return 'The token could not be verified.';
}

function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
