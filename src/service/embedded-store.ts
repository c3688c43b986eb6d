/** The artifact service as an ArtifactStore (the SDK's interface), in-process, with no HTTP. */
import type {
  ArtifactStore,
  ArtifactStoreCapabilities,
  GetStreamOptions,
  NamedArtifactStore,
  NameRef,
  UrlOptions,
} from '../core/artifact-store.js';
import { streamOfBytes } from '../core/bytes.js';
import { nameKeyFor } from '../core/names.js';
import { TEXT_MIME } from '../core/put-options.js';
import { isArtifactError } from '../core/errors.js';
import type { ArtifactRef, ArtifactScope, ListPage, ListQuery, PutOptions } from '../core/schemas.js';
import { sessionToEnd } from '../core/sessions.js';
import { narrowScope } from '../core/scope.js';
import { readAccessOf, resolveByteRange } from '../core/store-scope.js';
import type { ArtifactService, PutResult } from './artifact-service.js';

export interface EmbeddedArtifactStoreOptions {
  service: ArtifactService;
  /** Who this store acts for. Reads see the tenant, narrowed to the session / trace when set. */
  scope: ArtifactScope;
  /** Whether the service's drivers keep bytes past the process (fs + SQLite file: yes). Default true. */
  persistent?: boolean;
  /**
   * Public origin of an HTTP server running this same service: with it, `url()` makes download links
   * for browsers (signedUrls). Without it there is nobody to serve proxy links.
   */
  publicUrl?: string;
}

/**
 * The artifact service in-process, no HTTP: for a planner running next to its storage (one machine,
 * CLI, tests). Same validation, ids and scoping as the HTTP API, because it is the same service.
 *
 * @example
 * const store = createEmbeddedArtifactStore({ service, scope: { tenantId: 'acme', sessionId: 's-42' } });
 * const ref = await store.putBytes(pdf, { mimeType: 'application/pdf', filename: 'Sales.pdf' });
 */
export function createEmbeddedArtifactStore(options: EmbeddedArtifactStoreOptions): ArtifactStore {
  const { service, scope } = options;
  checkIsService(service);
  const access = readAccessOf(scope);
  const capabilities: ArtifactStoreCapabilities = {
    persistent: options.persistent ?? true,
    ranges: true,
    signedUrls: options.publicUrl !== undefined,
    events: false,
    names: true,
    views: true,
  };

  async function put(
    run: (scope: ArtifactScope) => Promise<PutResult>,
    putOptions: PutOptions | undefined,
  ): Promise<ArtifactRef> {
    // Refuse a scope change before the service merges options.scope over ours.
    narrowScope(scope, putOptions?.scope);
    return (await run(scope)).ref;
  }

  const viewCall = options.publicUrl !== undefined ? { baseUrl: options.publicUrl } : {};

  async function getStream(id: string, getOptions: GetStreamOptions = {}): Promise<ReadableStream<Uint8Array> | null> {
    return nullWhenNotFound(
      async () =>
        (await service.getStream(access, id, ({ sizeBytes }) => resolveByteRange(getOptions.range, sizeBytes))).body,
    );
  }

  return {
    capabilities,
    putBytes: (data: Uint8Array, o?: PutOptions) => put((s) => service.putBytes(s, data, o), o),
    putText: (text: string, o?: PutOptions) => put((s) => service.putText(s, text, o), o),
    putBase64: (data: string, o?: PutOptions) => put((s) => service.putBase64(s, data, o), o),
    putStream: async (stream: ReadableStream<Uint8Array>, o?: PutOptions) => {
      try {
        narrowScope(scope, o?.scope);
      } catch (err) {
        await stream.cancel(err).catch(() => {});
        throw err;
      }
      return (await service.putStream(scope, stream, o)).ref;
    },
    async get(id: string) {
      const body = await getStream(id);
      return body ? new Uint8Array(await new Response(body).arrayBuffer()) : null;
    },
    getStream,
    getRef: (id: string) => nullWhenNotFound(() => service.getRef(access, id)),
    ...(options.publicUrl !== undefined
      ? {
          url: (id: string, o: UrlOptions = {}) =>
            service.downloadUrl(access, id, { ...o, baseUrl: options.publicUrl! }),
        }
      : {}),
    exists: (id: string) => service.exists(access, id),
    delete: (id: string) => service.delete(access, id),
    list: (query?: ListQuery): Promise<ListPage> => service.list(access, query),
    read: (id, o) => service.views.read(access, id, o, viewCall),
    search: (id, o) => service.views.search(access, id, o, viewCall),
    query: (id, o) => service.views.query(access, id, o, viewCall),
    names: embeddedNames(service, scope, options.publicUrl),
    endSession: async (sessionId?: string) => service.endSession(access, sessionToEnd(sessionId, scope.sessionId)),
  };
}

