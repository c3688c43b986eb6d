/**
 * The service under test in its own process: fs blobs + SQLite in <dataDir>, 127.0.0.1 at a free
 * port, logs off. Prints {"url", "token"} (a tenant-wide dev token) once listening.
 * Usage: service-server.ts <dataDir> <maxArtifactBytes> [smallBlobCacheBytes]
 * (the last one defaults to the service's own default; 0 turns the small-blob cache off).
 */
import { loadConfig } from '../src/core/config.js';
import { startServer } from '../src/node.js';
import { announceAndWait } from './server-lifecycle.js';

async function main() {
  const [dataDir, maxBytes, smallBlobCacheBytes] = process.argv.slice(2);
  if (!dataDir || !maxBytes) throw new Error('usage: service-server.ts <dataDir> <maxArtifactBytes> [smallBlobCacheBytes]');
  // No environment: the figures must not depend on ARTIFACT_STORE_* variables of the shell.
  const config = loadConfig(
    {},
    {
      env: 'development',
      host: '127.0.0.1',
      port: 0,
      dataDir,
      blobDriver: 'fs',
      maxArtifactBytes: Number(maxBytes),
      logLevel: 'silent',
      shutdownGraceMs: 2000,
      ...(smallBlobCacheBytes === undefined ? {} : { smallBlobCacheBytes: Number(smallBlobCacheBytes) }),
    },
  );
  const running = await startServer(config);
  announceAndWait({ url: running.url, token: running.token }, () => running.close());
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
