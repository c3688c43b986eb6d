/**
 * `artifact-store-sdk/adk`: Google ADK's artifact service (`BaseArtifactService` of `@google/adk`) over
 * any ArtifactStore with named versions (`store.names`). An ADK filename is a name, its versions are
 * the name's versions, `user:` filenames are user-wide; see docs/adk.md.
 *
 * Only types come from `@google/adk` and `@google/genai` (both optional peer dependencies), so this
 * entry point loads neither at run time.
 */
import type {
  ArtifactVersion,
  BaseArtifactService,
  DeleteArtifactRequest,
  ListArtifactKeysRequest,
  ListVersionsRequest,
  LoadArtifactRequest,
  SaveArtifactRequest,
} from '@google/adk';
import type { Part } from '@google/genai';
import type { ArtifactStore, DownloadLink, NamedArtifactStore, NameRef, UrlOptions } from '../core/artifact-store.js';
import { NAMESPACE_PATTERN } from '../core/ids.js';
import type { ArtifactRef, PutOptions } from '../core/schemas.js';
import { toPart, toStored, versionMimeType } from './parts.js';

export { URI_LIST_MIME, type AdkSource } from './parts.js';

/** Where an ADK request points: its app, user and session. */
export interface AdkSessionScope {
  appName: string;
  userId: string;
  /** Needed for session filenames; `user:` filenames ignore it. */
  sessionId?: string;
}

/**
 * A request in either of ADK's shapes: flat (`{ appName, userId, sessionId, filename, … }`, ADK 2.0)
 * or with a scope (`{ scope: { appName, userId, sessionId }, filename, … }`, ADK's newer source).
 */
export type AdkRequest<T> = T | (Omit<T, 'appName' | 'userId' | 'sessionId'> & { scope: AdkSessionScope });

/** An ArtifactVersion with the time it was saved, as ADK Python's `create_time`. */
export interface StoredArtifactVersion extends ArtifactVersion {
  /** `artifact://{id}`: the content-addressed artifact this version is. */
  canonicalUri: string;
  /** Seconds since the epoch (fractional), when the version was saved. */
  createTime: number;
}

export interface ArtifactStoreArtifactServiceOptions {
  /**
   * Seconds each saved version lives, or 'never'. Default: the store's rule for named versions
   * (the service keeps them until deleted unless its policy sets nameTtlSeconds).
   */
  ttl?: PutOptions['ttl'];
}

/** The user-wide prefix of ADK filenames, kept in the name as ADK's own services keep it. */
const USER_PREFIX = 'user:';
const LIST_PAGE = 1000;

/**
 * ADK's artifact service backed by an ArtifactStore's named versions.
 *
 * The store must be able to name users and sessions: a tenant-wide store (the in-memory store's
 * default scope, an embedded store with `scope: { tenantId }`, or the HTTP store with a tenant-wide
 * token and no `scope.sessionId`). Each call names its user and session explicitly, from the ADK
 * request; a store bound to one session refuses the others.
 *
 * @example
 * const runner = new Runner({ appName: 'my_app', agent, sessionService,
 *   artifactService: new ArtifactStoreArtifactService(createHttpArtifactStore({ baseUrl, token })) });
 */
export class ArtifactStoreArtifactService implements BaseArtifactService {
  private readonly names: NamedArtifactStore;

  constructor(
    readonly store: ArtifactStore,
    private readonly options: ArtifactStoreArtifactServiceOptions = {},
  ) {
    if (!store.names) {
      throw new Error(
        'This ArtifactStore has no named versions (store.names is missing, capabilities.names is not true): ' +
          'use the in-memory, embedded or HTTP store of artifact-store, which have them.',
      );
    }
    this.names = store.names;
  }

  /** Saves a new version of the filename; resolves to its number (0 for the first, then 1, 2…). */
  async saveArtifact(request: AdkRequest<SaveArtifactRequest>): Promise<number> {
    const ref = nameRefOf(request, request.filename);
    const stored = toStored(request.artifact, request.filename);
    const saved = await this.names.saveVersion(ref, stored.data, {
      ...stored.options,
      ...(request.customMetadata !== undefined ? { meta: request.customMetadata } : {}),
      ...(this.options.ttl !== undefined ? { ttl: this.options.ttl } : {}),
    });
    if (saved.version === undefined) throw new Error(`The store saved ${ref.name} without a version number.`);
    return saved.version;
  }

  /** The version asked for, or the latest, as the Part that was saved; undefined when there is none. */
  async loadArtifact(request: AdkRequest<LoadArtifactRequest>): Promise<Part | undefined> {
    if (!isVersion(request.version)) return undefined;
    const loaded = await this.names.loadVersion(nameRefOf(request, request.filename), request.version);
    return loaded ? toPart(loaded.ref, loaded.bytes) : undefined;
  }

  /**
   * The session's filenames and the user's `user:` filenames, sorted as ADK's InMemoryArtifactService
   * sorts them (by UTF-16 code unit).
   */
  async listArtifactKeys(request: AdkRequest<ListArtifactKeysRequest>): Promise<string[]> {
    const scope = scopeOf(request);
    const where = { app: appOf(scope.appName), userId: userOf(scope) };
    // Only what loadArtifact can reach: `user:` names user-wide, the others in the session.
    const [userWide, inSession] = await Promise.all([
      this.allNames({ ...where, userWide: true }),
      scope.sessionId ? this.allNames({ ...where, sessionId: scope.sessionId }) : [],
    ]);
    const keys = new Set([...userWide.filter(isUserWide), ...inSession.filter((name) => !isUserWide(name))]);
    return [...keys].sort();
  }

