/**
 * Where the service's data is, for the commands that read it on this host (the ops commands and
 * `token`): the data dir they are told (--data-dir, ARTIFACT_STORE_DATA_DIR or _DB_PATH), else the one
 * chooseDataDir (services.ts) picks: ./data here, the running service ARTIFACT_STORE_URL names, the
 * only one running. They refuse, naming what they looked for, rather than create an empty database
 * or a new dev secret somewhere else.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Config, type ConfigInput, loadConfig } from '../core/config.js';
import type { ArtifactRepository } from '../db/repository.js';
import { openRepository } from '../node/drivers.js';
import { CliError, EXIT } from './cli-error.js';
import { namedUrl } from './connection.js';
import { chooseDataDir, type NamedUrl, runningDir, runningServes, type ServeRecord } from './services.js';

export { recordServe, runningDir, runningServes, type ServeRecord } from './services.js';

export interface ServiceData {
  config: Config;
  dataDir: string;
  /** The SQLite file ('' when the metadata is in Postgres). */
  dbPath: string;
  /** How it was found, for messages: "--data-dir", "ARTIFACT_STORE_DATA_DIR", "the service running as pid 12", "./data". */
  from: string;
  /** The running service it was found through, if any (its URL, for links). */
  serve?: ServeRecord;
}

/**
 * Finds the service's data dir by the rules above and checks that `needs` is there (the database,
 * or the dev signing secret): otherwise a CliError that says what was looked for and what to do.
 */
export function findServiceData(
  flag: string | undefined,
  needs: 'database' | 'dev-secret',
  named: () => (NamedUrl & { explicit?: boolean }) | undefined = () => namedUrl({}),
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
  let serve: ServeRecord | undefined;
  if (needs === 'database' && env.ARTIFACT_STORE_DATABASE_URL) {
    // The metadata is in Postgres: no data dir holds it.
    config = load(flag === undefined ? {} : { dataDir: flag });
    return { config, dataDir: resolve(config.dataDir), dbPath: '', from: 'ARTIFACT_STORE_DATABASE_URL' };
  }
  if (flag !== undefined) {
    config = load({ dataDir: flag });
    from = '--data-dir';
  } else if (env.ARTIFACT_STORE_DATA_DIR || (needs === 'database' && env.ARTIFACT_STORE_DB_PATH)) {
    config = load({});
    from = env.ARTIFACT_STORE_DATA_DIR ? 'ARTIFACT_STORE_DATA_DIR' : 'ARTIFACT_STORE_DB_PATH';
  } else {
    const chosen = chooseDataDir(named, env);
    if (!chosen)
      throw new CliError(
        `No data dir to use: none given (--data-dir, ARTIFACT_STORE_DATA_DIR), no running artifact-store serve recorded in ${runningDir(env)}, and no ./data in ${process.cwd()}. Run this where the service keeps its data, or pass --data-dir.`,
        EXIT.usage,
      );
    config = load({ dataDir: chosen.dataDir, ...(chosen.serve ? { dbPath: chosen.serve.dbPath } : {}) });
    from = chosen.from;
    serve = chosen.serve;
  }
  const dataDir = resolve(config.dataDir);
  serve ??= runningServes(env).find((s) => s.dataDir === dataDir);
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
  return { config, dataDir, dbPath, from, ...(serve ? { serve } : {}) };
}

/**
 * The service's database (found as findServiceData finds it, or Postgres at
 * ARTIFACT_STORE_DATABASE_URL), opened for an ops command.
 */
export async function openServiceDb(flag: string | undefined): Promise<ServiceData & { repo: ArtifactRepository }> {
  const found = findServiceData(flag, 'database');
  return { ...found, repo: await openRepository(found.config, 'main') };
}
