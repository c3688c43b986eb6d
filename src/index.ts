/**
 * artifact-store: the service, for embedders. `composeApp` builds the service, its operations and its
 * HTTP app (a Hono app: `app.fetch` is a Web-standard handler) over the drivers you give it; that is
 * how the Node server and the Worker are built. On Node, `artifact-store/node` opens the drivers for a
 * data dir (`openNodeDrivers`) or the whole store in one line (`openArtifactStore`); the blob drivers
 * are in `artifact-store/blob`. The SDK (clients, the MCP layer, adapters) is the `artifact-store-sdk`
 * package.
 */
export { composeApp, type ComposedApp, type Drivers, type RuntimeParts } from './compose/compose-app.js';
export { createEmbeddedArtifactStore, type EmbeddedArtifactStoreOptions } from './service/embedded-store.js';
export { ConfigSchema, loadConfig, type Config } from './core/config.js';
export { mintToken, type TokenClaims } from './http/tokens.js';
