import type { BlobStore } from '../blob/blob-store.js';
import type { Policy } from '../core/policy.js';
import type { ApiKeyRecord, ArtifactRepository, AuditEntry, AuditFilter, OutboxEvent } from '../db/repository.js';
import { type AuditActor, recordAction } from './audit.js';
import { type OutboxFeedOptions, tailOutbox } from './outbox-feed.js';
import { type UsageExtras, type UsageReport, type UsageScope, usageReport } from './usage.js';

export type { ApiKeyRecord, AuditEntry, AuditFilter, OutboxEvent } from '../db/repository.js';

/** Counts of what is stored now: live references and their bytes, blobs and theirs. */
export interface StoredTotals {
  refs: number;
  refBytes: number;
  blobs: number;
  blobBytes: number;
}

/**
 * What the HTTP layer asks of the service besides artifacts: readiness, totals for metrics, usage
 * reports, the event outbox, the audit trail and API key lookups. The routes go through this rather
 * than reading the repository, so the storage layer stays behind the service.
 */
export interface ServiceOperations {
  /** Throws when the database or the blob store does not answer. */
  ping(): Promise<void>;
  storedTotals(): Promise<StoredTotals>;
  usage(scope: UsageScope, top: number, extras?: UsageExtras): Promise<UsageReport>;
  /** The newest event's position: a stream with nothing to resume from starts there. */
  lastEventSeq(): Promise<number>;
  /** Up to `limit` events after `afterSeq`, of one tenant or (undefined) all. */
  readEvents(tenantId: string | undefined, afterSeq: number, limit: number): Promise<OutboxEvent[]>;
  /** A tenant's artifact events from now on, narrowed to a session and/or trace. */
  tailEvents(
    scope: { tenantId: string; sessionId?: string | undefined; traceId?: string | undefined },
    options: OutboxFeedOptions,
  ): ReturnType<typeof tailOutbox>;
  /** Tells the scope's event streams that an MCP resource it watches changed upstream (`resource.updated`). */
  publishResourceUpdated(event: {
    tenantId: string;
    scope: { userId?: string; sessionId?: string; traceId?: string };
    server: string;
    uri: string;
  }): Promise<void>;
  recordAction(actor: AuditActor, action: string, what?: Parameters<typeof recordAction>[3]): Promise<AuditEntry>;
  listAudit(filter: AuditFilter): Promise<AuditEntry[]>;
  /** An API key by its id (the part before the secret), with the hash of its secret. */
  findApiKey(id: string): Promise<(ApiKeyRecord & { secretHash: string }) | undefined>;
}

/** A hash no blob has: reading whether it exists proves the store answers. */
const PROBE_HASH = '0'.repeat(64);

export function createServiceOperations(deps: {
  repo: ArtifactRepository;
  blobs: BlobStore;
  policies: (tenantId: string) => Policy;
  now?: () => number;
}): ServiceOperations {
  const { repo, blobs, policies } = deps;
  const now = deps.now ?? Date.now;
  return {
    async ping() {
      await repo.ping();
      await blobs.exists(PROBE_HASH);
    },
    storedTotals: () => repo.storedTotals(now()),
    usage: (scope, top, extras) => usageReport(repo, policies, scope, top, now(), extras),
    lastEventSeq: () => repo.lastEventSeq(),
    readEvents: (tenantId, afterSeq, limit) => repo.readEvents(tenantId, afterSeq, limit),
    tailEvents: (scope, options) => tailOutbox(repo, scope, options),
    publishResourceUpdated: ({ tenantId, scope, server, uri }) =>
      repo.appendEvent({ tenantId, type: 'resource.updated', subject: uri, scope, data: { server, uri }, at: now() }),
    recordAction: (actor, action, what) => recordAction(repo, actor, action, what),
    listAudit: (filter) => repo.listAudit(filter),
    findApiKey: (id) => repo.findApiKey(id),
  };
}
