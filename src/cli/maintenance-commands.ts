/** The ops commands that keep the data in shape: retention runs, fsck, backups and restores. They act on this host's data. */
import { parseArgs } from 'node:util';
import { loadConfig } from '../core/config.js';
import { createSqliteRepository } from '../db/sqlite.js';
import { retentionDepsOf } from '../compose/retention.js';
import { policySettings } from '../compose/settings.js';
import { openBlobStore, openNodeDrivers } from '../node/drivers.js';
import { sqliteOptions } from '../node/sqlite-options.js';
import { runRetention, type RetentionPhase, type RetentionReport } from '../service/retention/index.js';
import { fsck, type FsckReport } from '../service/fsck.js';
import { BACKUP_FILES, backup, type BackupReport } from '../service/backup.js';
import { restore, RestoreError, type RestoreReport } from '../service/restore.js';
import { nodeSha256 } from '../blob/node-hash.js';
import { createFsBlobStore } from '../blob/fs.js';
import type { Config } from '../core/config.js';
import {
  assertNotLiveData,
  assertNotServing,
  BackupLocationError,
  openBackupTarget,
  parseBackupLocation,
  stageDatabase,
  type BackupLocation,
} from '../node/backup-target.js';
import { resolve, join } from 'node:path';
import { recordAction } from '../service/audit.js';
import { CliError, EXIT } from './cli-error.js';
import { hostActor } from './host.js';
import { findServiceData, runningServes } from './data-dir.js';

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
  const drivers = await openNodeDrivers(config, 'main');
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
  const drivers = await openNodeDrivers(config, 'main');
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

/**
 * The AWS SDK warns on every Node before 22 that its releases from 2027 on will need it: nothing an
 * operator running a backup can act on, and it would bury the one line that says what went wrong.
 */
function quietAwsNodeNotice() {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
}

/** backup and restore copy a data dir's SQLite database: on Postgres, its own tools do that part. */
function onPostgres(command: 'backup' | 'restore'): CliError {
  return new CliError(
    `${command} copies the SQLite database of a data dir, and ARTIFACT_STORE_DATABASE_URL puts the metadata in Postgres: ` +
      `${command === 'backup' ? "back it up with pg_dump --format=custom (or your provider's snapshots)" : "restore it with pg_restore (or your provider's snapshots)"}, ` +
      "and the blobs with the bucket's versioning or replication. See docs/deploy.md#more-than-one-machine.",
    EXIT.usage,
  );
}

export async function backupCommand(argv: string[]) {
  quietAwsNodeNotice();
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { 'data-dir': { type: 'string' } },
  });
  if (positionals.length !== 1)
    throw new CliError('backup needs one target: artifact-store backup DIR|s3://bucket/prefix', EXIT.usage);
  const location = locationOf(positionals[0]!);
  // Nothing is opened, created or written before the target proved writable.
  const { config, dbPath } = findServiceData(values['data-dir'], 'database');
  if (config.databaseUrl) throw onPostgres('backup');
  if (config.blobDriver === 'memory')
    throw new CliError('The memory blob driver keeps nothing on disk: there is nothing to back up.', EXIT.usage);
  usageIfThrows(() => assertNotLiveData(location, config));
  const target = await openBackupTarget(location, config);
  try {
    await target.probe();
    const repo = createSqliteRepository(sqliteOptions(config, dbPath, 'main'));
    const blobs =
      config.blobDriver === 'fs'
        ? createFsBlobStore({ root: resolve(config.blobDir ?? join(config.dataDir, 'blobs')), hash: nodeSha256 })
        : undefined;
    const tty = process.stderr.isTTY;
    let last = 0;
    try {
      const r = await backup({
        repo,
        target,
        hash: nodeSha256,
        openSnapshot: (path) => createSqliteRepository({ path, checkpointThread: 'main' }),
        blobDriver: config.blobDriver,
        blobs,
        onProgress: (phase, n) => {
          if (!tty || Date.now() - last < 100) return;
          last = Date.now();
          process.stderr.write(`\r\x1b[Kbackup: ${phase} ${n}`);
        },
      });
      if (tty) process.stderr.write('\r\x1b[K');
      process.stdout.write(formatBackup(r, config));
      if (r.info.missing > 0) process.exitCode = 1;
    } finally {
      await repo.close();
      await blobs?.close?.();
    }
  } finally {
    await target.close();
  }
}

function formatBackup(r: BackupReport, config: Config): string {
  const { info } = r;
  const lines = [
    `backup in ${r.location}`,
    `  database   ${info.database.name} (online backup)`,
    `  manifest   ${info.manifest.name} (${info.manifest.blobs} blobs, ${info.manifest.blobBytes} bytes)`,
    info.holdsBlobs
      ? `  blobs      ${r.copied} copied (${r.copiedBytes} bytes), ${r.present} already there${r.removed ? `, ${r.removed} no longer recorded removed` : ''}`
      : `  blobs      in s3://${config.s3Bucket}/${config.s3Prefix}: keep versioning on there (the manifest lists what it must hold)`,
  ];
  if (info.missing > 0)
    lines.push(
      `  missing    ${info.missing} recorded blobs are not in the blob store: ${r.missing.slice(0, 5).join(', ')}${info.missing > 5 ? ', …' : ''} (run artifact-store fsck)`,
    );
  lines.push(`  complete   ${BACKUP_FILES.info} (taken ${info.takenAt})`);
  return `${lines.join('\n')}\n`;
}

