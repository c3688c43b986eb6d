/**
 * A real MCP client we did not write, @modelcontextprotocol/inspector-cli, run as a separate
 * process against the artifact MCP server: over Streamable HTTP at /mcp (with the bearer token) and
 * over stdio (`artifact-store mcp`). It lists and reads resources and calls a tool.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpArtifactStore } from '../src/client/http-store.js';
import type { ArtifactRef } from '../src/core/schemas.js';
import { CLI_ARGS, ROOT, startCliServer, type CliServer } from './helpers/cli-server.js';
import * as payloads from './helpers/payloads.js';

const run = promisify(execFile);
const CLI = join(ROOT, 'node_modules/.bin/mcp-inspector-cli');

let dir: string;
let srv: CliServer;
let text: ArtifactRef;
let png: ArtifactRef;
const pngBytes = payloads.png(1500, 11);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mcp-inspector-'));
  srv = await startCliServer(dir);
  const store = createHttpArtifactStore({ baseUrl: srv.url, token: srv.token, scope: { sessionId: 'insp' } });
  text = await store.putText('hello from the store', { filename: 'hello.txt' });
  png = await store.putBytes(pngBytes, { mimeType: 'image/png', filename: 'dot.png' });
}, 60_000);

afterAll(async () => {
  srv?.kill();
  await srv?.exited;
  await rm(dir, { recursive: true, force: true });
});

/**
 * Runs the inspector and parses the JSON it prints. Its working directory is test/: inspector-cli
 * 1.0.3 reads ../package.json relative to the working directory (inspector issues #1503, #1702).
 */
async function inspect(target: string[], args: string[]): Promise<any> {
  const { stdout } = await run(CLI, ['--cli', ...target, ...args], {
    cwd: join(ROOT, 'test'),
    timeout: 60_000,
    env: { ...process.env, NO_COLOR: '1' },
  });
  return JSON.parse(stdout);
}

const targets: Record<string, () => string[]> = {
  'Streamable HTTP (/mcp)': () => [
    `${srv.url}/mcp`,
    '--transport',
    'http',
    '--header',
    `Authorization: Bearer ${srv.token}`,
  ],
  'stdio (artifact-store mcp)': () => [
    process.execPath,
    ...CLI_ARGS,
    'mcp',
    '--session',
    'insp',
    '-e',
    `ARTIFACT_STORE_TOKEN=${srv.token}`,
    '-e',
    `ARTIFACT_STORE_URL=${srv.url}`,
  ],
};

describe.each(Object.keys(targets))('inspector-cli over %s', (name) => {
  it('lists and reads resources, and calls artifact_info', async () => {
    const target = targets[name]!();
    const listed = await inspect(target, ['--method', 'resources/list']);
    expect(listed.resources.map((r: { uri: string }) => r.uri).sort()).toEqual(
      [`artifact://${png.id}`, `artifact://${text.id}`].sort(),
    );
    const templates = await inspect(target, ['--method', 'resources/templates/list']);
    expect(templates.resourceTemplates[0].uriTemplate).toBe('artifact://{id}');

    const readText = await inspect(target, ['--method', 'resources/read', '--uri', `artifact://${text.id}`]);
    expect(readText.contents[0]).toMatchObject({ mimeType: 'text/plain; charset=utf-8', text: 'hello from the store' });
    const readPng = await inspect(target, ['--method', 'resources/read', '--uri', `artifact://${png.id}`]);
    expect(Buffer.from(readPng.contents[0].blob, 'base64').equals(pngBytes)).toBe(true);

    const info = await inspect(target, [
      '--method',
      'tools/call',
      '--tool-name',
      'artifact_info',
      '--tool-arg',
      `id=${png.id}`,
    ]);
    expect(JSON.parse(info.content[0].text)).toMatchObject({
      id: png.id,
      filename: 'dot.png',
      sizeBytes: pngBytes.length,
    });
  }, 120_000);
});
