/**
 * `npm run dev:worker`: the Worker on this machine (wrangler dev --local), with a local D1 and R2
 * under .wrangler/. Creates .dev.vars with a random JWT secret the first time, applies the
 * migrations to the local D1, prints a token, then hands over to wrangler.
 *
 *   PORT                      where to listen (default 8788)
 *   ARTIFACT_STORE_DEV_VARS   the secrets file (default .dev.vars)
 *   ARTIFACT_STORE_DEV_STATE  where the local D1 and R2 live (default .wrangler/state)
 * Arguments after `--` go to wrangler dev.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { mintToken, parseJwtSecrets } from '../src/http/tokens.js';

const root = join(import.meta.dirname, '..');
const wrangler = join(root, 'node_modules/.bin/wrangler');
const env = { ...process.env, WRANGLER_SEND_METRICS: 'false' };
const port = process.env.PORT ?? '8788';

const varsFile = process.env.ARTIFACT_STORE_DEV_VARS ?? join(root, '.dev.vars');
const local = [
  '--local',
  '--env-file',
  varsFile,
  ...(process.env.ARTIFACT_STORE_DEV_STATE ? ['--persist-to', process.env.ARTIFACT_STORE_DEV_STATE] : []),
];
if (!existsSync(varsFile)) {
  writeFileSync(
    varsFile,
    `# Local secrets for npm run dev:worker (wrangler reads this file; git ignores it).\nARTIFACT_STORE_JWT_SECRETS=dev:${randomBytes(32).toString('base64url')}\n`,
    { mode: 0o600 },
  );
  console.log(`created ${varsFile} with a random JWT secret`);
}
const line = readFileSync(varsFile, 'utf8')
  .split('\n')
  .find((l) => l.startsWith('ARTIFACT_STORE_JWT_SECRETS='));
const secret = line
  ? parseJwtSecrets(
      line
        .slice(line.indexOf('=') + 1)
        .replace(/^"|"$/g, '')
        .split(','),
    )[0]
  : undefined;

const migrate = spawnSync(wrangler, ['d1', 'migrations', 'apply', 'DB', ...local], {
  cwd: root,
  env,
  stdio: 'inherit',
});
if (migrate.status !== 0) process.exit(migrate.status ?? 1);

if (secret) {
  const token = await mintToken(
    secret,
    { tenant: 'dev', sub: 'dev', perms: ['read', 'write', 'admin'] },
    30 * 24 * 3600,
  );
  console.log(`\nartifact-store (Workers, local) at http://127.0.0.1:${port}\ntoken: ${token}\n`);
}
const dev = spawn(
  wrangler,
  ['dev', ...local, '--ip', '127.0.0.1', '--port', port, '--test-scheduled', ...process.argv.slice(2)],
  { cwd: root, env, stdio: 'inherit' },
);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => dev.kill(signal));
dev.on('exit', (code) => process.exit(code ?? 0));
