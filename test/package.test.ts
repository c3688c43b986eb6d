/**
 * The package as others get it, and the container image's runtime without Docker.
 *
 * `npm pack` (which builds dist/ through `prepare`), then the tarball installed in a scratch folder with
 * the Dockerfile's own install line (the RUN marked `# package.test.ts: install`). In that folder:
 * - every subpath export is imported from an ESM script, and type-checked from a consumer .mts file with
 *   this repository's tsc (NodeNext);
 * - the installed bin runs (`npx artifact-store --help`), and says what to do when dist/ is missing;
 * - the image's start command runs as the image runs it: the last stage's ENV, WORKDIR, ENTRYPOINT and
 *   CMD, with its /app as the scratch folder, /data as a temp folder, and 127.0.0.1 and a free port, in
 *   production mode with real keys. The README's curl walkthrough, the /ui and /docs files, a signed
 *   link, the image's HEALTHCHECK command and a SIGTERM that drains a download in flight run against it.
 *
 * What Docker would add and this cannot show: the base images, the stage copies, the `node` user and the
 * /data volume's owner. The test checks those lines say what docs and compose rely on.
 *
 * One install for the whole file: better-sqlite3 compiles from source in it (one to two minutes on two
 * cores). npm's cache is warm from the repository's own `npm ci`, so the install prefers it
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
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { USAGE } from '../src/cli/help.js';
import { DOCS_ASSET_NAMES } from '../src/http/routes/docs.js';
import { UI_ASSET_TYPES } from '../src/http/routes/ui.js';
import { ROOT, readDoc, runBlock } from './doc-blocks.js';
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
/** The image's WORKDIR (/app): the tarball and its install. */
let app: string;
let tarball: { filename: string; files: { path: string }[] };

/** A path of the image as it lies in the scratch folder: its WORKDIR is `app`. */
const inScratch = (value: string) =>
  value
    .split(':')
    .map((part) => (part === WORKDIR || part.startsWith(`${WORKDIR}/`) ? app + part.slice(WORKDIR.length) : part))
    .join(':');

beforeAll(async () => {
  if (skipReason) return;
  tmp = mkdtempSync(join(tmpdir(), 'artifact-store-package-'));
  app = join(tmp, 'app');
  const packDir = join(tmp, 'pack');
  mkdirSync(app);
  mkdirSync(packDir);
  // `prepare` builds dist/ first (its output goes to stderr; stdout is the JSON).
  const pack = await run('npm', ['pack', '--json', '--pack-destination', packDir], {
    cwd: ROOT,
    env: npmEnv,
    timeout: 300_000,
  });
  if (pack.code !== 0) throw new Error(`npm pack failed:\n${pack.stderr}`);
  tarball = (JSON.parse(pack.stdout) as (typeof tarball)[])[0]!;
  // COPY --from=build /src/artifact-store-*.tgz ./
  copyFileSync(join(packDir, tarball.filename), join(app, tarball.filename));
  const install = await run('sh', ['-c', markedInstall[0]!.args], { cwd: app, env: npmEnv, timeout: 1_200_000 });
  if (install.code !== 0) throw new Error(`the image's install failed:\n${install.stdout}\n${install.stderr}`);
}, 1_500_000);

afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

const installed = () => join(app, 'node_modules', 'artifact-store');

describe('the Dockerfile', () => {
  it('builds, installs, then runs node_modules only on a slim image: as node, /data a volume, exec form, a fetch health check', () => {
    expect(dockerfile.map((s) => s.from)).toEqual(['node:20-bookworm', 'node:20-bookworm', 'node:20-bookworm-slim']);
    expect(markedInstall).toHaveLength(1);
    expect(markedInstall[0]!.keyword).toBe('RUN');
    expect(markedInstall[0]!.args).toMatch(/^npm install --omit=dev .*\.\/artifact-store-\*\.tgz$/);
    // The runtime holds the install stage's node_modules and nothing else from the build.
    expect(all(runtime, 'COPY').map((c) => c.args)).toEqual([`--from=install ${WORKDIR}/node_modules ./node_modules`]);
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
    expect(startArgv.slice(-2)).toEqual([`${WORKDIR}/node_modules/artifact-store/bin/artifact-store.js`, 'serve']);
    expect(healthcheck, 'HEALTHCHECK [options] CMD ["node", …]').not.toBeNull();
    const check = execForm(healthcheck![2]!);
    expect(check[0]).toBe('node');
    expect(check.join(' ')).toContain('/readyz');
    expect(check.join(' ')).not.toMatch(/curl|wget/);
  });
});

