/**
 * artifact-store-sdk: one ArtifactStore interface and its implementations. Web standards only (fetch,
 * Web Streams, Web Crypto), so this entry point runs in Node, browsers and Workers. The in-process
 * store over the service is the server package's (`openArtifactStore` in artifact-store/node).
 */
export type {
  ArtifactStore,
  ArtifactStoreCapabilities,
  DownloadLink,
  GetStreamOptions,
  LoadedVersion,
  NamedArtifactStore,
  NameRef,
  NameWhere,
  UrlOptions,
} from './artifact-store.js';
export type {
  ArtifactEvent,
  ArtifactEventType,
  EventsOptions,
  QueryAnswer,
  QueryMatch,
  QueryOptions,
  ReadAnswer,
  ReadOptions,
  SearchAnswer,
  SearchLine,
  SearchOptions,
  SessionEndReport,
  ViewHead,
  ViewKind,
} from '../core/artifact-store.js';
export type { BigUploadOptions, ByteSource, ResumeRecords, UploadProgress } from './http-direct-upload.js';
export {
  createHttpArtifactStore,
  type HttpArtifactStore,
  type HttpArtifactStoreOptions,
  type SpooledBody,
  type UploadSpool,
} from './http-store.js';
export {
  createInMemoryArtifactStore,
  type InMemoryArtifactStore,
  type InMemoryArtifactStoreOptions,
} from './memory-store.js';
export {
  createNoOpArtifactStore,
  isNoOpArtifactStore,
  isUnstoredRef,
  NOOP_WARNING,
  type NoOpArtifactStoreOptions,
} from './noop-store.js';
export { discoverArtifactStore, isArtifactStore } from './discover.js';

export type {
  ArtifactRef,
  ArtifactScope,
  ByteRange,
  FetchMode,
  ListPage,
  ListQuery,
  NameInfo,
  NamePage,
  PutOptions,
} from '../core/schemas.js';
export {
  ArtifactError,
  ERROR_CODES,
  ERROR_STATUS,
  isArtifactError,
  isErrorCode,
  type ArtifactErrorOptions,
  type ErrorCode,
} from '../core/errors.js';
export { artifactId, DEFAULT_NAMESPACE, isArtifactId, namespaceFromToolName } from '../core/ids.js';
/** The wire schemas (zod) of a ref, a scope, a put's options and a list query, to validate what you keep. */
export { ArtifactRefSchema, ArtifactScopeSchema, ListQuerySchema, PutOptionsSchema } from '../core/schemas.js';
