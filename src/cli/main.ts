import { parseArgs } from 'node:util';
import { loadConfig, policiesOf, type ConfigInput } from '../core/config.js';
import { createSqliteRepository } from '../db/sqlite.js';
import { PERMS, type Perm } from '../core/perms.js';
import { retentionDepsOf } from '../compose/retention.js';
import { policySettings } from '../compose/settings.js';
import { openNodeDrivers } from '../node/drivers.js';
import { startServer } from '../node/server.js';
import { runRetention, type RetentionPhase, type RetentionReport } from '../service/retention.js';
import { usageReport, type UsageReport } from '../service/usage.js';
import { fsck, type FsckReport } from '../service/fsck.js';
import { backup } from '../service/backup.js';
import { nodeSha256 } from '../blob/node-hash.js';
import { issueApiKey } from '../service/api-keys.js';
import { resolve, join } from 'node:path';
import { userInfo } from 'node:os';
import { recordAction, type AuditActor } from '../service/audit.js';
import type { AuditEntry } from '../db/repository.js';
import { CliError, EXIT, REMOTE_COMMANDS, type RemoteCommand } from './cli-error.js';

const USAGE = `artifact-store — keep binary tool outputs out of LLM context

Usage:
  artifact-store serve [--host H] [--port N] [--data-dir DIR]
  artifact-store put <file|-> [--name N] [--type MIME] [--ttl 1h] [--session S] [-q]
  artifact-store get <id> [-o FILE]             (resumes an interrupted download to FILE)
  artifact-store ls [--session S] [--type PREFIX] [--limit N] [--json]
  artifact-store rm <id> [<id> …]
  artifact-store url <id> [--direct|--proxy] [--expires 1h] [--inline]
  artifact-store token [--tenant T] [--session S] [--perms read,write] [--ttl 1h] [--ui]
  artifact-store keys create --tenant T [--perms read,write] [--label L] [--data-dir DIR]
  artifact-store keys create --operator [--label L] [--data-dir DIR]
  artifact-store keys ls [--tenant T] [--data-dir DIR]
  artifact-store keys revoke ID [--data-dir DIR]
  artifact-store retention run [--data-dir DIR] [--json]
  artifact-store usage [--tenant T] [--top N] [--data-dir DIR] [--json]
  artifact-store fsck [--verify] [--repair] [--data-dir DIR] [--json]
  artifact-store backup DIR [--data-dir DIR]
  artifact-store audit [--tenant T] [--action A] [--since 7d] [--limit N] [--data-dir DIR] [--json]
  artifact-store mcp [--url URL] [--session S]   (an MCP server on stdio; token from ARTIFACT_STORE_TOKEN)

\`artifact-store <command> --help\` shows a command's options and examples. The client commands take
--url / --token, else ARTIFACT_STORE_URL / ARTIFACT_STORE_TOKEN, else a config file. Every setting of
the service is also an ARTIFACT_STORE_* environment variable (see docs/configuration.md).

Exit codes: 0 done; 1 failed (the message says what to do; fsck: problems remain); 2 bad usage;
3 no such artifact in your scope.`;

/** How long the sign-in link npm start prints stays good. */
const UI_LINK_TTL_SECONDS = 3600;

async function serve(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: { host: { type: 'string' }, port: { type: 'string' }, 'data-dir': { type: 'string' } },
  });
  const overrides: Partial<ConfigInput> = {};
  if (values.host) overrides.host = values.host;
  if (values.port) overrides.port = Number(values.port);
  if (values['data-dir']) overrides.dataDir = values['data-dir'];
  const config = loadConfig(process.env, overrides);
  const running = await startServer(config);
  const out = [
    '',
    `artifact-store listening on ${running.url}  (${config.env}, blobs: ${config.blobDriver}, db: ${resolve(config.dbPath ?? join(config.dataDir, 'artifacts.db'))})`,
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
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

/** The CLI acts from the host: recorded in the audit trail as the host user. */
function hostActor(): AuditActor {
  let user = process.env.USER ?? 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry (some containers): the environment's USER, if any.
  }
  return { role: 'host', actorKind: 'cli', actorId: user };
}

