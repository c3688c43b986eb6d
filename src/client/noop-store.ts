import { decodeBase64 } from '../core/base64.js';
import { sanitizeFilename } from '../core/filename.js';
import { sha256Hex } from '../core/hash.js';
import { artifactId, DEFAULT_NAMESPACE } from '../core/ids.js';
import type { ArtifactRef, ArtifactScope, ListPage, PutOptions } from '../core/schemas.js';
import { emptySessionEnd, sessionToEnd } from '../core/sessions.js';
import type { ArtifactStore, ArtifactStoreCapabilities } from './artifact-store.js';

export interface NoOpArtifactStoreOptions {
  /** Called once, on the first put. Default console.warn. */
  warn?: (message: string) => void;
  /** The scope the refs name; default `{ tenantId: 'local' }`. */
  scope?: ArtifactScope;
  now?: () => number;
}

export const NOOP_WARNING =
  'No artifact store is configured: binary or oversized tool output was NOT stored and cannot be downloaded. Configure an ArtifactStore (HTTP, embedded or in-memory).';

/**
 * The fallback when nothing is configured: keeps nothing, but answers puts with a ref the model can
 * still read, marked `source: { truncated: true, warning }` (penguiflow's marker) so nobody mistakes it
 * for stored bytes. Warns once per store.
 */
export function createNoOpArtifactStore(options: NoOpArtifactStoreOptions = {}): ArtifactStore {
  const warn = options.warn ?? ((message: string) => console.warn(message));
  const scope = options.scope ?? { tenantId: 'local' };
  const now = options.now ?? Date.now;
  const capabilities: ArtifactStoreCapabilities = {
    persistent: false,
    ranges: false,
    signedUrls: false,
    events: false,
  };
  let warned = false;

  async function describe(bytes: Uint8Array, o: PutOptions): Promise<ArtifactRef> {
    if (!warned) {
      warned = true;
      warn(NOOP_WARNING);
    }
    const sha256 = await sha256Hex(bytes);
    const namespace = o.namespace ?? DEFAULT_NAMESPACE;
    const filename = sanitizeFilename(o.filename);
    const ref: ArtifactRef = {
      id: artifactId(namespace, sha256),
      mimeType: o.mimeType ?? 'application/octet-stream',
      sizeBytes: bytes.byteLength,
      sha256,
      namespace,
      scope: { ...scope, ...(o.scope ?? {}), tenantId: scope.tenantId },
      source: { ...(o.source ?? {}), truncated: true, warning: NOOP_WARNING },
      createdAt: new Date(now()).toISOString(),
    };
    if (filename !== undefined) ref.filename = filename;
    if (o.meta !== undefined) ref.meta = o.meta;
    return ref;
  }

  const store: ArtifactStore = {
    capabilities,
    putBytes: (data: Uint8Array, o: PutOptions = {}) => describe(data, o),
    putText: (text: string, o: PutOptions = {}) =>
      describe(new TextEncoder().encode(text), { mimeType: 'text/plain; charset=utf-8', ...o }),
    async putBase64(data: string, o: PutOptions = {}) {
      const decoded = decodeBase64(data);
      return describe(decoded.bytes, { ...(decoded.mimeType ? { mimeType: decoded.mimeType } : {}), ...o });
    },
    async putStream(stream: ReadableStream<Uint8Array>, o: PutOptions = {}) {
      return describe(new Uint8Array(await new Response(stream).arrayBuffer()), o);
    },
    get: async () => null,
    getStream: async () => null,
    getRef: async () => null,
    exists: async () => false,
    delete: async () => false,
    list: async (): Promise<ListPage> => ({ items: [] }),
    // It kept nothing, so ending a session removes nothing; the id is still checked.
    endSession: async (sessionId?: string) => emptySessionEnd(sessionToEnd(sessionId, scope.sessionId)),
  };
  noOpStores.add(store);
  return store;
}

const noOpStores = new WeakSet<ArtifactStore>();

/** True for stores made by createNoOpArtifactStore: they keep nothing. */
export function isNoOpArtifactStore(store: ArtifactStore): boolean {
  return noOpStores.has(store);
}

/** True for a ref a store handed back without keeping the bytes (the NoOp marker). */
export function isUnstoredRef(ref: ArtifactRef): boolean {
  return ref.source?.truncated === true;
}
