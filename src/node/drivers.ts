/**
 * The drivers a Node process runs on, chosen from configuration: SQLite (the embedded default) or
 * Postgres (ARTIFACT_STORE_DATABASE_URL) for metadata, and the fs, memory or S3 blob store. The only
 * place (with the CLI's ops commands) that picks them.
 */
import { enableLinearRegExps } from './regexps.js';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { BlobStore } from '../blob/blob-store.js';
import { createFsBlobStore } from '../blob/fs.js';
import { createMemoryBlobStore } from '../blob/memory.js';
import { nodeSha256 } from '../blob/node-hash.js';
import type { Drivers } from '../compose/compose-app.js';
import type { Config } from '../core/config.js';
import type { ArtifactRepository } from '../db/repository.js';
import { createSqliteRepository } from '../db/sqlite.js';
import { sqliteOptions } from './sqlite-options.js';

export interface NodeDrivers extends Drivers {
  close(): Promise<void>;
}

/** The blob store of this configuration alone (a restore fills it before the database is in place). */
export async function openBlobStore(config: Config): Promise<BlobStore> {
  switch (config.blobDriver) {
    case 'memory':
      return createMemoryBlobStore({ hash: nodeSha256 });
    case 's3': {
      // The AWS SDK is loaded only for the s3 driver (tens of MiB a process on fs does without).
      const [{ createS3BlobStore }, { createS3Client }, { cloudFrontInvalidator }] = await Promise.all([
        import('../blob/s3.js'),
        import('../blob/s3-client.js'),
        import('../blob/s3-cdn.js'),
      ]);
      const CloudFrontClient = config.cdnDistributionId
        ? (await import('@aws-sdk/client-cloudfront')).CloudFrontClient
        : undefined;
      const client = createS3Client({
        region: config.s3Region,
        endpoint: config.s3Endpoint,
        forcePathStyle: config.s3ForcePathStyle,
        accessKeyId: config.s3AccessKeyId,
        secretAccessKey: config.s3SecretAccessKey,
      });
      const cdn =
        config.cdnUrl && config.cdnKeyPairId && config.cdnPrivateKeyFile
          ? {
              url: config.cdnUrl,
              keyPairId: config.cdnKeyPairId,
              privateKey: readFileSync(config.cdnPrivateKeyFile, 'utf8'),
              ...(config.cdnDistributionId && CloudFrontClient
                ? {
                    invalidate: cloudFrontInvalidator(
                      new CloudFrontClient({
                        region: 'us-east-1',
                        ...(config.s3AccessKeyId && config.s3SecretAccessKey
                          ? {
                              credentials: {
                                accessKeyId: config.s3AccessKeyId,
                                secretAccessKey: config.s3SecretAccessKey,
                              },
                            }
                          : {}),
                      }),
                      config.cdnDistributionId,
                    ),
                  }
                : {}),
            }
          : undefined;
      return createS3BlobStore({
        client,
        bucket: config.s3Bucket!,
        prefix: config.s3Prefix,
        hash: nodeSha256,
        ownsClient: true,
        cdn,
      });
    }
    case 'fs':
      return createFsBlobStore({ root: resolve(config.blobDir ?? join(config.dataDir, 'blobs')), hash: nodeSha256 });
  }
}

/**
 * The metadata repository of this configuration: Postgres when ARTIFACT_STORE_DATABASE_URL is set
 * (migrated, and answering), else SQLite in the data dir.
 */
export async function openRepository(
  config: Config,
  checkpointThread: 'worker' | 'main' = 'worker',
): Promise<ArtifactRepository> {
  if (config.databaseUrl) return openPostgresRepository(config);
  // Memory blobs die with the process: metadata that outlived them would point at missing bytes.
  const dbPath =
    config.blobDriver === 'memory' ? ':memory:' : resolve(config.dbPath ?? join(config.dataDir, 'artifacts.db'));
  return createSqliteRepository(sqliteOptions(config, dbPath, checkpointThread));
}

/**
 * The Postgres repository; postgres.js is loaded only here. A database that cannot be reached, or
 * refuses, fails the start with one line that names the setting and the URL without its password.
 */
async function openPostgresRepository(config: Config): Promise<ArtifactRepository> {
  const { createPostgresRepository, redactedUrl, SchemaTooNewError } = await import('../db/postgres.js');
  const url = config.databaseUrl!;
  try {
    return await createPostgresRepository({
      url,
      poolSize: config.databasePoolSize,
      queueTimeoutSeconds: config.databasePoolWaitMs / 1000,
    });
  } catch (err) {
    if (err instanceof SchemaTooNewError) throw new Error(`ARTIFACT_STORE_DATABASE_URL: ${err.message}`);
    const e = err as { code?: string; message?: string };
    const password = passwordOf(url);
    let why = [e.code, e.message].filter(Boolean).join(' ').split('\n')[0]!.replaceAll(url, redactedUrl(url));
    if (password) why = why.replaceAll(password, '***');
    throw new Error(
      `ARTIFACT_STORE_DATABASE_URL: cannot use the database at ${redactedUrl(url)}: ${why}. ` +
        'Check the host, port, database name, user and password (and sslmode), and that Postgres is running.',
    );
  }
}

function passwordOf(url: string): string {
  try {
    return decodeURIComponent(new URL(url).password);
  } catch {
    return '';
  }
}

/** The metadata and blob drivers of this configuration, opened; `close` closes both. */
export async function openNodeDrivers(
  config: Config,
  /** Where the WAL is checkpointed: its own thread, or this one (tests). */
  checkpointThread: 'worker' | 'main' = 'worker',
): Promise<NodeDrivers> {
  // Search patterns from callers run on V8's linear-time engine when they backtrack (views/pattern.ts).
  enableLinearRegExps();
  const repo = await openRepository(config, checkpointThread);
  let blobs: BlobStore;
  try {
    blobs = await openBlobStore(config);
  } catch (err) {
    await repo.close();
    throw err;
  }
  return {
    repo,
    blobs,
    hash: nodeSha256,
    async close() {
      await repo.close();
      await blobs.close?.();
    },
  };
}