async function keys(argv: string[]) {
  const [action, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      tenant: { type: 'string' },
      perms: { type: 'string' },
      label: { type: 'string' },
      operator: { type: 'boolean' },
      'data-dir': { type: 'string' },
    },
  });
  const config = loadConfig(process.env, values['data-dir'] ? { dataDir: values['data-dir'] } : {});
  const repo = createSqliteRepository({
    path: resolve(config.dbPath ?? join(config.dataDir, 'artifacts.db')),
    busyTimeoutMs: config.sqliteBusyTimeoutMs,
  });
  try {
    if (action === 'create' && values.operator) {
      if (values.tenant !== undefined || values.perms !== undefined)
        throw new CliError(
          'An operator key belongs to no tenant and has every power: drop --tenant and --perms. See artifact-store keys --help.',
          EXIT.usage,
        );
      const { id, key } = await issueApiKey(repo, { operator: true, label: values.label });
      await recordAction(repo, hostActor(), 'key.create', {
        target: id,
        details: { operator: true, label: values.label ?? null },
      });
      process.stdout.write(
        `Created operator key ${id} (all tenants' usage and events, retention runs, fsck, the audit trail; no artifacts). It is shown once:\n${key}\n`,
      );
    } else if (action === 'create') {
      if (!values.tenant)
        throw new CliError('keys create needs --tenant T (or --operator). See artifact-store keys --help.', EXIT.usage);
      const perms = (values.perms ?? 'read,write').split(',').map((p) => p.trim());
      const bad = perms.filter((p) => !(PERMS as readonly string[]).includes(p));
      if (bad.length)
        throw new CliError(
          `Unknown perms ${bad.join(', ')}; use ${PERMS.join(', ')} (an operator key: --operator).`,
          EXIT.usage,
        );
      const { id, key } = await issueApiKey(repo, {
        tenantId: values.tenant,
        perms: perms as Perm[],
        label: values.label,
      });
      await recordAction(repo, hostActor(), 'key.create', {
        tenantId: values.tenant,
        target: id,
        details: { perms, label: values.label ?? null },
      });
      process.stdout.write(
        `Created API key ${id} for tenant ${values.tenant} (${perms.join(', ')}). It is shown once:\n${key}\n`,
      );
    } else if (action === 'ls') {
      for (const k of await repo.listApiKeys(values.tenant)) {
        process.stdout.write(
          `${k.id}\t${k.operator ? '(operator)' : k.tenantId}\t${k.perms.join(',')}\t${k.revokedAt ? 'revoked' : 'active'}\t${k.label ?? ''}\n`,
        );
      }
    } else if (action === 'revoke') {
      const id = positionals[0];
      if (!id) throw new CliError('keys revoke needs a key id (artifact-store keys ls lists them).', EXIT.usage);
      const record = await repo.findApiKey(id);
      const ok = await repo.revokeApiKey(id, Date.now());
      if (ok)
        await recordAction(repo, hostActor(), 'key.revoke', {
          tenantId: record?.tenantId ?? '',
          target: id,
          ...(record?.operator ? { details: { operator: true } } : {}),
        });
      process.stdout.write(ok ? `Revoked ${id}\n` : `No active key ${id}\n`);
      if (!ok) process.exitCode = 1;
    } else {
      throw new CliError(
        `keys needs create, ls or revoke${action ? ` (not ${JSON.stringify(action)})` : ''}. See artifact-store keys --help.`,
        EXIT.usage,
      );
    }
  } finally {
    await repo.close();
  }
}

const PHASES: Record<RetentionPhase, string> = {
  expire: 'expired',
  quotas: 'evicted',
  artifacts: 'unreferenced artifacts',
  uploads: 'uploads reaped',
  blobs: 'blobs collected',
  staging: 'staging removed',
};

async function retention(argv: string[]) {
  const [action, ...rest] = argv;
  if (action !== 'run')
    throw new CliError(
      'The retention command is `artifact-store retention run`. See artifact-store retention --help.',
      EXIT.usage,
    );
  const { values } = parseArgs({ args: rest, options: { 'data-dir': { type: 'string' }, json: { type: 'boolean' } } });
  const config = loadConfig(process.env, values['data-dir'] ? { dataDir: values['data-dir'] } : {});
  const drivers = await openNodeDrivers(config);
  // On a terminal, one line that updates in place; in logs and pipes, nothing until the report.
  const tty = process.stderr.isTTY;
  let last = 0;
  const onProgress = (phase: RetentionPhase, done: number) => {
    if (!tty || Date.now() - last < 100) return;
    last = Date.now();
    process.stderr.write(`\r\x1b[Kretention: ${PHASES[phase]} ${done}`);
  };
  try {
    const report = await runRetention(
      retentionDepsOf(config, policySettings(config), drivers, { onProgress }),
      'cli',
      hostActor(),
    );
    if (tty) process.stderr.write('\r\x1b[K');
    process.stdout.write(values.json ? `${JSON.stringify(report)}\n` : formatReport(report));
  } finally {
    await drivers.close();
  }
}

