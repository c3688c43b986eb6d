/**
 * The Node app the shared HTTP suite runs against, over a given repository and the fs blob store:
 * composed by the same composeApp as src/node/server.ts, from the test's options as configuration.
 * drivers.ts gives it SQLite, drivers.postgres.ts Postgres.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFsBlobStore } from '../../src/blob/fs.js';
import { nodeSha256 } from '../../src/blob/node-hash.js';
import { composeApp } from '../../src/compose/compose-app.js';
import { loadConfig } from '../../src/core/config.js';
import type { ArtifactRepository } from '../../src/db/repository.js';
import { registerMcp } from '../../src/http/routes/mcp.js';
import { registerGateway } from '../../src/http/routes/mcp-gateway.js';
import { enableLinearRegExps } from '../../src/node/regexps.js';
import { createTusFileStaging } from '../../src/node/tus-file-staging.js';
import { createNodeViewSandbox } from '../../src/node/view-sandbox.js';
import { testAppVars, type TestAppOptions } from './test-app-options.js';

/**
 * The Node app over the repository `openRepo` makes (given the app's temp folder) and the fs blob
 * store: SQLite in drivers.ts, Postgres in drivers.postgres.ts. `drop` runs after the repository closed.
 */
export async function openNodeTestApp(
  options: TestAppOptions,
  openRepo: (dir: string) => Promise<{ repo: ArtifactRepository; drop(): Promise<void> }>,
) {
  enableLinearRegExps();
  const viewSandbox = createNodeViewSandbox();
  const dir = mkdtempSync(join(tmpdir(), 'artifact-store-http-'));
  const blobRoot = join(dir, 'blobs');
  const config = loadConfig(testAppVars(options), { env: 'test', dataDir: dir });
  const { repo, drop } = await openRepo(dir);
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
      tusStaging: createTusFileStaging({ dir: join(dir, 'tus'), fsync: false }),
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
      await drop();
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
