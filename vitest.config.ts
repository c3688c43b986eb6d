import { fileURLToPath } from 'node:url';
import { cloudflareTest, readD1Migrations } from '@cloudflare/vitest-pool-workers';
import { defineConfig } from 'vitest/config';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/**
 * The HTTP suite shared by both runtimes (routes, auth, scopes, downloads, links, bad inputs,
 * retention): on Node over SQLite + fs, and in workerd over D1 + R2, where test/helpers/drivers.ts
 * is swapped for drivers.workerd.ts. The files are the same; only the drivers differ.
 */
const SHARED_HTTP_SUITE = [
  'test/http-auth.test.ts',
  'test/http-routes.test.ts',
  'test/http-scope.test.ts',
  'test/http-download.test.ts',
  'test/http-links.test.ts',
  'test/http-retention.test.ts',
  'test/http-names.test.ts',
  'test/http-sessions.test.ts',
  'test/http-views.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'node',
          environment: 'node',
          include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
          exclude: ['test/workerd/**'],
          // A real S3 (env, MinIO or Ceph RGW) for the S3 driver's tests, started once per run. The
          // process check comes first so its teardown runs last, after S3 is stopped: it fails the
          // run if a test left a process behind.
          globalSetup: ['test/global-setup-processes.ts', 'test/global-setup-s3.ts'],
          // Whatever a test file started and did not stop is stopped after the file.
          setupFiles: ['test/setup-processes.ts'],
        },
      },
      {
        extends: true,
        plugins: [
          cloudflareTest(async () => ({
            wrangler: { configPath: here('./wrangler.toml') },
            miniflare: {
              bindings: {
                TEST_MIGRATIONS: await readD1Migrations(here('./migrations')),
                // What `wrangler secret put` sets in production.
                ARTIFACT_STORE_JWT_SECRETS: 'k1:k1-secret-for-tests-0123456789abcdef',
                ARTIFACT_STORE_LOG_LEVEL: 'warn',
              },
              // A small limit for test/workerd/rate-limit.test.ts, which binds it in place of wrangler.toml's.
              ratelimits: { TEST_RATE_LIMITER: { simple: { limit: 3, period: 10 } } },
            },
          })),
        ],
        resolve: {
          alias: [{ find: /^\.\/drivers\.js$/, replacement: here('./test/helpers/drivers.workerd.ts') }],
        },
        test: {
          name: 'workerd',
          include: [...SHARED_HTTP_SUITE, 'test/workerd/**/*.test.ts'],
          setupFiles: ['test/workerd/apply-migrations.ts'],
          // One D1 database for the project: files take turns (each test app empties it).
          fileParallelism: false,
        },
      },
    ],
  },
});