export async function restoreCommand(argv: string[]) {
  quietAwsNodeNotice();
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { 'data-dir': { type: 'string' }, force: { type: 'boolean' } },
  });
  if (positionals.length !== 1)
    throw new CliError(
      'restore needs one backup: artifact-store restore DIR|s3://bucket/prefix [--data-dir DIR] [--force]',
      EXIT.usage,
    );
  const location = locationOf(positionals[0]!);
  const config = loadConfig(process.env, values['data-dir'] ? { dataDir: values['data-dir'] } : {});
  if (config.databaseUrl) throw onPostgres('restore');
  if (config.blobDriver === 'memory')
    throw new CliError('The memory blob driver keeps nothing on disk: there is nothing to restore into.', EXIT.usage);
  const dbPath = resolve(config.dbPath ?? join(config.dataDir, 'artifacts.db'));
  const servedBy = runningServes().filter((s) => s.dbPath === dbPath || s.dataDir === resolve(config.dataDir));
  await assertNotServing(config.dataDir, dbPath, { force: values.force, servedBy });
  const source = await openBackupTarget(location, config);
  try {
    const blobs = await openBlobStore(config);
    const tty = process.stderr.isTTY;
    let last = 0;
    try {
      const r = await restore({
        source,
        blobs,
        hash: nodeSha256,
        stageDatabase: (body) => stageDatabase(dbPath, body),
        openRepository: async () => createSqliteRepository(sqliteOptions(config, dbPath, 'main')),
        onProgress: (phase, n) => {
          if (!tty || Date.now() - last < 100) return;
          last = Date.now();
          process.stderr.write(`\r\x1b[Krestore: ${phase} ${n}`);
        },
      });
      if (tty) process.stderr.write('\r\x1b[K');
      process.stdout.write(formatRestore(r, dbPath, config));
      if (r.missingCount > 0 || r.fsck.unresolved > 0) process.exitCode = 1;
    } catch (err) {
      if (err instanceof RestoreError) throw new CliError(err.message);
      throw err;
    } finally {
      await blobs.close?.();
    }
  } finally {
    await source.close();
  }
}

function formatRestore(r: RestoreReport, dbPath: string, config: Config): string {
  const { info, fsck: check } = r;
  const count = (kind: string, repaired: boolean) =>
    check.problems.filter((p) => p.kind === kind && 'repaired' in p && p.repaired === repaired).length;
  const lines = [
    `restore from ${r.location} (taken ${info.takenAt} on the ${info.blobDriver} driver)`,
    `  database   ${dbPath} (sha256 checked)`,
    `  blobs      ${info.manifest.blobs} in the manifest: ${r.copied} copied (${r.copiedBytes} bytes), ${r.present} already there, ${r.missingCount} missing`,
    `  removed    ${count('orphan_bytes', true)} blobs stored after the backup, ${count('stale_row', true)} rows of puts unfinished at backup time`,
    `  fsck       ${check.checkedRows - count('stale_row', true)} blob rows, ${check.checkedBlobs - count('orphan_bytes', true)} stored blobs after the cleanup; ${check.unresolved} problems left`,
  ];
  if (r.missingCount > 0) {
    const heldBy = new Map<string, string>();
    for (const p of check.problems)
      if (p.kind === 'missing_bytes')
        heldBy.set(p.sha256, ` (held by ${p.artifacts.map((a) => `${a.tenantId}/${a.id}`).join(', ')})`);
    lines.push(
      `${r.missingCount} blobs the restored database records are missing${r.missingCount > r.missing.length ? ` (the first ${r.missing.length})` : ''}:`,
    );
    for (const sha of r.missing) lines.push(`  ${sha}${heldBy.get(sha) ?? ' (held by no artifact)'}`);
    lines.push(
      info.holdsBlobs
        ? 'The backup does not have them either (its backup reported them missing). Restore them from an older backup, or delete the artifacts that hold them.'
        : `Restore these objects in s3://${config.s3Bucket}/${config.s3Prefix}blobs/sha256/<ab>/<cd>/<sha256> from the bucket's versions (S3 versioning keeps deleted objects as older versions), then run artifact-store fsck; or delete the artifacts that hold them.`,
    );
  }
  const other = check.problems.filter((p) => !('repaired' in p && p.repaired) && p.kind !== 'missing_bytes');
  for (const p of other) lines.push(`  ${p.kind} ${p.sha256}: run artifact-store fsck for details`);
  return `${lines.join('\n')}\n`;
}

/** A backup location from the command line; a bad one is a usage error. */
function locationOf(text: string): BackupLocation {
  return usageIfThrows(() => parseBackupLocation(text));
}

function usageIfThrows<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof BackupLocationError) throw new CliError(err.message, EXIT.usage);
    throw err;
  }
}

/**
 * The artifact MCP server on stdio, as a client of a running service: its token (and so its tenant
 * or session) comes from ARTIFACT_STORE_TOKEN, the service from --url or ARTIFACT_STORE_URL. Stdout
 * carries the protocol, so everything else goes to stderr.
 */
