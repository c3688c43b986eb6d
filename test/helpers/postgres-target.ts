/**
 * A real Postgres for the tests: ARTIFACT_STORE_TEST_DATABASE_URL when set (any Postgres ≥ 14 the
 * tests may create databases on); else a throwaway cluster that scripts/pg.sh starts from Debian's
 * server binaries; else Postgres in a container (testcontainers) where a container runtime answers.
 * Resolves to `{ unavailable }` with the reason and how to get one, never throws.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { containerRuntimeLikely, withTimeout } from './s3-target.js';

/** The image testcontainers runs where a container runtime answers and Debian's server is missing. */
const POSTGRES_IMAGE = 'postgres:16-bookworm';

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
  "install Debian's server (apt-get install -y postgresql), which scripts/pg.sh starts, or run Docker/Podman";

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
  const problems: string[] = [];
  if (hasPostgresServer()) {
    try {
      const cluster = await startPgCluster();
      return {
        info: { name: 'PostgreSQL (scripts/pg.sh)', adminUrl: cluster.url, dir: cluster.dir },
        stop: cluster.stop,
      };
    } catch (err) {
      problems.push((err as Error).message);
    }
  } else {
    problems.push("Debian's postgresql is not installed");
  }
  if (containerRuntimeLikely()) {
    const container = await startPostgresContainer();
    if ('info' in container) return container;
    problems.push(container.unavailable);
  }
  return { unavailable: `no PostgreSQL server (${problems.join('; ')}). To get one: ${HOW_TO_GET_ONE}` };
}

async function startPostgresContainer(): Promise<PostgresTarget> {
  try {
    const { GenericContainer, getContainerRuntimeClient, Wait } = await import('testcontainers');
    await withTimeout(getContainerRuntimeClient(), 10_000, 'no answer from the container runtime in 10 s');
    const container = await new GenericContainer(POSTGRES_IMAGE)
      .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust' })
      .withExposedPorts(5432)
      // The image starts the server, stops it after its init scripts, and starts it again.
      .withWaitStrategy(Wait.forLogMessage('database system is ready to accept connections', 2))
      .start();
    const adminUrl = `postgres://postgres@${container.getHost()}:${container.getMappedPort(5432)}/postgres`;
    return {
      info: { name: 'PostgreSQL (testcontainers)', adminUrl, dir: null },
      stop: async () => {
        await container.stop();
      },
    };
  } catch (err) {
    return { unavailable: `Postgres through testcontainers failed: ${(err as Error).message}` };
  }
}
