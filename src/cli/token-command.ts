/**
 * `artifact-store token`: mints a token on this host with the service's signing secret (the
 * configured one, or the data dir's dev secret), for development and scripts.
 */
import { loadConfig } from '../core/config.js';
import { PERMS, type Perm } from '../core/perms.js';
import { mintToken, parseJwtSecrets } from '../http/tokens.js';
import { resolveNodeKeys } from '../node/keys.js';
import { CliError, EXIT } from './cli-error.js';
import { findServiceData, type ServiceData } from './data-dir.js';
import { type Command, namedUrl, parseDuration, runCommand } from './connection.js';
import { HELP } from './help.js';
import { DEFAULT_URL } from './services.js';

const TOKEN: Command = {
  usage: HELP.token,
  options: {
    help: { type: 'boolean', short: 'h' },
    tenant: { type: 'string' },
    sub: { type: 'string' },
    session: { type: 'string' },
    trace: { type: 'string' },
    perms: { type: 'string' },
    ttl: { type: 'string' },
    'data-dir': { type: 'string' },
    ui: { type: 'boolean' },
    url: { type: 'string' },
    config: { type: 'string' },
  },
  async run(values) {
    const perms = ((values.perms as string | undefined) ?? 'read,write')
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean);
    const bad = perms.filter((p) => !PERMS.includes(p as Perm));
    if (bad.length > 0 || perms.length === 0)
      throw new CliError(
        `--perms must list some of ${PERMS.join(', ')} (got ${JSON.stringify(values.perms ?? '')}).`,
        EXIT.usage,
      );
    const ttl = values.ttl ? parseDuration(values.ttl as string, '--ttl') : 3600;
    const flag = values['data-dir'] as string | undefined;
    let config;
    try {
      config = loadConfig(process.env, flag !== undefined ? { dataDir: flag } : {}, { dataDir: '--data-dir' });
    } catch (err) {
      throw new CliError((err as Error).message.replace(/\n\s*/g, ' '), EXIT.usage);
    }
    // With configured secrets the data dir plays no part; else the dev secret must be the service's
    // own, found where the service keeps it, never made here.
    let found: ServiceData | undefined;
    if (config.env === 'development' && parseJwtSecrets(config.jwtSecrets).length === 0) {
      // --url names the service as a flag does; ARTIFACT_STORE_URL and the config file come after ./data.
      const named = () => {
        const n = namedUrl(values);
        return n && { ...n, explicit: n.from === '--url' };
      };
      found = findServiceData(flag, 'dev-secret', named);
      config = found.config;
    }
    const { hmacSecrets: secrets, devSecret } = await resolveNodeKeys(config).catch((err: Error) => {
      throw new CliError(err.message);
    });
    const key = devSecret ?? secrets[0];
    if (!key) throw new CliError('No signing secret: set ARTIFACT_STORE_JWT_SECRETS (kid:secret).', EXIT.usage);
    const token = await mintToken(
      key,
      {
        tenant: (values.tenant as string | undefined) ?? 'dev',
        sub: (values.sub as string | undefined) ?? 'dev',
        perms: perms as Perm[],
        ...(values.session ? { session: values.session as string } : {}),
        ...(values.trace ? { trace: values.trace as string } : {}),
      },
      ttl,
      { issuer: config.jwtIssuer, audience: config.jwtAudience },
    );
    if (!values.ui) {
      process.stdout.write(`${token}\n`);
      return;
    }
    const base = namedUrl(values)?.url ?? found?.serve?.url ?? DEFAULT_URL;
    // The fragment never reaches the server, and the page clears it from the address bar.
    process.stdout.write(`${base.replace(/\/+$/, '')}/ui#token=${token}\n`);
  },
};

export function runTokenCommand(argv: string[]): Promise<void> {
  return runCommand(TOKEN, 'token', argv);
}
