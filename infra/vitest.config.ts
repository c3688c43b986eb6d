import { defineConfig } from 'vitest/config';

// Its own config, so the repository's (which starts an S3 server for every run) is not picked up.
export default defineConfig({ test: { include: ['test/**/*.test.ts'], testTimeout: 60_000 } });
