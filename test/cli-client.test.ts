/**
 * The client commands of the CLI (put, get, ls, rm, url, token), run as real processes against a real
 * server (`artifact-store serve` in its own process): outputs, exit codes, one-line errors, config
 * precedence and resumed downloads.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ARGS, startCliServer, type CliServer } from './helpers/cli-server.js';

let server: CliServer;
let dir: string;
let dataDir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'artifact-store-cli-'));
  dataDir = join(dir, 'data');
  server = await startCliServer(dataDir);
}, 90_000);

afterAll(async () => {
  server?.kill();
  await server?.exited;
  rmSync(dir, { recursive: true, force: true });
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The CLI with only the given ARTIFACT_STORE_* variables (none inherited), optionally fed stdin. */
function cli(args: string[], env: Record<string, string> = {}, input?: Buffer | string): Promise<Run> {
  return new Promise((ok) => {
    const child = execFile(
      process.execPath,
      [...CLI_ARGS, ...args],
      {
        cwd: dir,
        encoding: 'buffer',
        maxBuffer: 64 * 1024 * 1024,
        env: {
          ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ARTIFACT_STORE_'))),
          HOME: dir,
          ...env,
        },
      },
      (err, stdout, stderr) =>
        ok({
          code: err ? ((err as { code?: number }).code ?? 1) : 0,
          stdout: stdout.toString('latin1'),
          stderr: stderr.toString(),
        }),
    );
    if (input !== undefined) child.stdin!.end(input);
    else child.stdin!.end();
  });
}

const as = () => ({ ARTIFACT_STORE_URL: server.url, ARTIFACT_STORE_TOKEN: server.token });
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

