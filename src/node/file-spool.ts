import { createHash } from 'node:crypto';
import { createWriteStream, openAsBlob } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { UploadSpool } from '../client/upload-spool.js';

/**
 * The Node spool for the HTTP store's putStream: the stream goes to a file in a fresh private
 * folder (mode 0700) while it is hashed, and comes back as a file-backed Blob that fetch sends with
 * its Content-Length, read from disk. release() removes the folder; so does a failed write.
 *
 * @example
 * const store = createHttpArtifactStore({ baseUrl, token, spool: createFileSpool() });
 * await store.putStream(Readable.toWeb(createReadStream('big.pdf')));  // direct to S3 above 8 MiB
 */
export function createFileSpool(options: { dir?: string } = {}): UploadSpool {
  return async (stream) => {
    const folder = await mkdtemp(join(options.dir ?? tmpdir(), 'artifact-store-spool-'));
    const release = () => rm(folder, { recursive: true, force: true });
    try {
      const path = join(folder, 'body');
      const hash = createHash('sha256');
      const hashing = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          hash.update(chunk);
          done(null, chunk);
        },
      });
      await pipeline(
        Readable.fromWeb(stream as NodeReadableStream<Uint8Array>),
        hashing,
        createWriteStream(path, { flags: 'wx', mode: 0o600 }),
      );
      return { blob: await openAsBlob(path), sha256: hash.digest('hex'), release };
    } catch (err) {
      await release();
      throw err;
    }
  };
}
