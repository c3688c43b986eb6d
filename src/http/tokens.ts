import { SignJWT } from 'jose/jwt/sign';
import { z } from 'zod';
import { PERMS } from '../core/perms.js';

/** The JWT claims artifact-store reads. `exp` is required; `perms` defaults to read-only. */
export const TokenClaimsSchema = z.object({
  tenant: z.string().min(1).max(256),
  sub: z.string().min(1).max(256).optional(),
  session: z.string().min(1).max(256).optional(),
  trace: z.string().min(1).max(256).optional(),
  perms: z.array(z.enum(PERMS)).default(['read']),
});
export type TokenClaims = z.input<typeof TokenClaimsSchema>;

/** Signs an HS256 token, as a host app would. For dev tokens, tests and the CLI. */
export async function mintToken(
  secret: { kid: string; secret: string },
  claims: TokenClaims,
  ttlSeconds = 3600,
  extra: { issuer?: string; audience?: string } = {},
): Promise<string> {
  const { tenant, sub, session, trace, perms } = claims;
  let jwt = new SignJWT({
    tenant,
    ...(session ? { session } : {}),
    ...(trace ? { trace } : {}),
    perms: perms ?? ['read'],
  })
    .setProtectedHeader({ alg: 'HS256', kid: secret.kid, typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds);
  if (sub) jwt = jwt.setSubject(sub);
  if (extra.issuer) jwt = jwt.setIssuer(extra.issuer);
  if (extra.audience) jwt = jwt.setAudience(extra.audience);
  return jwt.sign(new TextEncoder().encode(secret.secret));
}

/** Parses `kid:secret,kid2:secret2`. A secret with no kid gets kid "default". */
export function parseJwtSecrets(list: readonly string[]): { kid: string; secret: string }[] {
  return list.map((entry) => {
    const i = entry.indexOf(':');
    return i > 0 ? { kid: entry.slice(0, i), secret: entry.slice(i + 1) } : { kid: 'default', secret: entry };
  });
}
