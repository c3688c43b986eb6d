import { createHash, randomBytes } from 'node:crypto';
import { openAsBlob } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpArtifactStore } from '../src/client/index.js';
import { loadConfig } from '../src/core/config.js';
import { startServer, type RunningServer } from '../src/node.js';
import { spawnCli } from './helpers/cli-server.js';
import { stopProcess } from './helpers/processes.js';
import { requestGate } from './helpers/request-gate.js';

const MiB = 1024 * 1024;
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

let server: RunningServer;
let dir: string;
let token: string;

const until = async (what: string, check: () => boolean, ms = 60_000) => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('big uploads through the service (tus) from the SDK and the CLI', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'artifact-tus-client-'));
    server = await startServer(
      loadConfig(
        {},
        { port: 0, dataDir: join(dir, 'data'), logLevel: 'silent', env: 'test', maxArtifactBytes: String(200 * MiB) },
      ),
    );
    token = await server.mintToken({ tenant: 'acme', sub: 'u1', perms: ['read', 'write'] });
  });
  afterAll(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('the SDK sends a big Blob through /v1/tus in chunks, with progress, where there are no direct uploads', async () => {
    const file = join(dir, 'sdk.bin');
    const bytes = randomBytes(10 * MiB + 7);
    await writeFile(file, bytes);
    const calls: string[] = [];
    const seen: number[] = [];
    const store = createHttpArtifactStore({
      baseUrl: server.url,
      token,
      fetch: (input, init) => {
        calls.push(
          `${init?.method ?? 'GET'} ${new URL(String(input instanceof Request ? input.url : input)).pathname.replace(/up_\w+/, 'up')}`,
        );
        return fetch(input, init);
      },
      uploads: { tusAboveBytes: MiB, tusChunkBytes: 4 * MiB, onProgress: (p) => seen.push(p.sentBytes) },
    });
    const ref = await store.putBlob(await openAsBlob(file), { filename: 'sdk.bin', meta: { run: 1 } });
    expect(ref).toMatchObject({
      sha256: sha256(bytes),
      sizeBytes: bytes.byteLength,
      filename: 'sdk.bin',
      meta: { run: 1 },
    });
    expect(calls).toEqual([
      'POST /v1/uploads',
      'POST /v1/tus',
      'PATCH /v1/tus/up',
      'PATCH /v1/tus/up',
      'PATCH /v1/tus/up',
      `GET /v1/artifacts/${ref.id}/meta`,
    ]);
    expect(seen).toEqual([0, 4 * MiB, 8 * MiB, bytes.byteLength]);
    // The next big put already knows: no direct upload is tried again.
    calls.length = 0;
    await store.putBytes(randomBytes(2 * MiB));
    expect(calls[0]).toBe('POST /v1/tus');
  });

  it('`put --resume` killed part way resumes in a new process and sends only what was not acknowledged', async () => {
    const proxy = await requestGate(server.url, (req) => req.method === 'PATCH');
    const records = join(dir, 'uploads.json');
    const file = join(dir, 'cli.bin');
    // Two PATCHes of 64 MiB and the rest: the first goes through, the second is held, then the kill.
    const bytes = randomBytes(130 * MiB);
    await writeFile(file, bytes);
    const put = () =>
      spawnCli(['put', file, '--resume', '-q', '--url', proxy.url, '--token', token], {
        ARTIFACT_STORE_RESUME_FILE: records,
      });
    try {
      proxy.gate.passAfter = 1;
      const first = put();
      await until(
        'the first chunk acknowledged and the second held',
        () => proxy.gate.passed() >= 1 && proxy.gate.held() >= 1,
      );
      await stopProcess(first.proc, { signal: 'SIGKILL' });
      await first.exited;
      proxy.open();
      const path = Object.values(JSON.parse(await readFile(records, 'utf8')) as Record<string, string>)[0]!;
      const head = await fetch(`${server.url}${path}`, {
        method: 'HEAD',
        headers: { Authorization: `Bearer ${token}`, 'Tus-Resumable': '1.0.0' },
      });
      expect(head.headers.get('Upload-Offset')).toBe(String(64 * MiB));

      const second = put();
      expect(await second.exited, second.output()).toBe(0);
      expect(second.output()).toContain(`resuming upload ${path.split('/').pop()}: 64 MiB of 130 MiB already uploaded`);
      // One PATCH before the kill, two after (64 MiB and the last 2 MiB).
      expect(proxy.gate.passed()).toBe(3);
      const id = second.output().match(/^(art_\S+)$/m)![1]!;
      const back = Buffer.from(
        await (
          await fetch(`${server.url}/v1/artifacts/${id}`, { headers: { Authorization: `Bearer ${token}` } })
        ).arrayBuffer(),
      );
      expect(sha256(back)).toBe(sha256(bytes));
      expect(JSON.parse(await readFile(records, 'utf8'))).toEqual({});
    } finally {
      proxy.open();
      await proxy.close();
    }
  });
});
