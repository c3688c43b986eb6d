/**
 * Counts memory held outside V8's heap (Buffers, the socket reads of a download or an upload) in V8's
 * global limit, instead of against a limit of its own. By default every ~25 MiB of new external memory
 * starts a full mark-compact of the whole heap, however short-lived that memory is; a 256 MiB proxied
 * S3 download made 6-15 of them, each costing the service more than a bare proxy (a larger heap to
 * mark). Counted in the global limit, buffers that die young go with the young generation's
 * scavenges, and full collections follow the heap's growth as a whole (docs/performance.md).
 * V8 has the flag from 13.x (Node 24); elsewhere this does nothing. Process-wide, as the regexp
 * flags are; setting it twice is harmless.
 */
import { setFlagsFromString } from 'node:v8';

export function countExternalMemoryInGlobalLimit(): void {
  if (Number.parseInt(process.versions.v8, 10) >= 13) {
    setFlagsFromString('--external-memory-accounted-in-global-limit');
  }
}
