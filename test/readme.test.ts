/**
 * The README as a newcomer meets it: the curl walkthrough runs as written against a real server, and
 * the SDK and MCP examples it shows (regions of examples/sdk.ts and examples/mcp-tool-results.ts, as
 * test/docs.test.ts checks) run and do what the README says.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/core/config.js';
import { startServer, type RunningServer } from '../src/node.js';
import { runBlock, runExample } from './doc-blocks.js';
import { runCurlWalkthrough } from './helpers/readme-walkthrough.js';

// CI installs curl (.ci/run); elsewhere a machine without curl skips, by that name.
const hasCurl = spawnSync('curl', ['--version']).status === 0;
if (process.env.CI && !hasCurl) throw new Error('curl is required in CI for the README walkthrough');

let server: RunningServer;
let dataDir: string;
let workDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'readme-data-'));
  workDir = mkdtempSync(join(tmpdir(), 'readme-work-'));
  server = await startServer(loadConfig({}, { port: 0, dataDir, logLevel: 'silent', env: 'test' }));
});

afterAll(async () => {
  await server?.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(workDir, { recursive: true, force: true });
});

describe('README examples', () => {
  it.skipIf(!hasCurl)(
    `the curl walkthrough works as written${hasCurl ? '' : ' (skipped: curl not installed)'}`,
    async () => {
      await runCurlWalkthrough(runBlock('README.md', 'curl-walkthrough'), server.url, server.token, workDir);
    },
  );

  it('the SDK example (examples/sdk.ts) stores, reads, lists, links, follows events and deletes', async () => {
    const out = await runExample('sdk.ts', { ARTIFACT_STORE_URL: server.url, ARTIFACT_STORE_TOKEN: server.token });
    expect(out).toMatch(
      /^stored tableau\.download_workbook_[0-9a-f]{24} \(application\/pdf, 43 bytes\) in session s-42$/m,
    );
    expect(out).toContain('read back 43 bytes; the range starts with %PDF-1.4');
    expect(out).toContain('listed: true; after the delete get answers null');
    expect(out).toMatch(/^link: proxy, a browser GET answers 200 with 43 bytes and no token$/m);
    expect(out).toMatch(/^artifact\.deleted art_[0-9a-f]{24} note\.txt$/m);
    expect(out).toContain('versions 0 and 1; latest is v1, v0 has 24 bytes; 2 versions, names: plan.md');
  }, 60_000);

  it('the MCP example (examples/mcp-tool-results.ts) shows the model a ref and a summary instead of the PDF', async () => {
    const out = await runExample('mcp-tool-results.ts');
    const [, before, after] = /the server sent ([\d,]+) chars; the model reads ([\d,]+):/.exec(out)!;
    expect(Number(before!.replaceAll(',', ''))).toBeGreaterThan(400_000);
    expect(Number(after!.replaceAll(',', ''))).toBeLessThan(1024);
    const id = 'tableau\\.download_workbook_[0-9a-f]{24}';
    expect(out).toMatch(
      new RegExp(`"summary":"Downloaded workbook 'Sales Dashboard' as PDF \\(293 KiB\\)\\. Artifact ${id}"`),
    );
    expect(out).toMatch(/"filename":"Sales Dashboard\.pdf"/);
    expect(out).toContain('same observation both ways: true');
    expect(out).toMatch(/"summary":"Exported 'q3\.csv' \([\d.]+ KiB\)\. Artifact export_report_[0-9a-f]{24}"/);
    expect(out).toMatch(/clampObservation: [\d,]+ → \d+ chars, clamped: true/);
    expect(out).not.toMatch(/JVBERi0/);
  }, 60_000);
});
