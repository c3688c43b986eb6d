/** The service's public shapes: its interface, what it takes and what it answers. */
import type { NamedVersions } from './names.js';
import type { ArtifactViews } from './views/index.js';
import type { SessionEnding } from './sessions.js';
import type { TusUploads } from './tus-uploads.js';
import type { Policy } from '../core/policy.js';
import type { UrlSigner } from '../core/url-signing.js';
import type {
  ArtifactRef,
  ArtifactScope,
  ByteRange,
  FetchMode,
  ListPage,
  ListQuery,
  PutOptions,
} from '../core/schemas.js';
import type { ScopeFilter } from '../db/repository.js';

/** What a put is checked against: a tenant's policy, or the service's limits without policies. */
export type PutPolicy = Pick<Policy, 'maxArtifactBytes' | 'defaultTtlSeconds' | 'maxTtlSeconds'> &
  Partial<Pick<Policy, 'allowNoExpiry' | 'nameTtlSeconds'>>;

/** The limits the service enforces on every put. */
export interface ServiceLimits {
  maxArtifactBytes: number;
  defaultTtlSeconds: number;
  maxTtlSeconds: number;
  /** Batch last-accessed writes over this many ms (0 = write on every read). */
  touchFlushMs: number;
  /** Memory for the bytes of hot small artifacts served by getBody (0 = no cache). */
  smallBlobCacheBytes?: number;
  /** How long a direct upload may take from begin to complete (default 3600 s; in parts, a day). */
  uploadTtlSeconds?: number;
  /** Direct uploads larger than this come in parts where the blob store takes parts (default 64 MiB). */
  multipartUploadBytes?: number;
  /** The part size of direct uploads in parts (default 16 MiB), raised to fit the backend's limits. */
  uploadPartBytes?: number;
  /**
   * How long a put's pin keeps garbage collection off its blob (default 1 h): a put must commit its
   * metadata within this time of committing its bytes.
   */
  gcGraceMs?: number;
}

/** What the service reports as it works (metrics). */
export interface ServiceObserver {
  /** Bytes of a newly stored reference's artifact. */
  stored(bytes: number): void;
  /** Bytes handed out for a download (the whole body or the range). */
  served(bytes: number): void;
  evicted(count: number): void;
}

/** Where a put can be stopped by fault injection: bytes staged and hashed; bytes committed; metadata committed. */
export type PutFaultPoint = 'put:after-staging' | 'put:after-blob-commit' | 'put:after-db-commit';

/** Download links: who signs proxy links, and how long links may live. */
export interface LinkSettings {
  /** Signs proxy links; without one only direct links (an S3 driver) can be made. */
  signer?: UrlSigner;
  defaultTtlSeconds: number;
  maxTtlSeconds: number;
}

export interface DownloadUrlOptions {
  /** direct = from the blob store (S3 presigned); proxy = through this service. Default proxy. */
  mode?: FetchMode;
  expiresIn?: number;
  disposition?: 'inline' | 'attachment';
  /** Public origin of this service, e.g. https://artifacts.example.com (for proxy links). */
  baseUrl: string;
}

export interface DownloadUrl {
  url: string;
  /** What the link is: `proxy` also when `direct` was asked of a driver that cannot presign. */
  fetchMode: FetchMode;
  urlExpiresAt: string;
  mimeType: string;
  sizeBytes: number;
}

/** What a client needs to upload directly to the blob store. */
/** A direct upload in one PUT. */
export interface PutUploadTicket {
  uploadId: string;
  kind: 'put';
  url: string;
  method: 'PUT';
  /** Headers the PUT must carry (they are part of the signature). */
  headers: Record<string, string>;
  expiresAt: string;
}

/**
 * A direct upload in parts: part n (from 1) holds bytes [(n-1)·partSize, n·partSize) of the file;
 * ask for each part's URL with its sha256 (`uploadParts`), PUT it, then complete.
 */
export interface PartsUploadTicket {
  uploadId: string;
  kind: 'multipart';
  sizeBytes: number;
  partSize: number;
  partCount: number;
  expiresAt: string;
}

export type UploadTicket = PutUploadTicket | PartsUploadTicket;

/** Where to PUT one part of a direct upload in parts. */
export interface PartUrl {
  partNumber: number;
  /** The part's exact size. */
  sizeBytes: number;
  url: string;
  method: 'PUT';
  headers: Record<string, string>;
}

/** An upload in flight, as a client resuming it needs to see it. */
export interface UploadStatus {
  uploadId: string;
  kind: 'put' | 'multipart' | 'tus';
  sizeBytes: number;
  /** The declared sha256 ('' for a tus upload that declared none). */
  sha256: string;
  expiresAt: string;
  /** Multipart: the part size, the number of parts, and the parts the bucket holds (ascending). */
  partSize?: number;
  partCount?: number;
  parts?: { partNumber: number; sizeBytes: number; etag: string }[];
  /** Tus: the bytes acknowledged so far. */
  receivedBytes?: number;
}

/** Who is reading: a tenant and the scope parts the caller is bound to. */
export interface Access {
  tenantId: string;
  filter: ScopeFilter;
}

