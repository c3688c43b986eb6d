/** Signing keys on Node: the configured ones, or a development secret kept in the data dir. */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { type KeySources, type ResolvedKeys, resolveKeys } from '../compose/keys.js';
import type { Config } from '../core/config.js';

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

/** Where Node finds keys: the configuration, else the data dir's dev secret (outside production). */
export function nodeKeySources(config: Config): Omit<KeySources, 'hasJwks'> {
  return {
    devSecret: () => devSecretOf(config),
    howToSetKeys:
      'set ARTIFACT_STORE_JWT_SECRETS (kid:secret,...), ARTIFACT_STORE_JWKS_FILE or ARTIFACT_STORE_JWKS_URL.',
    ...(config.env === 'development'
      ? {
          devSecretHint: `This development service signs tokens with ${resolve(config.dataDir, 'dev-jwt-secret')}: a token minted with another data dir's secret fails like this. Mint one for this service with: artifact-store token --data-dir ${resolve(config.dataDir)}`,
        }
      : {}),
  };
}

/** The signing keys in force on Node (the rules are resolveKeys'; the dev secret is a file here). */
export function resolveNodeKeys(config: Config): Promise<ResolvedKeys> {
  return resolveKeys(config, { ...nodeKeySources(config), hasJwks: Boolean(config.jwksFile || config.jwksUrl) });
}
