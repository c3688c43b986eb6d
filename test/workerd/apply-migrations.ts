// The migrations wrangler applies (`wrangler d1 migrations apply`), applied to the test D1 database.
import { applyD1Migrations } from 'cloudflare:test';
import { env } from './bindings.js';

await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
