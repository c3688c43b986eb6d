/**
 * `put` of a big file: hashed as a stream, then sent as a file-backed Blob, so it goes straight to the
 * bucket where the service offers direct uploads (in parts above its threshold), else through the
 * service's tus endpoint; both resume with `--resume`, whose records live in a small JSON file.
 */
import { createHash } from 'node:crypto';
import { createReadStream, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { BigUploadOptions, ByteSource, ResumeRecords } from '../client/http-direct-upload.js';
import type { HttpArtifactStore } from '../client/http-store.js';
import { formatBytes } from '../core/bytes.js';
import type { ArtifactRef, PutOptions } from '../core/schemas.js';
import { progress } from './progress.js';

/**
 * Where `put --resume` keeps its resume records: a small JSON file of { key: uploadId }, the key
 * naming the service, the file's sha256 and its size. ARTIFACT_STORE_RESUME_FILE moves it.
 */
function resumeFile(): string {
  const state = process.env.XDG_STATE_HOME || join(homedir(), '.local', 'state');
  return process.env.ARTIFACT_STORE_RESUME_FILE || join(state, 'artifact-store', 'uploads.json');
}

function fileResumeRecords(file: string): ResumeRecords {
  const read = (): Record<string, string> => {
    try {
      const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
      return parsed && typeof parsed === 'object' ? (parsed as Record<string, string>) : {};
    } catch {
      return {};
    }
  };
  const write = (records: Record<string, string>) => {
    mkdirSync(dirname(file), { recursive: true });
    // Written aside then renamed: a process killed mid-write leaves the old records whole.
    const aside = `${file}.${process.pid}.tmp`;
    writeFileSync(aside, `${JSON.stringify(records, null, 2)}\n`, { mode: 0o600 });
    renameSync(aside, file);
  };
  return {
    get: (key) => read()[key],
    set: (key, uploadId) => write({ ...read(), [key]: uploadId }),
    delete: (key) => {
      const { [key]: _gone, ...rest } = read();
      write(rest);
    },
  };
}

/** Files above this go as a Blob read in slices: direct (in parts, resumable) where the service offers it. */
export const BIG_FILE_BYTES = 8 * 1024 * 1024;

/**
 * A big file: hashed as a stream, then put as a file-backed Blob. On a service with direct uploads
 * it goes straight to the bucket (in parts above the service's threshold: each part retried on its
 * own; with --resume, a record lets a later run resume where this one stopped); else through the
 * service.
 */
/** A file as a ByteSource: positioned reads, each filled whole (a short read is read on). */
function fileSource(file: FileHandle, size: number): ByteSource {
  return {
    size,
    async read(start, end) {
      const out = Buffer.allocUnsafe(end - start);
      for (let at = 0; at < out.byteLength; ) {
        const { bytesRead } = await file.read(out, at, out.byteLength - at, start + at);
        if (bytesRead === 0) return out.subarray(0, at);
        at += bytesRead;
      }
      return out;
    },
  };
}

export async function putBigFile(
  storeOf: (uploads: BigUploadOptions) => HttpArtifactStore,
  path: string,
  size: number,
  options: PutOptions,
  how: { resume: boolean; label: string },
): Promise<ArtifactRef> {
  const hashing = progress(`hash ${how.label.slice(4)}`, size);
  const hasher = createHash('sha256');
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 })) {
    hasher.update(chunk as Buffer);
    hashing.at(hashing.done() + (chunk as Buffer).byteLength);
  }
  hashing.finish();
  const sha256 = hasher.digest('hex');
  const bar = progress(how.label, size);
  let first = true;
  const store = storeOf({
    // Without direct uploads (the fs driver) a big file goes through the service's tus: resumable too.
    tusAboveBytes: BIG_FILE_BYTES,
    ...(how.resume ? { resume: fileResumeRecords(resumeFile()) } : {}),
    onProgress: (p) => {
      if (first && p.sentBytes > 0)
        process.stderr.write(
          `resuming upload ${p.uploadId}: ${formatBytes(p.sentBytes)} of ${formatBytes(p.totalBytes)} already uploaded\n`,
        );
      first = false;
      bar.at(p.sentBytes);
    },
  });
  const file = await open(path, 'r');
  let ref: ArtifactRef;
  try {
    ref = await store.putBlob(fileSource(file, size), { ...options, sha256 });
  } finally {
    await file.close();
  }
  bar.at(size);
  bar.finish();
  return ref;
}
