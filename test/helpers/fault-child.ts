/**
 * Killed on purpose: opens the drivers on <dataDir>, then does <action> (put | retention) and sends
 * itself SIGKILL when it reaches <point>. Used by the crash tests; prints nothing on success.
 * Usage: fault-child.ts <dataDir> <action> <point> <file whose bytes to put>
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createFsBlobStore } from '../../src/blob/fs.js';
import { createPolicies, DEFAULT_POLICY } from '../../src/core/policy.js';
import { createSqliteRepository } from '../../src/db/sqlite.js';
import { createArtifactService } from '../../src/service/artifact-service.js';
import { runRetention } from '../../src/service/retention/index.js';

const [dataDir, action, point, input] = process.argv.slice(2);
if (!dataDir || !action || !point) throw new Error('usage: fault-child.ts <dataDir> put|retention <point> [file]');
const die = async (reached: string) => {
  if (reached === point) process.kill(process.pid, 'SIGKILL');
};
const repo = createSqliteRepository({ path: join(dataDir, 'artifacts.db') });
const blobs = createFsBlobStore({ root: join(dataDir, 'blobs') });
const policies = createPolicies(DEFAULT_POLICY);
if (action === 'put') {
  const service = createArtifactService({
    repo,
    blobs,
    limits: { ...DEFAULT_POLICY, touchFlushMs: 0, gcGraceMs: 1000 },
    policies,
    faults: die,
  });
  await service.putBytes({ tenantId: 'acme', sessionId: 'crash' }, readFileSync(input!));
} else {
  await runRetention({ repo, blobs, policies, graceMs: 0, faults: die });
}
process.stderr.write(`reached the end without passing ${point}\n`);
process.exit(3);
