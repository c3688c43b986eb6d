/**
 * The examples run as a newcomer runs them (README: `npx tsx examples/agent-loop.ts`), as a child
 * process, and say what they promise.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runExample } from './doc-blocks.js';
import { CLI_ARGS, type CliServer, startCliServer } from './helpers/cli-server.js';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..');

const chars = (s: string) => Number(s.replaceAll(',', ''));

describe('examples/agent-loop.ts', () => {
  it('runs a scripted agent over real MCP servers and shows each observation shrink to refs', async () => {
    const env = { ...process.env };
    delete env.ARTIFACT_STORE_URL;
    delete env.ARTIFACT_STORE_TOKEN;
    const { stdout } = await run(process.execPath, ['--import', 'tsx', join(ROOT, 'examples', 'agent-loop.ts')], {
      cwd: ROOT,
      env,
      timeout: 60_000,
    });

    const steps = [
      ...stdout.matchAll(
        /without artifact-store the model reads ([\d,]+) chars\n {2}with artifact-store it reads ([\d,]+) chars/g,
      ),
    ].map((m) => ({ before: chars(m[1]!), after: chars(m[2]!) }));
    expect(steps).toHaveLength(3);
    // The incident: hundreds of KB of base64 PDF down to a ref and a summary under 1 KB.
    expect(steps[0]!.before).toBeGreaterThan(200_000);
    expect(steps[0]!.after).toBeLessThan(1024);
    for (const step of steps) expect(step.after).toBeLessThan(step.before);
    expect(stdout).toMatch(
      /Downloaded workbook 'Sales Dashboard' as PDF \([\d.]+ KiB\)\. Artifact tableau\.download_workbook_[0-9a-f]{24}/,
    );
    expect(stdout).toMatch(/"uri": "artifact:\/\/everything\.get-tiny-image_[0-9a-f]{24}"/);
    expect(stdout).toMatch(
      /The store holds 3 artifact\(s\): .*application\/pdf.*image\/png|The store holds 3 artifact\(s\): .*image\/png.*application\/pdf/,
    );
    expect(stdout).not.toMatch(/JVBERi0|iVBORw0KGgo/);
  }, 90_000);
});

describe('examples/resources.ts', () => {
  it('lists, reads into the store, answers from the cache, and drops the cached read on an update', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', join(ROOT, 'examples', 'resources.ts')], {
      cwd: ROOT,
      timeout: 60_000,
    });
    expect(stdout).toMatch(/offers \d+ resources and 2 templates/);
    expect(stdout).toMatch(
      /read demo:\/\/resource\/dynamic\/blob\/1\n {2}stored: mcp-servers-everything\.resources_read_[0-9a-f]{24}/,
    );
    expect(stdout).toContain('read it again: from the cache = true');
    expect(stdout).toContain('update: demo://resource/dynamic/blob/1 (cached read dropped: true)');
    expect(stdout).toContain('read after the update: from the cache = false');
    expect(stdout).toContain('everything.resources_read:');
  }, 90_000);
});

describe('examples/read-back.ts', () => {
  it('stores a log and a JSON, then finds the one line and the one issue through the tools and the SDK', async () => {
    const env = { ...process.env };
    delete env.ARTIFACT_STORE_URL;
    delete env.ARTIFACT_STORE_TOKEN;
    const { stdout } = await run(process.execPath, ['--import', 'tsx', join(ROOT, 'examples', 'read-back.ts')], {
      cwd: ROOT,
      env,
      timeout: 90_000,
    });
    expect(stdout).toMatch(
      /stored as artifact ci\.get_job_logs_[0-9a-f]{24}; 40,000 lines; artifact_search or artifact_read to look inside\./,
    );
    expect(stdout).toContain(' 18432: ERROR tests/upload.test.ts:88 expected 201, got 503');
    expect(stdout).toMatch(/lines 18,430–18,434 of 40,000\n/);
    expect(stdout).toContain('$[1234] = {"number":2234,"title":"Upload hangs at 99% on large PDFs"');
    expect(stdout).toContain('store.read: line 18432 of 40000: ERROR tests/upload.test.ts:88');
    expect(stdout).toContain('store.search: 1 match, line 18432');
    expect(stdout).toContain(`store.query: $[0]['title'] = "Issue 1000"`);
  }, 120_000);
});

/** This process's environment without its ARTIFACT_STORE_* variables. */
const inherited = () =>
  Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ARTIFACT_STORE_')));

