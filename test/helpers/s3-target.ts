import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
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
const MINIO_IMAGE = 'minio/minio:RELEASE.2025-04-22T22-12-26Z';
const HOW_TO_GET_ONE =
  'set S3_ENDPOINT, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY; or run Docker/Podman (MinIO via testcontainers); ' +
  'or install Ceph RGW (Debian/Ubuntu: apt-get install -y --no-install-recommends ceph-mon ceph-osd radosgw ceph-common)';

/**
 * Picks a real S3, in this order: S3_ENDPOINT (+ S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY, optional
 * S3_REGION and S3_FORCE_PATH_STYLE) from the environment; MinIO through testcontainers where a
 * container runtime answers; a single-node Ceph RGW started by scripts/rgw.sh where radosgw is
 * installed. Never s3rver: it accepts forged signatures, so it cannot prove an auth path.
 * Resolves to `{ unavailable }` (with the reason and how to get one) instead of throwing.
 */
export async function startS3Target(): Promise<S3Target> {
  const env = process.env;
  if (env.S3_ENDPOINT) {
    if (!env.S3_ACCESS_KEY_ID || !env.S3_SECRET_ACCESS_KEY) {
      return { unavailable: 'S3_ENDPOINT is set but S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are not' };
    }
    return {
      info: {
        name: 'env S3_ENDPOINT',
        endpoint: env.S3_ENDPOINT,
        region: env.S3_REGION || 'us-east-1',
        accessKeyId: env.S3_ACCESS_KEY_ID,
        secretAccessKey: env.S3_SECRET_ACCESS_KEY,
        forcePathStyle: env.S3_FORCE_PATH_STYLE !== 'false',
      },
      stop: async () => {},
    };
  }

  const problems: string[] = [];
  if (containerRuntimeLikely()) {
    const minio = await startMinio();
    if ('info' in minio) return minio;
    console.warn(`${minio.unavailable}; trying the next S3 server`);
    problems.push(minio.unavailable);
  }
  if (hasRadosgw()) {
    const rgw = await startRgw();
    if ('info' in rgw) return rgw;
    problems.push(rgw.unavailable);
  } else {
    problems.push('radosgw is not installed');
  }
  return { unavailable: `no S3 server (${problems.join('; ')}). To get one: ${HOW_TO_GET_ONE}` };
}

/**
 * A cheap guess, before paying ~0.5 s to import testcontainers: is a container runtime configured
 * or is one of the usual sockets present? (Docker's CLI alone is not a runtime.)
 */
export function containerRuntimeLikely(): boolean {
  const env = process.env;
  if (env.DOCKER_HOST || env.TESTCONTAINERS_HOST_OVERRIDE) return true;
  const runtimeDir = env.XDG_RUNTIME_DIR ?? `/run/user/${process.getuid?.() ?? 0}`;
  const sockets = [
    '/var/run/docker.sock',
    '/run/podman/podman.sock',
    join(runtimeDir, 'docker.sock'),
    join(runtimeDir, 'podman/podman.sock'),
    join(homedir(), '.docker/run/docker.sock'),
    join(homedir(), '.colima/default/docker.sock'),
    join(homedir(), '.rd/docker.sock'),
  ];
  return existsSync(join(homedir(), '.testcontainers.properties')) || sockets.some((s) => existsSync(s));
}

async function startMinio(): Promise<S3Target> {
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    // Throws within milliseconds when nothing answers; the timeout covers a socket that hangs.
    await withTimeout(getContainerRuntimeClient(), 10_000, 'no answer from the container runtime in 10 s');
    const { MinioContainer } = await import('@testcontainers/minio');
    const [user, password] = ['artifactstore', 'artifactstore-secret'];
    const container = await new MinioContainer(MINIO_IMAGE).withUsername(user).withPassword(password).start();
    return {
      info: {
        name: 'MinIO (testcontainers)',
        endpoint: container.getConnectionUrl(),
        region: 'us-east-1',
        accessKeyId: user,
        secretAccessKey: password,
        forcePathStyle: true,
      },
      stop: async () => {
        await container.stop();
      },
    };
  } catch (err) {
    return { unavailable: `MinIO through testcontainers failed: ${(err as Error).message}` };
  }
}

function hasRadosgw(): boolean {
  return spawnSync('sh', ['-c', 'command -v radosgw'], { stdio: 'ignore' }).status === 0;
}

async function startRgw(): Promise<S3Target> {
  const dir = mkdtempSync(join(tmpdir(), 'artifact-store-rgw-'));
  // If this process ends without calling stop() (a crash, Ctrl-C), do not leave daemons behind.
  const stopSync = () => spawnSync('bash', [RGW_SCRIPT, 'stop', dir], { stdio: 'ignore', timeout: 30_000 });
  process.once('exit', stopSync);
  try {
    // The script bounds each of its steps itself; this is only a last resort.
    const out = await run('bash', [RGW_SCRIPT, 'start', dir], 300_000);
    const info = JSON.parse(out.trim().split('\n').pop()!) as Omit<S3TargetInfo, 'name' | 'forcePathStyle'>;
    return {
      info: { ...info, name: 'Ceph RGW (scripts/rgw.sh)', forcePathStyle: true },
      stop: async () => {
        process.removeListener('exit', stopSync);
        await run('bash', [RGW_SCRIPT, 'stop', dir], 60_000);
      },
    };
  } catch (err) {
    process.removeListener('exit', stopSync);
    stopSync();
    rmSync(dir, { recursive: true, force: true });
    return { unavailable: `Ceph RGW did not start: ${(err as Error).message}` };
  }
}

function run(file: string, args: string[], timeout: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { timeout, killSignal: 'SIGTERM' }, (err, stdout, stderr) => {
      if (err)
        reject(
          new Error(
            `${args.join(' ')} failed (${err.killed ? `killed after ${timeout / 1000} s` : `exit ${err.code}`}):\n${stderr.trim()}`,
          ),
        );
      else resolve(stdout);
    });
  });
}

export function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
