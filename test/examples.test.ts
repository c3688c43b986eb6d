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
    const { stdout } = await run(process.execPath, ['--import', 'tsx', join(ROOT, 'examples', 'agent-loop.ts')], { cwd: ROOT, env, timeout: 60_000 });

    const steps = [...stdout.matchAll(/without artifact-store the model reads ([\d,]+) chars\n {2}with artifact-store it reads ([\d,]+) chars/g)].map((m) => ({ before: chars(m[1]!), after: chars(m[2]!) }));
    expect(steps).toHaveLength(3);
    // The incident: hundreds of KB of base64 PDF down to a ref and a summary under 1 KB.
    expect(steps[0]!.before).toBeGreaterThan(200_000);
    expect(steps[0]!.after).toBeLessThan(1024);
    for (const step of steps) expect(step.after).toBeLessThan(step.before);
    expect(stdout).toMatch(/Downloaded workbook 'Sales Dashboard' as PDF \([\d.]+ KB\)\. Artifact tableau\.download_workbook_[0-9a-f]{24}/);
    expect(stdout).toMatch(/"uri": "artifact:\/\/everything\.get-tiny-image_[0-9a-f]{24}"/);
    expect(stdout).toMatch(/The store holds 3 artifact\(s\): .*application\/pdf.*image\/png|The store holds 3 artifact\(s\): .*image\/png.*application\/pdf/);
    expect(stdout).not.toMatch(/JVBERi0|iVBORw0KGgo/);
  }, 90_000);
});
