/**
 * The metadata store on Postgres, for many stateless replicas on one database: the statement
 * repository D1 runs (../d1/index.ts: the same plans, rows, ids, events and errors), through a
 * postgres.js pool, its SQL rewritten into Postgres's dialect (dialect.ts). How a put stays exact and
 * events stay in order across replicas: connection.ts. Reference lookups are cached while no
 * transaction that could change them has committed anywhere: notifications.ts.
 */
import postgres from 'postgres';
import { createStatementRepository } from '../d1/index.js';
import type { ArtifactRepository } from '../repository.js';
import { withTranslatedErrors } from '../translate-errors.js';
import { migratePostgres, openPostgres, type PostgresRepositoryOptions } from './connection.js';
import { translatePostgresError } from './errors.js';
import { createNotifications } from './notifications.js';

export {
  EVENTS_CHANNEL,
  EVENTS_LOCK,
  migratePostgres,
  PG_MIGRATIONS_FOLDER,
  redactedUrl,
  SchemaTooNewError,
  type PostgresRepositoryOptions,
} from './connection.js';
export { translatePostgresError } from './errors.js';
export { CopyRefusedError, copySqliteToPostgres, type CopyReport } from './copy.js';

export interface PostgresRepository extends ArtifactRepository {
  waitForEvents(): Promise<void>;
  leaseRateTokens(
    key: string,
    ratePerSecond: number,
    burst: number,
    want: number,
  ): Promise<{ granted: number; tokens: number }>;
}

/** The database's time in ms, one value for the whole statement. */
const DB_NOW = 'floor(extract(epoch from statement_timestamp()) * 1000)::bigint';
/** The bucket's tokens refilled to now (in ON CONFLICT's SET, where `b` is the row as it was). */
const REFILLED = `least($3, b.tokens + greatest(0, ${DB_NOW} - b.at) * $2 / 1000.0)`;
/** A lease: every SET sees the row as it was, so `granted` and `tokens` agree. */
const LEASE_SQL = `INSERT INTO rate_buckets AS b (key, tokens, at, granted)
  VALUES ($1::text, $3::float8 - least($4::float8, $3::float8), ${DB_NOW}, least($4::float8, $3::float8))
  ON CONFLICT (key) DO UPDATE SET
    granted = least($4, floor(${REFILLED})),
    tokens = ${REFILLED} - least($4, floor(${REFILLED})),
    at = greatest(b.at, ${DB_NOW})
  RETURNING granted, tokens`;

/** Opens the pool and migrates (unless `migrate: false`): resolves once the database answers. */
export async function createPostgresRepository(options: PostgresRepositoryOptions): Promise<PostgresRepository> {
  if (options.migrate !== false) {
    // On two connections of their own (one holds the lock, one migrates), whatever the pool's size.
    const migrator = postgres(options.url, {
      max: 2,
      onnotice: () => {},
      connect_timeout: options.connectTimeoutSeconds ?? 10,
    });
    try {
      await migratePostgres(migrator);
    } finally {
      await migrator.end({ timeout: 1 });
    }
  }
  const ctx = openPostgres(options, () => notifications.wrote());
  const notifications = createNotifications(ctx.sql);
  try {
    await ctx.sql.unsafe('SELECT 1');
  } catch (err) {
    await ctx.sql.end({ timeout: 1 }).catch(() => {});
    throw err;
  }
  const statements = createStatementRepository(ctx);
  return withTranslatedErrors<PostgresRepository>(
    {
      ...statements,
      waitForEvents: notifications.waitForEvents,

      async findRef(tenantId, artifactId, filter, now) {
        const key = JSON.stringify([tenantId, artifactId, filter.userId, filter.sessionId, filter.traceId]);
        return notifications.cachedRef(key, now, () => statements.findRef(tenantId, artifactId, filter, now));
      },

      async leaseRateTokens(key, ratePerSecond, burst, want) {
        const [row] = await ctx.sql.unsafe(LEASE_SQL, [key, ratePerSecond, burst, want], { prepare: true });
        return { granted: Number(row!.granted), tokens: Number(row!.tokens) };
      },

      async ping() {
        await ctx.sql.unsafe('SELECT 1');
      },

      async close() {
        notifications.close();
        await ctx.close();
      },
    },
    translatePostgresError,
  );
}
