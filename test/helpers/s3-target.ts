import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A real S3 server the tests may use. */
export interface S3TargetInfo {
  /** Which one was chosen, shown in test names. */
  name: string;
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  forcePathStyle: boolean;
}

export type S3Target = { info: S3TargetInfo; stop(): Promise<void> } | { unavailable: string };

const RGW_SCRIPT = fileURLToPath(new URL('../../scripts/rgw.sh', import.meta.url));

/**
 * Picks a real S3, in this order: S3_ENDPOINT (+ S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY, S3_REGION)
 * from the environment; MinIO through testcontainers where a container runtime exists; a
 * single-node Ceph RGW started by scripts/rgw.sh where radosgw is installed. Never s3rver: it
 * accepts forged signatures, so it cannot prove an auth path.
 */
export async function startS3Target(): Promise<S3Target> {
  const env = process.env;
  if (env.S3_ENDPOINT) {
    if (!env.S3_ACCESS_KEY_ID || !env.S3_SECRET_ACCESS_KEY) return { unavailable: 'S3_ENDPOINT is set but S3_ACCESS_KEY_ID / S3_SECRET_ACCESS_KEY are not' };
    return {
      info: {
        name: `env S3_ENDPOINT ${env.S3_ENDPOINT}`,
        endpoint: env.S3_ENDPOINT,
        region: env.S3_REGION ?? 'us-east-1',
        accessKeyId: env.S3_ACCESS_KEY_ID,
        secretAccessKey: env.S3_SECRET_ACCESS_KEY,
        forcePathStyle: env.S3_FORCE_PATH_STYLE !== 'false',
      },
      stop: async () => {},
    };
  }
  if (containerRuntimeLikely()) {
    try {
      const { MinioContainer } = await import('@testcontainers/minio');
      const container = await new MinioContainer('minio/minio:RELEASE.2025-04-22T22-12-26Z').withUsername('artifactstore').withPassword('artifactstore-secret').start();
      return {
        info: {
          name: 'MinIO (testcontainers)',
          endpoint: container.getConnectionUrl(),
          region: 'us-east-1',
          accessKeyId: 'artifactstore',
          secretAccessKey: 'artifactstore-secret',
          forcePathStyle: true,
        },
        stop: async () => {
          await container.stop();
        },
      };
    } catch (err) {
      // A socket that is not a working runtime: fall through to RGW.
      if (!hasRadosgw()) return { unavailable: `no S3: MinIO through testcontainers failed (${(err as Error).message})` };
    }
  }
  if (hasRadosgw()) {
    const dir = mkdtempSync(join(tmpdir(), 'artifact-store-rgw-'));
    const out = await run(RGW_SCRIPT, ['start', dir], 120_000);
    const info = JSON.parse(out.trim().split('\n').pop()!) as Omit<S3TargetInfo, 'name' | 'forcePathStyle'>;
    return {
      info: { ...info, name: 'Ceph RGW (scripts/rgw.sh)', forcePathStyle: true },
      stop: async () => {
        await run(RGW_SCRIPT, ['stop', dir], 60_000);
      },
    };
  }
  return {
    unavailable:
      'no S3 server: set S3_ENDPOINT, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY, run Docker (MinIO via testcontainers), or install Ceph RGW: apt-get install -y --no-install-recommends ceph-mon ceph-osd radosgw ceph-common',
  };
}

function containerRuntimeLikely(): boolean {
  return Boolean(process.env.DOCKER_HOST) || existsSync('/var/run/docker.sock') || existsSync(join(process.env.XDG_RUNTIME_DIR ?? '/nonexistent', 'podman/podman.sock'));
}

function hasRadosgw(): boolean {
  return spawnSync('sh', ['-c', 'command -v radosgw']).status === 0;
}

function run(file: string, args: string[], timeout: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${file} ${args.join(' ')} failed: ${err.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}
