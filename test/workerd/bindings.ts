import { env as raw } from 'cloudflare:test';
import type { WorkerEnv } from '../../src/worker.js';

/** wrangler.toml's bindings and vars, plus what vitest.config.ts adds for tests. */
export const env = raw as WorkerEnv & { TEST_MIGRATIONS: { name: string; queries: string[] }[] };
