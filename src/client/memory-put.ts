/**
 * The in-memory store's put, as the service's (putStream, then commitMetadata): options, scope,
 * size, hash, then the reference in the tables. Puts and saves of named versions both come here.
 */
import { concatBytes } from '../core/bytes.js';
import { errors } from '../core/errors.js';
import { sha256Hex } from '../core/hash.js';
import { artifactId, DEFAULT_NAMESPACE } from '../core/ids.js';
import { DEFAULT_MIME, expiryOf, validatePutOptions } from '../core/put-options.js';
import type { ArtifactRef, ArtifactScope, PutOptions } from '../core/schemas.js';
import { narrowScope } from '../core/scope.js';
import { type MemoryTable, refOf } from './memory-table.js';

/** What every scoped view of one store shares: its tables and its settings. */
export interface MemoryStoreContext {
  table: MemoryTable;
  maxArtifactBytes: number;
  defaultTtlSeconds: number;
  maxTtlSeconds: number;
  allowNoExpiry: boolean;
  now: () => number;
}

/** A put's options once validated (type trimmed, filename made safe). */
type CheckedPut = ReturnType<typeof validatePutOptions>;

/**
 * The put of the service (putStream, then commitMetadata) over the tables: options, scope, size,
 * hash, then the reference. A save passes its name: the next version, which never expires unless
 * it asks to.
 */
export async function commitPut(
  context: MemoryStoreContext,
  scope: ArtifactScope,
  body: Uint8Array | ReadableStream<Uint8Array>,
  raw: PutOptions,
  name?: string,
): Promise<ArtifactRef> {
  const { table, maxArtifactBytes, now } = context;
  let o: CheckedPut;
  let at: ArtifactScope;
  try {
    o = validatePutOptions(raw, context);
    at = narrowScope(scope, o.scope);
  } catch (err) {
    if (body instanceof ReadableStream) await body.cancel(err).catch(() => {});
    throw err;
  }
  const bytes = body instanceof ReadableStream ? await collect(body, maxArtifactBytes) : body;
  if (bytes.byteLength > maxArtifactBytes) throw errors.payloadTooLarge(maxArtifactBytes);
  const sha256 = await sha256Hex(bytes);
  if (o.sha256 && o.sha256 !== sha256) throw errors.checksumMismatch(o.sha256, sha256);
  const namespace = o.namespace ?? DEFAULT_NAMESPACE;
  const id = artifactId(namespace, sha256);
  const stored = table.storedSha256(at.tenantId, id);
  if (stored !== undefined && stored !== sha256) throw errors.hashCollision(id);
  const t = now();
  const row = table.commitPut(
    {
      tenantId: at.tenantId,
      artifactId: id,
      namespace,
      sha256,
      sizeBytes: bytes.byteLength,
      userId: at.userId ?? '',
      sessionId: at.sessionId ?? '',
      traceId: at.traceId ?? '',
      mimeType: o.mimeType ?? DEFAULT_MIME,
      filename: o.filename ?? null,
      meta: o.meta === undefined ? null : structuredClone(o.meta),
      source: o.source === undefined ? null : structuredClone(o.source),
      createdAt: t,
      expiresAt: expiryOf(t, o.ttl ?? (name ? 'never' : context.defaultTtlSeconds)),
      // A copy: the caller may reuse its buffer.
      bytes: new Uint8Array(bytes),
      ...(name ? { name } : {}),
    },
    t,
  );
  return refOf(row);
}

/** Reads a stream into one buffer, refusing it as soon as it passes `maxBytes`. */
async function collect(stream: ReadableStream<Uint8Array>, maxBytes: number): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) throw errors.payloadTooLarge(maxBytes);
      chunks.push(value);
    }
  } catch (err) {
    await reader.cancel(err).catch(() => {});
    throw err;
  } finally {
    reader.releaseLock();
  }
  return concatBytes(chunks, size);
}
