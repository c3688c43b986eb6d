/**
 * Which service the CLI picks (src/cli/services.ts), with two real services running on this host:
 * ./data of the current folder, else the one ARTIFACT_STORE_URL names, else a refusal that lists both
 * with the flag that picks each. And what a new user types first: did-you-mean for a mistyped
 * command, an overview that shows every form of every command, --version.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMAND_NAMES, formsOf, HELP } from '../src/cli/help.js';
import { packageOf, staleBuildNote } from '../src/cli/package-info.js';
import { CLI_ARGS, ROOT, startCliServer, type CliServer } from './helpers/cli-server.js';

const scratch = mkdtempSync(join(tmpdir(), 'artifact-store-choice-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The CLI in `cwd` with only the given ARTIFACT_STORE_* variables, and a home with no config file. */
function cli(args: string[], cwd: string, env: Record<string, string> = {}): Promise<Run> {
  return new Promise((ok) =>
    execFile(
      process.execPath,
      [...CLI_ARGS, ...args],
      {
        cwd,
        env: {
          ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ARTIFACT_STORE_'))),
          HOME: scratch,
          ...env,
        },
      },
      (err, stdout, stderr) => ok({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
}

function folder(name: string): string {
  const dir = join(scratch, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

describe('with two services running on this host', () => {
  // Each in a folder of its own, holding its data as ./data; a put of a different size in each.
  const a = { dir: '', server: undefined as unknown as CliServer, bytes: 111 };
  const b = { dir: '', server: undefined as unknown as CliServer, bytes: 2222 };

  beforeAll(async () => {
    a.dir = folder('project-a');
    b.dir = folder('project-b');
    [a.server, b.server] = await Promise.all([
      startCliServer(join(a.dir, 'data')),
      startCliServer(join(b.dir, 'data')),
    ]);
    for (const s of [a, b]) {
      const res = await fetch(`${s.server.url}/v1/artifacts`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${s.server.token}`, 'Content-Type': 'application/octet-stream' },
        body: new Uint8Array(s.bytes).fill(s.bytes % 251),
      });
      expect(res.status).toBe(201);
    }
  }, 180_000);

  afterAll(async () => {
    await Promise.all([a.server?.stop(), b.server?.stop()]);
  });

  /** Which service a token works on: 200 there, 401 on the other. */
  async function acceptedBy(token: string): Promise<string[]> {
    const out: string[] = [];
    for (const [name, s] of [
      ['a', a],
      ['b', b],
    ] as const) {
      const res = await fetch(`${s.server.url}/v1/artifacts`, { headers: { Authorization: `Bearer ${token}` } });
      if (res.status === 200) out.push(name);
      else expect(res.status).toBe(401);
    }
    return out;
  }

  /** Which service's data `usage` and `fsck` read: by the bytes stored there. */
  async function readsDataOf(cwd: string, env: Record<string, string> = {}, extra: string[] = []): Promise<string> {
    const usage = await cli(['usage', '--json', ...extra], cwd, env);
    expect(usage.code, usage.stderr).toBe(0);
    const bytes = (JSON.parse(usage.stdout) as { tenants: { tenantId: string; bytes: number }[] }).tenants.find(
      (t) => t.tenantId === 'dev',
    )?.bytes;
    const fsck = await cli(['fsck', '--json', ...extra], cwd, env);
    expect(fsck.code, fsck.stderr).toBe(0);
    expect(JSON.parse(fsck.stdout)).toMatchObject({ checkedRows: 1, unresolved: 0 });
    return bytes === a.bytes ? 'a' : bytes === b.bytes ? 'b' : `neither (${bytes} bytes)`;
  }

  it('token, usage and fsck in a folder with ./data take that service, without a word', async () => {
    for (const s of [a, b]) {
      const name = s === a ? 'a' : 'b';
      const token = await cli(['token'], s.dir);
      expect(token).toMatchObject({ code: 0, stderr: '' });
      expect(await acceptedBy(token.stdout.trim())).toEqual([name]);
      expect(await readsDataOf(s.dir)).toBe(name);
      // The sign-in link points at the service whose secret signed it.
      const ui = await cli(['token', '--ui'], s.dir);
      expect(ui.stdout).toMatch(new RegExp(`^${s.server.url}/ui#token=ey`));
    }
  }, 180_000);

  it('in an empty folder, take the service ARTIFACT_STORE_URL names, and say so on stderr', async () => {
    const empty = folder('empty-named');
    for (const s of [a, b]) {
      const name = s === a ? 'a' : 'b';
      // localhost and 127.0.0.1 are the same host.
      const env = { ARTIFACT_STORE_URL: s.server.url.replace('127.0.0.1', 'localhost') };
      const token = await cli(['token'], empty, env);
      expect(token.code, token.stderr).toBe(0);
      expect(token.stderr).toContain(
        `using the data dir of the service ARTIFACT_STORE_URL names (pid ${s.server.proc.pid}`,
      );
      expect(await acceptedBy(token.stdout.trim())).toEqual([name]);
      expect(await readsDataOf(empty, env)).toBe(name);
    }
    // The config file's "url" names one the same way.
    const home = folder('home-with-config');
    mkdirSync(join(home, '.config', 'artifact-store'), { recursive: true });
    writeFileSync(join(home, '.config', 'artifact-store', 'config.json'), JSON.stringify({ url: b.server.url }));
    const token = await cli(['token'], empty, { HOME: home });
    expect(token.stderr).toContain('the service the config file names');
    expect(await acceptedBy(token.stdout.trim())).toEqual(['b']);
  }, 180_000);

  it('elsewhere, refuse: exit 2, nothing on stdout, both services listed with the flag that picks each', async () => {
    const empty = folder('empty');
    for (const args of [['token'], ['usage'], ['fsck'], ['keys', 'ls'], ['token', '--ui']]) {
      const run = await cli(args, empty);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stdout, args.join(' ')).toBe('');
      expect(run.stderr).toMatch(/^artifact-store: Several services run on this host, and nothing here picks one/);
      for (const s of [a, b]) {
        const line = run.stderr.split('\n').find((l) => l.includes(`--data-dir ${join(s.dir, 'data')} `));
        expect(line, run.stderr).toContain(`(${s.server.url}, pid ${s.server.proc.pid})`);
      }
    }
    // docs/cli.md quotes this refusal: the same lines, with the paths, URLs and pids of its example.
    const [first, second] = [a, b].sort((x, y) => x.server.proc.pid! - y.server.proc.pid!);
    let shown = (await cli(['token'], empty)).stderr;
    for (const [real, example] of [
      [join(first!.dir, 'data'), '/srv/a/data'],
      [join(second!.dir, 'data'), '/srv/b/data'],
      [empty, '/home/me'],
      [first!.server.url, 'http://127.0.0.1:8787'],
      [second!.server.url, 'http://127.0.0.1:8790'],
      [`pid ${first!.server.proc.pid})`, 'pid 4242)'],
      [`pid ${second!.server.proc.pid})`, 'pid 4243)'],
    ] as const)
      shown = shown.replaceAll(real, example);
    const page = readFileSync(join(ROOT, 'docs', 'cli.md'), 'utf8');
    const quoted = [...page.slice(page.indexOf('### Which service')).matchAll(/^> `(.*)`(<br>)?$/gm)].map((m) => m[1]);
    expect(shown).toBe(`${quoted.join('\n')}\n`);
    // The client commands, with a token but no URL: the same, with --url.
    const ls = await cli(['ls'], empty, { ARTIFACT_STORE_TOKEN: a.server.token });
    expect([ls.code, ls.stdout]).toEqual([2, '']);
    for (const s of [a, b]) expect(ls.stderr).toMatch(new RegExp(`\\n {2}--url ${s.server.url} +\\(data dir `));
    // A URL that names neither does not pick one either.
    const other = await cli(['token'], empty, { ARTIFACT_STORE_URL: 'http://127.0.0.1:9' });
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('ARTIFACT_STORE_URL http://127.0.0.1:9 names none of them');
  }, 180_000);

  it('./data here and a URL that names the other service refuse too, listing both', async () => {
    const run = await cli(['token'], a.dir, { ARTIFACT_STORE_URL: b.server.url });
    expect([run.code, run.stdout]).toEqual([2, '']);
    expect(run.stderr).toMatch(
      /^artifact-store: \.\/data here \(.*\) and ARTIFACT_STORE_URL \(.*\) are different services/,
    );
    expect(run.stderr).toContain(`--data-dir ${join(a.dir, 'data')}`);
    expect(run.stderr).toContain(`--data-dir ${join(b.dir, 'data')}`);
    // A flag settles it: --data-dir, or --url for token.
    const flagged = await cli(['token', '--data-dir', join(b.dir, 'data')], a.dir, {
      ARTIFACT_STORE_URL: b.server.url,
    });
    expect(await acceptedBy(flagged.stdout.trim())).toEqual(['b']);
    const byUrl = await cli(['token', '--url', b.server.url], a.dir);
    expect(await acceptedBy(byUrl.stdout.trim())).toEqual(['b']);
    expect(await readsDataOf(a.dir, {}, ['--data-dir', join(b.dir, 'data')])).toBe('b');
  }, 180_000);

  it('the client commands talk to the service running on ./data when no URL is set', async () => {
    const run = await cli(['ls', '--json'], b.dir, { ARTIFACT_STORE_TOKEN: b.server.token });
    expect(run.code, run.stderr).toBe(0);
    expect((JSON.parse(run.stdout) as { sizeBytes: number }[]).map((r) => r.sizeBytes)).toEqual([b.bytes]);
  });

  it('under set -e, T=$(artifact-store token) stops the script where the choice is refused', async () => {
    const empty = folder('empty-shell');
    const command = [process.execPath, ...CLI_ARGS].map((arg) => `'${arg}'`).join(' ');
    const run = await new Promise<Run>((ok) =>
      execFile(
        'bash',
        ['-c', `set -e\nT=$(${command} token)\necho "reached with T=$T"`],
        { cwd: empty, env: { ...process.env, HOME: scratch } },
        (err, stdout, stderr) => ok({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      ),
    );
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('Several services run on this host');
  }, 30_000);
});

describe('what a new user types first', () => {
  it('suggests the closest command for a mistyped one, and none for a word that is no typo', async () => {
    const cwd = folder('typos');
    const typos = [
      ['lst', 'ls'],
      ['fsk', 'fsck'],
      ['usgae', 'usage'],
      ['tokn', 'token'],
      ['--verison', '--version'],
      ['end-sesion', 'end-session'],
    ] as const;
    const runs = await Promise.all(typos.map(([typed]) => cli([typed], cwd)));
    expect(runs).toEqual(
      typos.map(([typed, meant]) => ({
        code: 2,
        stdout: '',
        stderr: `artifact-store: Unknown command "${typed}": did you mean ${meant}? Run artifact-store --help for the list.\n`,
      })),
    );
    // `npm start --port 8790` passes only the number: the service says where the flag goes.
    const npmStyle = await cli(['serve', '8790'], cwd);
    expect([npmStyle.code, npmStyle.stdout]).toEqual([2, '']);
    expect(npmStyle.stderr).toContain('npm start -- --port 8790');
    const far = await cli(['frobnicate'], cwd);
    expect(far.stderr).toBe('artifact-store: Unknown command "frobnicate". Run artifact-store --help for the list.\n');
  }, 180_000);

  it('--help lists every form of every command the CLI runs, each as its own --help shows it', async () => {
    const cwd = folder('help');
    const top = await cli(['--help'], cwd);
    expect(top.code).toBe(0);
    const lines = top.stdout.split('\n');
    // Each command's own --help, all at once: processes are slow to start on a busy machine.
    const own = await Promise.all(COMMAND_NAMES.map((name) => cli([name, '--help'], cwd)));
    COMMAND_NAMES.forEach((name, i) => {
      expect(own[i], name).toEqual({ code: 0, stdout: `${HELP[name]}\n`, stderr: '' });
      const forms = formsOf(HELP[name]);
      expect(forms.length, name).toBeGreaterThan(0);
      for (const form of forms) {
        expect(form, name).toMatch(new RegExp(`^artifact-store ${name}( |$)`));
        expect(lines, name).toContain(`  ${form}`);
      }
    });
    // The get of a name, and the gateway's --list, are forms of their own.
    expect(lines).toContain('  artifact-store get APP/NAME[@VERSION] [--session S] [--user-wide] [-o FILE]');
    expect(lines.some((l) => /^ {2}artifact-store gateway .*--list/.test(l))).toBe(true);
    // And the overview shows no command the CLI does not run.
    const named = lines.filter((l) => l.startsWith('  artifact-store ')).map((l) => l.split(' ')[3]);
    expect(new Set(named)).toEqual(new Set([...COMMAND_NAMES, '--version', '--help']));
    // `help put` is `put --help`.
    expect((await cli(['help', 'put'], cwd)).stdout).toBe(`${HELP.put}\n`);
  }, 300_000);

  it('--version and -v print the version of the package the code is in', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-v'])
      expect(await cli([flag], folder('version'))).toEqual({
        code: 0,
        stdout: `${version}\n`,
        stderr: '',
      });
    expect(packageOf()).toEqual({ root: ROOT.replace(/\/$/, ''), version });
  }, 30_000);
});

describe('a clone whose dist/ is older than its sources', () => {
  function clone(distTime: number, srcTime: number) {
    const root = mkdtempSync(join(scratch, 'clone-'));
    writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'artifact-store', version: '9.9.9' }));
    mkdirSync(join(root, 'src', 'cli'), { recursive: true });
    mkdirSync(join(root, 'dist', 'cli'), { recursive: true });
    const source = join(root, 'src', 'cli', 'main.ts');
    const built = join(root, 'dist', 'cli', 'package-info.js');
    writeFileSync(source, '');
    writeFileSync(join(root, 'src', 'cli', 'help.ts'), '');
    writeFileSync(built, '');
    utimesSync(join(root, 'src', 'cli', 'help.ts'), 1_000_000, 1_000_000);
    utimesSync(source, srcTime, srcTime);
    utimesSync(built, distTime, distTime);
    return { root, source, built };
  }

  it('says so on stderr, with the command that rebuilds it', () => {
    const { root, built } = clone(2_000_000, 3_000_000);
    expect(packageOf(built)).toEqual({ root, version: '9.9.9' });
    expect(staleBuildNote(built)).toBe(
      `artifact-store: note: this runs ${join(root, 'dist')}, built before the last change to ${join(root, 'src')}: run npm run build in ${root} to run the current sources (npm start runs them without a build).`,
    );
  });

  it('says nothing when dist/ is newer, when the code runs from src/, or without src/ (an installed package)', () => {
    const fresh = clone(3_000_000, 2_000_000);
    expect(staleBuildNote(fresh.built)).toBeUndefined();
    const stale = clone(2_000_000, 3_000_000);
    expect(staleBuildNote(stale.source)).toBeUndefined();
    rmSync(join(stale.root, 'src'), { recursive: true });
    expect(staleBuildNote(stale.built)).toBeUndefined();
  });
});
