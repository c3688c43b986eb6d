/** One buffer from many; `size` is their total length when the caller already knows it. */
export function concatBytes(
  chunks: readonly Uint8Array[],
  size = chunks.reduce((n, c) => n + c.byteLength, 0),
): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

const BYTE_UNITS = ['KiB', 'MiB', 'GiB', 'TiB'] as const;

/**
 * A byte count as a person reads it, the one rule for every size shown to people and models:
 * under 1024 → "N B"; otherwise 1024-based (IEC) units KiB, MiB, GiB, TiB, with one decimal under 10
 * and a whole number from 10 up. 1023 → "1023 B", 1024 → "1.0 KiB", 49356 → "48 KiB", 5 TiB → "5.0 TiB".
 */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${BYTE_UNITS[unit]}`;
}

/** Bytes in memory as a stream of (at most) one chunk: no chunk at all for zero bytes. */
export function streamOfBytes(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      if (bytes.byteLength > 0) controller.enqueue(bytes);
      controller.close();
    },
  });
}
