/** Phase `artifacts`: artifacts that no reference holds, a window of artifact rows per transaction. */
import type { PhaseContext } from './context.js';

/** Drops artifacts without references (normally none: an artifact goes with its last reference). */
export async function dropUnreferencedArtifacts({ deps, batch, pace, report }: PhaseContext): Promise<void> {
  for (let after: number | null = 0; after !== null; ) {
    const began = performance.now();
    const { dropped, next } = await deps.repo.dropUnreferencedArtifacts(after, batch);
    report.unreferencedArtifacts += dropped;
    await pace.after('artifacts', report.unreferencedArtifacts, performance.now() - began);
    after = next;
  }
}
