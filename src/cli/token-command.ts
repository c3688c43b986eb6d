/**
 * `artifact-store token`: mints a token on this host with the service's signing secret (the
 * configured one, or the data dir's dev secret), for development and scripts.
 */
import { loadConfig } from '../core/config.js';
import { PERMS, type Perm } from '../core/perms.js';
import { mintToken, parseJwtSecrets } from '../http/tokens.js';
import { resolveNodeKeys } from '../node/keys.js';
import { CliError, EXIT } from './cli-error.js';
import { findServiceData } from './data-dir.js';
import { type Command, parseDuration, readConfigFile, runCommand } from './connection.js';

const TOKEN: Command = {
  usage: `artifact-store token [options]

Mints a token with the configured signing secret: the first of ARTIFACT_STORE_JWT_SECRETS, or the dev
secret npm start keeps in the data dir. For development and scripts; production tokens come from your
own auth.
  --tenant T       tenant (default dev)
  --sub S          user id (default dev); the token is bound to it. --sub '' binds none: the
                   token then names users per request (X-Artifact-User), as the ADK adapter does
  --session S      bind the token to one session (it sees only that session)
  --trace T        bind it to one trace
  --perms LIST     comma separated: ${PERMS.join(', ')} (default read,write)
  --ttl DURATION   lifetime: 3600, 15m, 12h, 30d (default 1h)
  --data-dir DIR   where the dev secret lives (default: the data dir of the artifact-store serve
                   running here, else ./data when it exists; never made here)
  --ui             print a link that opens the artifact browser signed in with the token
  --url URL        the service the --ui link points at (default: ARTIFACT_STORE_URL, the config
                   file, else http://127.0.0.1:8787)

Examples:
  export ARTIFACT_STORE_TOKEN=$(artifact-store token --perms read,write,admin --ttl 12h)
  artifact-store token --tenant acme --session s-42 --perms read
  artifact-store token --ui --session s-42 --perms read --ttl 8h`,
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
    if (config.env === 'development' && parseJwtSecrets(config.jwtSecrets).length === 0)
      config = findServiceData(flag, 'dev-secret').config;
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
    const base =
      (values.url as string | undefined) ??
      process.env.ARTIFACT_STORE_URL ??
      readConfigFile(values.config as string | undefined).url ??
      'http://127.0.0.1:8787';
    // The fragment never reaches the server, and the page clears it from the address bar.
    process.stdout.write(`${base.replace(/\/+$/, '')}/ui#token=${token}\n`);
  },
};

export function runTokenCommand(argv: string[]): Promise<void> {
  return runCommand(TOKEN, 'token', argv);
}
