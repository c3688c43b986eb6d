/**
 * Where the HTTP store keeps a stream's bytes to learn their size and sha256 before a direct upload.
 * The interface lives in the SDK; `createFileSpool()` in `artifact-store/node` is the Node one.
 */

/** Keeps a stream's bytes so they can be sent with a known size and sha256. */
export type UploadSpool = (stream: ReadableStream<Uint8Array>) => Promise<SpooledBody>;

export interface SpooledBody {
  /** The bytes, readable any number of times (a file-backed Blob in Node). */
  blob: Blob;
  sha256: string;
  /** Removes the spooled bytes; called once the put is over, whatever its outcome. */
  release(): Promise<void>;
}
