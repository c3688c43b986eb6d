/**
 * `artifact-store db`: the metadata database itself, migrated ahead of a rollout (`migrate`), or a
 * SQLite data dir's metadata moved into Postgres (`copy`).
 */
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../core/config.js';
import { createSqliteRepository } from '../db/sqlite.js';
import { sqliteOptions } from '../node/sqlite-options.js';
import { CliError, EXIT } from './cli-error.js';
import { findServiceData, runningServes } from './data-dir.js';

/**
 * `artifact-store db migrate`: the schema brought up to this release, ahead of a rollout.
 * `artifact-store db copy --to URL`: a SQLite data dir's metadata moved into an empty Postgres.
 */
export async function dbCommand(argv: string[]) {
  const [sub, ...rest] = argv;
  if (sub === 'copy') return dbCopy(rest);
  if (sub !== 'migrate')
    throw new CliError(
      `${sub === undefined ? 'db needs a subcommand' : `Unknown db subcommand ${JSON.stringify(sub)}`}: artifact-store db migrate, or db copy --to postgres://… See artifact-store db --help.`,
      EXIT.usage,
    );
  const { values } = parseArgs({ args: rest, options: { 'data-dir': { type: 'string' } } });
  const config = loadConfig(process.env, values['data-dir'] ? { dataDir: values['data-dir'] } : {});
  if (config.databaseUrl) {
    const { migratePostgres, redactedUrl, SchemaTooNewError } = await import('../db/postgres.js');
    const { default: postgres } = await import('postgres');
    const sql = postgres(config.databaseUrl, { max: 2, onnotice: () => {}, connect_timeout: 10 });
    try {
      const { applied } = await migratePostgres(sql);
      process.stdout.write(
        `${redactedUrl(config.databaseUrl)}: ${applied === 0 ? 'up to date' : `applied ${applied} migration${applied === 1 ? '' : 's'}`}\n`,
      );
    } catch (err) {
      if (err instanceof SchemaTooNewError) throw new CliError(err.message);
      throw new CliError(
        `ARTIFACT_STORE_DATABASE_URL: cannot migrate ${redactedUrl(config.databaseUrl)}: ${(err as Error).message.split('\n')[0]}`,
      );
    } finally {
      await sql.end({ timeout: 1 });
    }
    return;
  }
  const dbPath = resolve(config.dbPath ?? join(config.dataDir, 'artifacts.db'));
  // Opening the SQLite repository applies what is missing.
  const repo = createSqliteRepository(sqliteOptions(config, dbPath, 'main'));
  await repo.close();
  process.stdout.write(`${dbPath}: up to date\n`);
}

async function dbCopy(argv: string[]) {
  const { values } = parseArgs({ args: argv, options: { 'data-dir': { type: 'string' }, to: { type: 'string' } } });
  const url = values.to;
  if (!url || !/^postgres(ql)?:\/\//.test(url))
    throw new CliError(
      'db copy needs the Postgres to copy into: artifact-store db copy --to postgres://user:password@host:5432/database',
      EXIT.usage,
    );
  // The SQLite data dir is the source, whatever ARTIFACT_STORE_DATABASE_URL says.
  const { ARTIFACT_STORE_DATABASE_URL: _, ...env } = process.env;
  const { dbPath, dataDir, from } = findServiceData(values['data-dir'], 'database', undefined, env);
  const serving = runningServes().filter((s) => s.dbPath === dbPath || s.dataDir === dataDir);
  if (serving.length > 0)
    throw new CliError(
      `artifact-store serve (pid ${serving.map((s) => s.pid).join(', ')}) is running on ${dataDir}: stop it first, so that nothing is written after the copy, then copy and start the service on Postgres.`,
      EXIT.usage,
    );
  const { copySqliteToPostgres, CopyRefusedError, redactedUrl } = await import('../db/postgres.js');
  process.stderr.write(`Copying ${dbPath} (data dir from ${from}) into ${redactedUrl(url)}\n`);
  try {
    const report = await copySqliteToPostgres(dbPath, url, (name, rows) =>
      process.stderr.write(`  ${name.padEnd(15)} ${rows} rows\n`),
    );
    process.stdout.write(
      `Copied and verified ${report.tables.reduce((n, t) => n + t.rows, 0)} rows into ${redactedUrl(url)}; the next event id is ${report.nextEventSeq}.\n` +
        'Start the service with ARTIFACT_STORE_DATABASE_URL set to it (and the bytes where they are, or moved to S3: docs/deploy.md#moving-to-postgres).\n',
    );
  } catch (err) {
    if (err instanceof CopyRefusedError) throw new CliError(err.message, EXIT.usage);
    throw new CliError(`db copy into ${redactedUrl(url)} failed: ${(err as Error).message.split('\n')[0]}`);
  }
}
