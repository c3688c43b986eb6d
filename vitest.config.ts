import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    environment: 'node',
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // A real S3 (env, MinIO or Ceph RGW) for the S3 driver's tests, started once per run.
    globalSetup: ['test/global-setup-s3.ts'],
  },
});
