/**
 * Bytes of small blobs kept in memory, least recently used out first. Blobs are immutable and keyed
 * by their sha256, so a cached copy is never stale: whether a caller may read it is still decided
 * by the database lookup on every request. Saves the open / read / close of hot small artifacts.
 */
export function createSmallBlobCache(maxBytes: number) {
  const entries = new Map<string, Uint8Array>();
  let total = 0;
  return {
    get(sha256: string): Uint8Array | undefined {
      const bytes = entries.get(sha256);
      if (bytes) {
        // Re-insert: Map order is the recency order.
        entries.delete(sha256);
        entries.set(sha256, bytes);
      }
      return bytes;
    },
    set(sha256: string, bytes: Uint8Array): void {
      if (bytes.byteLength > maxBytes || entries.has(sha256)) return;
      entries.set(sha256, bytes);
      total += bytes.byteLength;
      for (const [key, value] of entries) {
        if (total <= maxBytes) break;
        entries.delete(key);
        total -= value.byteLength;
      }
    },
    delete(sha256: string): void {
      const bytes = entries.get(sha256);
      if (bytes) {
        entries.delete(sha256);
        total -= bytes.byteLength;
      }
    },
    get sizeBytes() {
      return total;
    },
  };
}