function formatReport(r: RetentionReport): string {
  const rows: [string, string][] = [
    ['expired references', `${r.expired.refs} (${r.expired.bytes} bytes)`],
    [
      'evicted references',
      `${r.evicted.refs} (${r.evicted.bytes} bytes) from ${r.evicted.scopes} scopes over their limits`,
    ],
    ['over-limit scopes kept', `${r.overLimitKept.scopes} (strategy none)`],
    ['unreferenced artifacts', String(r.unreferencedArtifacts)],
    [
      'unfinished uploads reaped',
      `${r.uploads.reaped}${r.uploads.stagingFailed ? ` (${r.uploads.stagingFailed} left: blob store unavailable)` : ''}`,
    ],
    [
      'rows of failed puts removed',
      `${r.unfinished.rows}${r.unfinished.checkFailed ? ` (${r.unfinished.checkFailed} left: blob store unavailable)` : ''}`,
    ],
    [
      'blobs collected',
      `${r.blobs.collected} (${r.blobs.bytes} bytes)${r.blobs.failed ? `, ${r.blobs.failed} left: blob store unavailable` : ''}`,
    ],
    ['staging leftovers removed', `${r.staging.removed} (${r.staging.bytes} bytes)`],
    ['events older than a day', String(r.events.trimmed)],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return `retention run ${r.startedAt} (${r.durationMs} ms)\n${rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`).join('\n')}\n`;
}

async function usage(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      tenant: { type: 'string' },
      top: { type: 'string' },
      'data-dir': { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  const top = values.top === undefined ? 20 : Number(values.top);
  if (!Number.isInteger(top) || top < 1 || top > 1000)
    throw new CliError('--top must be a whole number from 1 to 1000.', EXIT.usage);
  const config = loadConfig(process.env, values['data-dir'] ? { dataDir: values['data-dir'] } : {});
  const repo = createSqliteRepository({
    path: resolve(config.dbPath ?? join(config.dataDir, 'artifacts.db')),
    busyTimeoutMs: config.sqliteBusyTimeoutMs,
  });
  try {
    const report = await usageReport(
      repo,
      policiesOf(config),
      values.tenant !== undefined ? { tenantId: values.tenant } : {},
      top,
      Date.now(),
      { retention: values.tenant !== undefined ? 'tenant' : 'service' },
    );
    process.stdout.write(values.json ? `${JSON.stringify(report)}\n` : formatUsage(report));
  } finally {
    await repo.close();
  }
}

const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;
const pct = (used: number, limit: number) => `${Math.round((100 * used) / limit)}%`;

function formatUsage(r: UsageReport): string {
  const table = (title: string, head: string[], rows: string[][]) => {
    if (rows.length === 0) return `${title}: none\n`;
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
    const line = (cells: string[]) =>
      `  ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')}`;
    return `${title}:\n${[line(head), ...rows.map(line)].join('\n')}\n`;
  };
  return [
    `usage at ${r.at} (live references only)`,
    table(
      'tenants',
      ['tenant', 'bytes', 'artifacts', 'of quota'],
      r.tenants.map((t) => [
        t.tenantId,
        mib(t.bytes),
        String(t.count),
        t.limitBytes ? pct(t.bytes, t.limitBytes) : '—',
      ]),
    ),
    table(
      'top sessions',
      ['tenant / session', 'bytes', 'of limit', 'artifacts', 'of limit'],
      r.sessions.map((u) => [
        `${u.tenantId} / ${u.sessionId}`,
        mib(u.bytes),
        pct(u.bytes, u.limitBytes),
        String(u.count),
        pct(u.count, u.limitCount),
      ]),
    ),
    table(
      'top traces',
      ['tenant / trace', 'bytes', 'of limit', 'artifacts', 'of limit'],
      r.traces.map((u) => [
        `${u.tenantId} / ${u.traceId}`,
        mib(u.bytes),
        pct(u.bytes, u.limitBytes),
        String(u.count),
        pct(u.count, u.limitCount),
      ]),
    ),
  ].join('\n');
}

