import type { ArtifactRef } from './schemas.js';

/** The event stream's names and shape (GET /v1/events, the SDK's events(), the MCP server's notifications). */
export type ArtifactEventType = 'artifact.stored' | 'artifact.deleted' | 'artifact.evicted' | 'artifact.expired';

export interface ArtifactEvent {
  /** Position in the stream: pass it as `lastEventId` to resume after this event. */
  id: string;
  type: ArtifactEventType;
  /** The reference as it was at the change (for removals: as it was just before). */
  ref: ArtifactRef;
  at: string;
}
