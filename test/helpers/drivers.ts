/**
 * The app under the shared HTTP suite, on Node: composed by the same composeApp as src/node/server.ts,
 * from the test's options as configuration, over SQLite in a temp file and the fs blob store. The
 * workerd project of vitest.config.ts swaps this module for drivers.workerd.ts (the Worker's own app
 * on D1 and R2), so the same suite runs on both runtimes.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFsBlobStore } from '../../src/blob/fs.js';
import { nodeSha256 } from '../../src/blob/node-hash.js';
import { composeApp } from '../../src/compose/compose-app.js';
import { loadConfig } from '../../src/core/config.js';
import { createSqliteRepository } from '../../src/db/sqlite.js';
import { registerMcp } from '../../src/http/routes/mcp.js';
import { registerGateway } from '../../src/http/routes/mcp-gateway.js';
import { enableLinearRegExps } from '../../src/node/regexps.js';
import { createNodeViewSandbox } from '../../src/node/view-sandbox.js';
import { testAppVars, type TestAppOptions } from './test-app-options.js';

export const RUNTIME: 'node' | 'workerd' = 'node';

export async function openTestApp(options: TestAppOptions) {
  enableLinearRegExps();
  const viewSandbox = createNodeViewSandbox();
  const dir = mkdtempSync(join(tmpdir(), 'artifact-store-http-'));
  const blobRoot = join(dir, 'blobs');
  const config = loadConfig(testAppVars(options), { env: 'test', dataDir: dir });
  const repo = createSqliteRepository({ path: join(dir, 'artifacts.db') });
  const blobs = createFsBlobStore({ root: blobRoot, hash: nodeSha256, fsync: false });
  const { app, service, ops, views } = await composeApp(
    config,
    { repo, blobs, hash: nodeSha256 },
    {
      keys: { howToSetKeys: 'pass hmacSecrets or jwks to the test app.' },
      ...(options.jwks ? { jwks: options.jwks } : {}),
      ...(options.now ? { now: options.now } : {}),
      hostActorId: 'test',
      viewSandbox,
      http: {
        mcp: { mount: registerMcp },
        ...(options.events ? { events: options.events } : {}),
        ...(options.gateway ? { gateway: { mount: registerGateway, gateway: options.gateway } } : {}),
      },
    },
  );
  return {
    app,
    service,
    views,
    ops,
    repo,
    blobs,
    /** Stored objects other than directories (committed blobs and leftover uploads). */
    blobFiles: async () => listFiles(blobRoot),
    cleanup: async () => {
      await service.close();
      await repo.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function listFiles(root: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(root);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const name of entries) {
    const p = join(root, name);
    if (statSync(p).isDirectory()) out.push(...listFiles(p));
    else out.push(p);
  }
  return out;
}