async function fsckCommand(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      verify: { type: 'boolean' },
      repair: { type: 'boolean' },
      'data-dir': { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  const config = loadConfig(process.env, values['data-dir'] ? { dataDir: values['data-dir'] } : {});
  const drivers = await openNodeDrivers(config);
  const { repo, blobs } = drivers;
  const tty = process.stderr.isTTY;
  let last = 0;
  try {
    const report = await fsck({
      repo,
      blobs,
      hash: nodeSha256,
      verify: values.verify,
      repair: values.repair,
      graceMs: config.gcGraceSeconds * 1000,
      onProgress: (n) => {
        if (!tty || Date.now() - last < 100) return;
        last = Date.now();
        process.stderr.write(`\r\x1b[Kfsck: ${n} blob rows checked${values.verify ? ' (hashing)' : ''}`);
      },
    });
    if (tty) process.stderr.write('\r\x1b[K');
    await recordAction(repo, hostActor(), 'fsck.run', {
      details: {
        verify: Boolean(values.verify),
        repair: Boolean(values.repair),
        checkedRows: report.checkedRows,
        checkedBlobs: report.checkedBlobs,
        problems: report.problems.length,
        unresolved: report.unresolved,
      },
    });
    process.stdout.write(values.json ? `${JSON.stringify(report)}\n` : formatFsck(report, Boolean(values.repair)));
    if (report.unresolved > 0) process.exitCode = 1;
  } finally {
    await drivers.close();
  }
}

function formatFsck(r: FsckReport, repair: boolean): string {
  const lines = [
    `fsck: ${r.checkedRows} blob rows, ${r.checkedBlobs} stored blobs checked; ${r.problems.length} problems, ${r.unresolved} unresolved`,
  ];
  for (const p of r.problems) {
    const held = 'artifacts' in p ? ` (held by ${p.artifacts.map((a) => `${a.tenantId}/${a.id}`).join(', ')})` : '';
    const fix =
      'repaired' in p
        ? p.repaired
          ? ' — repaired'
          : repair
            ? ' — left (within the grace period)'
            : ' — run with --repair to fix'
        : ' — not fixable here: restore the bytes from a backup, or delete the artifacts';
    const what =
      p.kind === 'size_mismatch'
        ? `${p.kind} ${p.sha256}: recorded ${p.recorded} bytes, stored ${p.stored}`
        : p.kind === 'corrupt_bytes'
          ? `${p.kind} ${p.sha256}: hashes to ${p.actual}`
          : `${p.kind} ${p.sha256}`;
    lines.push(`  ${what}${held}${fix}`);
  }
  return `${lines.join('\n')}\n`;
}

const DURATION = /^(\d+)([smhd])$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

async function auditCommand(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      tenant: { type: 'string' },
      action: { type: 'string' },
      since: { type: 'string' },
      limit: { type: 'string' },
      'data-dir': { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  const limit = values.limit === undefined ? 50 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000)
    throw new CliError('--limit must be a whole number from 1 to 10000.', EXIT.usage);
  let since: number | undefined;
  if (values.since !== undefined) {
    const m = DURATION.exec(values.since);
    since = m ? Date.now() - Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS] : Date.parse(values.since);
    if (!Number.isFinite(since))
      throw new CliError(
        `--since ${JSON.stringify(values.since)} is neither a duration (30m, 12h, 7d) nor a date (2026-11-01T00:00:00Z).`,
        EXIT.usage,
      );
  }
  const config = loadConfig(process.env, values['data-dir'] ? { dataDir: values['data-dir'] } : {});
  const repo = createSqliteRepository({
    path: resolve(config.dbPath ?? join(config.dataDir, 'artifacts.db')),
    busyTimeoutMs: config.sqliteBusyTimeoutMs,
  });
  try {
    const entries = await repo.listAudit({
      ...(values.tenant !== undefined ? { tenantId: values.tenant } : {}),
      ...(values.action !== undefined ? { action: values.action } : {}),
      ...(since !== undefined ? { since } : {}),
      limit,
    });
    if (values.json) {
      for (const e of entries) process.stdout.write(`${JSON.stringify({ ...e, at: new Date(e.at).toISOString() })}\n`);
    } else {
      process.stdout.write(formatAudit(entries));
    }
  } finally {
    await repo.close();
  }
}

function formatAudit(entries: AuditEntry[]): string {
  if (entries.length === 0) return 'no audit entries\n';
  return `${entries
    .map((e) => {
      const details = e.details ? ` ${JSON.stringify(e.details)}` : '';
      return `${new Date(e.at).toISOString()}  ${e.action.padEnd(14)}  ${(e.tenantId || '(service)').padEnd(12)}  ${e.role}:${e.actorKind}:${e.actorId}${e.target ? `  ${e.target}` : ''}${e.requestId ? `  req ${e.requestId}` : ''}${details}`;
    })
    .join('\n')}\n`;
}

