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

type NodeHash = { update(b: Uint8Array): NodeHash; digest(enc: 'hex'): string };
type NodeCrypto = { createHash(alg: 'sha256'): NodeHash };

/**
 * node:crypto where the runtime has it (Node ≥ 20.16 offers process.getBuiltinModule), found without
 * an import so that this module still loads in browsers and Workers.
 */
const nodeCrypto = (
  globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }
).process?.getBuiltinModule?.('node:crypto') as NodeCrypto | undefined;

/**
 * Hashes a whole buffer; for the explicitly buffered paths only. On Node it is node:crypto, in
 * place: Node's Web Crypto copies the input and hops to the thread pool, which for megabytes costs
 * more than the hash. Elsewhere, Web Crypto.
 */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  if (nodeCrypto) return nodeCrypto.createHash('sha256').update(bytes).digest('hex');
  const digest = await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>);
  return toHex(new Uint8Array(digest));
}

/**
 * Hashes a stream's bytes as they come (a file is read in chunks, never held whole) on Node; where
 * only Web Crypto exists, which cannot hash a stream, the bytes are collected first.
 */
export async function sha256OfStream(stream: ReadableStream<Uint8Array>): Promise<string> {
  if (!nodeCrypto) return sha256Hex(new Uint8Array(await new Response(stream).arrayBuffer()));
  const hasher = nodeCrypto.createHash('sha256');
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    hasher.update(value);
  }
  return hasher.digest('hex');
}

export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += b.toString(16).padStart(2, '0');
  return out;
}