/**
 * Refuses, at once and by name, what is not an ArtifactService: most often the drivers openNodeDrivers
 * returns, which have no put or get of their own.
 */
function checkIsService(service: unknown): asserts service is ArtifactService {
  const candidate = service as Partial<Record<keyof ArtifactService, unknown>> | null | undefined;
  if (typeof candidate?.putText === 'function' && typeof candidate.getStream === 'function') return;
  const got =
    candidate && typeof candidate === 'object' && 'repo' in candidate && 'blobs' in candidate
      ? 'drivers (what openNodeDrivers returns)'
      : candidate === undefined || candidate === null
        ? String(candidate)
        : 'an object without putText or getStream';
  throw new TypeError(
    `createEmbeddedArtifactStore: \`service\` must be an ArtifactService (composeApp(config, drivers, runtime).service, or startServer(config).service), not ${got}. To open a data dir in-process in one call, use openArtifactStore({ dataDir, scope }) from artifact-store/node.`,
  );
}

/** Named versions through the service, for this store's scope (core/names.ts says which key a ref means). */
function embeddedNames(
  service: ArtifactService,
  scope: ArtifactScope,
  publicUrl: string | undefined,
): NamedArtifactStore {
  const streamOf = (data: Uint8Array | ReadableStream<Uint8Array> | string) =>
    data instanceof ReadableStream
      ? data
      : streamOfBytes(typeof data === 'string' ? new TextEncoder().encode(data) : data);
  const loadVersionStream: NamedArtifactStore['loadVersionStream'] = async (ref, version, o = {}) => {
    const key = nameKeyFor(scope, ref);
    return nullWhenNotFound(async () => {
      const versionRef = await service.versionRef(key, version);
      const { body } = await service.versionBody(
        key,
        versionRef.version,
        ({ sizeBytes }) => resolveByteRange(o.range, sizeBytes),
        0,
      );
      const stream = body instanceof Uint8Array ? streamOfBytes(body) : body;
      return { ref: versionRef, stream };
    });
  };
  return {
    versionRef: (ref, version) => nullWhenNotFound(() => service.versionRef(nameKeyFor(scope, ref), version)),
    async saveVersion(ref, data, o = {}) {
      const key = nameKeyFor(scope, ref);
      const putOptions = typeof data === 'string' && o.mimeType === undefined ? { ...o, mimeType: TEXT_MIME } : o;
      return (await service.saveVersion(key, streamOf(data), putOptions)).ref;
    },
    async loadVersion(ref, version) {
      const found = await loadVersionStream(ref, version);
      return found && { ref: found.ref, bytes: new Uint8Array(await new Response(found.stream).arrayBuffer()) };
    },
    loadVersionStream,
    async listVersions(ref) {
      return (await nullWhenNotFound(() => service.listVersions(nameKeyFor(scope, ref)))) ?? [];
    },
    listNames: (where, query) => {
      const { name: _name, ...at } = nameKeyFor(scope, where);
      return service.listNames(at, query);
    },
    deleteName: (ref) => service.deleteName(nameKeyFor(scope, ref)),
    ...(publicUrl !== undefined
      ? {
          versionUrl: (ref: NameRef, version?: number, o: UrlOptions = {}) =>
            service.versionUrl(nameKeyFor(scope, ref), version, { ...o, baseUrl: publicUrl }),
        }
      : {}),
  };
}

/** Missing and out of scope read as null, like the other stores; every other error propagates. */
async function nullWhenNotFound<T>(read: () => Promise<T>): Promise<T | null> {
  try {
    return await read();
  } catch (err) {
    if (isArtifactError(err) && err.code === 'not_found') return null;
    throw err;
  }
}
