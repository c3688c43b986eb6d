/**
 * The app under the shared HTTP suite, on Node: composed by the same composeApp as src/node/server.ts,
 * from the test's options as configuration, over SQLite in a temp file and the fs blob store. The
 * workerd project of vitest.config.ts swaps this module for drivers.workerd.ts (the Worker's own app
 * on D1 and R2), so the same suite runs on both runtimes.
 */
import { join } from 'node:path';
import { createSqliteRepository } from '../../src/db/sqlite.js';
import { openNodeTestApp } from './node-test-app.js';
import type { TestAppOptions } from './test-app-options.js';

export { listFiles } from './node-test-app.js';

export const RUNTIME: 'node' | 'workerd' = 'node';

export async function openTestApp(options: TestAppOptions) {
  return openNodeTestApp(options, async (dir) => ({
    repo: createSqliteRepository({ path: join(dir, 'artifacts.db') }),
    drop: async () => {},
  }));
}
