/**
 * artifact-store/node: the service on Node (SQLite metadata, local-file or S3 bytes) and the Node
 * drivers for embedding. The startup machinery lives in src/node/; this file only names what is public.
 */
export { startServer, type RunningServer } from './node/server.js';
export { createServiceLogger } from './node/logger.js';
export { openNodeDrivers, type NodeDrivers } from './node/drivers.js';
export { createFileSpool } from './node/file-spool.js';
export { createFsBlobStore } from './blob/fs.js';
export { nodeSha256 } from './blob/node-hash.js';
export { createSqliteRepository } from './db/sqlite.js';
export { loadConfig, type Config } from './core/config.js';
