/**
 * The package as others get it, and the container image's runtime without Docker.
 *
 * `npm run pack` (both packages built and packed: artifact-store and artifact-store-sdk), then three
 * installs in scratch folders, side by side:
 * - the Dockerfile's own install line (the RUN marked `# package.test.ts: install`): the lockfile's exact
 *   versions;
 * - a project made as a new user makes one (`npm init -y`, CommonJS) with both tarballs: every entry of
 *   both packages loads from ESM and CommonJS and type-checks under `tsc --strict` without skipLibCheck;
 *   the installed bin runs (`npx artifact-store --help`), and says what to do when dist/ is missing;
 * - a project with the SDK's tarball alone: no install script runs, no native module is built;
 * - the image's start command runs as the image runs it: the last stage's ENV, WORKDIR, ENTRYPOINT and
 *   CMD, with its /app as the scratch folder, /data as a temp folder, and 127.0.0.1 and a free port, in
 *   production mode with real keys. The README's curl walkthrough, the /ui and /docs files, a signed
 *   link, the image's HEALTHCHECK command and a SIGTERM that drains a download in flight run against it.
 *
 * What Docker would add and this cannot show: the base images, the stage copies, the `node` user and the
 * /data volume's owner. The test checks those lines say what docs and compose rely on.
 *
 * No install compiles anything: better-sqlite3 13 carries its N-API binaries. npm's cache is warm from the repository's own `npm ci`, so the install prefers it
 * (npm_config_prefer_offline, without changing the command).
 */