  /** Removes the filename and every version (nothing when there is none); a new save starts at 0. */
  async deleteArtifact(request: AdkRequest<DeleteArtifactRequest>): Promise<void> {
    await this.names.deleteName(nameRefOf(request, request.filename));
  }

  /** The version numbers, oldest first; [] when the filename has none. */
  async listVersions(request: AdkRequest<ListVersionsRequest>): Promise<number[]> {
    return (await this.versionRefs(request)).map((r) => r.version!);
  }

  /** Each version's number, canonicalUri, customMetadata, mimeType and createTime, oldest first. */
  async listArtifactVersions(request: AdkRequest<ListVersionsRequest>): Promise<StoredArtifactVersion[]> {
    return (await this.versionRefs(request)).map(versionOf);
  }

  /** One version's metadata (the latest without `version`); undefined when there is none. */
  async getArtifactVersion(request: AdkRequest<LoadArtifactRequest>): Promise<StoredArtifactVersion | undefined> {
    if (!isVersion(request.version)) return undefined;
    const ref = await this.names.versionRef(nameRefOf(request, request.filename), request.version);
    return ref ? versionOf(ref) : undefined;
  }

  /**
   * A download link for a version (the latest without `version`) that a browser can GET without a
   * token, from stores that sign links (the HTTP store; the embedded one given a publicUrl). A
   * fileData version's link downloads its `text/uri-list` reference, not the file it names.
   */
  async versionUrl(request: AdkRequest<LoadArtifactRequest>, options?: UrlOptions): Promise<DownloadLink> {
    if (!this.names.versionUrl) {
      throw new Error(
        'This ArtifactStore does not sign download links (store.names.versionUrl is missing): use the HTTP store, ' +
          'or an embedded store created with a publicUrl.',
      );
    }
    if (!isVersion(request.version))
      throw new Error(`Invalid version ${request.version}: versions are whole numbers from 0.`);
    return this.names.versionUrl(nameRefOf(request, request.filename), request.version, options);
  }

  private async versionRefs(request: AdkRequest<ListVersionsRequest>): Promise<ArtifactRef[]> {
    const refs = await this.names.listVersions(nameRefOf(request, request.filename));
    return refs.filter((r) => r.version !== undefined).sort((a, b) => a.version! - b.version!);
  }

  private async allNames(where: Omit<NameRef, 'name'>): Promise<string[]> {
    const names: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.names.listNames(where, { limit: LIST_PAGE, ...(cursor ? { cursor } : {}) });
      names.push(...page.items.map((i) => i.name));
      cursor = page.nextCursor;
    } while (cursor);
    return names;
  }
}

const isUserWide = (filename: string) => filename.startsWith(USER_PREFIX);

/** undefined (the latest) or a whole number from 0; anything else names no version, as in ADK. */
const isVersion = (version: number | undefined) =>
  version === undefined || (Number.isSafeInteger(version) && version >= 0);

function scopeOf(request: object): AdkSessionScope {
  const scoped = (request as { scope?: AdkSessionScope }).scope;
  return scoped && typeof scoped === 'object' ? scoped : (request as AdkSessionScope);
}

function appOf(appName: string): string {
  if (typeof appName !== 'string' || !NAMESPACE_PATTERN.test(appName)) {
    throw new Error(
      `ADK appName ${JSON.stringify(appName)} cannot be an artifact-store app: it must match ${NAMESPACE_PATTERN} ` +
        "(1-128 letters, digits, '.', '_' or '-'), because it is the namespace of its versions' artifacts.",
    );
  }
  return appName;
}

function userOf(scope: AdkSessionScope): string {
  if (typeof scope.userId !== 'string' || scope.userId === '') {
    throw new Error('An ADK artifact request needs a userId: artifacts belong to a user (and a session).');
  }
  return scope.userId;
}

/** The NameRef of an ADK request: its app, user and session, or user-wide for a `user:` filename. */
function nameRefOf(request: object, filename: string): NameRef {
  const scope = scopeOf(request);
  const base = { app: appOf(scope.appName), name: filename, userId: userOf(scope) };
  if (isUserWide(filename)) return { ...base, userWide: true };
  if (!scope.sessionId) {
    throw new Error(
      `Artifact ${JSON.stringify(filename)} belongs to a session, and the request names none: ` +
        `pass a sessionId, or use a "${USER_PREFIX}" filename for a user-wide artifact.`,
    );
  }
  return { ...base, sessionId: scope.sessionId };
}

function versionOf(ref: ArtifactRef): StoredArtifactVersion {
  const mimeType = versionMimeType(ref);
  return {
    version: ref.version!,
    canonicalUri: `artifact://${ref.id}`,
    ...(ref.meta !== undefined ? { customMetadata: ref.meta } : {}),
    ...(mimeType !== undefined ? { mimeType } : {}),
    createTime: Date.parse(ref.createdAt) / 1000,
  };
}
