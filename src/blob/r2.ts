import type { HashFactory } from '../core/hash.js';
import type { ByteRange } from '../core/schemas.js';
import { errors, isArtifactError } from '../core/errors.js';
import { SHA256_PATTERN } from '../core/ids.js';
import { blobKeyLayout, paginate } from './blob-keys.js';
import type { BlobInfo, BlobPutOptions, BlobStore, DirectAccess } from './blob-store.js';
import { ingest, uploadSizeMismatch } from './ingest.js';
import type { ObjectPresigner } from './s3-presign.js';

/**
 * The part of Cloudflare's R2 bucket binding this driver uses (the `R2Bucket` of
 * @cloudflare/workers-types), so the driver needs no Workers types to compile and runs against
 * Miniflare's binding from Node in tests.
 */
export interface R2ObjectLike {
  key: string;
  size: number;
  uploaded: Date;
}
export interface R2ObjectBodyLike extends R2ObjectLike {
  body: ReadableStream<Uint8Array>;
  arrayBuffer(): Promise<ArrayBuffer>;
}
export interface R2UploadedPartLike {
  partNumber: number;
  etag: string;
}
export interface R2MultipartUploadLike {
  uploadPart(partNumber: number, value: Uint8Array): Promise<R2UploadedPartLike>;
  complete(parts: R2UploadedPartLike[]): Promise<R2ObjectLike>;
  abort(): Promise<void>;
}
export interface R2BucketLike {
  head(key: string): Promise<R2ObjectLike | null>;
  get(key: string, options?: { range?: { offset: number; length: number } }): Promise<R2ObjectBodyLike | null>;
  put(
    key: string,
    value: Uint8Array | ArrayBuffer | string,
    options?: { sha256?: string },
  ): Promise<R2ObjectLike | null>;
  delete(keys: string | string[]): Promise<void>;
  list(options?: {
    prefix?: string;
    cursor?: string;
    limit?: number;
  }): Promise<{ objects: R2ObjectLike[]; truncated: boolean; cursor?: string }>;
  createMultipartUpload(key: string): Promise<R2MultipartUploadLike>;
}

export interface R2BlobStoreOptions {
  bucket: R2BucketLike;
  /** Streaming sha256: crypto.DigestStream on Workers (see src/blob/digest-stream-hash.ts), node:crypto on Node. */
  hash: HashFactory;
  /** Key prefix inside the bucket. Default "". */
  prefix?: string;
  /** Multipart part size; R2 wants every part but the last the same size, 5 MiB at least. Default 8 MiB. */
  partBytes?: number;
  /**
   * R2's S3 API (src/blob/s3-presign.ts over an S3 client with R2 credentials) for what the binding
   * cannot do: presigned GETs (`direct` links, straight from R2) and presigned PUTs (direct uploads,
   * the way past the Workers request-body limit). Without it, downloads go through the service and
   * direct uploads are refused.
   */
  presigner?: ObjectPresigner;
}

const MiB = 1024 * 1024;

/**
 * Blobs in an R2 bucket through the Workers binding, laid out like the S3 driver:
 * `{prefix}blobs/sha256/ab/cd/{hex}`.
 *
 * A put hashes while it reads. A body that fits in one part (8 MiB) is held in memory and written to
 * its final key with R2's own sha256 check. A bigger one streams to `{prefix}staging/{uuid}` as a
 * multipart upload, part by part. Once size and hash are verified, it is copied part by part
 * (ranged reads, hashed again on the way) into a multipart upload of the final key: the binding has
 * no server-side copy, and R2 makes an object visible only when its upload completes, so readers
 * never see a partial blob. The staging object is then deleted. Multipart uploads that die before
 * completing are never visible; R2's lifecycle rule for incomplete uploads (7 days by default) reaps
 * their parts.
 */
