/**
 * The examples run as a newcomer runs them (README: `npx tsx examples/agent-loop.ts`), as a child
 * process, and say what they promise.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

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
