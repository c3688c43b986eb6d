/**
 * The whole store in this process, with no server: a data dir opened as `artifact-store serve` opens
 * it (the same ARTIFACT_STORE_* settings, tenant policies, limits and retention), used through the
 * SDK's ArtifactStore interface, then closed.
 *
 *   npx tsx examples/embedded.ts     # stores into ./data; ARTIFACT_STORE_DATA_DIR names another folder
 *
 * In your own project the import is `artifact-store/node`; this file imports the source so it runs
 * from a clone.
 */
import { openArtifactStore } from '../src/node.js';

// #region embedded
// In a project: import { openArtifactStore } from 'artifact-store/node';
const store = await openArtifactStore({ scope: { sessionId: 's-42' } }); // ./data, tenant "dev"

const log = Array.from({ length: 5000 }, (_, i) => (i === 4321 ? 'ERROR disk full' : `line ${i}`)).join('\n');
const ref = await store.putText(log, { filename: 'build.log', namespace: 'ci.get_job_logs' });
const bytes = await store.get(ref.id); // Uint8Array | null
const page = await store.list({ namespace: 'ci.get_job_logs' });
const hits = await store.search!(ref.id, { pattern: 'ERROR' }); // hits.lines[0].line → 4322

await store.close(); // the SQLite file, the view sandbox's thread, the retention timer
// #endregion

console.log(
  `stored ${ref.id} (${ref.sizeBytes} bytes) for tenant ${ref.scope.tenantId}, session ${ref.scope.sessionId}`,
);
console.log(`read back ${bytes?.byteLength} bytes; the session lists ${page.items.length} artifact(s)`);
console.log(`search: ${hits.totalMatches} match, line ${hits.lines[0]?.line}: ${hits.lines[0]?.text}`);
