/**
 * A Worker for tests, bundled with esbuild and run in workerd (Miniflare): the R2 driver on the R2
 * binding with the DigestStream hasher, as the Workers entry will wire them.
 *   PUT /blob            → store.put(body), JSON BlobInfo (or { code, message } with the error's status)
 *   GET /blob/{sha256}   → the bytes (Range: bytes=a-b honoured), 404 when missing
 *   POST /hash           → the sha256 of the body, hashed chunk by chunk with DigestStream
 */
import { digestStreamSha256 } from '../../src/blob/digest-stream-hash.js';
import { createR2BlobStore, type R2BucketLike } from '../../src/blob/r2.js';
import { isArtifactError } from '../../src/core/errors.js';

export default {
  async fetch(request: Request, env: { BLOBS: R2BucketLike }): Promise<Response> {
    const store = createR2BlobStore({ bucket: env.BLOBS, hash: digestStreamSha256 });
    const url = new URL(request.url);
    try {
      if (request.method === 'POST' && url.pathname === '/hash') {
        const hasher = digestStreamSha256();
        const reader = request.body!.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          hasher.update(value);
        }
        return new Response(await hasher.digest());
      }
      if (request.method === 'PUT' && url.pathname === '/blob') {
        const expected = request.headers.get('x-sha256');
        return Response.json(await store.put(request.body!, { ...(expected ? { expectedSha256: expected } : {}) }));
      }
      if (request.method === 'GET' && url.pathname.startsWith('/blob/')) {
        const m = /^bytes=(\d+)-(\d+)$/.exec(request.headers.get('range') ?? '');
        const body = await store.get(url.pathname.slice(6), m ? { start: Number(m[1]), end: Number(m[2]) } : undefined);
        return body ? new Response(body) : new Response(null, { status: 404 });
      }
      return new Response(null, { status: 404 });
    } catch (err) {
      if (isArtifactError(err)) return Response.json({ code: err.code, message: err.message }, { status: err.status });
      return Response.json({ code: 'internal', message: String(err) }, { status: 500 });
    }
  },
};
