/**
 * The app under the shared HTTP suite in workerd (vitest.config.ts's workerd project aliases
 * drivers.ts to this file): the Worker's own app, `createWorkerApp` from src/worker.ts, on the D1
 * and R2 bindings of wrangler.toml, configured through vars as a deployment would be.
 */
import { ENV_NAMES } from '../../src/core/config.js';
import { silentLogger } from '../../src/core/logger.js';
import { createWorkerApp } from '../../src/worker.js';
import { env } from '../workerd/bindings.js';
import { testAppVars, type TestAppOptions } from './test-app-options.js';

export const RUNTIME: 'node' | 'workerd' = 'workerd';

/** Tables the migrations made, minus wrangler's and SQLite's bookkeeping. */
async function dataTables(): Promise<string[]> {
  const { results = [] } = await env.DB.prepare(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name != 'd1_migrations'",
  ).all<{ name: string }>();
  return results.map((r) => r.name);
}

let n = 0;

export async function openTestApp(options: TestAppOptions) {
  // Each app starts on empty storage, as on Node (a fresh SQLite file and blob folder). The workerd
  // project runs one file at a time, so emptying the tables touches no other test.
  await env.DB.batch((await dataTables()).map((t) => env.DB.prepare(`DELETE FROM "${t}"`)));
  const prefix = `t${Date.now().toString(36)}-${n++}/`;
  const vars = testAppVars(options, { s3Prefix: prefix });
  const workerEnv: Record<string, unknown> = { ...env, ...vars };
  // No HS256 keys (a JWKS-only setup) means none at all, not the project's test secret.
  if (!vars[ENV_NAMES.jwtSecrets]) delete workerEnv[ENV_NAMES.jwtSecrets];
  const w = await createWorkerApp(workerEnv as typeof env, {
    now: options.now,
    logger: silentLogger,
    jwks: options.jwks,
    events: options.events,
  });
  const keys = async () => {
    const out: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await env.BLOBS.list({ prefix, ...(cursor ? { cursor } : {}) });
      out.push(...page.objects.map((o) => o.key));
      cursor = page.truncated ? page.cursor : undefined;
    } while (cursor);
    return out;
  };
  return {
    app: w.app,
    service: w.service,
    ops: w.ops,
    repo: w.repo,
    blobs: w.blobs,
    /** Stored objects (committed blobs and leftover staging) under this app's prefix. */
    blobFiles: keys,
    cleanup: async () => {
      await w.service.close();
      const left = await keys();
      if (left.length > 0) await env.BLOBS.delete(left);
    },
  };
}
