import { toHex, type HashFactory } from '../core/hash.js';

interface DigestStreamLike extends WritableStream<ArrayBufferView> {
  readonly digest: Promise<ArrayBuffer>;
}

/**
 * Streaming sha256 on Cloudflare Workers: `crypto.DigestStream`, native, behind the same HashFactory
 * seam that is node:crypto on Node. (A JS or WASM hash runs at a fraction of the speed, so none is
 * offered as a fallback.) Chunks are handed to the stream as they come and must not be changed
 * afterwards; the drivers never reuse a chunk's buffer.
 */
export const digestStreamSha256: HashFactory = () => {
  const DigestStream = (crypto as unknown as { DigestStream?: new (algorithm: string) => DigestStreamLike })
    .DigestStream;
  if (!DigestStream)
    throw new Error(
      'crypto.DigestStream exists only on Cloudflare Workers; on Node use nodeSha256 from src/blob/node-hash.ts.',
    );
  const stream = new DigestStream('SHA-256');
  const writer = stream.getWriter();
  let failed: unknown;
  return {
    update(chunk: Uint8Array) {
      writer.write(chunk).catch((err: unknown) => {
        failed ??= err;
      });
    },
    async digest() {
      await writer.close();
      if (failed !== undefined) throw failed;
      return toHex(new Uint8Array(await stream.digest));
    },
  };
};
