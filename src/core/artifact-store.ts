/**
 * The ArtifactStore interface every store implements (the SDK's HTTP, in-memory and no-op stores, and
 * the service's embedded store), with its option types. Public as `artifact-store-sdk`.
 */
import type { ArtifactRef, ByteRange, FetchMode, ListPage, ListQuery, NamePage, PutOptions } from './schemas.js';
import type { ArtifactEvent } from './events.js';
import type { SessionEndReport } from './sessions.js';
import type { QueryAnswer, QueryOptions, ReadAnswer, ReadOptions, SearchAnswer, SearchOptions } from './views.js';

/** What a store can do beyond the required methods; the contract suite tests what is declared. */
export interface ArtifactStoreCapabilities {
  /** Bytes survive the process. */
  persistent: boolean;
  /** getStream honours a byte range. */
  ranges: boolean;
  /** `url()` returns a download URL a browser can fetch without a token. */
  signedUrls: boolean;
  /** `events()` streams artifact.* events. */
  events: boolean;
  /** `names` is there: named, versioned artifacts. */
  names?: boolean;
  /** `read`, `search` and `query` are there: what a model reads of an artifact (the service's views). */
  views?: boolean;
}

/**
 * Which name: an app (the versions' namespace) and a name, in the store's scope. The user is the
 * store's (or this one, where the store may name users); the session is the store's (or this one),
 * unless `userWide`: then the name belongs to the user across their sessions.
 */
export interface NameRef {
  app: string;
  name: string;
  userId?: string;
  sessionId?: string;
  userWide?: boolean;
}

/** Where names are listed: an app, and the same user / session choice as a NameRef. */
export type NameWhere = Omit<NameRef, 'name'>;

/** A version read whole: its ref (with name and version) and its bytes. */
export interface LoadedVersion {
  ref: ArtifactRef;
  bytes: Uint8Array;
}

/**
 * Named versions: a name's versions 0, 1, 2… (each a content-addressed artifact with its own type and
 * metadata). Numbers are given in order, never twice while the name exists; after deleteName a new
 * save starts again at 0.
 */
export interface NamedArtifactStore {
  /** Saves a new version (the put options apply, except namespace and scope: those come from `ref`). */
  saveVersion(
    ref: NameRef,
    data: Uint8Array | ReadableStream<Uint8Array> | string,
    options?: PutOptions,
  ): Promise<ArtifactRef>;
  /** A version's ref (or the latest live one's); null when there is none in this scope. */
  versionRef(ref: NameRef, version?: number): Promise<ArtifactRef | null>;
  /** A version whole, or the latest live one; null when there is none in this scope. */
  loadVersion(ref: NameRef, version?: number): Promise<LoadedVersion | null>;
  /** The version's bytes as a stream (a range too); null when there is none. */
  loadVersionStream(
    ref: NameRef,
    version?: number,
    options?: GetStreamOptions,
  ): Promise<{ ref: ArtifactRef; stream: ReadableStream<Uint8Array> } | null>;
  /** Every live version's ref, oldest first; [] when the name has none. */
  listVersions(ref: NameRef): Promise<ArtifactRef[]>;
  /** Names with a live version, by name, a page at a time. */
  listNames(where: NameWhere, query?: { cursor?: string; limit?: number }): Promise<NamePage>;
  /** Removes the name and every version; false when there was none. */
  deleteName(ref: NameRef): Promise<boolean>;
  /** A download link for a version (stores that sign links). */
  versionUrl?(ref: NameRef, version?: number, options?: UrlOptions): Promise<DownloadLink>;
}

export interface GetStreamOptions {
  range?: ByteRange;
}

export interface DownloadLink {
  url: string;
  /** proxy = through the service; direct = from S3 / the CDN. */
  fetchMode: FetchMode;
  urlExpiresAt: string;
  mimeType: string;
  sizeBytes: number;
}

export interface UrlOptions {
  mode?: FetchMode;
  expiresIn?: number;
  disposition?: 'inline' | 'attachment';
}

/**
 * Where a planner puts binary and oversized tool output. Every implementation (HTTP, embedded,
 * in-memory, no-op) passes one contract suite (test/artifact-store.contract.ts).
 */
export interface ArtifactStore {
  readonly capabilities: ArtifactStoreCapabilities;
  putBytes(data: Uint8Array, options?: PutOptions): Promise<ArtifactRef>;
  putText(text: string, options?: PutOptions): Promise<ArtifactRef>;
  /** base64, base64url or a `data:` URL. */
  putBase64(data: string, options?: PutOptions): Promise<ArtifactRef>;
  putStream(stream: ReadableStream<Uint8Array>, options?: PutOptions): Promise<ArtifactRef>;
  /** The whole artifact in memory (the explicitly buffered call); null when missing or out of scope. */
  get(id: string): Promise<Uint8Array | null>;
  getStream(id: string, options?: GetStreamOptions): Promise<ReadableStream<Uint8Array> | null>;
  getRef(id: string): Promise<ArtifactRef | null>;
  exists(id: string): Promise<boolean>;
  /** True when something was deleted. */
  delete(id: string): Promise<boolean>;
  list(query?: ListQuery): Promise<ListPage>;
  /**
   * Present when capabilities.signedUrls: a link a browser can GET (and Range) without a token,
   * until urlExpiresAt. Rejects with not_found when the id is missing or out of scope.
   */
  url?(id: string, options?: UrlOptions): Promise<DownloadLink>;
  /**
   * Present when capabilities.events: the scope's artifact.* events as they happen, reconnecting
   * (with Last-Event-ID, so none is missed) until `signal` aborts or the loop breaks.
   */
  events?(options?: EventsOptions): AsyncIterable<ArtifactEvent>;
  /**
   * Present when capabilities.views: lines of an artifact, numbered, within a budget (a PDF page by
   * page, a ZIP's entries or one entry, an image's pixel size). `text` is what a model reads. Rejects
   * with not_found when the id is missing or out of scope, unsupported_type when it has no text.
   */
  read?(id: string, options?: ReadOptions): Promise<ReadAnswer>;
  /** Present when capabilities.views: the lines matching a fixed string or a regex, as grep -n finds them. */
  search?(id: string, options: SearchOptions): Promise<SearchAnswer>;
  /** Present when capabilities.views: the values an RFC 9535 JSONPath selects in a JSON artifact. */
  query?(id: string, options: QueryOptions): Promise<QueryAnswer>;
  /** Present when capabilities.names: named, versioned artifacts (NamedArtifactStore). */
  readonly names?: NamedArtifactStore;
  /**
   * Ends a session: every reference of it the store sees goes at once, named versions and their
   * names too (user-wide names stay), and the answer says what went. `sessionId` defaults to the
   * store's own session; a store bound to a session may end only that one (forbidden), one bound
   * to a trace none. Ending a session that holds nothing answers zeros. Every store this package
   * makes has it.
   */
  endSession?(sessionId?: string): Promise<SessionEndReport>;
}

export type { SessionEndReport } from './sessions.js';

export type * from './views.js';

export type { ArtifactEvent, ArtifactEventType } from './events.js';

export interface EventsOptions {
  /** Resume after this event (from a previous ArtifactEvent.id); default: only new events. */
  lastEventId?: string;
  /** Narrow a tenant-wide token's stream to one session or trace. */
  sessionId?: string;
  traceId?: string;
  signal?: AbortSignal;
}
