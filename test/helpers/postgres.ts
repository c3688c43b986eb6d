/**
 * Postgres in tests: `describePostgres` (skips without a server, except in CI, where that fails), and
 * a fresh database per call on the run's server (test/global-setup-postgres.ts).
 */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { describe, inject, it } from 'vitest';

/**
 * Tests that need a real Postgres. Without one they are skipped with the reason in their name, except
 * in CI (CI=true), where a missing Postgres is a failure: .ci/run installs Debian's server.
 */
export function describePostgres(name: string, fn: () => void): void {
  const target = inject('postgres');
  if (target) {
    describe(`${name} [${target.name}]`, fn);
    return;
  }
  const reason = inject('postgresUnavailable') ?? 'no Postgres server';
  if (process.env.CI === 'true') {
    describe(name, () => {
      it('has a real Postgres to run against', () => {
        throw new Error(`CI must run the Postgres tests, but there is ${reason}`);
      });
    });
    return;
  }
  describe.skip(`${name} (skipped: ${reason.split('\n')[0]})`, fn);
}

/** The URL of a database with this name on the run's server. */
export function databaseUrl(name: string): string {
  const target = inject('postgres');
  if (!target) throw new Error('no Postgres in this run');
  const url = new URL(target.adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Creates an empty database of its own on the run's server; `drop` removes it (closing what is connected). */
export async function freshDatabase(): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const target = inject('postgres');
  if (!target) throw new Error('no Postgres in this run');
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = postgres(target.adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return {
    url: databaseUrl(name),
    name,
    drop: async () => {
      const sql = postgres(target.adminUrl, { max: 1, onnotice: () => {} });
      try {
        await sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await sql.end();
      }
    },
  };
}
