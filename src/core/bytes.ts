/** One buffer from many; `size` is their total length when the caller already knows it. */
export function concatBytes(chunks: readonly Uint8Array[], size = chunks.reduce((n, c) => n + c.byteLength, 0)): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