async function backupCommand(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { 'data-dir': { type: 'string' } },
  });
  const dir = positionals[0];
  if (!dir) throw new CliError('backup needs a target folder: artifact-store backup DIR', EXIT.usage);
  const config = loadConfig(process.env, values['data-dir'] ? { dataDir: values['data-dir'] } : {});
  const repo = createSqliteRepository({
    path: resolve(config.dbPath ?? join(config.dataDir, 'artifacts.db')),
    busyTimeoutMs: config.sqliteBusyTimeoutMs,
  });
  try {
    const blobDir = config.blobDriver === 'fs' ? resolve(config.blobDir ?? join(config.dataDir, 'blobs')) : undefined;
    const r = await backup(repo, resolve(dir), blobDir);
    process.stdout.write(
      `${[
        `backup in ${r.dir}`,
        `  database   ${r.database} (online backup)`,
        `  manifest   ${r.manifest} (${r.blobs} blobs, ${r.blobBytes} bytes)`,
        blobDir
          ? `  blobs      ${r.copied} copied, the rest already there${r.missing.length ? `; ${r.missing.length} recorded but missing: run fsck` : ''}`
          : '  blobs      on S3: the bucket holds them (keep versioning or replication on); the manifest lists what it must hold',
      ].join('\n')}\n`,
    );
    if (r.missing.length > 0) process.exitCode = 1;
  } finally {
    await repo.close();
  }
}

/**
 * The artifact MCP server on stdio, as a client of a running service: its token (and so its tenant
 * or session) comes from ARTIFACT_STORE_TOKEN, the service from --url or ARTIFACT_STORE_URL. Stdout
 * carries the protocol, so everything else goes to stderr.
 */