export function createR2BlobStore(options: R2BlobStoreOptions): BlobStore {
  const { bucket, hash } = options;
  const prefix = options.prefix ?? '';
  const partBytes = Math.max(5 * MiB, options.partBytes ?? 8 * MiB);
  const layout = blobKeyLayout(prefix);
  const keyOf = layout.blobKey;

  /** Every object under `under`, page after page by R2's cursor. */
  const listUnder = (under: string) =>
    paginate<R2ObjectLike, string>(async (cursor) => {
      const page = await bucket.list({ prefix: under, ...(cursor ? { cursor } : {}) });
      return { items: page.objects, next: page.truncated ? page.cursor || undefined : undefined };
    });

  /**
   * Best effort: the caller's own outcome is what matters, and a staging object left behind is
   * reaped by sweepStaging, so a failed delete is dropped.
   */
  const removeStaging = (key: string) => bucket.delete(key).catch(() => {});

  /** Copies a staged object into the final key part by part, hashing what it reads back. */
  async function copyToFinal(stagingKey: string, info: BlobInfo): Promise<void> {
    const upload = await bucket.createMultipartUpload(keyOf(info.sha256));
    try {
      const hasher = hash();
      const parts: R2UploadedPartLike[] = [];
      for (let offset = 0, n = 1; offset < info.sizeBytes; offset += partBytes, n++) {
        const length = Math.min(partBytes, info.sizeBytes - offset);
        const part = await bucket.get(stagingKey, { range: { offset, length } });
        if (!part) throw new Error(`R2 staging object ${stagingKey} vanished while being committed`);
        const bytes = new Uint8Array(await part.arrayBuffer());
        if (bytes.byteLength !== length)
          throw new Error(`R2 returned ${bytes.byteLength} bytes of ${stagingKey} at ${offset}, not ${length}`);
        hasher.update(bytes);
        parts.push(await upload.uploadPart(n, bytes));
      }
      const copied = await hasher.digest();
      if (copied !== info.sha256)
        throw new Error(`R2 staging object ${stagingKey} read back as ${copied}, not ${info.sha256}`);
      await upload.complete(parts);
    } catch (err) {
      // As in put: the copy's failure is what the caller gets; R2's lifecycle rule reaps the parts.
      await upload.abort().catch(() => {});
      throw err;
    }
  }

  /** Streams an object through the hasher; its size and sha256. */
  async function hashObject(key: string, limit: number): Promise<BlobInfo | null> {
    const object = await bucket.get(key);
    if (!object) return null;
    const hasher = hash();
    let size = 0;
    const reader = object.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        // One byte over the declared size is enough to refuse: the rest is not read.
        if (size > limit) throw uploadSizeMismatch(limit, 'more');
        hasher.update(value);
      }
    } catch (err) {
      // The error is the one to report; a body that fails to cancel changes nothing.
      await reader.cancel(err).catch(() => {});
      throw err;
    }
    return { sha256: await hasher.digest(), sizeBytes: size };
  }

  /**
   * Direct links and uploads need R2's S3 API for the presigned URLs; completing an upload needs only
   * the binding: the staged object is read back and hashed here (R2's own checksums are not
   * trusted), then copied under its hash like a big put.
   */
  function directAccess(presigner: ObjectPresigner): DirectAccess {
    return {
      async presignGet(sha256, o) {
        if (!SHA256_PATTERN.test(sha256)) throw new Error(`not a sha256: ${sha256}`);
        return presigner.get(keyOf(sha256), o);
      },

      async presignUpload(o) {
        const stagingKey = layout.stagingKey();
        return { stagingKey, ...(await presigner.put(stagingKey, o)) };
      },

      async commitUpload(stagingKey, expected, beforeCommit) {
        if (!layout.isStagingKey(stagingKey)) throw new Error(`not a staging key of this store: ${stagingKey}`);
        // Bytes that fail verification are dropped (the client must start over); after a transient
        // failure (R2, or the pin's "retry shortly") they stay, so completing again can succeed.
        const drop = () => removeStaging(stagingKey);
        let staged: BlobInfo | null;
        try {
          staged = await hashObject(stagingKey, expected.sizeBytes);
        } catch (err) {
          if (isArtifactError(err)) await drop();
          throw err;
        }
        // Nothing uploaded yet: the client may still PUT and complete again.
        if (!staged)
          throw errors.badRequest(
            'Nothing has been uploaded for this upload yet: PUT the bytes to its url, then complete it.',
          );
        if (staged.sizeBytes < expected.sizeBytes || staged.sha256 !== expected.sha256) {
          await drop();
          throw staged.sizeBytes < expected.sizeBytes
            ? uploadSizeMismatch(expected.sizeBytes, `${staged.sizeBytes}`)
            : errors.checksumMismatch(expected.sha256, staged.sha256);
        }
        await beforeCommit?.({ sha256: staged.sha256 });
        if (!(await bucket.head(keyOf(staged.sha256)))) await copyToFinal(stagingKey, staged);
        await drop();
        return staged;
      },

      async discardUpload(stagingKey) {
        if (layout.isStagingKey(stagingKey)) await removeStaging(stagingKey);
      },
    };
  }

  return {
    driver: 'r2',

    async put(body: ReadableStream<Uint8Array>, putOptions: BlobPutOptions = {}): Promise<BlobInfo> {
      // Parts must be exactly partBytes (but the last). Chunks are kept as they come and joined
      // into a part only once a part's worth has arrived, so a small put holds only its own bytes.
      const pending: Uint8Array[] = [];
      let pendingBytes = 0;
      /** The first n pending bytes as one buffer. */
      const take = (n: number): Uint8Array => {
        const out = new Uint8Array(n);
        for (let at = 0; at < n; ) {
          const chunk = pending[0]!;
          const k = Math.min(chunk.byteLength, n - at);
          out.set(chunk.subarray(0, k), at);
          at += k;
          if (k === chunk.byteLength) pending.shift();
          else pending[0] = chunk.subarray(k);
        }
        pendingBytes -= n;
        return out;
      };
      let upload: R2MultipartUploadLike | undefined;
      const parts: R2UploadedPartLike[] = [];
      const stagingKey = layout.stagingKey();
      const flush = async (bytes: Uint8Array) => {
        upload ??= await bucket.createMultipartUpload(stagingKey);
        parts.push(await upload.uploadPart(parts.length + 1, bytes));
      };
      let info: BlobInfo;
      try {
        info = await ingest(body, hash, putOptions, async (chunks) => {
          for (const chunk of chunks) {
            pending.push(chunk);
            pendingBytes += chunk.byteLength;
            while (pendingBytes >= partBytes) await flush(take(partBytes));
          }
        });
        if (upload && pendingBytes > 0) await flush(take(pendingBytes));
        if (upload) await upload.complete(parts);
      } catch (err) {
        // The put's failure is what the caller gets. An upload that fails to abort is never visible,
        // and R2's lifecycle rule reaps its parts.
        await upload?.abort().catch(() => {});
        throw err;
      }
      try {
        await putOptions.beforeCommit?.({ sha256: info.sha256 });
        if (!(await bucket.head(keyOf(info.sha256)))) {
          if (upload) await copyToFinal(stagingKey, info);
          else await bucket.put(keyOf(info.sha256), take(pendingBytes), { sha256: info.sha256 });
        }
        return info;
      } finally {
        if (upload) await removeStaging(stagingKey);
      }
    },

    async get(sha256: string, range?: ByteRange) {
      const object = await bucket.get(
        keyOf(sha256),
        range ? { range: { offset: range.start, length: range.end - range.start + 1 } } : undefined,
      );
      return object ? object.body : null;
    },

    async readSmall(sha256: string, range: ByteRange) {
      const object = await bucket.get(keyOf(sha256), {
        range: { offset: range.start, length: range.end - range.start + 1 },
      });
      return object ? new Uint8Array(await object.arrayBuffer()) : null;
    },

    async stat(sha256: string) {
      const head = await bucket.head(keyOf(sha256));
      return head ? { sha256, sizeBytes: head.size } : null;
    },

    async exists(sha256: string) {
      return (await bucket.head(keyOf(sha256))) !== null;
    },

    async delete(sha256: string) {
      const key = keyOf(sha256);
      if (!(await bucket.head(key))) return false;
      await bucket.delete(key);
      return true;
    },

    async *list() {
      for await (const o of listUnder(layout.blobsPrefix)) {
        const sha256 = layout.sha256Of(o.key);
        if (sha256) yield { sha256, sizeBytes: o.size, modifiedAt: o.uploaded.getTime() };
      }
    },

    ...(options.presigner ? { direct: directAccess(options.presigner) } : {}),

    async sweepStaging(before: number) {
      let removed = 0;
      let bytes = 0;
      let stale: R2ObjectLike[] = [];
      const removeStale = async () => {
        if (stale.length === 0) return;
        await bucket.delete(stale.map((o) => o.key));
        removed += stale.length;
        bytes += stale.reduce((n, o) => n + o.size, 0);
        stale = [];
      };
      for await (const o of listUnder(layout.stagingPrefix)) {
        if (o.uploaded.getTime() >= before) continue;
        stale.push(o);
        // The binding deletes at most 1000 keys at once.
        if (stale.length === 1000) await removeStale();
      }
      await removeStale();
      return { removed, bytes };
    },
  };
}
