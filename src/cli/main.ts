/**
 * The `artifact-store` command: `serve` and `mcp` here, the ops commands in admin-commands.ts and
 * maintenance-commands.ts, and the commands that talk to a running service (remote-commands.ts,
 * token-command.ts, gateway-command.ts) loaded only when asked for. The server's own modules (HTTP,
 * routes, OpenAPI, the UI) load only for `serve`: an ops command such as `retention run` starts
 * without them, ~11 MiB lighter.
 */
import { parseArgs } from 'node:util';
import { loadConfig, redactedUrl, type ConfigInput } from '../core/config.js';
import { resolve, join } from 'node:path';
import { CliError, EXIT, REMOTE_COMMANDS, type RemoteCommand } from './cli-error.js';
import { closest, COMMAND_NAMES, type CommandName, HELP, USAGE } from './help.js';
import { packageOf, staleBuildNote } from './package-info.js';
import { chooseUrl, recordServe, runningServes } from './services.js';

const UI_LINK_TTL_SECONDS = 3600;

async function serve(argv: string[]) {
  // `npm start --port 8790` keeps --port for npm and passes only the number.
  const number = argv.find((a, i) => /^\d+$/.test(a) && !/^--(host|port|data-dir)$/.test(argv[i - 1] ?? ''));
  if (number !== undefined)
    throw new CliError(
      `Unexpected argument ${JSON.stringify(number)}: a port goes with --port (artifact-store serve --port ${number}); through npm, after --, as in npm start -- --port ${number} (npm keeps the flags before -- for itself).`,
      EXIT.usage,
    );
  const { values } = parseArgs({
    args: argv,
    options: { host: { type: 'string' }, port: { type: 'string' }, 'data-dir': { type: 'string' } },
  });
  const overrides: Partial<ConfigInput> = {};
  // The schema coerces and checks them, and its errors name the flag.
  if (values.host !== undefined) overrides.host = values.host;
  if (values.port !== undefined) overrides.port = values.port;
  if (values['data-dir'] !== undefined) overrides.dataDir = values['data-dir'];
  const config = loadConfig(process.env, overrides, { host: '--host', port: '--port', dataDir: '--data-dir' });
  const dbPath = resolve(config.dbPath ?? join(config.dataDir, 'artifacts.db'));
  // The server's modules (HTTP, routes, OpenAPI, the UI) load only here, not for the ops commands.
  const { startServer } = await import('../node/server.js');
  const running = await startServer(config).catch((err: NodeJS.ErrnoException) => {
    throw err.code === 'EADDRINUSE' ? portInUse(config.host, config.port) : err;
  });
  // The ops commands and `token` run elsewhere find this service's data dir through this record.
  const forget = recordServe({ url: running.url, dataDir: resolve(config.dataDir), dbPath });
  const out = [
    '',
    `artifact-store listening on ${running.url}  (${config.env}, blobs: ${config.blobDriver}, db: ${config.databaseUrl ? redactedUrl(config.databaseUrl) : dbPath})`,
    `  API docs:  ${running.url}/docs`,
    `  OpenAPI:   ${running.url}/openapi.json`,
  ];
  if (running.token) {
    // A short-lived token in the fragment: browsers never send it to the server, and the page drops it
    // from the address bar at once.
    const uiToken = await running.mintToken(
      { tenant: 'dev', sub: 'dev', perms: ['read', 'write', 'admin'] },
      UI_LINK_TTL_SECONDS,
    );
    out.splice(
      2,
      0,
      `  Browser:   ${running.url}/ui#token=${uiToken}`,
      `             (signs in as tenant "dev" for 1 hour; later: artifact-store token --ui)`,
    );
    out.push(
      '',
      'Dev token (tenant "dev", read/write/admin, valid 30 days):',
      `  export ARTIFACT_STORE_TOKEN=${running.token}`,
      '',
      'Try it:',
      `  curl -s -X POST ${running.url}/v1/artifacts -H "Authorization: Bearer $ARTIFACT_STORE_TOKEN" -H 'Content-Type: text/plain' --data-binary 'hello'`,
    );
  }
  process.stdout.write(`${out.join('\n')}\n\n`);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(
      `${JSON.stringify({ time: new Date().toISOString(), level: 'info', msg: 'shutting down', signal })}\n`,
    );
    await running.close();
    forget();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

/** EADDRINUSE as one line with the fix, naming the artifact-store serve that holds the port when it is one. */
function portInUse(host: string, port: number): CliError {
  const holder = runningServes().find((s) => new URL(s.url).port === String(port));
  const who = holder ? `artifact-store serve (pid ${holder.pid}, data dir ${holder.dataDir})` : 'another process';
  return new CliError(
    `Port ${port} on ${host} is in use by ${who}: stop it, or start this one on another port (npm start -- --port 8790, artifact-store serve --port 8790, or ARTIFACT_STORE_PORT=8790; 0 takes any free port).`,
    EXIT.failed,
  );
}

async function mcp(argv: string[]) {
  const { values } = parseArgs({ args: argv, options: { url: { type: 'string' }, session: { type: 'string' } } });
  const token = process.env.ARTIFACT_STORE_TOKEN;
  if (!token)
    throw new Error(
      'Set ARTIFACT_STORE_TOKEN to a token for the service (npm start prints a dev token; `artifact-store keys create` makes an API key).',
    );
  const baseUrl = values.url ?? (process.env.ARTIFACT_STORE_URL || chooseUrl());
  const [{ createHttpArtifactStore }, { createArtifactMcpServer }, { StdioServerTransport }] = await Promise.all([
    import('../client/http-store.js'),
    import('../mcp/server.js'),
    import('@modelcontextprotocol/sdk/server/stdio.js'),
  ]);
  const store = createHttpArtifactStore({
    baseUrl,
    token,
    ...(values.session ? { scope: { sessionId: values.session } } : {}),
  });
  const running = createArtifactMcpServer(store, {
    onError: (err) =>
      process.stderr.write(`artifact-store mcp: event stream: ${(err as Error)?.message ?? String(err)}\n`),
  });
  const transport = new StdioServerTransport();
  const stop = () => void running.close().then(() => process.exit(0));
  // The host closing our stdin is the end of the session.
  transport.onclose = stop;
  process.stdin.on('end', stop);
  await running.server.connect(transport);
  process.stderr.write(`artifact-store mcp: serving ${baseUrl} on stdio\n`);
}

/** parseArgs and configuration errors are usage errors: one line, exit 2. */
function usageErrorOf(err: unknown, command: string): unknown {
  const code = (err as { code?: string })?.code;
  const message = err instanceof Error ? err.message : String(err);
  if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'))
    return new CliError(`${message.split(/(?<=\.) /)[0]} See artifact-store ${command} --help.`, EXIT.usage);
  if (message.startsWith('Invalid configuration:') || /^(Invalid gateway|Gateway config)/.test(message))
    return new CliError(message.replace(/\n\s*/g, ' '), EXIT.usage);
  return err;
}

/** The commands whose --help main prints itself; the others parse their own flags. */
const OWN_HELP = new Set<string>(['token', 'gateway', ...REMOTE_COMMANDS]);

async function main() {
  const [command, ...rest] = process.argv.slice(2);
  const stale = staleBuildNote();
  if (stale) process.stderr.write(`${stale}\n`);
  // The HTTP client loads only for its commands: `serve` runs without it (a few MiB of memory).
  if (command !== undefined && (REMOTE_COMMANDS as readonly string[]).includes(command))
    return (await import('./remote-commands.js')).runRemoteCommand(command as RemoteCommand, rest);
  if (command === 'token') return (await import('./token-command.js')).runTokenCommand(rest);
  if (command === 'gateway') return (await import('./gateway-command.js')).runGatewayCommand(rest);
  if (isCommand(command) && !OWN_HELP.has(command) && (rest.includes('--help') || rest.includes('-h'))) {
    process.stdout.write(`${HELP[command]}\n`);
    return;
  }
  try {
    await ops(command, rest);
  } catch (err) {
    throw usageErrorOf(err, command ?? '');
  }
}

const isCommand = (name: string | undefined): name is CommandName =>
  (COMMAND_NAMES as readonly (string | undefined)[]).includes(name);

/** The admin commands (keys, usage, audit), loaded when one runs. */
const admin = () => import('./admin-commands.js');
/** The maintenance commands (retention, fsck, backup, restore), loaded when one runs. */
const maintenance = () => import('./maintenance-commands.js');

/**
 * The commands main.ts runs itself; the table's type makes every command of help.ts run somewhere.
 * Each loads its modules when it runs: the ops commands open SQLite and the blob drivers (the AWS SDK
 * among them), which `put`, `ls` or `--help` never need.
 */
const OPS: Record<Exclude<CommandName, 'token' | 'gateway' | RemoteCommand>, (argv: string[]) => Promise<void>> = {
  serve,
  keys: async (argv) => (await admin()).keys(argv),
  retention: async (argv) => (await maintenance()).retention(argv),
  usage: async (argv) => (await admin()).usage(argv),
  fsck: async (argv) => (await maintenance()).fsckCommand(argv),
  backup: async (argv) => (await maintenance()).backupCommand(argv),
  restore: async (argv) => (await maintenance()).restoreCommand(argv),
  db: async (argv) => (await import('./db-commands.js')).dbCommand(argv),
  audit: async (argv) => (await admin()).auditCommand(argv),
  mcp,
};

async function ops(command: string | undefined, rest: string[]) {
  if (command !== undefined && Object.hasOwn(OPS, command)) return OPS[command as keyof typeof OPS](rest);
  switch (command) {
    case 'help':
      // `help put` is `put --help`.
      if (isCommand(rest[0])) return void process.stdout.write(`${HELP[rest[0]]}\n`);
      process.stdout.write(`${USAGE}\n`);
      return;
    case undefined:
    case '--help':
    case '-h':
      process.stdout.write(`${USAGE}\n`);
      return;
    case '--version':
    case '-v':
      process.stdout.write(`${packageOf()?.version ?? 'unknown'}\n`);
      return;
    default: {
      const near = closest(command, [...COMMAND_NAMES, 'help', '--help', '--version']);
      throw new CliError(
        `Unknown command ${JSON.stringify(command)}${near ? `: did you mean ${near}?` : '.'} Run artifact-store --help for the list.`,
        EXIT.usage,
      );
    }
  }
}

main().catch((err) => {
  process.stderr.write(`artifact-store: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(err instanceof CliError ? err.exitCode : EXIT.failed);
});