export interface PutResult {
  ref: ArtifactRef;
  /** False when this scope already held the artifact (the put refreshed its expiry). */
  created: boolean;
}

/** What a download needs to know: the content facts and the putter's description of them. */
export interface DownloadEntity {
  sha256: string;
  sizeBytes: number;
  mimeType: string;
  filename: string | null;
}

/** Sees the size and hash of the artifact before any byte is read, and picks the range to serve. */
export type RangeResolver = (entity: { sizeBytes: number; sha256: string }) => ByteRange | undefined;

export interface GetResult {
  ref: ArtifactRef;
  sizeBytes: number;
  /** The range served, when one was asked. */
  range?: ByteRange;
  body: ReadableStream<Uint8Array>;
}

/**
 * The artifact service: put / get / delete / list over a BlobStore and an ArtifactRepository. Knows
 * nothing of HTTP. Every read takes an Access (the caller's tenant and bound scope parts): another
 * scope's artifact is indistinguishable from a missing one.
 */
/** Named versions (names.ts): save, read, link, list and delete by name. Ending a session (sessions.ts). */
export interface ArtifactService extends NamedVersions, SessionEnding {
  readonly limits: ServiceLimits;
  /** What a model reads of an artifact: lines, matching lines, JSONPath values (views/index.ts). */
  readonly views: ArtifactViews;
  /** Streams the body into the blob store (hashing as it goes), then commits the reference. */
  putStream(scope: ArtifactScope, body: ReadableStream<Uint8Array>, options?: PutOptions): Promise<PutResult>;
  /** Puts begun and not yet answered (retention in the same process makes way for them). */
  putsInFlight(): number;
  /** Buffered put of bytes already in memory. */
  putBytes(scope: ArtifactScope, bytes: Uint8Array, options?: PutOptions): Promise<PutResult>;
  /** A UTF-8 text artifact; mime defaults to text/plain. */
  putText(scope: ArtifactScope, text: string, options?: PutOptions): Promise<PutResult>;
  /** base64, base64url or a data: URL (whose media type is used unless mimeType is given). */
  putBase64(scope: ArtifactScope, data: string, options?: PutOptions): Promise<PutResult>;
  /** The reference visible to this caller; not_found when missing or out of scope (one path). */
  getRef(access: Access, id: string): Promise<ArtifactRef>;
  /** A link a browser can download with, no token needed; it never outlives the reference. */
  downloadUrl(access: Access, id: string, options: DownloadUrlOptions): Promise<DownloadUrl>;
  exists(access: Access, id: string): Promise<boolean>;
  /** Streams the bytes (or a range); `resolveRange` sees size and hash before any byte is read. */
  getStream(access: Access, id: string, resolveRange?: RangeResolver): Promise<GetResult>;
  /** What a download of this id would carry, without opening the bytes (HEAD, If-None-Match). */
  getEntity(access: Access, id: string): Promise<DownloadEntity>;
  /** The HTTP download path: a body of at most `smallBytes` comes as one buffer, larger ones stream. */
  getBody(
    access: Access,
    id: string,
    resolveRange: RangeResolver | undefined,
    smallBytes: number,
  ): Promise<{ entity: DownloadEntity; range?: ByteRange; body: ReadableStream<Uint8Array> | Uint8Array }>;
  /** Starts a direct upload to the blob store; every option is checked now. */
  beginUpload(
    scope: ArtifactScope,
    declared: { sizeBytes: number; sha256: string },
    options?: PutOptions,
  ): Promise<UploadTicket>;
  /** URLs for parts of a direct upload in parts, each signed with the part's sha256. */
  uploadParts(access: Access, uploadId: string, parts: { partNumber: number; sha256: string }[]): Promise<PartUrl[]>;
  /** An upload in flight: what it is and, in parts, which parts the bucket holds. */
  getUpload(access: Access, uploadId: string): Promise<UploadStatus>;
  /**
   * Finishes a direct upload: re-reads and hashes the staged (or assembled) bytes, then commits like
   * a put. `parts`, when given, is what the client uploaded: it must list every part, ascending.
   */
  completeUpload(access: Access, uploadId: string, parts?: { partNumber: number; etag?: string }[]): Promise<PutResult>;
  /** Ends an upload in flight and drops what was uploaded; false when there was none. */
  abortUpload(access: Access, uploadId: string): Promise<boolean>;
  /**
   * Resumable uploads through the service (tus), where the runtime stages bytes on a disk (Node);
   * absent elsewhere (Workers).
   */
  readonly tus?: TusUploads;
  /** Removes the caller's visible references; the artifact goes with its last reference. */
  delete(access: Access, id: string): Promise<boolean>;
  /** Admin purge: every reference of the tenant to `id`, and the bytes unless another tenant holds them. */
  purge(tenantId: string, id: string): Promise<{ refs: number; bytesDeleted: boolean; cdnInvalidated?: boolean }>;
  list(access: Access, query?: ListQuery): Promise<ListPage>;
  /** Flushes pending last-accessed writes. */
  flush(): Promise<void>;
  close(): Promise<void>;
}
