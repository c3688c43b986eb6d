import type { Config } from 'drizzle-kit';

/** The Postgres schema's migrations (`npm run db:generate` writes these and SQLite's). */
export default {
  dialect: 'postgresql',
  schema: './src/db/postgres/schema.ts',
  out: './migrations/postgres',
} satisfies Config;