describe.skipIf(skipReason)(`the packed package${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  it('the tarball holds dist/, bin/, the migrations and package.json: no sources, tests or tsx', () => {
    const paths = tarball.files.map((f) => f.path);
    for (const path of paths) expect(path).toMatch(/^(dist\/|bin\/|migrations\/|package\.json$|README\.md$)/);
    expect(paths).toContain('bin/artifact-store.js');
    expect(paths).toContain('dist/cli/main.js');
    expect(paths).toContain('dist/ui/index.html');
    expect(paths).toContain('migrations/meta/_journal.json');
    const migrations = readdirSync(join(ROOT, 'migrations')).filter((f) => f.endsWith('.sql'));
    expect(migrations.length).toBeGreaterThan(0);
    for (const sql of migrations) expect(paths).toContain(`migrations/${sql}`);
    // tsx and the compiler stay development tools: the production install has neither.
    for (const dev of ['tsx', 'typescript', 'vitest'])
      expect(existsSync(join(app, 'node_modules', dev)), `${dev} installed`).toBe(false);
    const manifest = JSON.parse(readFileSync(join(installed(), 'package.json'), 'utf8'));
    expect(manifest.version).toBe(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version);
  });

  /** A known export of each subpath; a new subpath needs its line here. */
  const KNOWN_EXPORTS: Record<string, string> = {
    '.': 'createApp',
    './client': 'createHttpArtifactStore',
    './node': 'startServer',
    './mcp': 'wrapMcpClient',
    './adk': 'ArtifactStoreArtifactService',
  };

  it('imports every subpath export from ESM, ./adk without its optional peers', async () => {
    writeFileSync(
      join(app, 'imports.mjs'),
      `import { readFileSync } from 'node:fs';
const { exports } = JSON.parse(readFileSync('node_modules/artifact-store/package.json', 'utf8'));
const found = {};
for (const subpath of Object.keys(exports)) found[subpath] = Object.keys(await import('artifact-store' + subpath.slice(1)));
process.stdout.write(JSON.stringify(found));
`,
    );
    expect(existsSync(join(app, 'node_modules', '@google', 'adk'))).toBe(false);
    const out = await run(process.execPath, ['imports.mjs'], { cwd: app, env: inherited });
    expect(out.code, out.stderr).toBe(0);
    const found = JSON.parse(out.stdout) as Record<string, string[]>;
    expect(Object.keys(found).sort()).toEqual(Object.keys(KNOWN_EXPORTS).sort());
    for (const [subpath, name] of Object.entries(KNOWN_EXPORTS)) expect(found[subpath], subpath).toContain(name);
  });

  it("type-checks a consumer of every subpath with the repository's tsc (NodeNext)", async () => {
    // The consumer's own dev dependencies, linked from this repository's install rather than installed
    // a second time: @types/node, and the optional peers an ADK user has (@google/adk and
    // @google/genai, the versions the ADK tests run against). Without them ./adk's types would
    // silently be `any` under skipLibCheck; the @ts-expect-error lines below fail if any subpath's
    // types are. skipLibCheck is on as in most projects: drizzle-orm's declarations do not check clean.
    const links = ['@types/node', '@google/adk', '@google/genai'].filter(
      (name) => !existsSync(join(app, 'node_modules', name)),
    );
    expect(links).toContain('@google/adk');
    for (const name of links) {
      mkdirSync(join(app, 'node_modules', name, '..'), { recursive: true });
      symlinkSync(join(ROOT, 'node_modules', name), join(app, 'node_modules', name), 'dir');
    }
    try {
      writeFileSync(
        join(app, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            target: 'ES2022',
            strict: true,
            noEmit: true,
            skipLibCheck: true,
            types: ['node'],
          },
          files: ['consumer.mts'],
        }),
      );
      writeFileSync(
        join(app, 'consumer.mts'),
        `import type { BaseArtifactService } from '@google/adk';
import { createApp, loadConfig, mintToken } from 'artifact-store';
import { ArtifactStoreArtifactService } from 'artifact-store/adk';
import { type ArtifactStore, createHttpArtifactStore } from 'artifact-store/client';
import { wrapMcpClient } from 'artifact-store/mcp';
import { type RunningServer, startServer } from 'artifact-store/node';

export const store: ArtifactStore = createHttpArtifactStore({ baseUrl: 'http://127.0.0.1:8787', token: 'token' });
// @ts-expect-error baseUrl is a string
createHttpArtifactStore({ baseUrl: 8787 });

export const serve = (): Promise<RunningServer> => startServer(loadConfig({ ARTIFACT_STORE_PORT: '0' }));
// @ts-expect-error startServer takes a Config
startServer('config');
// @ts-expect-error loadConfig takes an environment map
loadConfig(8787);
export { createApp, mintToken };

export const wrap = wrapMcpClient;
// @ts-expect-error wrapMcpClient wraps an MCP SDK Client
wrapMcpClient(42);

export const artifacts: BaseArtifactService = new ArtifactStoreArtifactService(store);
// @ts-expect-error the service stores into an ArtifactStore
new ArtifactStoreArtifactService(42);
type Loaded = Awaited<ReturnType<ArtifactStoreArtifactService['loadArtifact']>>;
// @ts-expect-error loadArtifact resolves to @google/genai's Part or undefined
export const part: Loaded = 42;
`,
      );
      const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
      const out = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: app, env: inherited });
      expect(out.stdout + out.stderr).toBe('');
      expect(out.code).toBe(0);
    } finally {
      for (const name of links) unlinkSync(join(app, 'node_modules', name));
    }
  });

  it('runs the installed bin (npx artifact-store --help), and says to build when dist/ is missing', async () => {
    // As a user types it; npm_config_yes=false: never fetch an artifact-store from the registry instead.
    const help = await run('npx', ['artifact-store', '--help'], {
      cwd: app,
      env: { ...npmEnv, npm_config_yes: 'false' },
    });
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toBe(`${USAGE}\n`);

    // A clone installed with --ignore-scripts: the package without dist/.
    const bare = join(tmp, 'bare', 'artifact-store');
    mkdirSync(bare, { recursive: true });
    copyFileSync(join(installed(), 'package.json'), join(bare, 'package.json'));
    cpSync(join(installed(), 'bin'), join(bare, 'bin'), { recursive: true });
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
    const section = page.slice(page.indexOf('## Cannot find artifact-store/client from a clone'));
    const quote = /^> `(artifact-store: .+)`$/m.exec(section)![1]!;
    expect(missing.stderr.trim().replaceAll(bare, '…')).toBe(quote);
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
      // image's PATH.
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
