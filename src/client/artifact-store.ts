/** The SDK's ArtifactStore interface; it lives in core so the service's embedded store can implement it too. */
export type {
  ArtifactEvent,
  ArtifactEventType,
  ArtifactStore,
  ArtifactStoreCapabilities,
  DownloadLink,
  EventsOptions,
  GetStreamOptions,
  LoadedVersion,
  NamedArtifactStore,
  NameRef,
  NameWhere,
  UrlOptions,
} from '../core/artifact-store.js';
