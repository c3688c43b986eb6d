/**
 * The embedded metadata store: the SQLite repository, assembled from its parts. Writes take the lock
 * up front (BEGIN IMMEDIATE) so two processes never deadlock upgrading a read lock.
 */
import type { ArtifactRepository } from '../repository.js';
import { sqliteApiKeys } from './api-keys.js';
import { sqliteBlobs } from './blobs.js';
import { openSqlite, type SqliteRepositoryOptions } from './connection.js';
import { sqliteNames } from './names.js';
import { sqliteOutbox } from './outbox.js';
import { sqliteReferences } from './references.js';
import { sqliteRetention } from './retention.js';
import { sqliteUploads } from './uploads.js';
import { translatingErrors } from './errors.js';

export { MIGRATIONS_FOLDER, type SqliteRepositoryOptions } from './connection.js';
export type { CheckpointThread } from './checkpointer.js';

/** The SQLite repository; its errors reach the service as ArtifactErrors where they mean one (errors.ts). */
export function createSqliteRepository(options: SqliteRepositoryOptions): ArtifactRepository {
  const ctx = openSqlite(options);
  const { sqlite } = ctx;
  return translatingErrors<ArtifactRepository>({
    ...sqliteReferences(ctx),
    ...sqliteNames(ctx),
    ...sqliteUploads(ctx),
    ...sqliteApiKeys(ctx),
    ...sqliteRetention(ctx),
    ...sqliteBlobs(ctx),
    ...sqliteOutbox(ctx),

    async backupTo(path) {
      await sqlite.backup(path);
    },

    async ping() {
      sqlite.prepare('select 1').get();
    },

    close: ctx.close,
  });
}
