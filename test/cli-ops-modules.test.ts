/**
 * What the CLI's ops commands load: they act on this host's data (SQLite, the blob folder) and start
 * without the server's modules (HTTP, routes, OpenAPI, the UI), which only `serve` needs. Each
 * command runs as a real process with a module hook that records every module it resolves.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqliteRepository } from '../src/db/sqlite.js';
import { ROOT, SOURCE_CLI_ARGS } from './helpers/cli-server.js';

const dir = mkdtempSync(join(tmpdir(), 'artifact-store-cli-ops-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// The commands act on an existing data dir: a database with nothing in it.
beforeAll(() => createSqliteRepository({ path: join(dir, 'data', 'artifacts.db') }).close());

const RECORDER = pathToFileURL(join(ROOT, 'test', 'helpers', 'record-imports.mjs')).href;

/** Runs the CLI with `args` against `dir`'s data; returns its exit code, stderr and the modules it resolved. */
function loads(
  args: string[],
  name: string,
  dataDir: boolean = true,
): Promise<{ code: number; stderr: string; modules: string[] }> {
  const record = join(dir, `${name}.modules`);
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', RECORDER, ...SOURCE_CLI_ARGS, ...args, ...(dataDir ? ['--data-dir', join(dir, 'data')] : [])],
      {
        cwd: dir,
        env: {
          ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ARTIFACT_STORE_'))),
          HOME: dir,
          RECORD_IMPORTS: record,
        },
        timeout: 60_000,
      },
      (err, _stdout, stderr) =>
        resolve({
          code: err ? ((err as { code?: number }).code ?? 1) : 0,
          stderr,
          modules: readFileSync(record, 'utf8').split('\n').filter(Boolean),
        }),
    );
  });
}

const SERVER_MODULES =
  /\/src\/node\/server\.ts$|\/src\/http\/app\.ts$|\/src\/compose\/compose-app\.ts$|\/node_modules\/(hono|@hono)\//;

describe('the ops commands load no server modules', () => {
  it.each([
    ['retention run', ['retention', 'run'], /\/src\/cli\/maintenance-commands\.ts$/],
    ['fsck', ['fsck'], /\/src\/service\/fsck\.ts$/],
    ['usage', ['usage'], /\/src\/cli\/admin-commands\.ts$/],
  ])('%s', async (name, args, ownModule) => {
    const run = await loads(args, name.replace(/\W/g, '-'));
    expect(run.stderr).not.toMatch(/artifact-store: /);
    expect(run.code).toBe(0);
    // The recorder saw the command's own modules, so an absence below means something.
    expect(run.modules.some((m) => ownModule.test(m))).toBe(true);
    expect(run.modules.filter((m) => SERVER_MODULES.test(m))).toEqual([]);
  });
});

/** SQLite, the repositories, the blob drivers (the AWS SDK among them), the service and the server. */
const STORAGE_MODULES =
  /\/src\/(db|blob|service|node|http|compose)\/|\/node_modules\/(better-sqlite3|drizzle-orm|@aws-sdk|hono|@hono)\//;

describe('--help and the commands that talk to a service load no storage, drivers or server', () => {
  it.each([
    ['--help', ['--help'], /\/src\/cli\/help\.ts$/],
    ['put --help', ['put', '--help'], /\/src\/cli\/remote-commands\.ts$/],
    // No service answers there and no token is set: the command fails, after loading what it needs.
    ['ls', ['ls', '--url', 'http://127.0.0.1:9'], /\/src\/cli\/remote-commands\.ts$/],
  ])('%s', async (name, args, ownModule) => {
    const run = await loads(args, `remote-${name.replace(/\W/g, '-')}`, false);
    expect(run.modules.some((m) => ownModule.test(m))).toBe(true);
    expect(run.modules.filter((m) => STORAGE_MODULES.test(m))).toEqual([]);
  });
});
