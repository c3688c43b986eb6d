/**
 * A streaming sha256. Web Crypto cannot hash a stream, so runtimes inject one: node:crypto on Node,
 * crypto.DigestStream on Workers. Never a JS/WASM hash on Node (5x slower).
 */
export interface StreamingHash {
  update(chunk: Uint8Array): void;
  /** Lowercase hex. */
  digest(): Promise<string> | string;
}

export type HashFactory = () => StreamingHash;

/** Hashes a whole buffer with Web Crypto; for the explicitly buffered paths only. */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>);
  return toHex(new Uint8Array(digest));
}

export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += b.toString(16).padStart(2, '0');
  return out;
}