import { type ChildProcessByStdio, execFile, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { USAGE } from '../src/cli/help.js';
import { DOCS_ASSET_NAMES } from '../src/http/routes/docs.js';
import { UI_ASSET_TYPES } from '../src/http/routes/ui.js';
import { PACKAGE_ENTRIES, ROOT, readDoc, runBash, runBlock, SDK_FOLDERS } from './doc-blocks.js';
import { spawnProcess, stopProcess } from './helpers/processes.js';
import { runCurlWalkthrough } from './helpers/readme-walkthrough.js';

const MiB = 1024 * 1024;

// ---- The Dockerfile, read as Docker reads it (the subset it uses) ----

interface Instruction {
  keyword: string;
  args: string;
  /** The comment lines right above it. */
  comments: string[];
}

interface Stage {
  from: string;
  name?: string;
  instructions: Instruction[];
}

function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  let comments: string[] = [];
  let line = '';
  for (const raw of text.split('\n')) {
    if (!line && /^\s*#/.test(raw)) {
      comments.push(raw.replace(/^\s*#\s?/, ''));
      continue;
    }
    if (!line && !raw.trim()) {
      comments = [];
      continue;
    }
    if (/\\\s*$/.test(raw)) {
      line += raw.replace(/\\\s*$/, ' ');
      continue;
    }
    line += raw;
    const m = /^\s*([A-Za-z]+)\s+([\s\S]*)$/.exec(line);
    if (!m) throw new Error(`Dockerfile: cannot read ${JSON.stringify(line)}`);
    const instruction = { keyword: m[1]!.toUpperCase(), args: m[2]!.trim(), comments };
    comments = [];
    line = '';
    if (instruction.keyword === 'FROM') {
      const from = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(instruction.args)!;
      stages.push({ from: from[1]!, ...(from[2] ? { name: from[2] } : {}), instructions: [] });
    } else {
      if (!stages.length) throw new Error(`Dockerfile: ${instruction.keyword} before FROM`);
      stages.at(-1)!.instructions.push(instruction);
    }
  }
  return stages;
}

const all = (stage: Stage, keyword: string) => stage.instructions.filter((i) => i.keyword === keyword);

function only(stage: Stage, keyword: string): string {
  const found = all(stage, keyword);
  if (found.length !== 1) throw new Error(`Dockerfile: ${found.length} ${keyword} lines in the last stage`);
  return found[0]!.args;
}

/** An exec-form (JSON array) instruction's arguments; shell form would put sh between Docker and node. */
function execForm(args: string): string[] {
  const parsed = JSON.parse(args) as unknown;
  if (!Array.isArray(parsed) || !parsed.every((a) => typeof a === 'string')) throw new Error(`not exec form: ${args}`);
  return parsed;
}

/** The last stage's ENV, in order, with $VAR and ${VAR} expanded as Docker does. */
function imageEnv(stage: Stage, base: Record<string, string>): Record<string, string> {
  const env = { ...base };
  for (const { args } of all(stage, 'ENV')) {
    for (const [, key, value] of args.matchAll(/(\w+)=(\S*)/g))
      env[key!] = value!.replace(/\$\{?(\w+)\}?/g, (_, name: string) => env[name] ?? '');
  }
  return env;
}

const dockerfile = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
const runtime = dockerfile.at(-1)!;
const WORKDIR = only(runtime, 'WORKDIR');
const markedInstall = dockerfile.flatMap((s) =>
  s.instructions.filter((i) => i.comments.includes('package.test.ts: install')),
);
const startArgv = [...execForm(only(runtime, 'ENTRYPOINT')), ...execForm(only(runtime, 'CMD'))];
const healthcheck = /^((?:--\S+\s+)*)CMD\s+(\[[\s\S]*\])$/.exec(only(runtime, 'HEALTHCHECK'));

// ---- Where it can run ----

// No ARTIFACT_STORE_* setting leaks into what the test starts, nor what `npm test` tells its scripts about
// this repository (npm_package_*, npm_lifecycle_*, INIT_CWD…). npm's settings (npm_config_registry,
// npm_config_cache…) pass: the installs here use the registry and cache this machine's npm uses.
const NPM_RUN_VARIABLE =
  /^(npm_package_|npm_lifecycle_|npm_command$|npm_execpath$|npm_node_execpath$|npm_config_local_prefix$|npm_config_user_agent$|INIT_CWD$)/i;
const inherited = Object.fromEntries(
  Object.entries(process.env).filter(
    (e): e is [string, string] =>
      e[1] !== undefined && !e[0].startsWith('ARTIFACT_STORE_') && !NPM_RUN_VARIABLE.test(e[0]),
  ),
);
const npmEnv = { ...inherited, npm_config_prefer_offline: 'true', npm_config_update_notifier: 'false' };

/** Outside CI, a machine whose npm cannot reach its registry skips the file, by that name; CI never skips. */
function registryProblem(): string | undefined {
  if (process.env.CI) return undefined;
  const ping = spawnSync('npm', ['ping'], { env: npmEnv, encoding: 'utf8', timeout: 30_000 });
  return ping.status === 0 ? undefined : 'npm cannot reach its registry (npm ping failed)';
}
const skipReason = registryProblem();

// CI installs curl (.ci/run); elsewhere a machine without it skips the walkthrough, by that name.
const hasCurl = spawnSync('curl', ['--version']).status === 0;
if (process.env.CI && !hasCurl) throw new Error('curl is required in CI for the README walkthrough');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(
  command: string,
  args: string[],
  options: { cwd: string; env: Record<string, string>; timeout?: number },
): Promise<Run> {
  return new Promise((ok) =>
    execFile(
      command,
      args,
      { ...options, encoding: 'utf8', maxBuffer: 64 * MiB, timeout: options.timeout ?? 120_000 },
      (err, stdout, stderr) => ok({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

let tmp: string;
/** The image's WORKDIR (/app): the packed server package, its SDK workspace and their install. */
let app: string;
/** A project made as a new user makes one (`npm init -y`: CommonJS), with both tarballs installed. */
let consumer: string;
/** A project that installed only the SDK's tarball. */
let sdkOnly: string;
interface Packed {
  name: string;
  filename: string;
  files: { path: string }[];
}
let packed: Record<'server' | 'sdk', Packed>;
const installs: Record<string, { seconds: number; packages: number }> = {};

/** A path of the image as it lies in the scratch folder: its WORKDIR is `app`. */
const inScratch = (value: string) =>
  value
    .split(':')
    .map((part) => (part === WORKDIR || part.startsWith(`${WORKDIR}/`) ? app + part.slice(WORKDIR.length) : part))
    .join(':');

/**
 * The checkout's files (tracked and new, not ignored: what a commit of it would hold) copied into
 * `dir`, with its node_modules linked: `npm run pack` there builds and packs what the checkout holds
 * without touching the checkout's own dist/ and packages/sdk/dist/.
 */
function copyOfCheckout(dir: string): string {
  const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (listed.status !== 0) throw new Error(`git ls-files failed in ${ROOT}: ${listed.stderr}`);
  for (const file of listed.stdout.split('\0')) {
    // A file deleted from the work tree and not yet from the index: not part of the package either.
    if (!file || !existsSync(join(ROOT, file))) continue;
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    copyFileSync(join(ROOT, file), join(dir, file));
  }
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return dir;
}

async function npmInitProject(dir: string, tarballs: string[]): Promise<void> {
  mkdirSync(dir);
  const init = await run('npm', ['init', '-y'], { cwd: dir, env: npmEnv });
  if (init.code !== 0) throw new Error(`npm init -y failed:\n${init.stderr}`);
  const started = performance.now();
  const install = await run('npm', ['install', '--no-audit', '--no-fund', ...tarballs], {
    cwd: dir,
    env: npmEnv,
    timeout: 1_200_000,
  });
  if (install.code !== 0) throw new Error(`npm install ${tarballs.join(' ')} failed:\n${install.stderr}`);
  const lock = JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8')) as { packages: object };
  installs[dir] = { seconds: (performance.now() - started) / 1000, packages: Object.keys(lock.packages).length - 1 };
}

beforeAll(async () => {
  if (skipReason) return;
  tmp = mkdtempSync(join(tmpdir(), 'artifact-store-package-'));
  app = join(tmp, 'app');
  consumer = join(tmp, 'consumer');
  sdkOnly = join(tmp, 'sdk-only');
  const packDir = join(tmp, 'pack');
  mkdirSync(app);
  mkdirSync(packDir);
  // As the docs say: `npm run pack` builds both packages, then packs them (stdout ends with the JSON).
  // In a copy of the checkout, whose dist/ folders the build may empty while other files run.
  const pack = await run('npm', ['run', '--silent', 'pack', '--', '--json', '--pack-destination', packDir], {
    cwd: copyOfCheckout(join(tmp, 'checkout')),
    env: npmEnv,
    timeout: 300_000,
  });
  if (pack.code !== 0) throw new Error(`npm run pack failed:\n${pack.stderr}`);
  const list = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('\n[') + 1)) as Packed[];
  packed = {
    server: list.find((p) => p.name === 'artifact-store')!,
    sdk: list.find((p) => p.name === 'artifact-store-sdk')!,
  };
  const tarballs = [packed.sdk, packed.server].map((p) => join(packDir, p.filename));
  // COPY --from=build /src/package-lock.json /src/artifact-store-*.tgz ./
  copyFileSync(join(ROOT, 'package-lock.json'), join(app, 'package-lock.json'));
  for (const p of Object.values(packed)) copyFileSync(join(packDir, p.filename), join(app, p.filename));
  const [image] = await Promise.all([
    run('sh', ['-c', markedInstall[0]!.args], { cwd: app, env: npmEnv, timeout: 1_200_000 }),
    npmInitProject(consumer, tarballs),
    npmInitProject(sdkOnly, [tarballs[0]!]),
  ]);
  if (image.code !== 0) throw new Error(`the image's install failed:\n${image.stdout}\n${image.stderr}`);
}, 1_800_000);

afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
}, 300_000);

describe('the Dockerfile', () => {
  it('builds, installs the lockfile, then runs on a slim Node 24 image: as node, /data a volume, exec form, a fetch health check', () => {
    expect(dockerfile.map((s) => s.from)).toEqual(['node:24-bookworm', 'node:24-bookworm', 'node:24-bookworm-slim']);
    expect(markedInstall).toHaveLength(1);
    expect(markedInstall[0]!.keyword).toBe('RUN');
    // Exactly the lockfile's versions (npm ci), no install script.
    expect(markedInstall[0]!.args).toMatch(/ npm ci --omit=dev --ignore-scripts /);
    // The runtime holds the install stage's /app and nothing else from the build.
    expect(all(runtime, 'COPY').map((c) => c.args)).toEqual([`--from=install ${WORKDIR} ./`]);
    expect(only(runtime, 'USER')).toBe('node');
    expect(only(runtime, 'VOLUME')).toBe('/data');
    expect(only(runtime, 'EXPOSE')).toBe('8787');
    const env = imageEnv(runtime, {});
    expect(env).toMatchObject({
      ARTIFACT_STORE_ENV: 'production',
      ARTIFACT_STORE_HOST: '0.0.0.0',
      ARTIFACT_STORE_DATA_DIR: '/data',
    });
    expect(startArgv[0]).toBe('node');
    expect(startArgv.slice(-2)).toEqual([`${WORKDIR}/bin/artifact-store.js`, 'serve']);
    expect(healthcheck, 'HEALTHCHECK [options] CMD ["node", …]').not.toBeNull();
    const check = execForm(healthcheck![2]!);
    expect(check[0]).toBe('node');
    expect(check.join(' ')).toContain('/readyz');
    expect(check.join(' ')).not.toMatch(/curl|wget/);
  });
});

/** Every entry of a package's exports but ./package.json and the SDK's ./internal/ (for the server package only). */
const entriesOf = (dir: string, name: string): string[] => {
  const { exports } = JSON.parse(readFileSync(join(dir, 'node_modules', name, 'package.json'), 'utf8')) as {
    exports: Record<string, unknown>;
  };
  return Object.keys(exports)
    .filter((k) => k !== './package.json' && !k.startsWith('./internal/'))
    .map((k) => name + k.slice(1));
};

/** A known export of each entry; a new entry needs its line here. */
const KNOWN_EXPORTS: Record<string, string> = {
  'artifact-store': 'composeApp',
  'artifact-store/node': 'openArtifactStore',
  'artifact-store/blob': 'createS3BlobStore',
  'artifact-store-sdk': 'createHttpArtifactStore',
  'artifact-store-sdk/mcp': 'wrapMcpClient',
  'artifact-store-sdk/adk': 'ArtifactStoreArtifactService',
  'artifact-store-sdk/ai-sdk': 'artifactMiddleware',
  'artifact-store-sdk/langchain': 'withArtifactCheckpoints',
};

/** The optional peers an MCP, ADK, AI SDK or LangChain user has, linked from this repository's install into a project. */
function linkPeers(dir: string, names: string[]): () => void {
  const links = names.filter((name) => !existsSync(join(dir, 'node_modules', name)));
  for (const name of links) {
    mkdirSync(join(dir, 'node_modules', name, '..'), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules', name), join(dir, 'node_modules', name), 'dir');
  }
  return () => {
    for (const name of links) unlinkSync(join(dir, 'node_modules', name));
  };
}

describe.skipIf(skipReason)(`the packed packages${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  it('the server tarball holds dist/, bin/, the migrations and package.json, without a copy of the SDK', () => {
    const paths = packed.server.files.map((f) => f.path);
    for (const path of paths) expect(path).toMatch(/^(dist\/|bin\/|migrations\/|package\.json$|README\.md$)/);
    expect(paths).toContain('bin/artifact-store.js');
    expect(paths).toContain('dist/cli/main.js');
    expect(paths).toContain('dist/ui/index.html');
    expect(paths).toContain('migrations/meta/_journal.json');
    // The SDK's modules come from artifact-store-sdk: one ArtifactError class in a process that loads both.
    for (const folder of SDK_FOLDERS) expect(paths.filter((p) => p.startsWith(`dist/${folder}/`))).toEqual([]);
    const migrations = readdirSync(join(ROOT, 'migrations')).filter((f) => f.endsWith('.sql'));
    expect(migrations.length).toBeGreaterThan(0);
    for (const sql of migrations) expect(paths).toContain(`migrations/${sql}`);
    const sdkPaths = packed.sdk.files.map((f) => f.path);
    const inSdk = new RegExp(`^(dist\\/(${SDK_FOLDERS.join('|')})\\/|package\\.json$|README\\.md$)`);
    for (const path of sdkPaths) expect(path).toMatch(inSdk);
    expect(sdkPaths).toContain('dist/client/index.js');
  });

  it('the image installs exactly the versions in package-lock.json, and no development tool', () => {
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { version?: string; dev?: boolean; link?: boolean }>;
    };
    let checked = 0;
    for (const [path, entry] of Object.entries(lock.packages)) {
      if (!path.startsWith('node_modules/') || entry.link) continue;
      const manifest = join(app, path, 'package.json');
      if (!existsSync(manifest)) {
        // Only development and unused optional packages are left out.
        continue;
      }
      expect(entry.dev, `${path} is a dev dependency`).not.toBe(true);
      expect(JSON.parse(readFileSync(manifest, 'utf8')).version, path).toBe(entry.version);
      checked++;
    }
    expect(checked).toBeGreaterThan(100);
    for (const dev of ['tsx', 'typescript', 'vitest'])
      expect(existsSync(join(app, 'node_modules', dev)), `${dev} installed`).toBe(false);
    expect(JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')).version).toBe(
      JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version,
    );
  });

  it('the SDK installs alone: no install script, no native module, no AWS SDK, no server', () => {
    const lock = JSON.parse(readFileSync(join(sdkOnly, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { hasInstallScript?: boolean }>;
    };
    const names = Object.keys(lock.packages).filter((p) => p.startsWith('node_modules/'));
    expect(names).toContain('node_modules/artifact-store-sdk');
    expect(Object.entries(lock.packages).filter(([, e]) => e.hasInstallScript)).toEqual([]);
    for (const heavy of ['better-sqlite3', '@aws-sdk/client-s3', 'artifact-store', 'hono', 'drizzle-orm'])
      expect(names, heavy).not.toContain(`node_modules/${heavy}`);
    const native = spawnSync('find', [join(sdkOnly, 'node_modules'), '-name', '*.node', '-o', '-name', 'binding.gyp'], {
      encoding: 'utf8',
    });
    expect(native.stdout).toBe('');
    // What the bench reports (docs/performance.md): packages and seconds of each fresh install here.
    process.stdout.write(
      `installs: sdk alone ${installs[sdkOnly]!.packages} packages in ${installs[sdkOnly]!.seconds.toFixed(1)} s; sdk + server ${installs[consumer]!.packages} packages in ${installs[consumer]!.seconds.toFixed(1)} s\n`,
    );
  });

  it('every entry of both packages loads from ESM and from CommonJS in an `npm init -y` project', async () => {
    expect(JSON.parse(readFileSync(join(consumer, 'package.json'), 'utf8')).type ?? 'commonjs').toBe('commonjs');
    const entries = [...entriesOf(consumer, 'artifact-store'), ...entriesOf(consumer, 'artifact-store-sdk')];
    expect(entries.sort()).toEqual(Object.keys(KNOWN_EXPORTS).sort());
    const unlink = linkPeers(consumer, ['@google/adk', '@google/genai', '@langchain/core']);
    try {
      writeFileSync(
        join(consumer, 'esm.mjs'),
        `const found = {};
for (const entry of ${JSON.stringify(entries)}) found[entry] = Object.keys(await import(entry));
process.stdout.write(JSON.stringify(found));
`,
      );
      writeFileSync(
        join(consumer, 'cjs.js'),
        `const found = {};
for (const entry of ${JSON.stringify(entries)}) found[entry] = Object.keys(require(entry));
process.stdout.write(JSON.stringify(found));
`,
      );
      for (const script of ['esm.mjs', 'cjs.js']) {
        const out = await run(process.execPath, [script], { cwd: consumer, env: inherited });
        expect(out.code, `${script}: ${out.stderr}`).toBe(0);
        const found = JSON.parse(out.stdout) as Record<string, string[]>;
        for (const [entry, name] of Object.entries(KNOWN_EXPORTS))
          expect(found[entry], `${script} ${entry}`).toContain(name);
      }
    } finally {
      unlink();
    }
    // The SDK alone: its root needs nothing more.
    const alone = await run(
      process.execPath,
      ['-e', "const sdk = require('artifact-store-sdk'); process.stdout.write(typeof sdk.createHttpArtifactStore)"],
      { cwd: sdkOnly, env: inherited },
    );
    expect(alone.stdout, alone.stderr).toBe('function');
  });

  it('a strict consumer type-checks every entry without skipLibCheck, from CommonJS and ESM', async () => {
    // The consumer's own dev dependencies, linked from this repository's install: @types/node, and the
    // optional peers an MCP or ADK user has. The @ts-expect-error lines fail if any entry's types are `any`.
    const unlink = linkPeers(consumer, [
      '@types/node',
      '@google/adk',
      '@google/genai',
      'ai',
      '@ai-sdk/provider',
      '@ai-sdk/provider-utils',
      '@langchain/core',
      '@langchain/langgraph-checkpoint',
    ]);
    try {
      writeFileSync(
        join(consumer, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            target: 'ES2022',
            strict: true,
            noEmit: true,
            skipLibCheck: false,
            types: ['node'],
          },
          files: ['consumer.ts', 'consumer.mts'],
        }),
      );
      const body = `import type { BaseArtifactService } from '@google/adk';
import { composeApp, loadConfig, mintToken } from 'artifact-store';
import { createFsBlobStore } from 'artifact-store/blob';
import { openArtifactStore, type RunningServer, startServer } from 'artifact-store/node';
import { type ArtifactStore, createHttpArtifactStore } from 'artifact-store-sdk';
import { ArtifactStoreArtifactService } from 'artifact-store-sdk/adk';
import { artifactMiddleware, withArtifacts as withToolResults } from 'artifact-store-sdk/ai-sdk';
import { withArtifactCheckpoints, withArtifacts as withToolArtifacts } from 'artifact-store-sdk/langchain';
import { wrapMcpClient } from 'artifact-store-sdk/mcp';

export const store: ArtifactStore = createHttpArtifactStore({ baseUrl: 'http://127.0.0.1:8787', token: 'token' });
// @ts-expect-error baseUrl is a string
createHttpArtifactStore({ baseUrl: 8787 });

export const serve = (): Promise<RunningServer> => startServer(loadConfig({ ARTIFACT_STORE_PORT: '0' }));
// @ts-expect-error startServer takes a Config
startServer('config');
// @ts-expect-error loadConfig takes an environment map
loadConfig(8787);
export { composeApp, createFsBlobStore, mintToken, openArtifactStore };
// @ts-expect-error openArtifactStore takes options
openArtifactStore(42);

export const wrap = wrapMcpClient;
// @ts-expect-error wrapMcpClient wraps an MCP SDK Client
wrapMcpClient(42);

export const artifacts: BaseArtifactService = new ArtifactStoreArtifactService(store);
// @ts-expect-error the service stores into an ArtifactStore
new ArtifactStoreArtifactService(42);
type Loaded = Awaited<ReturnType<ArtifactStoreArtifactService['loadArtifact']>>;
// @ts-expect-error loadArtifact resolves to @google/genai's Part or undefined
export const part: Loaded = 42;

export const middleware = artifactMiddleware({ store });
// @ts-expect-error the middleware stores into an ArtifactStore
artifactMiddleware({ store: 42 });
export const aiTools = withToolResults({}, { store });
export const lcTools = withToolArtifacts;
export const checkpoints = withArtifactCheckpoints;
// @ts-expect-error LangChain tools are wrapped with a store
withToolArtifacts([], { store: 'store' });
`;
      writeFileSync(join(consumer, 'consumer.ts'), body);
      writeFileSync(join(consumer, 'consumer.mts'), body);
      const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
      const out = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: consumer, env: inherited });
      // @google/adk's own declarations do not check clean without skipLibCheck (they name express and
      // @google-cloud/storage types it does not depend on): those lines are ADK's, not ours. Every other
      // line fails the test.
      const errors = (out.stdout + out.stderr)
        .split('\n')
        .filter((line) => /error TS\d+/.test(line))
        .filter((line) => !/node_modules\/(@google\/adk|@a2a-js)\//.test(line));
      expect(errors).toEqual([]);
      expect(out.stdout + out.stderr).toMatch(/@google\/adk|^$/);
    } finally {
      unlink();
    }
  }, 300_000);

  it('runs the installed bin (npx artifact-store --help, --version), and says to build when dist/ is missing', async () => {
    // As a user types it; npm_config_yes=false: never fetch an artifact-store from the registry instead.
    const help = await run('npx', ['artifact-store', '--help'], {
      cwd: consumer,
      env: { ...npmEnv, npm_config_yes: 'false' },
    });
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toBe(`${USAGE}\n`);
    const version = await run('npx', ['artifact-store', '--version'], {
      cwd: consumer,
      env: { ...npmEnv, npm_config_yes: 'false' },
    });
    expect(version.stdout.trim(), version.stderr).toBe(
      JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version,
    );

    // A clone installed with --ignore-scripts: the package without dist/.
    const bare = join(tmp, 'bare', 'artifact-store');
    mkdirSync(bare, { recursive: true });
    copyFileSync(join(app, 'package.json'), join(bare, 'package.json'));
    cpSync(join(app, 'bin'), join(bare, 'bin'), { recursive: true });
    const missing = await run(process.execPath, [join(bare, 'bin', 'artifact-store.js'), '--help'], {
      cwd: tmp,
      env: inherited,
    });
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toBe(
      `artifact-store: ${join(bare, 'dist', 'cli', 'main.js')} is missing: run npm run build in ${bare}/ (an install with --ignore-scripts skips it).\n`,
    );
    // docs/troubleshooting.md quotes it, with … for the paths.
    const page = readDoc('docs/troubleshooting.md');
    const section = page.slice(page.indexOf('## Cannot find artifact-store-sdk from a clone'));
    const quote = /^> `(artifact-store: .+)`$/m.exec(section)![1]!;
    expect(missing.stderr.trim().replaceAll(bare, '…')).toBe(quote);
  });

  describe('the docs followed in that project: cli.md, sdk.md, adk.md, gateway.md', () => {
    let proc: ChildProcessByStdio<null, Readable, Readable>;
    let out = '';
    let url: string;
    let token: string;
    /** The installed command first on PATH, as `npm install -g` or `npx` would put it. */
    const withBin = () => ({ PATH: `${join(consumer, 'node_modules', '.bin')}:${process.env.PATH}` });
    const clean = () =>
      Object.fromEntries(Object.entries(inherited).filter(([k]) => !k.startsWith('ARTIFACT_STORE_'))) as Record<
        string,
        string
      >;

    /** Which package entry each source entry the examples import is, for a user's project. */
    const ENTRY_OF = Object.fromEntries(
      Object.entries(PACKAGE_ENTRIES).map(([entry, source]) => [`../${source.replace(/\.ts$/, '.js')}`, entry]),
    );
    /**
     * examples/NAME copied into the project with the imports a user writes; fails on any other import of
     * src/. As NAME.mts: the project is CommonJS (`npm init -y`), and the examples await at top level.
     */
    const inProject = (name: string): string => {
      const text = readFileSync(join(ROOT, 'examples', name), 'utf8').replace(
        /from '(\.\.\/src\/[^']+)'/g,
        (_whole, spec: string) => {
          const entry = ENTRY_OF[spec];
          if (!entry) throw new Error(`examples/${name} imports ${spec}, which no package entry is`);
          return `from '${entry}'`;
        },
      );
      const file = name.replace(/\.ts$/, '.mts');
      writeFileSync(join(consumer, file), text);
      return file;
    };
    /** `npx tsx FILE` in the project (tsx from this repository's install: the same thing, offline). */
    const tsx = (file: string, env: Record<string, string>) =>
      run(process.execPath, [join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), file], {
        cwd: consumer,
        env: { ...clean(), ...env },
        timeout: 120_000,
      });

    beforeAll(async () => {
      // cli.md: `artifact-store serve` in the project: its ./data, a free port, the banner's dev token.
      proc = spawnProcess<ChildProcessByStdio<null, Readable, Readable>>(
        join(consumer, 'node_modules', '.bin', 'artifact-store'),
        ['serve', '--port', '0'],
        { cwd: consumer, env: clean(), stdio: ['ignore', 'pipe', 'pipe'] },
      );
      proc.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      proc.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
      for (;;) {
        const listening = /listening on (http:\/\/\S+)/.exec(out);
        const printed = /export ARTIFACT_STORE_TOKEN=(\S+)/.exec(out);
        if (listening && printed) {
          url = listening[1]!;
          token = printed[1]!;
          break;
        }
        if (proc.exitCode !== null) throw new Error(`artifact-store serve exited (${proc.exitCode}):\n${out}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }, 120_000);

    afterAll(async () => {
      if (proc) await stopProcess(proc);
    });

    it('cli.md: the walkthrough with the installed command', async () => {
      const script = runBlock('docs/cli.md', 'cli-walkthrough').replace(
        /^export ARTIFACT_STORE_URL=.*$/m,
        `export ARTIFACT_STORE_URL=${url} ARTIFACT_STORE_TOKEN=${token}`,
      );
      const printed = await runBash(script, { cwd: consumer, env: withBin() });
      expect(JSON.parse(printed.slice(0, printed.indexOf('\n}') + 2))).toMatchObject({ filename: 'report.pdf' });
      expect(readFileSync(join(consumer, 'copy.pdf'))).toEqual(readFileSync(join(consumer, 'report.pdf')));
      expect(printed).toMatch(/^ended session s-42: 1 reference \(20 B\)$/m);
    }, 180_000);

    it('sdk.md: the in-process store and the HTTP store, imported from the packages', async () => {
      const dataDir = join(tmp, 'embedded-data');
      const embedded = await tsx(inProject('embedded.ts'), { ARTIFACT_STORE_DATA_DIR: dataDir });
      expect(embedded.code, embedded.stderr).toBe(0);
      expect(embedded.stdout).toContain('search: 1 match, line 4322: ERROR disk full');
      const sdk = await tsx(inProject('sdk.ts'), { ARTIFACT_STORE_URL: url, ARTIFACT_STORE_TOKEN: token });
      expect(sdk.code, sdk.stderr).toBe(0);
    }, 180_000);

    it("adk.md: ADK's runner stores through the service with the token serve printed", async () => {
      // The optional peers an ADK user installs, linked from this repository's install (the same versions).
      const unlink = linkPeers(consumer, ['@google/adk', '@google/genai']);
      try {
        const adk = await tsx(inProject('adk.ts'), { ARTIFACT_STORE_URL: url, ARTIFACT_STORE_TOKEN: token });
        expect(adk.code, adk.stderr).toBe(0);
        expect(adk.stdout).toMatch(/^the tool saved chart\.png as version 0, then version 1$/m);
      } finally {
        unlink();
      }
    }, 180_000);

    it("gateway.md: the page's config, listed by the installed command", async () => {
      // In a folder of this checkout, as test/docs.test.ts runs it: the config's `npx -y <server>` finds
      // the reference servers installed here instead of fetching them. The gateway is the installed one.
      mkdirSync(join(ROOT, 'test-results'), { recursive: true });
      const work = mkdtempSync(join(ROOT, 'test-results', 'package-gateway-'));
      let listed: string;
      try {
        listed = await runBash(runBlock('docs/gateway.md', 'gateway-list'), {
          cwd: work,
          env: withBin(),
          timeout: 180_000,
        });
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
      expect(listed).toMatch(/^everything: ready, mcp-servers\/everything [\d.]+, 13 tools, resources, 4 prompts$/m);
      expect(listed).toMatch(/^files: ready, secure-filesystem-server/m);
    }, 200_000);
  });

  describe("the image's runtime: its start command in production mode", () => {
    let proc: ChildProcessByStdio<null, Readable, Readable>;
    let stdout = '';
    let stderr = '';
    let exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
    let env: Record<string, string>;
    let url: string;
    let token: string;
    let workDir: string;

    const waitForStdout = async (pattern: RegExp): Promise<RegExpExecArray> => {
      for (;;) {
        const m = pattern.exec(stdout);
        if (m) return m;
        if (proc.exitCode !== null) throw new Error(`the service exited (${proc.exitCode}):\n${stdout}\n${stderr}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };

    /** The image's HEALTHCHECK command, as Docker runs it in the container (where the port is the service's). */
    const healthy = async () => {
      const [command, ...args] = execForm(healthcheck![2]!);
      const port = new URL(url).port;
      return (await run(command!, args, { cwd: app, env: { ...env, ARTIFACT_STORE_PORT: port } })).code === 0;
    };

    const auth = () => ({ Authorization: `Bearer ${token}` });

    beforeAll(async () => {
      const dataDir = join(tmp, 'data');
      workDir = join(tmp, 'work');
      mkdirSync(dataDir);
      mkdirSync(workDir);
      // The last stage's environment, with its paths in the scratch folder; then what `docker run`
      // would be given: keys, and here a temp folder for the /data volume, loopback and a free port.
      env = Object.fromEntries(Object.entries(imageEnv(runtime, inherited)).map(([k, v]) => [k, inScratch(v)]));
      expect(env.ARTIFACT_STORE_ENV).toBe('production');
      Object.assign(env, {
        ARTIFACT_STORE_JWT_SECRETS: `main:${randomBytes(32).toString('hex')}`,
        ARTIFACT_STORE_DATA_DIR: dataDir,
        ARTIFACT_STORE_HOST: '127.0.0.1',
        ARTIFACT_STORE_PORT: '0',
      });
      const [command, ...args] = startArgv.map(inScratch);
      proc = spawnProcess<ChildProcessByStdio<null, Readable, Readable>>(command!, args, {
        cwd: inScratch(WORKDIR),
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      proc.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      proc.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      exited = new Promise((ok) => proc.on('exit', (code, signal) => ok({ code, signal })));
      url = (await waitForStdout(/listening on (http:\/\/\S+)\s+\(production,/))[1]!;
      // Production prints no dev token: one minted with the configured key, by the installed bin on the
      // image's PATH (its ENV PATH, in the scratch folder).
      const minted = await run('artifact-store', ['token', '--perms', 'read,write,admin'], { cwd: app, env });
      expect(minted.code, minted.stderr).toBe(0);
      token = minted.stdout.trim();
    }, 120_000);

    afterAll(async () => {
      if (proc) await stopProcess(proc, { signal: 'SIGKILL' });
    });

    it('answers /readyz, and the HEALTHCHECK command passes', async () => {
      const res = await fetch(`${url}/readyz`);
      expect(res.status).toBe(200);
      expect(await healthy()).toBe(true);
    });

    it.skipIf(!hasCurl)(
      `the README walkthrough works against it${hasCurl ? '' : ' (skipped: curl not installed)'}`,
      async () => {
        await runCurlWalkthrough(runBlock('README.md', 'curl-walkthrough'), url, token, workDir);
      },
    );

    it('serves every file of the artifact browser (from dist/ui) and of the API reference (swagger-ui-dist)', async () => {
      const paths = [
        '/ui',
        ...Object.keys(UI_ASSET_TYPES).map((name) => `/ui/${name}`),
        ...DOCS_ASSET_NAMES.map((name) => `/docs/assets/${name}`),
      ];
      for (const path of paths) {
        const res = await fetch(`${url}${path}`);
        expect(res.status, path).toBe(200);
        expect((await res.arrayBuffer()).byteLength, path).toBeGreaterThan(0);
      }
      const page = await (await fetch(`${url}/ui`)).text();
      expect(page).toBe(readFileSync(join(ROOT, 'src', 'ui', 'index.html'), 'utf8'));
    });

    it('hands out a signed link a browser opens without the token', async () => {
      const put = await fetch(`${url}/v1/artifacts`, {
        method: 'POST',
        headers: { ...auth(), 'Content-Type': 'text/plain', 'X-Artifact-Session': 's-link' },
        body: 'from the image',
      });
      expect(put.status).toBe(201);
      const { id } = (await put.json()) as { id: string };
      const link = await fetch(`${url}/v1/artifacts/${id}/url`, { method: 'POST', headers: auth() });
      expect(link.status).toBe(200);
      const res = await fetch(((await link.json()) as { url: string }).url);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('from the image');
    });

    it('SIGTERM (docker stop): the download in flight finishes, the health check fails, node exits 0', async () => {
      const size = 40 * MiB; // under the default ARTIFACT_STORE_MAX_ARTIFACT_BYTES
      const big = randomBytes(size);
      const put = await fetch(`${url}/v1/artifacts`, {
        method: 'POST',
        headers: { ...auth(), 'Content-Type': 'application/octet-stream' },
        body: big,
      });
      expect(put.status).toBe(201);
      const { id } = (await put.json()) as { id: string };

      const download = await new Promise<{ received: number; sha256: string; atSignal: number; healthy: boolean }>(
        (ok, fail) => {
          const req = http.get(`${url}/v1/artifacts/${id}`, { agent: false, headers: auth() }, (res) => {
            if (res.statusCode !== 200) return fail(new Error(`download answered ${res.statusCode}`));
            const hash = createHash('sha256');
            let received = 0;
            res.once('data', (first: Buffer) => {
              res.pause();
              hash.update(first);
              received += first.byteLength;
              void (async () => {
                const atSignal = received;
                // What `docker stop` does: SIGTERM to PID 1, the node process itself.
                proc.kill('SIGTERM');
                await waitForStdout(/"msg":"shutting down"/);
                const stillHealthy = await healthy();
                res.on('data', (chunk: Buffer) => {
                  hash.update(chunk);
                  received += chunk.byteLength;
                });
                res.on('end', () => ok({ received, sha256: hash.digest('hex'), atSignal, healthy: stillHealthy }));
                res.on('error', fail);
                res.resume();
              })().catch(fail);
            });
          });
          req.on('error', fail);
        },
      );
      expect(download.atSignal).toBeLessThan(size);
      expect(download.healthy).toBe(false);
      expect(download.received).toBe(size);
      expect(download.sha256).toBe(createHash('sha256').update(big).digest('hex'));
      expect(await exited, stderr).toEqual({ code: 0, signal: null });
    }, 180_000);
  });
});
