/**
 * The SQLite repository's options as the configuration gives them. Apart from drivers.ts so that the
 * public declarations of artifact-store/node (openNodeDrivers) do not reach the SQLite driver's, and
 * through them better-sqlite3's and drizzle's, which a consumer's strict type check would then read.
 */
import type { Config } from '../core/config.js';
import type { CheckpointThread, SqliteRepositoryOptions } from '../db/sqlite.js';

export function sqliteOptions(
  config: Config,
  path: string,
  checkpointThread: CheckpointThread = 'worker',
): SqliteRepositoryOptions {
  return { path, busyTimeoutMs: config.sqliteBusyTimeoutMs, cacheBytes: config.sqliteCacheBytes, checkpointThread };
}
