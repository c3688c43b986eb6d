/**
 * A real Postgres for the tests: ARTIFACT_STORE_TEST_DATABASE_URL when set (any Postgres ≥ 14 the
 * tests may create databases on), else a throwaway cluster that scripts/pg.sh starts from Debian's
 * server binaries. Resolves to `{ unavailable }` with the reason and how to get one, never throws.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface PostgresTargetInfo {
  name: string;
  /** A database the tests connect to in order to create their own (CREATE DATABASE). */
  adminUrl: string;
  /** The scripts/pg.sh folder (kill and restart), when the run started the cluster itself. */
  dir: string | null;
}

export type PostgresTarget = { info: PostgresTargetInfo; stop(): Promise<void> } | { unavailable: string };

export const PG_SCRIPT = fileURLToPath(new URL('../../scripts/pg.sh', import.meta.url));
const HOW_TO_GET_ONE =
  'set ARTIFACT_STORE_TEST_DATABASE_URL to a Postgres ≥ 14 the tests may create databases on, ' +
  "or install Debian's server (apt-get install -y postgresql), which scripts/pg.sh starts";

export function hasPostgresServer(): boolean {
  if (process.env.PG_BIN) return existsSync(join(process.env.PG_BIN, 'pg_ctl'));
  try {
    return readdirSync('/usr/lib/postgresql').some((v) => existsSync(`/usr/lib/postgresql/${v}/bin/pg_ctl`));
  } catch {
    return false;
  }
}

/** Runs scripts/pg.sh; resolves with its stdout. */
export function pgScript(command: 'start' | 'stop' | 'kill' | 'restart', dir: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(PG_SCRIPT, [command, dir], { timeout: 120_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`scripts/pg.sh ${command} failed: ${stderr || err.message}`));
      else resolve(stdout);
    });
  });
}

/** A cluster of its own in a fresh temp folder (scripts/pg.sh start); `stop` removes it. */
export async function startPgCluster(): Promise<{ url: string; dir: string; stop(): Promise<void> }> {
  const dir = join(mkdtempSync(join(tmpdir(), 'artifact-store-pg-')), 'cluster');
  try {
    const { url } = JSON.parse((await pgScript('start', dir)).trim().split('\n').at(-1)!) as { url: string };
    return {
      url,
      dir,
      stop: async () => {
        await pgScript('stop', dir).catch(() => {});
        rmSync(join(dir, '..'), { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(join(dir, '..'), { recursive: true, force: true });
    throw err;
  }
}

export async function startPostgresTarget(): Promise<PostgresTarget> {
  const given = process.env.ARTIFACT_STORE_TEST_DATABASE_URL;
  if (given)
    return { info: { name: 'ARTIFACT_STORE_TEST_DATABASE_URL', adminUrl: given, dir: null }, stop: async () => {} };
  if (!hasPostgresServer()) return { unavailable: `no PostgreSQL server here: ${HOW_TO_GET_ONE}` };
  try {
    const cluster = await startPgCluster();
    return {
      info: { name: 'PostgreSQL (scripts/pg.sh)', adminUrl: cluster.url, dir: cluster.dir },
      stop: cluster.stop,
    };
  } catch (err) {
    return { unavailable: `${(err as Error).message}; ${HOW_TO_GET_ONE}` };
  }
}
