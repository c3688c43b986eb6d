/**
 * Where the service's data is, for the commands that read it on this host (the ops commands and
 * `token`): the data dir they are told (--data-dir, ARTIFACT_STORE_DATA_DIR or _DB_PATH), else the
 * one a running `serve` recorded, else ./data when it exists. They refuse, naming what they looked
 * for, rather than create an empty database or a new dev secret somewhere else.
 *
 * `serve` records itself in {XDG_STATE_HOME or ~/.local/state}/artifact-store/running/{pid}.json
 * while it runs; a record whose process is gone is ignored and removed.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Config, type ConfigInput, loadConfig } from '../core/config.js';
import type { ArtifactRepository } from '../db/repository.js';
import { createSqliteRepository } from '../db/sqlite.js';
import { sqliteOptions } from '../node/drivers.js';
import { CliError, EXIT } from './cli-error.js';

/** What a running `serve` records about itself. */
export interface ServeRecord {
  pid: number;
  url: string;
  dataDir: string;
  dbPath: string;
  startedAt: string;
}

export function runningDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_STATE_HOME || join(homedir(), '.local', 'state'), 'artifact-store', 'running');
}

/** Records this `serve` until `forget` is called (or the process is gone). Never fails the start. */
export function recordServe(record: Omit<ServeRecord, 'pid' | 'startedAt'>): () => void {
  const file = join(runningDir(), `${process.pid}.json`);
  try {
    mkdirSync(runningDir(), { recursive: true });
    writeFileSync(
      file,
      `${JSON.stringify({ pid: process.pid, startedAt: new Date().toISOString(), ...record } satisfies ServeRecord)}\n`,
    );
  } catch {
    return () => {}; // a read-only home: the commands then need --data-dir
  }
  const forget = () => rmSync(file, { force: true });
  process.once('exit', forget);
  return forget;
}

/** The records of `serve` processes still running here; stale ones are removed. */
export function runningServes(env: NodeJS.ProcessEnv = process.env): ServeRecord[] {
  const dir = runningDir(env);
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => /^\d+\.json$/.test(n));
  } catch {
    return [];
  }
  const live: ServeRecord[] = [];
  for (const name of names) {
    const file = join(dir, name);
    try {
      const record = JSON.parse(readFileSync(file, 'utf8')) as ServeRecord;
      if (isServing(record.pid)) live.push(record);
      else rmSync(file, { force: true });
    } catch {
      // Half-written by a start in progress, or removed meanwhile.
    }
  }
  return live.sort((a, b) => a.pid - b.pid);
}

/** True while `pid` runs, and (where /proc tells) is still a `serve`, not a recycled pid. */
function isServing(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').includes('serve');
  } catch {
    return true; // no /proc: the pid check is all there is
  }
}

export interface ServiceData {
  config: Config;
  dataDir: string;
  dbPath: string;
  /** How it was found, for messages: "--data-dir", "ARTIFACT_STORE_DATA_DIR", "the service running as pid 12", "./data". */
  from: string;
}

/**
 * Finds the service's data dir by the rules above and checks that `needs` is there (the database,
 * or the dev signing secret): otherwise a CliError that says what was looked for and what to do.
 */
export function findServiceData(
  flag: string | undefined,
  needs: 'database' | 'dev-secret',
  env: NodeJS.ProcessEnv = process.env,
): ServiceData {
  const load = (overrides: Partial<ConfigInput>) => {
    try {
      return loadConfig(env, overrides, { dataDir: '--data-dir' });
    } catch (err) {
      throw new CliError((err as Error).message.replace(/\n\s*/g, ' '), EXIT.usage);
    }
  };
  let config: Config;
  let from: string;
  if (flag !== undefined) {
    config = load({ dataDir: flag });
    from = '--data-dir';
  } else if (env.ARTIFACT_STORE_DATA_DIR || (needs === 'database' && env.ARTIFACT_STORE_DB_PATH)) {
    config = load({});
    from = env.ARTIFACT_STORE_DATA_DIR ? 'ARTIFACT_STORE_DATA_DIR' : 'ARTIFACT_STORE_DB_PATH';
  } else {
    const serves = runningServes(env);
    const dirs = [...new Set(serves.map((s) => s.dataDir))];
    if (dirs.length > 1)
      throw new CliError(
        `Several services run on this host, on different data dirs (${serves.map((s) => `pid ${s.pid}: ${s.dataDir}`).join('; ')}): pass --data-dir to pick one.`,
        EXIT.usage,
      );
    const serve = serves[0];
    if (serve) {
      config = load({ dataDir: serve.dataDir, dbPath: serve.dbPath });
      from = `the service running as pid ${serve.pid} (${serve.url})`;
      process.stderr.write(`artifact-store: using the data dir of ${from}: ${serve.dataDir}\n`);
    } else if (existsSync(resolve('data'))) {
      config = load({ dataDir: './data' });
      from = './data';
    } else {
      throw new CliError(
        `No data dir to use: none given (--data-dir, ARTIFACT_STORE_DATA_DIR), no running artifact-store serve recorded in ${runningDir(env)}, and no ./data in ${process.cwd()}. Run this where the service keeps its data, or pass --data-dir.`,
        EXIT.usage,
      );
    }
  }
  const dataDir = resolve(config.dataDir);
  const dbPath = resolve(config.dbPath ?? join(config.dataDir, 'artifacts.db'));
  if (needs === 'database' && !existsSync(dbPath))
    throw new CliError(
      `No database at ${dbPath} (data dir from ${from}). artifact-store serve creates it on its first start; point --data-dir at the data dir of the service you mean.`,
      EXIT.usage,
    );
  const secret = join(dataDir, 'dev-jwt-secret');
  if (needs === 'dev-secret' && !existsSync(secret))
    throw new CliError(
      `No dev signing secret at ${secret} (data dir from ${from}). artifact-store serve makes it on its first start in development; point --data-dir at the data dir of the service you mean, or set ARTIFACT_STORE_JWT_SECRETS to the service's secrets.`,
      EXIT.usage,
    );
  return { config, dataDir, dbPath, from };
}

/** The service's database (found as findServiceData finds it), opened for an ops command. */
export function openServiceDb(flag: string | undefined): ServiceData & { repo: ArtifactRepository } {
  const found = findServiceData(flag, 'database');
  return {
    ...found,
    repo: createSqliteRepository(sqliteOptions(found.config, found.dbPath, 'main')),
  };
}
