/**
 * The shapes the artifact browser reads from /v1, as the page sees them. Types only: no script loads
 * this file.
 */

export interface Scope {
  tenantId: string;
  userId?: string;
  sessionId?: string;
  traceId?: string;
}

export interface ArtifactRef {
  id: string;
  mimeType: string;
  sizeBytes: number;
  sha256: string;
  filename?: string | null;
  namespace?: string | null;
  scope: Scope;
  source?: ({ tool?: string } & Record<string, unknown>) | null;
  createdAt: string;
  expiresAt?: string | null;
  /** A named version's name (its app is `namespace`), and its number from 0. */
  name?: string;
  version?: number;
  meta?: unknown;
  lastAccessedAt?: string;
}

/** A name's versions, as GET /v1/names/{app}/versions lists them (oldest first), once read. */
export interface NameFacts {
  versions: ArtifactRef[];
  /** the read failed: the row shows what it has */
  failed?: boolean;
}

/** How a reference ended (deleted, evicted, expired) and when. */
export interface Gone {
  type: string;
  at: string;
}

/** One row of the list: a reference, whether it is gone, and whether it should flash as new. */
export interface Entry {
  ref: ArtifactRef;
  gone?: Gone;
  fresh?: boolean;
}

/** A signed link (POST /v1/artifacts/{id}/url): no token in it. */
export interface Link {
  url: string;
  fetchMode: 'direct' | 'proxy';
  urlExpiresAt: string;
}

export interface UsageRow {
  tenantId: string;
  bytes: number;
  count: number;
}

export interface RetentionRun {
  startedAt: string;
  trigger: string;
  durationMs: number;
  expiredRefs: number;
  evictedRefs: number;
  blobsCollected: number;
  bytesFreed: number;
}

/** GET /v1/usage. */
export interface UsageReport {
  at: string;
  tenants: (UsageRow & { limitBytes: number | null })[];
  sessions: (UsageRow & { sessionId: string; limitBytes: number; limitCount: number })[];
  retentionRuns: RetentionRun[];
}

/** One MCP server behind the gateway (GET /v1/mcp/servers). */
export interface McpServer {
  name: string;
  state: 'starting' | 'ready' | 'failed' | 'closed';
  error?: string;
  nextRetryAt?: string;
  serverInfo?: { name: string; version: string };
  tools: number;
  prompts: number;
  /** it offers resources to list and read */
  resources: boolean;
  /** it sends resource.updated for resources read here */
  subscribe: boolean;
}

/** One resource a server lists (GET /v1/mcp/servers/{name}/resources). */
export interface McpResource {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
}

/** An MCP content block, as far as the page looks into it. */
export interface ContentBlock {
  type: string;
  text?: string;
  uri?: string;
  resource?: { uri: string; mimeType?: string; text?: string; blob?: string };
}

/** GET /v1/mcp/servers/{name}/resources/read: short text inline, the rest stored as artifacts. */
export interface ResourceRead {
  uri: string;
  content: ContentBlock[];
  artifacts: ArtifactRef[];
  fromCache: boolean;
}

/** The data of a resource.updated event on /v1/events. */
export interface ResourceUpdated {
  resource: { server: string; uri: string };
  at: string;
}
