/**
 * The Python client (clients/python) passes its pytest suite, which runs against the real service
 * (`artifact-store serve` started by the suite itself). It uses Debian's Python and packages: a
 * machine without them skips, by that name; CI never skips.
 */
import { spawnSync, type ChildProcessByStdio } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { ROOT } from './helpers/cli-server.js';
import { createTestBucket } from './helpers/s3.js';
import { spawnProcess, stopProcess } from './helpers/processes.js';

const PYTHON = '/usr/bin/python3';
const MODULES = ['pytest', 'pytest_asyncio', 'httpx'];
const CI = process.env.CI === 'true';

/** Why the suite cannot run on this machine, or undefined when it can. */
function missingPython(): string | undefined {
  if (!existsSync(PYTHON)) return `no ${PYTHON}`;
  const probe = spawnSync(PYTHON, ['-c', `import ${MODULES.join(', ')}`], { encoding: 'utf8' });
  if (probe.status === 0) return undefined;
  const module = /No module named '([^']+)'/.exec(probe.stderr)?.[1];
  return module ? `Python module ${module} not installed` : `${PYTHON} cannot import ${MODULES.join(', ')}`;
}

const missing = missingPython();
const skipped = missing !== undefined && !CI;

let pytest: ChildProcessByStdio<null, Readable, Readable> | undefined;
let bucketCleanup: (() => Promise<void>) | undefined;

// A run stopped early (its timeout) still lets pytest tear down the services it started.
afterAll(async () => {
  if (pytest) await stopProcess(pytest, { graceMs: 20_000 });
  await bucketCleanup?.();
});

describe.skipIf(skipped)(`Python client${skipped ? ` (skipped: ${missing})` : ''}`, () => {
  it('passes its pytest suite against the real service', async () => {
    if (missing) {
      throw new Error(`${missing}: CI needs apt-get install python3-pytest python3-pytest-asyncio python3-httpx`);
    }
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ARTIFACT_STORE_')));
    // The run's S3 server, in a bucket of its own, for the direct-upload tests (they skip without it).
    const s3 = inject('s3');
    if (!s3 && CI) throw new Error(`CI must run the Python S3 tests, but there is ${inject('s3Unavailable')}`);
    if (s3) {
      const created = await createTestBucket(s3, 'python-client');
      bucketCleanup = created.cleanup;
      env.PYTHON_TESTS_S3 = JSON.stringify({ ...s3, bucket: created.bucket });
    }
    pytest = spawnProcess<ChildProcessByStdio<null, Readable, Readable>>(
      PYTHON,
      ['-m', 'pytest', 'clients/python/tests', '-q', '-p', 'no:cacheprovider'],
      {
        cwd: ROOT,
        env: { ...env, PYTHONPATH: 'clients/python/src', PYTHONDONTWRITEBYTECODE: '1' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    pytest.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
    pytest.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
    const code = await new Promise<number | null>((resolve) => pytest!.on('close', (c) => resolve(c)));
    expect(code, `pytest exited ${code}:\n${output.slice(-20_000)}`).toBe(0);
    // With an S3 server here, nothing may skip (the direct-upload tests skip only without one).
    if (s3) expect(output, output.slice(-2000)).not.toMatch(/\d+ skipped/);
  }, 600_000);

  it("installs with Debian's pip and setuptools (no build isolation: PyPI is out of reach), typed", () => {
    if (missing) throw new Error(missing);
    const pip = spawnSync(PYTHON, ['-m', 'pip', '--version'], { encoding: 'utf8' });
    if (pip.status !== 0) throw new Error(`no pip for ${PYTHON}: CI needs apt-get install python3-pip`);
    // A copy, so the in-tree build leaves nothing in the checkout.
    const scratch = mkdtempSync(join(tmpdir(), 'artifact-store-pip-'));
    try {
      const source = join(scratch, 'source');
      cpSync(join(ROOT, 'clients/python'), source, {
        recursive: true,
        filter: (p) => !/__pycache__|\.egg-info|[/\\]build$/.test(p),
      });
      const target = join(scratch, 'site');
      const install = spawnSync(
        PYTHON,
        ['-m', 'pip', 'install', '--no-build-isolation', '--no-deps', '--no-index', '--target', target, source],
        { encoding: 'utf8', env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1' } },
      );
      expect(install.status, `pip install failed:\n${install.stdout}\n${install.stderr}`).toBe(0);
      expect(existsSync(join(target, 'artifact_store_client', 'py.typed'))).toBe(true);
      const probe = spawnSync(
        PYTHON,
        ['-c', 'import artifact_store_client as a, sys; print(a.__file__); print(a.__version__)'],
        { encoding: 'utf8', cwd: scratch, env: { ...process.env, PYTHONPATH: target } },
      );
      expect(probe.status, probe.stderr).toBe(0);
      expect(probe.stdout).toContain(join(target, 'artifact_store_client'));
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