/** Runs examples/<name> expecting it to fail: its exit code and what it printed. */
async function runFailing(name: string, env: Record<string, string>) {
  const exited = await run(process.execPath, ['--import', 'tsx', join(ROOT, 'examples', name)], {
    cwd: ROOT,
    env: { ...inherited(), ...env },
    timeout: 60_000,
  }).then(
    ({ stdout }) => ({ code: 0, stdout, stderr: '' }),
    (err: { code: number; stdout: string; stderr: string }) => err,
  );
  return { code: exited.code, stdout: exited.stdout, stderr: exited.stderr };
}

describe('the examples against `artifact-store serve`, with the token its start prints', () => {
  let dir: string;
  let cli: CliServer;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'examples-banner-'));
    cli = await startCliServer(dir);
  });
  afterAll(async () => {
    await cli?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('examples/adk.ts saves and reads its artifacts with the dev token as printed', async () => {
    // The printed token is bound to the user "dev", which the example's ADK user is.
    const claims = JSON.parse(Buffer.from(cli.token.split('.')[1]!, 'base64url').toString());
    expect(claims).toMatchObject({ tenant: 'dev', sub: 'dev' });
    const out = await runExample('adk.ts', { ARTIFACT_STORE_URL: cli.url, ARTIFACT_STORE_TOKEN: cli.token });
    expect(out).toMatch(/^the tool saved chart\.png as version 0, then version 1$/m);
    expect(out).toMatch(/^in the store: chart\.png versions 0,1, image\/png, \d+ bytes, artifact:\/\/travel_agent_/m);
    expect(out).toMatch(/^session s-2 sees: user:itinerary\.txt$/m);
    expect(out).toMatch(/^download link: http:\/\/\S+ \(image\/png\)$/m);
  }, 90_000);

  it("examples/adk.ts refused inside its tool exits non-zero with the service's message", async () => {
    // A token bound to another user: the service refuses the tool's saves (403), and ADK hands the
    // model { error } instead of throwing.
    const minted = await run(process.execPath, [...CLI_ARGS, 'token', '--sub', 'alice', '--data-dir', dir], {
      cwd: ROOT,
      env: inherited(),
      encoding: 'utf8',
    });
    const failed = await runFailing('adk.ts', {
      ARTIFACT_STORE_URL: cli.url,
      ARTIFACT_STORE_TOKEN: minted.stdout.trim(),
    });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain(
      `Error in tool 'save_chart': You are bound to user "alice"; you cannot name user "dev".`,
    );
    expect(failed.stdout).not.toMatch(/undefined|the tool saved/);
  }, 90_000);

  it('examples/adk.ts and examples/sdk.ts with a token the service does not accept exit non-zero with its message', async () => {
    const env = { ARTIFACT_STORE_URL: cli.url, ARTIFACT_STORE_TOKEN: 'not-a-token' };
    const [adk, sdk] = await Promise.all([runFailing('adk.ts', env), runFailing('sdk.ts', env)]);
    for (const [example, failed] of [
      ['adk.ts', adk],
      ['sdk.ts', sdk],
    ] as const) {
      expect(failed.code, example).toBe(1);
      expect(failed.stderr, example).toContain('The bearer token is neither a JWT nor an API key.');
      expect(failed.stdout, example).not.toMatch(/undefined|null/);
    }
    // ADK hands a tool only the error's message; the SDK's ArtifactError keeps its code too.
    expect(sdk.stderr).toMatch(
      /ArtifactError: The bearer token is neither a JWT nor an API key\.[\s\S]*code: 'unauthorized'/,
    );
  }, 90_000);
});

describe('examples/embedded.ts', () => {
  it('opens a data dir in-process, stores, reads back, lists and searches, and the process exits after close()', async () => {
    const { existsSync, mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const dataDir = mkdtempSync(join(tmpdir(), 'artifact-store-embedded-example-'));
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ARTIFACT_STORE_')));
    try {
      // No timeout: the child exits on its own only when close() left nothing running.
      const { stdout } = await run(process.execPath, ['--import', 'tsx', join(ROOT, 'examples', 'embedded.ts')], {
        cwd: ROOT,
        env: { ...env, ARTIFACT_STORE_DATA_DIR: dataDir },
      });
      expect(stdout).toMatch(/stored ci\.get_job_logs_[0-9a-f]{24} \(48895 bytes\) for tenant dev, session s-42/);
      expect(stdout).toContain('read back 48895 bytes; the session lists 1 artifact(s)');
      expect(stdout).toContain('search: 1 match, line 4322: ERROR disk full');
      expect(existsSync(join(dataDir, 'artifacts.db'))).toBe(true);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
