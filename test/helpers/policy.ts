import { NO_RATE_LIMITS, type Policy } from '../../src/core/policy.js';

const KiB = 1024;

/** A small policy for tests: 1 MiB everywhere, lru; tests override what they exercise. */
export const TEST_POLICY: Policy = {
  defaultTtlSeconds: 3600,
  maxTtlSeconds: 86_400,
  maxArtifactBytes: 1024 * KiB,
  maxSessionBytes: 1024 * KiB,
  maxTraceBytes: 1024 * KiB,
  maxArtifactsPerSession: 1000,
  maxArtifactsPerTrace: 100,
  maxTenantBytes: 0,
  cleanupStrategy: 'lru',
  allowNoExpiry: false,
  nameTtlSeconds: 0,
  ...NO_RATE_LIMITS,
};
