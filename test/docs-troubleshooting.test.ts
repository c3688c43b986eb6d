/**
 * docs/troubleshooting.md, reproduced: each entry marked "(checked)" is caused here the way a reader
 * meets it, and the message the page quotes is the one that comes out.
 */
import { spawn } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/core/config.js';
import { startServer, type RunningServer } from '../src/node.js';
import { readDoc, ROOT } from './doc-blocks.js';
import { runCli, startCliServer } from './helpers/cli-server.js';

const page = readDoc('docs/troubleshooting.md');
const scratch: string[] = [];
afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

function scratchDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'docs-trouble-'));
  scratch.push(dir);
  return dir;
}

/** The CLI from `cwd`, with only the given ARTIFACT_STORE_* variables; resolves with its exit. */
const cli = (args: string[], cwd: string, env: Record<string, string> = {}) => runCli(args, { env, cwd });

/** The text of the page's `> \`…\`` quote right after the heading, with … matching anything. */
function quoted(heading: string): RegExp {
  const section = page.slice(page.indexOf(`## ${heading}`));
  const quote = /^> `(.+)`/m.exec(section)![1]!;
  return new RegExp(quote.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/…/g, '.*?'));
}

describe('docs/troubleshooting.md', () => {
  it('a second service on a taken port exits with EADDRINUSE', async () => {
    const first = await startCliServer(join(scratchDir(), 'data'));
    try {
      const port = new URL(first.url).port;
      const second = await cli(['serve', '--port', port, '--data-dir', join(scratchDir(), 'data')], ROOT);
      expect(second.code).toBe(1);
      expect(second.stderr.replace(` ${port} `, ' 8787 ')).toMatch(quoted('The port is in use (EADDRINUSE)'));
      // The holder is a service of ours: the line says which.
      expect(second.stderr).toContain(`in use by artifact-store serve (pid ${first.proc.pid}, data dir `);
    } finally {
      first.kill();
      await first.exited;
    }
  }, 60_000);

  it("token and the ops commands refuse, with the page's message, where they find no data dir", async () => {
    const nowhere = scratchDir();
    for (const args of [['token'], ['usage'], ['fsck'], ['keys', 'ls']]) {
      const run = await cli(args, nowhere);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(quoted('No data dir to use'));
      expect(run.stdout).toBe('');
    }
    // Nothing was made there.
    expect(readdirSync(nowhere)).toEqual([]);
    // Told a data dir that no service started on, they say so and still make nothing.
    const empty = join(nowhere, 'data');
    mkdirSync(empty);
    for (const args of [
      ['token', '--data-dir', empty],
      ['usage', '--data-dir', empty],
    ]) {
      const run = await cli(args, nowhere);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(args[0] === 'token' ? /No dev signing secret at / : /No database at /);
    }
    expect(readdirSync(empty)).toEqual([]);
  }, 60_000);

  it('token finds the data dir of the service running on this host, from any folder', async () => {
    const server = await startCliServer(join(scratchDir(), 'data'));
    try {
      const run = await cli(['token'], scratchDir());
      expect(run.code).toBe(0);
      expect(run.stderr).toContain(`using the data dir of the service running as pid ${server.proc.pid}`);
      const res = await fetch(`${server.url}/v1/artifacts`, {
        headers: { Authorization: `Bearer ${run.stdout.trim()}` },
      });
      expect(res.status).toBe(200);
    } finally {
      server.kill();
      await server.exited;
    }
    // Stopped, it is forgotten: the same command refuses again.
    expect((await cli(['token'], scratchDir())).code).toBe(2);
  }, 60_000);

  it("a token minted with another data dir's secret fails with the page's message", async () => {
    const here = scratchDir();
    const config = loadConfig({}, { port: 0, dataDir: join(here, 'data'), logLevel: 'silent', env: 'development' });
    const server: RunningServer = await startServer(config);
    // Another service's data dir, with its own secret.
    const otherDir = join(scratchDir(), 'data');
    await (await startServer({ ...config, dataDir: otherDir })).close();
    try {
      const elsewhere = await cli(['token', '--data-dir', otherDir], scratchDir());
      const list = (token: string) =>
        fetch(`${server.url}/v1/artifacts`, { headers: { Authorization: `Bearer ${token}` } });
      const res = await list(elsewhere.stdout.trim());
      expect(res.status).toBe(401);
      const body = await res.text();
      expect(body).toMatch(quoted('The token signature is invalid'));
      expect(body).toContain(`artifact-store token --data-dir ${join(here, 'data')}`);
      // The fix the page gives: the service's folder, or --data-dir.
      for (const ok of [
        await cli(['token'], here),
        await cli(['token', '--data-dir', join(here, 'data')], scratchDir()),
      ]) {
        expect((await list(ok.stdout.trim())).status).toBe(200);
      }
    } finally {
      await server.close();
    }
  }, 60_000);

  it('importing artifact-store-sdk without dist/ names dist/client/index.js', async () => {
    const project = scratchDir();
    const pkg = join(project, 'node_modules', 'artifact-store-sdk');
    mkdirSync(pkg, { recursive: true });
    copyFileSync(join(ROOT, 'packages', 'sdk', 'package.json'), join(pkg, 'package.json'));
    writeFileSync(join(project, 'package.json'), '{"type":"module"}');
    const run = await new Promise<string>((ok) => {
      const args = ['--input-type=module', '-e', "await import('artifact-store-sdk')"];
      const proc = spawn(process.execPath, args, { cwd: project });
      let err = '';
      proc.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
      proc.on('exit', () => ok(err));
    });
    expect(run.replace(`${project}/node_modules/`, '…/')).toMatch(
      quoted('Cannot find artifact-store-sdk from a clone'),
    );
    for (const manifest of [join(ROOT, 'package.json'), join(ROOT, 'packages', 'sdk', 'package.json')]) {
      const { exports } = JSON.parse(readFileSync(manifest, 'utf8')) as {
        exports: Record<string, string | { default: string }>;
      };
      for (const entry of Object.values(exports))
        if (typeof entry !== 'string') expect(entry.default).toMatch(/^\.\/dist\//);
    }
  }, 30_000);

  it('blobs stored after a backup are orphan_bytes after a restore; --repair removes them past the grace period', async () => {
    const cwd = scratchDir();
    const data = join(cwd, 'data');
    const server = await startServer(
      loadConfig({}, { port: 0, dataDir: data, logLevel: 'silent', env: 'development' }),
    );
    const put = async (byte: number) => {
      const body = new Uint8Array(1024).fill(byte);
      const headers = { Authorization: `Bearer ${server.token}` };
      const res = await fetch(`${server.url}/v1/artifacts`, { method: 'POST', headers, body });
      expect(res.status).toBe(201);
    };
    await put(1);
    await put(2);
    expect((await cli(['backup', 'backup'], cwd)).code).toBe(0);
    await put(3);
    await server.close();

    copyFileSync(join(cwd, 'backup', 'artifacts.db'), join(data, 'artifacts.db'));
    cpSync(join(cwd, 'backup', 'blobs'), join(data, 'blobs'), { recursive: true });
    const found = await cli(['fsck'], cwd);
    expect(found.code).toBe(1);
    const lines = found.stdout.split('\n');
    expect(lines[0]).toBe('fsck: 2 blob rows, 3 stored blobs checked; 1 problems, 1 unresolved');
    expect(lines[1]).toMatch(/^ {2}orphan_bytes [0-9a-f]{64} — run with --repair to fix$/);
    expect(page).toContain('`fsck: 2 blob rows, 3 stored blobs checked; 1 problems, 1 unresolved`');

    // The retention run does not collect them: it collects blobs that have a row.
    expect((await cli(['retention', 'run'], cwd, { ARTIFACT_STORE_GC_GRACE_SECONDS: '0' })).code).toBe(0);
    expect((await cli(['fsck'], cwd)).stdout).toContain('orphan_bytes');

    const young = await cli(['fsck', '--repair'], cwd);
    expect(young.code).toBe(1);
    expect(young.stdout).toContain('— left (within the grace period)');
    const repaired = await cli(['fsck', '--repair'], cwd, { ARTIFACT_STORE_GC_GRACE_SECONDS: '0' });
    expect(repaired.stdout).toContain('— repaired');
    expect(repaired.code).toBe(0);
    const clean = await cli(['fsck', '--verify'], cwd);
    expect(clean.stdout).toMatch(/^fsck: 2 blob rows, 2 stored blobs checked; 0 problems, 0 unresolved$/m);
  }, 60_000);

  it('the fs driver answers POST /v1/uploads with 400 direct_uploads_unavailable, in the words the page quotes', async () => {
    const config = loadConfig({}, { port: 0, dataDir: join(scratchDir(), 'data'), logLevel: 'silent', env: 'test' });
    const server = await startServer(config);
    try {
      const res = await fetch(`${server.url}/v1/uploads`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${server.token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({
          sizeBytes: 3,
          sha256: 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
        }),
      });
      expect(res.status).toBe(400);
      const body = (await res.json()) as { message: string; details: { reason: string } };
      expect(body.details.reason).toBe('direct_uploads_unavailable');
      const section = page.slice(page.indexOf('## Direct uploads answer 400 on the fs driver'));
      const quote = [...section.matchAll(/^> (.+)$/gm)]
        .slice(0, 2)
        .map((m) => m[1])
        .join(' ');
      expect(body.message).toBe(quote);
    } finally {
      await server.close();
    }
  }, 30_000);

  it('an unknown ARTIFACT_STORE_* variable stops the start, naming the setting meant', async () => {
    const out = await cli(['serve', '--port', '0', '--data-dir', join(scratchDir(), 'data')], ROOT, {
      ARTIFACT_STORE_PROT: '1',
    });
    expect(out.code).not.toBe(0);
    expect(out.stderr).toMatch(quoted('The service refuses to start: Invalid configuration'));
  }, 30_000);
});