describe('artifact-store put / get / ls / rm', () => {
  it('stores a file, lists it, downloads it byte for byte, and deletes it', async () => {
    const bytes = randomBytes(3 * 1024 * 1024 + 11);
    writeFileSync(join(dir, 'report.pdf'), bytes);
    const put = await cli(['put', 'report.pdf', '--session', 's-cli', '--ttl', '2h'], as());
    expect(put.code, put.stderr).toBe(0);
    const ref = JSON.parse(put.stdout);
    expect(put.stderr).toBe(''); // no progress bar in a pipe
    expect(ref).toMatchObject({
      sizeBytes: bytes.length,
      sha256: sha(bytes),
      filename: 'report.pdf',
      mimeType: 'application/pdf',
      scope: { sessionId: 's-cli' },
    });
    expect(Date.parse(ref.expiresAt) - Date.parse(ref.createdAt)).toBe(2 * 3600 * 1000);

    const ls = await cli(['ls', '--session', 's-cli'], as());
    expect(ls.code).toBe(0);
    const [head, row] = ls.stdout.trim().split('\n');
    expect(head).toMatch(/^ID\s+NAME\s+TYPE\s+SIZE\s+NAMESPACE\s+SESSION\s+CREATED \(UTC\)\s+EXPIRES \(UTC\)$/);
    expect(row).toMatch(new RegExp(`^${ref.id}\\s+report\\.pdf\\s+application/pdf\\s+3\\.0 MiB\\s+\\S+\\s+s-cli\\s`));
    const json = await cli(['ls', '--json', '--session', 's-cli'], as());
    expect(JSON.parse(json.stdout).map((r: { id: string }) => r.id)).toEqual([ref.id]);

    const get = await cli(['get', ref.id, '-o', 'copy.pdf'], as());
    expect(get.code, get.stderr).toBe(0);
    expect(readFileSync(join(dir, 'copy.pdf')).equals(bytes)).toBe(true);
    expect(get.stderr).toContain(sha(bytes));
    const toStdout = await cli(['get', ref.id], as());
    expect(Buffer.from(toStdout.stdout, 'latin1').equals(bytes)).toBe(true);

    const rm = await cli(['rm', ref.id], as());
    expect(rm).toMatchObject({ code: 0, stdout: `deleted ${ref.id}\n` });
    const gone = await cli(['get', ref.id, '-o', 'again.pdf'], as());
    expect(gone.code).toBe(3);
    expect(gone.stderr.trim().split('\n')).toHaveLength(1);
    expect(gone.stderr).toMatch(/No artifact .* in your scope/);
    expect((await cli(['rm', ref.id], as())).code).toBe(3);
  }, 60_000);

  it('reads stdin with -, and prints only the id with --quiet', async () => {
    const put = await cli(['put', '-', '--name', 'notes.json', '-q'], as(), '{"rows":[1,2,3]}');
    expect(put.code, put.stderr).toBe(0);
    const id = put.stdout.trim();
    expect(id).toMatch(/^art_[0-9a-f]{24}$/);
    const back = await cli(['get', id], as());
    expect(back.stdout).toBe('{"rows":[1,2,3]}');
    const ls = JSON.parse((await cli(['ls', '--json', '--type', 'application/json'], as())).stdout);
    expect(ls.find((r: { id: string }) => r.id === id)).toMatchObject({
      filename: 'notes.json',
      mimeType: 'application/json',
    });
    const found = JSON.parse((await cli(['ls', '--json', '--search', 'NOTES.json', '--sort', 'largest'], as())).stdout);
    expect(found.map((r: { id: string }) => r.id)).toContain(id);
    for (const r of found as { id: string; filename?: string }[])
      expect(`${r.id} ${r.filename}`.toLowerCase()).toContain('notes.json');
    const badSort = await cli(['ls', '--sort', 'biggest'], as());
    expect(badSort.code).not.toBe(0);
    expect(badSort.stderr).toMatch(/--sort "biggest" must be one of newest, oldest, largest, smallest, name/);
  });

  it('puts to a name (--to APP/NAME) and gets a version back (APP/NAME@N), session and user-wide', async () => {
    const one = await cli(
      ['put', '-', '--name', 'plan.md', '--to', 'my-agent/plan.md', '--session', 's-9', '-q'],
      as(),
      '# v0',
    );
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout.trim()).toBe('my-agent/plan.md@0');
    const two = await cli(['put', '-', '--to', 'my-agent/plan.md', '--session', 's-9', '-q'], as(), '# v1');
    expect(two.stdout.trim()).toBe('my-agent/plan.md@1');
    expect((await cli(['get', 'my-agent/plan.md@0', '--session', 's-9'], as())).stdout).toBe('# v0');
    expect((await cli(['get', 'my-agent/plan.md', '--session', 's-9'], as())).stdout).toBe('# v1');
    const out = join(dir, 'plan-v0.md');
    const saved = await cli(['get', 'my-agent/plan.md@0', '--session', 's-9', '-o', out], as());
    expect(saved.code, saved.stderr).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe('# v0');
    // Another session has no such name; a user-wide one is the user's everywhere.
    const missing = await cli(['get', 'my-agent/plan.md', '--session', 's-10'], as());
    expect(missing.code).toBe(3);
    await cli(['put', '-', '--to', 'my-agent/profile', '--user-wide', '-q'], as(), 'me');
    expect((await cli(['get', 'my-agent/profile', '--user-wide', '--session', 's-10'], as())).stdout).toBe('me');
    const bad = await cli(['put', '-', '--to', 'my-agent/plan.md@3'], as(), 'x');
    expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining('without @VERSION')]);
  });

  it('resumes an interrupted download with Range, and refuses a partial file that is not this artifact', async () => {
    const bytes = randomBytes(2 * 1024 * 1024);
    writeFileSync(join(dir, 'big.bin'), bytes);
    const id = (await cli(['put', 'big.bin', '-q'], as())).stdout.trim();
    // An interrupted download: the first 700,000 bytes are already there.
    writeFileSync(join(dir, 'resumed.bin.part'), bytes.subarray(0, 700_000));
    const resumed = await cli(['get', id, '-o', 'resumed.bin'], as());
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(readFileSync(join(dir, 'resumed.bin')).equals(bytes)).toBe(true);
    // A partial file of other bytes: only the missing tail is fetched, so the whole does not hash right.
    writeFileSync(join(dir, 'wrong.bin.part'), randomBytes(700_000));
    const wrong = await cli(['get', id, '-o', 'wrong.bin'], as());
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(
      /wrong\.bin\.part does not hash to the artifact's sha256 .* Delete it and run again\./,
    );
  }, 60_000);

  it('draws a progress bar on a terminal for a big file', async () => {
    writeFileSync(join(dir, 'tty.bin'), randomBytes(2 * 1024 * 1024));
    // `script` runs the CLI on a pseudo-terminal, as a person at a shell would.
    const shell = `${[process.execPath, ...CLI_ARGS].map((a) => JSON.stringify(a)).join(' ')} put tty.bin -q`;
    const run = await new Promise<Run>((ok) =>
      execFile(
        'script',
        ['-qfec', shell, '/dev/null'],
        { cwd: dir, encoding: 'utf8', env: { ...process.env, ...as(), HOME: dir } },
        (err, stdout, stderr) => ok({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      ),
    );
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(/put tty\.bin \[#{30}\] 100% 2\.0 MiB \/ 2\.0 MiB/);
    expect(run.stdout).toMatch(/art_[0-9a-f]{24}/);
  });

  it('end-session removes what a session holds and prints what went; a second run finds nothing', async () => {
    const put = (args: string[], body: string) => cli(['put', '-', ...args, '-q'], as(), body);
    const id = (await put(['--name', 'a.txt', '--session', 's-end'], 'end me')).stdout.trim();
    expect((await put(['--to', 'my-agent/notes.md', '--session', 's-end'], 'a note')).code).toBe(0);
    // The same bytes in another session: that session keeps them.
    expect((await put(['--name', 'b.txt', '--session', 's-keep'], 'end me')).stdout.trim()).toBe(id);

    const ended = await cli(['end-session', 's-end'], as());
    expect(ended).toMatchObject({ code: 0, stderr: '' });
    expect(ended.stdout).toBe('ended session s-end: 2 references (12 B), 1 of them named version\n');
    expect(JSON.parse((await cli(['ls', '--session', 's-end', '--json'], as())).stdout)).toEqual([]);
    const kept = JSON.parse((await cli(['ls', '--session', 's-keep', '--json'], as())).stdout);
    expect(kept.map((r: { id: string; filename: string }) => [r.id, r.filename])).toEqual([[id, 'b.txt']]);
    expect((await cli(['get', 'my-agent/notes.md', '--session', 's-end'], as())).code).toBe(3);

    // The session from the environment; --json prints the report.
    const again = await cli(['end-session', '--json'], { ...as(), ARTIFACT_STORE_SESSION: 's-end' });
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ sessionId: 's-end', refs: 0, bytes: 0, versions: 0 });

    // A session-bound token ends its own session only: the service's refusal, exit 1.
    const minted = await cli(['token', '--data-dir', dataDir, '--tenant', 'dev', '--session', 's-mine'], {});
    const bound = { ARTIFACT_STORE_URL: server.url, ARTIFACT_STORE_TOKEN: minted.stdout.trim() };
    const refused = await cli(['end-session', 's-keep'], bound);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/bound to session "s-mine".*\(forbidden\)\n$/);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    for (const args of [['end-session'], ['end-session', 'a', 'b'], ['end-session', 'x'.repeat(257)]]) {
      const run = await cli(args, as());
      expect([run.code, run.stderr.trim().split('\n').length], args.join(' ').slice(0, 40)).toEqual([2, 1]);
    }
  });

  it('prints a link a browser can open without the token', async () => {
    const id = (await cli(['put', '-', '--name', 'hello.txt', '-q'], as(), 'hello link')).stdout.trim();
    const url = await cli(['url', id, '--expires', '1h'], as());
    expect(url.code, url.stderr).toBe(0);
    const res = await fetch(url.stdout.trim());
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('hello link');
    const expires = Number(new URL(url.stdout.trim()).searchParams.get('expires'));
    expect(expires * 1000 - Date.now()).toBeGreaterThan(3500 * 1000);
    expect((await cli(['url', id, '--expires', 'soon'], as())).code).toBe(2);
    expect((await cli(['url', id, '--direct', '--proxy'], as())).code).toBe(2);
  });
});

