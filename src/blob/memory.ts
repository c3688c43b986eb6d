import type { HashFactory } from '../core/hash.js';
import type { ByteRange } from '../core/schemas.js';
import type { BlobInfo, BlobPutOptions, BlobStore } from './blob-store.js';
import { ingest } from './ingest.js';

export interface MemoryBlobStoreOptions {
  hash: HashFactory;
}

/** Blobs in a Map: for tests and throwaway processes. Commits only after the hash is verified. */
export function createMemoryBlobStore(options: MemoryBlobStoreOptions): BlobStore {
  const blobs = new Map<string, Uint8Array>();
  return {
    driver: 'memory',
    async put(body: ReadableStream<Uint8Array>, putOptions: BlobPutOptions = {}): Promise<BlobInfo> {
      const chunks: Uint8Array[] = [];
      const info = await ingest(body, options.hash, putOptions, async (batch) => {
        chunks.push(...batch);
      });
      await putOptions.beforeCommit?.({ sha256: info.sha256 });
      if (!blobs.has(info.sha256)) {
        const bytes = new Uint8Array(info.sizeBytes);
        let offset = 0;
        for (const c of chunks) {
          bytes.set(c, offset);
          offset += c.byteLength;
        }
        blobs.set(info.sha256, bytes);
      }
      return info;
    },
    async get(sha256: string, range?: ByteRange) {
      const bytes = blobs.get(sha256);
      if (!bytes) return null;
      const view = range ? bytes.subarray(range.start, range.end + 1) : bytes;
      const CHUNK = 1 << 20;
      let offset = 0;
      return new ReadableStream<Uint8Array>({
        pull(controller) {
          if (offset >= view.byteLength) {
            controller.close();
            return;
          }
          controller.enqueue(view.slice(offset, offset + CHUNK));
          offset += CHUNK;
        },
      });
    },
    async readSmall(sha256: string, range: ByteRange) {
      const bytes = blobs.get(sha256);
      return bytes ? bytes.slice(range.start, range.end + 1) : null;
    },
    async stat(sha256: string) {
      const bytes = blobs.get(sha256);
      return bytes ? { sha256, sizeBytes: bytes.byteLength } : null;
    },
    async *list() {
      for (const [sha256, bytes] of blobs) yield { sha256, sizeBytes: bytes.byteLength, modifiedAt: 0 };
    },
    async exists(sha256: string) {
      return blobs.has(sha256);
    },
    async delete(sha256: string) {
      return blobs.delete(sha256);
    },
  };
}
