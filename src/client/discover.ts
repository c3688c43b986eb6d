import type { ArtifactStore } from './artifact-store.js';
import { createNoOpArtifactStore, type NoOpArtifactStoreOptions } from './noop-store.js';

const REQUIRED_METHODS = [
  'putBytes',
  'putText',
  'putBase64',
  'putStream',
  'get',
  'getStream',
  'getRef',
  'exists',
  'delete',
  'list',
] as const;

/** Does this value implement ArtifactStore (every required method and a capabilities object)? */
export function isArtifactStore(value: unknown): value is ArtifactStore {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return false;
  const candidate = value as Record<string, unknown>;
  return (
    typeof candidate.capabilities === 'object' &&
    candidate.capabilities !== null &&
    REQUIRED_METHODS.every((m) => typeof candidate[m] === 'function')
  );
}

/**
 * Picks the store a planner uses, as penguiflow does: the explicit one; else the state store's
 * `artifactStore`; else the state store itself when it implements ArtifactStore; else a NoOp store
 * (which warns once on first use).
 *
 * @example
 * const store = discoverArtifactStore(stateStore, options.artifactStore);
 */
export function discoverArtifactStore(
  stateStore?: unknown,
  explicit?: ArtifactStore | null,
  noOpOptions?: NoOpArtifactStoreOptions,
): ArtifactStore {
  if (explicit) return explicit;
  if (stateStore !== null && typeof stateStore === 'object') {
    const nested = (stateStore as { artifactStore?: unknown }).artifactStore;
    if (isArtifactStore(nested)) return nested;
    if (isArtifactStore(stateStore)) return stateStore;
  }
  return createNoOpArtifactStore(noOpOptions);
}
