/**
 * `artifact-store gateway --config mcp.json`: the MCP gateway on stdio, for hosts that launch
 * servers. Artifacts go to a running service (ARTIFACT_STORE_URL / _TOKEN / _SESSION, like
 * `artifact-store mcp`), or with --embedded to the local embedded default, whose downloads this
 * process serves on a loopback port.
 */
import { parseArgs } from 'node:util';
import type { ArtifactStore } from '../client/artifact-store.js';
import type { GatewayConfig } from '../mcp/gateway/config.js';
import type { GatewayLogLevel } from '../mcp/gateway/log.js';
import { CliError, EXIT } from './cli-error.js';

export const GATEWAY_HELP = `artifact-store gateway --config mcp.json [--embedded] [--session S]
artifact-store gateway --config mcp.json --list

An MCP server on stdio that sits in front of the servers in mcp.json (the "mcpServers" file hosts
use). The host sees each tool as {server}__{tool}; files and large outputs come back as a summary,
an artifact:// link and a download link instead of base64.

  --config FILE    the gateway config: {"mcpServers": {"name": {"command", "args", "env"} | {"url", "headers"}}}
                   (default ARTIFACT_STORE_GATEWAY_CONFIG)
  --session S      put artifacts in this session (default ARTIFACT_STORE_SESSION)
  --list           start every server once, print the tools a host would see, and exit
                   (exit code 1 when a server did not start)
  --embedded       store into the local embedded default (SQLite + files in --data-dir) and serve
                   downloads from this process; no service needed
  --data-dir DIR   with --embedded (default ARTIFACT_STORE_DATA_DIR or ./data)
  --port N         with --embedded: the download port on 127.0.0.1 (default ARTIFACT_STORE_PORT or 8787;
                   a busy port falls back to any free one)
  --url URL, --token T   the service (default ARTIFACT_STORE_URL / ARTIFACT_STORE_TOKEN)

Example (Claude Code): claude mcp add artifacts -- artifact-store gateway --config ~/mcp.json --embedded
See docs/gateway.md.`;

/**
 * The gateway's lines, on stderr (stdout carries the MCP messages). Debug lines, the errors it drops
 * on purpose (a host gone before a notification), only with ARTIFACT_STORE_LOG_LEVEL=debug.
 */
const log = (line: string, level: GatewayLogLevel = 'info') => {
  if (level === 'debug' && process.env.ARTIFACT_STORE_LOG_LEVEL !== 'debug') return;
  process.stderr.write(`artifact-store gateway: ${line}\n`);
};

export async function runGatewayCommand(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      config: { type: 'string' },
      embedded: { type: 'boolean' },
      list: { type: 'boolean' },
      session: { type: 'string' },
      'data-dir': { type: 'string' },
      port: { type: 'string' },
      url: { type: 'string' },
      token: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(`${GATEWAY_HELP}\n`);
    return;
  }
  const configPath = values.config ?? process.env.ARTIFACT_STORE_GATEWAY_CONFIG;
  if (!configPath)
    throw new CliError(
      'artifact-store gateway needs --config FILE (an "mcpServers" JSON file) or ARTIFACT_STORE_GATEWAY_CONFIG.',
      EXIT.usage,
    );
  const [{ loadGatewayConfig, nodeUpstreamConnector }, { createMcpGateway }, { StdioServerTransport }] =
    await Promise.all([
      import('../node/gateway.js'),
      import('../mcp/gateway/gateway.js'),
      import('@modelcontextprotocol/sdk/server/stdio.js'),
    ]);
  let config: ReturnType<typeof loadGatewayConfig>;
  try {
    config = loadGatewayConfig(configPath);
  } catch (err) {
    throw new CliError((err as Error).message, EXIT.usage);
  }
  if (values.list) return listServers(config);
  const session = values.session ?? process.env.ARTIFACT_STORE_SESSION;
  const target = values.embedded
    ? await embeddedStore(values['data-dir'], values.port, session)
    : await remoteStore(values.url, values.token, session);

  const gateway = createMcpGateway({ config, connect: nodeUpstreamConnector({ baseDir: config.dir, log }), log });
  try {
    await gateway.start();
  } catch (err) {
    await target.close();
    throw new CliError((err as Error).message, EXIT.usage);
  }
  const host = gateway.session({ store: target.store, key: 'stdio' });
  const transport = new StdioServerTransport();
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    void (async () => {
      await host.close();
      await gateway.close();
      await target.close();
      process.exit(0);
    })();
  };
  // The host closing our stdin is the end of the session.
  transport.onclose = stop;
  process.stdin.on('end', stop);
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  await host.server.connect(transport);
  const ready = [...gateway.upstreams.values()].filter((u) => u.state === 'ready').length;
  log(`serving ${ready} of ${gateway.upstreams.size} servers on stdio; artifacts go to ${target.where}`);
}

