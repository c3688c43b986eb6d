/**
 * The service under test in its own process: fs blobs + SQLite in <dataDir>, 127.0.0.1 at a free
 * port, logs off unless configJson sets logLevel. Prints {"url", "token"} (a tenant-wide dev token) once listening.
 * Usage: service-server.ts <dataDir> <maxArtifactBytes> [smallBlobCacheBytes] [s3Json] [configJson]
 * (smallBlobCacheBytes: '' or absent = the service's default, 0 = off; s3Json: the S3 driver's
 * {"endpoint","region","accessKeyId","secretAccessKey","bucket"} instead of fs blobs, '' for none;
 * configJson: more settings by their config key, e.g. {"tenantRequestsPerSecond": 1e7}).
 */
import { announceAndWait } from './server-lifecycle.js';
import { readSettings } from './settings.js';

/**
 * The service's Node entry: dist/node.js, built by the bench before this process starts (what the
 * image and the package's bin run), or src/node.ts under this process's tsx with BENCH_SERVICE_CODE=source
 * (what `npm start` runs: tsx compiles with esbuild's keepNames, which wraps each closure the code makes
 * in a call that names it, per request on the request path).
 */
type NodeEntry = typeof import('../src/node.js');
const ENTRY = readSettings().serviceCode === 'source' ? '../src/node.js' : '../dist/node.js';

async function main() {
  const { createServiceLogger, loadConfig, startServer } = (await import(ENTRY)) as NodeEntry;
  const [dataDir, maxBytes, smallBlobCacheBytes, s3Json, configJson] = process.argv.slice(2);
  const s3 = s3Json
    ? (JSON.parse(s3Json) as {
        endpoint: string;
        region: string;
        accessKeyId: string;
        secretAccessKey: string;
        bucket: string;
      })
    : undefined;
  if (!dataDir || !maxBytes)
    throw new Error('usage: service-server.ts <dataDir> <maxArtifactBytes> [smallBlobCacheBytes]');
  // No environment: the figures must not depend on ARTIFACT_STORE_* variables of the shell.
  const config = loadConfig(
    {},
    {
      env: 'development',
      host: '127.0.0.1',
      port: 0,
      dataDir,
      blobDriver: s3 ? 's3' : 'fs',
      ...(s3
        ? {
            s3Bucket: s3.bucket,
            s3Endpoint: s3.endpoint,
            s3Region: s3.region,
            s3AccessKeyId: s3.accessKeyId,
            s3SecretAccessKey: s3.secretAccessKey,
            s3ForcePathStyle: 'true' as const,
          }
        : {}),
      maxArtifactBytes: Number(maxBytes),
      logLevel: 'silent',
      shutdownGraceMs: 2000,
      ...(smallBlobCacheBytes ? { smallBlobCacheBytes: Number(smallBlobCacheBytes) } : {}),
      ...(configJson ? (JSON.parse(configJson) as Record<string, unknown>) : {}),
    },
  );
  // With logs on, they go to <dataDir>.log through the service's own logger, as they would to a
  // container's log file; the bench process never reads them.
  const running = await startServer(
    config,
    config.logLevel === 'silent' ? {} : { logger: createServiceLogger(config.logLevel, `${dataDir}.log`) },
  );
  announceAndWait({ url: running.url, token: running.token }, () => running.close());
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
