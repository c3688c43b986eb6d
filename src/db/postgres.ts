/** The Postgres repository (see postgres/index.ts), under the path its importers know. */
export {
  CopyRefusedError,
  copySqliteToPostgres,
  type CopyReport,
  createPostgresRepository,
  EVENTS_CHANNEL,
  EVENTS_LOCK,
  migratePostgres,
  PG_MIGRATIONS_FOLDER,
  redactedUrl,
  SchemaTooNewError,
  translatePostgresError,
  type PostgresRepository,
  type PostgresRepositoryOptions,
} from './postgres/index.js';
