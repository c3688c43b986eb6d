/**
 * artifact-store: keep binary and oversized tool outputs out of LLM context.
 *
 * This entry point runs anywhere (Web standards only): schemas, errors, ids, the SDK stores, the
 * service and the Hono app factory. Node drivers (SQLite, local files) and the server live in
 * `artifact-store/node`.
 */
export * from './client/index.js';
export { createEmbeddedArtifactStore, type EmbeddedArtifactStoreOptions } from './service/embedded-store.js';
export { ArtifactRefSchema, ArtifactScopeSchema, ListQuerySchema, PutOptionsSchema } from './core/schemas.js';
export { errors } from './core/errors.js';
export { narrowScope } from './core/scope.js';
export { ConfigSchema, loadConfig, type Config } from './core/config.js';
export type { BlobStore, BlobInfo, BlobPutOptions } from './blob/blob-store.js';
export { createMemoryBlobStore } from './blob/memory.js';
export type { ArtifactRepository } from './db/repository.js';
export {
  createArtifactService,
  type ArtifactService,
  type Access,
  type ServiceLimits,
} from './service/artifact-service.js';
export { createApp, type AppDeps } from './http/app.js';
export { createAuthenticator, type Caller } from './http/auth.js';
export { mintToken, type TokenClaims } from './http/tokens.js';
