/**
 * artifact-store/node: the service on Node (SQLite metadata, local-file or S3 bytes). `startServer`
 * serves it over HTTP; `openArtifactStore` opens a data dir in-process in one line; `openNodeDrivers`
 * gives the drivers to `composeApp` (artifact-store). The startup machinery lives in src/node/; this file
 * only names what is public.
 */
export { startServer, type RunningServer } from './node/server.js';
export { createServiceLogger } from './node/logger.js';
export { openNodeDrivers, type NodeDrivers } from './node/drivers.js';
export { openArtifactStore, type EmbeddedArtifactStore, type OpenArtifactStoreOptions } from './node/embedded.js';
export { createFileSpool } from './node/file-spool.js';
export { loadConfig, type Config } from './core/config.js';
