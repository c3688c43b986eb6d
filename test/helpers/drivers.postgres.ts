/**
 * The app under the shared HTTP suite on Postgres (vitest.config.ts's node-postgres project aliases
 * drivers.ts to this file): the Node app of drivers.ts, its metadata in a database of its own on the
 * run's Postgres (test/global-setup-postgres.ts).
 */
import { createPostgresRepository } from '../../src/db/postgres.js';
import { openNodeTestApp } from './node-test-app.js';
import { freshDatabase } from './postgres.js';
import type { TestAppOptions } from './test-app-options.js';

export { listFiles } from './node-test-app.js';

export const RUNTIME: 'node' | 'workerd' = 'node';

export async function openTestApp(options: TestAppOptions) {
  return openNodeTestApp(options, async () => {
    const db = await freshDatabase();
    try {
      // A test's own clock drives puts too (as the Worker's app does on D1), not the database's.
      const clock = options.now ? 'caller' : 'database';
      return { repo: await createPostgresRepository({ url: db.url, clock }), drop: () => db.drop() };
    } catch (err) {
      await db.drop();
      throw err;
    }
  });
}
