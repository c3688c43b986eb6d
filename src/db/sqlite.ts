/** The SQLite repository (see sqlite/index.ts), under the path its importers know. */
export {
  createSqliteRepository,
  MIGRATIONS_FOLDER,
  type CheckpointThread,
  type SqliteRepositoryOptions,
} from './sqlite/index.js';