async function mcp(argv: string[]) {
  const { values } = parseArgs({ args: argv, options: { url: { type: 'string' }, session: { type: 'string' } } });
  const token = process.env.ARTIFACT_STORE_TOKEN;
  if (!token)
    throw new Error(
      'Set ARTIFACT_STORE_TOKEN to a token for the service (npm start prints a dev token; `artifact-store keys create` makes an API key).',
    );
  const baseUrl = values.url ?? process.env.ARTIFACT_STORE_URL ?? 'http://127.0.0.1:8787';
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

const DATA_DIR_HELP = `  --data-dir DIR   the service's data folder (default ./data; or ARTIFACT_STORE_DATA_DIR). These commands
                   work on the service's database and blobs directly, on the same machine.`;

/** `artifact-store <ops command> --help`. */
const OPS_HELP: Record<string, string> = {
  serve: `artifact-store serve [--host H] [--port N] [--data-dir DIR]

Runs the service (npm start runs this). Outside production it prints a dev token valid 30 days,
and a link that opens the artifact browser (/ui) signed in for 1 hour.
Every setting is an ARTIFACT_STORE_* variable (docs/configuration.md); flags win over them.

Examples:
  artifact-store serve --port 8787
  ARTIFACT_STORE_BLOB_DRIVER=s3 ARTIFACT_STORE_S3_BUCKET=artifacts artifact-store serve`,
  keys: `artifact-store keys create --tenant T [--perms read,write] [--label L]
artifact-store keys create --operator [--label L]
artifact-store keys ls [--tenant T]
artifact-store keys revoke ID

API keys (sent as Bearer tokens). A new key is printed once. revoke exits 1 when there was no such
active key. Creating and revoking keys is recorded in the audit trail.
  --operator       an operator key: every tenant's usage and events, retention runs, fsck and the
                   audit trail over HTTP; no tenant, no artifacts. Only this command makes one: no
                   token signed with the host app's keys can become an operator.
${DATA_DIR_HELP}

Examples:
  artifact-store keys create --tenant acme --perms read,write --label ci
  artifact-store keys create --operator --label oncall
  artifact-store keys revoke key_3f1c…`,
  audit: `artifact-store audit [--tenant T] [--action A] [--since 7d] [--limit N] [--json] [--data-dir DIR]

The audit trail, newest first: purges, retention and fsck runs, keys created and revoked, policy
changes; who (role:kind:id), when, on which tenant, and the request id. Kept for
ARTIFACT_STORE_AUDIT_RETENTION_DAYS (90).
  --tenant T       one tenant's entries ('' is not a tenant: service-wide entries show as (service))
  --action A       one action (artifact.purge, retention.run, fsck.run, key.create, key.revoke, policy.change)
  --since 7d       newer than a duration (30m, 12h, 7d) or an ISO date
  --limit N        how many (default 50)
  --json           one JSON object a line
${DATA_DIR_HELP}

Examples:
  artifact-store audit --since 1d
  artifact-store audit --tenant acme --action artifact.purge --json`,
  retention: `artifact-store retention run [--json] [--data-dir DIR]

One retention run: expire references, enforce lowered limits, reap unfinished uploads, collect
unreferenced blobs, sweep staging, trim old events. Safe while the service runs.
  --json           the report as JSON
${DATA_DIR_HELP}

Examples:
  artifact-store retention run
  artifact-store retention run --json | jq .blobs`,
  usage: `artifact-store usage [--tenant T] [--top N] [--json] [--data-dir DIR]

Live usage per tenant, and the top sessions and traces against their limits.
  --tenant T       one tenant
  --top N          how many sessions and traces (default 20)
  --json           the report as JSON
${DATA_DIR_HELP}

Examples:
  artifact-store usage --tenant acme --top 5`,
  fsck: `artifact-store fsck [--verify] [--repair] [--json] [--data-dir DIR]

Checks that metadata and stored bytes agree. Exits 1 while problems remain.
  --verify         also re-hash every blob (reads all bytes)
  --repair         remove orphan bytes and rows nothing holds (older than the GC grace period)
  --json           the report as JSON
${DATA_DIR_HELP}

Examples:
  artifact-store fsck --verify
  artifact-store fsck --repair`,
  backup: `artifact-store backup DIR [--data-dir DIR]

A consistent copy while the service runs: SQLite online backup, a blob manifest, and (fs driver) the
blobs, copied incrementally. Exits 1 if recorded blobs are missing (run fsck).
${DATA_DIR_HELP}

Examples:
  artifact-store backup /backups/artifact-store`,
  mcp: `artifact-store mcp [--url URL] [--session S]

The artifact MCP server on stdio, as a client of a running service; its token comes from
ARTIFACT_STORE_TOKEN, the service from --url or ARTIFACT_STORE_URL (default http://127.0.0.1:8787).

Examples:
  ARTIFACT_STORE_TOKEN=… artifact-store mcp --url https://artifacts.example.com --session s-42`,
};

/** parseArgs and configuration errors are usage errors: one line, exit 2. */
function usageErrorOf(err: unknown, command: string): unknown {
  const code = (err as { code?: string })?.code;
  const message = err instanceof Error ? err.message : String(err);
  if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'))
    return new CliError(`${message.split(/(?<=\.) /)[0]} See artifact-store ${command} --help.`, EXIT.usage);
  if (message.startsWith('Invalid configuration:')) return new CliError(message.replace(/\n\s*/g, ' '), EXIT.usage);
  return err;
}

async function main() {
  const [command, ...rest] = process.argv.slice(2);
  // The HTTP client loads only for its commands: `serve` runs without it (a few MiB of memory).
  if (command !== undefined && (REMOTE_COMMANDS as readonly string[]).includes(command))
    return (await import('./remote-commands.js')).runRemoteCommand(command as RemoteCommand, rest);
  if (command === 'token') return (await import('./token-command.js')).runTokenCommand(rest);
  if (command !== undefined && OPS_HELP[command] && (rest.includes('--help') || rest.includes('-h'))) {
    process.stdout.write(`${OPS_HELP[command]}\n`);
    return;
  }
  try {
    await ops(command, rest);
  } catch (err) {
    throw usageErrorOf(err, command ?? '');
  }
}

async function ops(command: string | undefined, rest: string[]) {
  switch (command) {
    case 'serve':
      return serve(rest);
    case 'keys':
      return keys(rest);
    case 'retention':
      return retention(rest);
    case 'usage':
      return usage(rest);
    case 'fsck':
      return fsckCommand(rest);
    case 'backup':
      return backupCommand(rest);
    case 'audit':
      return auditCommand(rest);
    case 'mcp':
      return mcp(rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${USAGE}\n`);
      return;
    default:
      throw new CliError(
        `Unknown command ${JSON.stringify(command)}: run artifact-store --help for the list.`,
        EXIT.usage,
      );
  }
}

main().catch((err) => {
  process.stderr.write(`artifact-store: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(err instanceof CliError ? err.exitCode : EXIT.failed);
});
