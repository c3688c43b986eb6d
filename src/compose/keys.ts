import type { Config } from '../core/config.js';
import { createUrlSigner, deriveUrlSigningKeys, type UrlSigner, type UrlSigningKey } from '../core/url-signing.js';
import { parseJwtSecrets } from '../http/tokens.js';

/** The shortest HMAC key production accepts, for tokens and for download links alike. */
export const MIN_SECRET_LENGTH = 32;

export interface KeySources {
  /** Public keys come from elsewhere (a JWKS file, URL or document): HS256 secrets may be absent. */
  hasJwks: boolean;
  /** Outside production, with no configured secret: the one to sign and verify with. */
  devSecret?: () => UrlSigningKey;
  /** How to set keys on this runtime, for the error a production start without keys gets. */
  howToSetKeys: string;
  /** Where the dev secret lives, added to the 401 a token signed with another secret gets (development only). */
  devSecretHint?: string;
}

export interface ResolvedKeys {
  /** HS256 secrets tokens are verified with. */
  hmacSecrets: UrlSigningKey[];
  /** The secret the dev token is signed with (never in production). */
  devSecret?: UrlSigningKey;
  /** Signs proxy download links; undefined (proxy links off) with JWKS-only auth and no link keys. */
  urlSigner?: UrlSigner;
  /** Said after "The token signature is invalid." while the dev secret signs (see KeySources.devSecretHint). */
  signatureHint?: string;
}

/**
 * The signing keys in force, by the same rules on every runtime. Production refuses to start
 * without keys and with a key shorter than 32 characters (JWT secret or link key). Link keys are the
 * configured ones, else derived from the HS256 secrets, else none: then proxy links are off.
 */
export async function resolveKeys(config: Config, sources: KeySources): Promise<ResolvedKeys> {
  const configured = parseJwtSecrets(config.jwtSecrets);
  const linkKeys = parseJwtSecrets(config.urlSigningKeys);
  let hmacSecrets = configured;
  let devSecret: UrlSigningKey | undefined;
  let signatureHint: string | undefined;
  if (config.env === 'production') {
    if (configured.length === 0 && !sources.hasJwks)
      throw new Error(`Refusing to start in production without keys: ${sources.howToSetKeys}`);
    const weak = configured.find((s) => s.secret.length < MIN_SECRET_LENGTH);
    if (weak)
      throw new Error(
        `Refusing to start in production: the JWT secret of kid "${weak.kid}" is shorter than ${MIN_SECRET_LENGTH} characters.`,
      );
    const weakLink = linkKeys.find((k) => k.secret.length < MIN_SECRET_LENGTH);
    if (weakLink)
      throw new Error(
        `Refusing to start in production: the URL signing key of kid "${weakLink.kid}" is shorter than ${MIN_SECRET_LENGTH} characters.`,
      );
  } else if (configured.length > 0) {
    devSecret = configured[0];
  } else if (sources.devSecret) {
    devSecret = sources.devSecret();
    hmacSecrets = [devSecret];
    signatureHint = sources.devSecretHint;
  }
  const signingKeys = linkKeys.length > 0 ? linkKeys : await deriveUrlSigningKeys(hmacSecrets);
  return {
    hmacSecrets,
    devSecret,
    urlSigner: signingKeys.length > 0 ? createUrlSigner(signingKeys) : undefined,
    ...(signatureHint ? { signatureHint } : {}),
  };
}
