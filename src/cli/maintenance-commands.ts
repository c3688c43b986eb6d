/** The ops commands that keep the data in shape: retention runs, fsck and backups. They act on this host's data. */
import { parseArgs } from 'node:util';
import { loadConfig } from '../core/config.js';
import { createSqliteRepository } from '../db/sqlite.js';
import { retentionDepsOf } from '../compose/retention.js';
import { policySettings } from '../compose/settings.js';
import { openNodeDrivers } from '../node/drivers.js';
import { runRetention, type RetentionPhase, type RetentionReport } from '../service/retention.js';
import { fsck, type FsckReport } from '../service/fsck.js';
import { backup } from '../service/backup.js';
import { nodeSha256 } from '../blob/node-hash.js';
import { resolve, join } from 'node:path';
import { recordAction } from '../service/audit.js';
import { CliError, EXIT } from './cli-error.js';
import { hostActor } from './host.js';
import { findServiceData } from './data-dir.js';

const PHASES: Record<RetentionPhase, string> = {
  expire: 'expired',
  quotas: 'evicted',
  artifacts: 'unreferenced artifacts',
  uploads: 'uploads reaped',
  blobs: 'blobs collected',
  staging: 'staging removed',
};

export async function retention(argv: string[]) {
  const [action, ...rest] = argv;
  if (action !== 'run')
    throw new CliError(
      'The retention command is `artifact-store retention run`. See artifact-store retention --help.',
      EXIT.usage,
    );
  const { values } = parseArgs({ args: rest, options: { 'data-dir': { type: 'string' }, json: { type: 'boolean' } } });
  const { config } = findServiceData(values['data-dir'], 'database');
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
    ['over-limit scopes kept', `${r.overLimitKept.scopes} (strategy reject or never)`],
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

export async function fsckCommand(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    options: {
      verify: { type: 'boolean' },
      repair: { type: 'boolean' },
      'data-dir': { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  const { config } = findServiceData(values['data-dir'], 'database');
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

export async function backupCommand(argv: string[]) {
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
