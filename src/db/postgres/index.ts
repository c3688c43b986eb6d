/**
 * The metadata store on Postgres, for many stateless replicas on one database: the statement
 * repository D1 runs (../d1/index.ts: the same plans, rows, ids, events and errors), through a
 * postgres.js pool, its SQL rewritten into Postgres's dialect (dialect.ts). How a put stays exact and
 * events stay in order across replicas: connection.ts. Nothing is cached across requests, so what one
 * replica changed, every replica sees on the next request.
 */
import { createStatementRepository } from '../d1/index.js';
import type { ArtifactRepository } from '../repository.js';
import { withTranslatedErrors } from '../translate-errors.js';
import { EVENTS_CHANNEL, migratePostgres, openPostgres, type PostgresRepositoryOptions } from './connection.js';
import { translatePostgresError } from './errors.js';

export {
  EVENTS_CHANNEL,
  migratePostgres,
  PG_MIGRATIONS_FOLDER,
  redactedUrl,
  SchemaTooNewError,
  type PostgresRepositoryOptions,
} from './connection.js';
export { translatePostgresError } from './errors.js';

export interface PostgresRepository extends ArtifactRepository {
  waitForEvents(): Promise<void>;
}

/** Opens the pool and migrates (unless `migrate: false`): resolves once the database answers. */
export async function createPostgresRepository(options: PostgresRepositoryOptions): Promise<PostgresRepository> {
  const ctx = openPostgres(options);
  try {
    if (options.migrate !== false) await migratePostgres(ctx.sql);
    else await ctx.sql.unsafe('SELECT 1');
  } catch (err) {
    await ctx.sql.end({ timeout: 1 }).catch(() => {});
    throw err;
  }
  // One LISTEN connection per process, opened by the first reader that waits: every waiter is woken
  // by the next notification, and on each (re)connection, since notifications sent while the
  // connection was down are lost (readers then read the outbox and find what they missed).
  let next: { promise: Promise<void>; resolve: () => void } | undefined;
  let listening: Promise<unknown> | undefined;
  const wakeAll = () => {
    const woken = next;
    next = undefined;
    woken?.resolve();
  };
  const waitForEvents = () => {
    if (listening === undefined)
      listening = ctx.sql.listen(EVENTS_CHANNEL, wakeAll, wakeAll).catch(() => {
        // The database is down: readers fall back on their timer, and the next wait tries again.
        listening = undefined;
      });
    if (!next) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => {
        resolve = r;
      });
      next = { promise, resolve };
    }
    return next.promise;
  };
  return withTranslatedErrors<PostgresRepository>(
    {
      ...createStatementRepository(ctx),
      waitForEvents,

      async ping() {
        await ctx.sql.unsafe('SELECT 1');
      },

      async close() {
        wakeAll();
        await ctx.close();
      },
    },
    translatePostgresError,
  );
}