/** --list: starts every server once, prints what a host would see, and exits (1 when one did not start). */
async function listServers(config: GatewayConfig & { dir: string }): Promise<void> {
  const [{ nodeUpstreamConnector }, { createMcpGateway }, { ARTIFACT_TOOLS }] = await Promise.all([
    import('../node/gateway.js'),
    import('../mcp/gateway/gateway.js'),
    import('../mcp/artifact-tools.js'),
  ]);
  const gateway = createMcpGateway({ config, connect: nodeUpstreamConnector({ baseDir: config.dir }) });
  try {
    await gateway.start();
  } catch (err) {
    throw new CliError((err as Error).message, EXIT.usage);
  }
  const tools = gateway.toolsFor(undefined);
  const lines: string[] = [];
  for (const u of gateway.upstreams.values()) {
    const info = gateway.describe(u);
    lines.push(
      info.state === 'ready'
        ? `${u.name}: ready, ${info.serverInfo?.name ?? '?'} ${info.serverInfo?.version ?? ''}, ${info.tools} tools${info.resources ? ', resources' : ''}${info.prompts ? `, ${info.prompts} prompts` : ''}`
        : `${u.name}: not available: ${u.error ?? u.state}`,
    );
    for (const t of tools) if (t.name.startsWith(`${u.name}__`)) lines.push(`  ${t.name}`);
  }
  // The gateway's own tools, as its tools/list shows them after the servers'.
  lines.push(`gateway: ${ARTIFACT_TOOLS.map((t) => t.name).join(', ')}`);
  process.stdout.write(`${lines.join('\n')}\n`);
  const failed = [...gateway.upstreams.values()].some((u) => u.state !== 'ready');
  await gateway.close();
  if (failed) process.exitCode = EXIT.failed;
}

interface Target {
  store: ArtifactStore;
  where: string;
  close(): Promise<void>;
}

async function remoteStore(url: string | undefined, token: string | undefined, session: string | undefined) {
  const [{ connection }, { createHttpArtifactStore }] = await Promise.all([
    import('./connection.js'),
    import('../client/http-store.js'),
  ]);
  const conn = connection({ url, token, ...(session ? { session } : {}) });
  const store = createHttpArtifactStore({
    baseUrl: conn.url,
    token: conn.token,
    ...(conn.session ? { scope: { sessionId: conn.session } } : {}),
  });
  return { store, where: conn.url, close: async () => {} } satisfies Target;
}

async function embeddedStore(dataDir: string | undefined, port: string | undefined, session: string | undefined) {
  const [{ loadConfig }, { startServer }, { createJsonLogger }, { createEmbeddedArtifactStore }] = await Promise.all([
    import('../core/config.js'),
    import('../node/server.js'),
    import('../core/logger.js'),
    import('../service/embedded-store.js'),
  ]);
  const overrides = {
    host: '127.0.0.1',
    ...(dataDir ? { dataDir } : {}),
    ...(port ? { port: Number(port) } : {}),
  };
  const config = loadConfig(process.env, overrides);
  // stdout carries the MCP messages: the service's log lines go to stderr.
  const logger = createJsonLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, (line) =>
    process.stderr.write(`${line}\n`),
  );
  let running: Awaited<ReturnType<typeof startServer>>;
  try {
    running = await startServer(config, { logger });
  } catch (err) {
    if ((err as { code?: string }).code !== 'EADDRINUSE') throw err;
    log(`port ${config.port} is busy; serving downloads on a free port instead`);
    running = await startServer({ ...config, port: 0 }, { logger });
  }
  const store = createEmbeddedArtifactStore({
    service: running.service,
    scope: { tenantId: 'dev', ...(session ? { sessionId: session } : {}) },
    publicUrl: running.url,
  });
  return {
    store,
    where: `${config.dataDir} (downloads at ${running.url}, tenant "dev")`,
    close: () => running.close(),
  } satisfies Target;
}
