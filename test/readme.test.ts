import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/core/config.js';
import { createHttpArtifactStore } from '../src/client/index.js';
import { startServer, type RunningServer } from '../src/node.js';

// The README's curl walkthrough, run as written against a real server. CI installs curl (.ci/run);
// elsewhere a machine without curl skips, by that name.
const hasCurl = spawnSync('curl', ['--version']).status === 0;
if (process.env.CI && !hasCurl) throw new Error('curl is required in CI for the README walkthrough');

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

function shellBlockStartingWith(prefix: string): string {
  const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const block = blocks.find((b) => b.startsWith(prefix));
  if (!block) throw new Error(`README has no sh block starting with ${prefix}`);
  return block;
}

/** The first JSON object in text where several answers are printed back to back. */
function firstJsonObject(text: string): Record<string, unknown> {
  const start = text.indexOf('{');
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '{') depth++;
    else if (ch === '}' && --depth === 0) return JSON.parse(text.slice(start, i + 1));
  }
  throw new Error(`no JSON object in ${text}`);
}

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
  it.skipIf(!hasCurl)(`the curl walkthrough works as written${hasCurl ? '' : ' (skipped: curl not installed)'}`, async () => {
    const block = shellBlockStartingWith('export ARTIFACT_STORE_TOKEN=');
    const script = block
      .replace(/^export ARTIFACT_STORE_TOKEN=.*$/m, `export ARTIFACT_STORE_TOKEN=${server.token}`)
      .replace(/^API=.*$/m, `API=${server.url}`);
    // Asynchronously: the server answering curl runs in this process.
    const { stdout: out } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', script], { cwd: workDir, encoding: 'utf8' });
    expect(out).not.toMatch(/"code":"/);
    const stored = firstJsonObject(out);
    expect(stored).toMatchObject({ mimeType: 'application/pdf', filename: 'Sales.pdf', namespace: 'tableau.download_workbook', scope: { sessionId: 's-42' } });
    // The answer shown in the README matches what came back.
    expect(block).toContain(`"sizeBytes":${stored.sizeBytes}`);
    expect(out).toContain('%PDF-1.4');
    expect(out.trim().endsWith('204')).toBe(true);
    expect(readFileSync(join(workDir, 'Downloaded.pdf'))).toEqual(readFileSync(join(workDir, 'Sales.pdf')));
  });

  it('the SDK walkthrough works as written', async () => {
    const store = createHttpArtifactStore({ baseUrl: server.url, token: server.token, scope: { sessionId: 's-42' } });
    const toolOutput = { content: Buffer.from('%PDF-1.4\n% from the SDK\n').toString('base64') };
    const ref = await store.putBase64(toolOutput.content, {
      mimeType: 'application/pdf',
      filename: 'Sales.pdf',
      namespace: 'tableau.download_workbook',
      source: { tool: 'download_workbook' },
    });
    expect(ref.id).toMatch(/^tableau\.download_workbook_[0-9a-f]{24}$/);
    expect(ref.scope.sessionId).toBe('s-42');
    const bytes = await store.get(ref.id);
    expect(new TextDecoder().decode(bytes!)).toBe('%PDF-1.4\n% from the SDK\n');
    const stream = await store.getStream(ref.id, { range: { start: 0, end: 7 } });
    expect(new TextDecoder().decode(await new Response(stream).arrayBuffer())).toBe('%PDF-1.4');
    const page = await store.list({ namespace: 'tableau.download_workbook', limit: 50 });
    expect(page.items.map((r) => r.id)).toContain(ref.id);
    expect(await store.delete(ref.id)).toBe(true);
    expect(await store.get(ref.id)).toBeNull();
  });
});
