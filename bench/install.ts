/**
 * Install rows: what a new user waits for. Both packages are packed once (`npm run pack`), then each
 * round installs them into fresh `npm init -y` projects from npm's local cache (prefer-offline, as after
 * the repository's own `npm ci`): the SDK alone, and the server (both tarballs, better-sqlite3 compiled
 * from source when no prebuilt binary can be had). The SDK's package count is judged; its seconds are
 * shown against the server's install in the same round. The section ends with the browser bundle rows
 * (browser-size.ts): what the SDK's in-memory store costs a page against the service's own rules.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { browserSizeRows } from './browser-size.js';
import { REPO_ROOT } from './children.js';
import { ceilingRow, infoRow, samples, type Row } from './report.js';

const SDK_PACKAGES_LIMIT = 20;

function sh(command: string, args: string[], cwd: string): Promise<string> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    npm_config_prefer_offline: 'true',
    npm_config_update_notifier: 'false',
  };
  for (const key of Object.keys(env)) if (/^(npm_package_|npm_lifecycle_)/.test(key)) delete env[key];
  return new Promise((ok, fail) =>
    execFile(command, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) =>
      err ? fail(new Error(`${command} ${args.join(' ')} failed in ${cwd}:\n${stderr.slice(-2000)}`)) : ok(stdout),
    ),
  );
}

/** Seconds of `npm install TARBALLS` in a fresh `npm init -y` project, and the packages it installed. */
async function freshInstall(dir: string, tarballs: string[]): Promise<{ seconds: number; packages: number }> {
  mkdirSync(dir, { recursive: true });
  await sh('npm', ['init', '-y'], dir);
  const started = performance.now();
  await sh('npm', ['install', '--no-audit', '--no-fund', ...tarballs], dir);
  const seconds = (performance.now() - started) / 1000;
  const lock = JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8')) as { packages: object };
  return { seconds, packages: Object.keys(lock.packages).length - 1 };
}

export async function installRows(options: {
  work: string;
  runs: number;
  progress: (msg: string) => void;
}): Promise<{ rows: Row[]; problems: string[] }> {
  const installs = await freshInstallRows(options);
  const browser = await browserSizeRows(options);
  return { rows: [...installs.rows, ...browser.rows], problems: [...installs.problems, ...browser.problems] };
}

async function freshInstallRows(options: {
  work: string;
  runs: number;
  progress: (msg: string) => void;
}): Promise<{ rows: Row[]; problems: string[] }> {
  const { work, runs, progress } = options;
  const packDir = join(work, 'install-pack');
  mkdirSync(packDir, { recursive: true });
  const seconds = samples();
  const packages = samples();
  try {
    progress('install: npm run pack');
    const out = await sh('npm', ['run', '--silent', 'pack', '--', '--json', '--pack-destination', packDir], REPO_ROOT);
    const packed = JSON.parse(out.slice(out.indexOf('\n[') + 1)) as { name: string; filename: string }[];
    const tarball = (name: string) => join(packDir, packed.find((p) => p.name === name)!.filename);
    const sdk = tarball('artifact-store-sdk');
    const server = tarball('artifact-store');
    for (let round = 0; round < runs; round++) {
      progress(`install: round ${round + 1}/${runs}: the SDK alone, then the server`);
      const alone = await freshInstall(join(work, `install-sdk-${round}`), [sdk]);
      const both = await freshInstall(join(work, `install-server-${round}`), [sdk, server]);
      seconds.service!.push(alone.seconds);
      seconds.baseline.push(both.seconds);
      packages.service!.push(alone.packages);
      packages.baseline.push(both.packages);
    }
    return {
      rows: [
        ceilingRow(
          'install: artifact-store-sdk alone, packages (baseline: the server)',
          packages,
          SDK_PACKAGES_LIMIT,
          'packages',
        ),
        infoRow('install: artifact-store-sdk alone, s (baseline: the server, from the same cache)', seconds, 1),
      ],
      problems: [],
    };
  } catch (err) {
    return {
      rows: [],
      problems: [`install: ${err instanceof Error ? err.message : String(err)}`],
    };
  }
}