describe('artifact-store token', () => {
  it('mints a token from the dev secret that the server accepts, bound to a session when asked', async () => {
    const tok = await cli(
      ['token', '--data-dir', dataDir, '--tenant', 'dev', '--session', 's-bound', '--perms', 'read,write'],
      {},
    );
    expect(tok.code, tok.stderr).toBe(0);
    const token = tok.stdout.trim();
    const env = { ARTIFACT_STORE_URL: server.url, ARTIFACT_STORE_TOKEN: token };
    const put = await cli(['put', '-', '--name', 'bound.txt', '-q'], env, 'bound');
    expect(put.code, put.stderr).toBe(0);
    const mine = JSON.parse((await cli(['ls', '--json'], env)).stdout).map((r: { id: string }) => r.id);
    expect(mine).toEqual([put.stdout.trim()]);
    expect((await cli(['token', '--data-dir', dataDir, '--perms', 'root'], {})).code).toBe(2);
  });

  it('prints a link that opens the artifact browser signed in, with the token only in the fragment', async () => {
    const run = await cli(['token', '--ui', '--data-dir', dataDir, '--session', 's-ui', '--perms', 'read'], {
      ARTIFACT_STORE_URL: `${server.url}/`,
    });
    expect(run.code, run.stderr).toBe(0);
    const link = new URL(run.stdout.trim());
    expect(`${link.origin}${link.pathname}${link.search}`).toBe(`${server.url}/ui`);
    const token = new URLSearchParams(link.hash.slice(1)).get('token')!;
    const page = await fetch(`${server.url}/ui`);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    // Only its own scripts run there, nothing may frame it, and no Referer leaves it.
    expect(page.headers.get('content-security-policy')).toMatch(/script-src 'self';.*frame-ancestors 'none'/);
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect((await fetch(`${server.url}/ui/app.js`)).headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(await (await fetch(`${server.url}/ui/..%2F..%2Fpackage.json`)).json()).toMatchObject({ code: 'not_found' });
    const usage = await fetch(`${server.url}/v1/usage`, { headers: { Authorization: `Bearer ${token}` } });
    expect(usage.status).toBe(200);
    // Bound to the session and permissions asked for.
    expect(JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString())).toMatchObject({
      session: 's-ui',
      perms: ['read'],
    });
  });
});

describe('configuration and errors', () => {
  it('takes flags over the environment over the config file', async () => {
    const file = join(dir, 'cli.json');
    writeFileSync(file, JSON.stringify({ url: 'http://127.0.0.1:9', token: server.token }));
    // The file alone points at a closed port: one line saying what to check, exit 1.
    const fileOnly = await cli(['ls', '--config', file], {});
    expect(fileOnly.code).toBe(1);
    expect(fileOnly.stderr.trim().split('\n')).toHaveLength(1);
    expect(fileOnly.stderr).toMatch(/Could not reach .*127\.0\.0\.1:9/);
    // The environment wins over the file, and a flag over the environment.
    expect((await cli(['ls', '--config', file], { ARTIFACT_STORE_URL: server.url })).code).toBe(0);
    expect(
      (await cli(['ls', '--config', file, '--url', 'http://127.0.0.1:9'], { ARTIFACT_STORE_URL: server.url })).code,
    ).toBe(1);
    // The default file is read from ~/.config/artifact-store/config.json.
    const home = join(dir, '.config', 'artifact-store');
    rmSync(home, { recursive: true, force: true });
    (await import('node:fs')).mkdirSync(home, { recursive: true });
    writeFileSync(join(home, 'config.json'), JSON.stringify({ url: server.url, token: server.token }));
    expect((await cli(['ls', '--json'], {})).code).toBe(0);
    writeFileSync(join(home, 'config.json'), '{not json');
    const broken = await cli(['ls'], {});
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/config\.json is not valid JSON/);
    rmSync(home, { recursive: true, force: true });
  });

  it('answers bad usage with one line and exit 2, a bad token with the service’s message and exit 1', async () => {
    const ops = ['--data-dir', dataDir];
    const bad = [
      ['ls', '--bogus'],
      ['put'],
      ['put', 'missing.txt'],
      ['get'],
      ['ls', '--limit', 'lots'],
      ['frobnicate'],
      ['keys', 'create', ...ops],
      ['keys', 'frob', ...ops],
      ['retention', 'go', ...ops],
      ['usage', '--top', '0', ...ops],
      ['fsck', '--fix', ...ops],
      ['backup', ...ops],
      ['keys', 'create', '--operator', '--tenant', 'acme', ...ops],
      ['audit', '--since', 'last tuesday', ...ops],
      ['audit', '--limit', '0', ...ops],
      ['serve', '--port', 'abc', ...ops],
      ['serve', '--port', '', ...ops],
      ['serve', '--port', '70000', ...ops],
    ];
    // All at once: each is a process of its own, slow to start on a busy machine.
    const runs = await Promise.all(bad.map((args) => cli(args, as())));
    bad.forEach((args, i) => {
      const run = runs[i]!;
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(run.stderr).not.toMatch(/ at .*\.ts:\d+/);
    });
    // A bad flag is named as typed, with its value; a bad variable by its name.
    expect((await cli(['serve', '--port', 'abc', ...ops], as())).stderr).toBe(
      'artifact-store: Invalid configuration: --port: must be a whole number from 0 to 65535 (0 takes any free port) (got "abc")\n',
    );
    expect((await cli(['serve', ...ops], { ARTIFACT_STORE_PORT: 'abc' })).stderr).toMatch(
      /^artifact-store: Invalid configuration: ARTIFACT_STORE_PORT: must be a whole number/,
    );
    const badConfig = await cli(['usage', ...ops], { ARTIFACT_STORE_MAX_TTL_SECONDS: 'forever' });
    expect(badConfig.code).toBe(2);
    expect(badConfig.stderr).toMatch(/^artifact-store: Invalid configuration: ARTIFACT_STORE_MAX_TTL_SECONDS: .*\n$/);
    const noToken = await cli(['ls'], { ARTIFACT_STORE_URL: server.url });
    expect(noToken).toMatchObject({ code: 2 });
    expect(noToken.stderr).toMatch(/No token: pass --token, set ARTIFACT_STORE_TOKEN/);
    const badToken = await cli(['ls', '--token', 'not-a-jwt'], { ARTIFACT_STORE_URL: server.url });
    expect(badToken.code).toBe(1);
    expect(badToken.stderr).toMatch(/\(unauthorized\)/);
  }, 180_000);

  it('has --help with examples on every command, and documents the exit codes', async () => {
    const commands = [
      ...['put', 'get', 'ls', 'rm', 'url', 'end-session', 'token'].map((c) => [c]),
      ['serve'],
      ['keys'],
      ['retention', 'run'],
      ['usage'],
      ['fsck'],
      ['backup'],
      ['restore'],
      ['audit'],
      ['mcp'],
    ];
    const helps = await Promise.all(commands.map((args) => cli([...args, '--help'], {})));
    commands.forEach(([command], i) => {
      const help = helps[i]!;
      expect(help.code, command).toBe(0);
      expect(help.stdout, command).toMatch(new RegExp(`^artifact-store ${command}`));
      expect(help.stdout, command).toMatch(/\nExamples:\n {2}.*artifact-store /);
    });
    const top = await cli(['--help'], {});
    expect(top.stdout).toMatch(/Exit codes: 0 done; 1 failed .* 2 bad usage;\s+3 no such artifact/);
  }, 180_000);

  it("keys create --operator makes a key with the operator's powers over HTTP and none over artifacts; audit lists what the host did", async () => {
    const ops = ['--data-dir', dataDir];
    const created = await cli(['keys', 'create', '--operator', '--label', 'oncall', ...ops], {});
    expect(created.code).toBe(0);
    const key = created.stdout.trim().split('\n').at(-1)!;
    expect(key).toMatch(/^ask_/);
    const id = /operator key (\S+)/.exec(created.stdout)![1]!;
    const usage = await fetch(`${server.url}/v1/usage`, { headers: { Authorization: `Bearer ${key}` } });
    expect(usage.status).toBe(200);
    expect((await fetch(`${server.url}/v1/artifacts`, { headers: { Authorization: `Bearer ${key}` } })).status).toBe(
      403,
    );
    const listed = await cli(['keys', 'ls', ...ops], {});
    expect(listed.stdout).toMatch(new RegExp(`^${id}\t\\(operator\\)\tread,write,admin\tactive\toncall$`, 'm'));
    expect((await cli(['keys', 'revoke', id, ...ops], {})).code).toBe(0);
    expect((await fetch(`${server.url}/v1/usage`, { headers: { Authorization: `Bearer ${key}` } })).status).toBe(401);

    const audit = await cli(['audit', '--json', '--since', '1h', ...ops], {});
    expect(audit.code).toBe(0);
    const entries = audit.stdout
      .trim()
      .split('\n')
      .map(
        (l) =>
          JSON.parse(l) as {
            action: string;
            role: string;
            actorKind: string;
            target: string | null;
            details: Record<string, unknown> | null;
          },
      );
    expect(entries.slice(0, 2).map((e) => [e.action, e.role, e.actorKind, e.target])).toEqual([
      ['key.revoke', 'host', 'cli', id],
      ['key.create', 'host', 'cli', id],
    ]);
    expect(entries[1]!.details).toEqual({ operator: true, label: 'oncall' });
    const text = await cli(['audit', '--action', 'key.create', '--limit', '1', ...ops], {});
    expect(text.stdout).toMatch(new RegExp(`^\\S+Z  key\\.create\\s+\\(service\\)\\s+host:cli:\\S+  ${id}`));
  });
});
