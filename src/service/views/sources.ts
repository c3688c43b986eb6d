/**
 * Where a view's bytes come from and what they are: a blob read by ranges, a string as lines, which
 * types read as text or as a ZIP, and the text of recent PDFs.
 */
import { formatBytes } from '../../core/bytes.js';
import { errors } from '../../core/errors.js';
import type { ArtifactRef } from '../../core/schemas.js';
import type { BlobStore } from '../../blob/blob-store.js';
import type { LineSource } from './lines.js';
import type { PdfText, ViewSandbox } from './sandbox.js';
import type { ByteSource } from './types.js';

/** Types whose bytes are text. */
export const TEXT_TYPES =
  /^(text\/|application\/([\w.+-]*\+)?(json|xml|yaml|x-yaml|javascript|ecmascript|x-sh|x-python|sql|graphql|toml|x-ndjson|ndjson|jsonl|x-jsonlines|csv|x-httpd-php|typescript|x-typescript)(;|$))/i;
export const ZIP_TYPES =
  /^application\/(zip|x-zip-compressed|x-zip|vnd\.tableau\.packaged-(workbook|datasource)|epub\+zip|java-archive|vnd\.openxmlformats-officedocument\.[\w.]+)(;|$)/i;

/** What a model is told it is reading: "build.log (text/plain, 2.3 MiB)". */
export function label(ref: ArtifactRef): string {
  const name = ref.filename ? (ref.filename.length > 80 ? `${ref.filename.slice(0, 79)}…` : ref.filename) : ref.id;
  return `${name} (${ref.mimeType.split(';')[0]}, ${formatBytes(ref.sizeBytes)})`;
}

export function byteSourceOf(blobs: BlobStore, ref: ArtifactRef): ByteSource {
  const missing = () =>
    errors.backendUnavailable(
      `The bytes of ${ref.id} are missing from the blob store although the database references them. Tell the operator; retrying will not help.`,
    );
  const stream = async (start = 0, end = ref.sizeBytes - 1) => {
    if (ref.sizeBytes === 0 || end < start) return new ReadableStream<Uint8Array>({ start: (c) => c.close() });
    const body = await blobs.get(ref.sha256, { start, end });
    if (!body) throw missing();
    return body;
  };
  const reader = blobs.openReader?.bind(blobs);
  const openReader = reader
    ? async () => {
        const r = await reader(ref.sha256);
        if (!r) throw missing();
        return r;
      }
    : undefined;
  return {
    ...(openReader ? { openReader } : {}),
    size: ref.sizeBytes,
    sha256: ref.sha256,
    stream,
    async read(start, end) {
      const last = Math.min(end, ref.sizeBytes - 1);
      if (last < start) return new Uint8Array(0);
      if (blobs.readSmall && last - start < 1 << 20) {
        const got = await blobs.readSmall(ref.sha256, { start, end: last });
        if (!got) throw missing();
        return got;
      }
      return new Uint8Array(await new Response(await stream(start, last)).arrayBuffer());
    },
  };
}

/** A string's UTF-8 as a line source (a PDF page, a ZIP listing). */
export function textSource(text: string, key?: string): LineSource {
  const bytes = new TextEncoder().encode(text);
  return {
    ...(key !== undefined ? { key } : {}),
    size: bytes.byteLength,
    async open(from) {
      return new ReadableStream<Uint8Array>({
        start(c) {
          if (from < bytes.byteLength) c.enqueue(bytes.subarray(from));
          c.close();
        },
      });
    },
  };
}

/** A stream without its first `skip` bytes. */
export function dropBytes(stream: ReadableStream<Uint8Array>, skip: number): ReadableStream<Uint8Array> {
  if (skip === 0) return stream;
  let left = skip;
  return stream.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, c) {
        if (left >= chunk.byteLength) {
          left -= chunk.byteLength;
          return;
        }
        c.enqueue(left > 0 ? chunk.subarray(left) : chunk);
        left = 0;
      },
    }),
  );
}

/** Bytes that read as text: valid UTF-8, no NUL. */
export function looksLikeText(head: Uint8Array): boolean {
  if (head.includes(0)) return false;
  // A multi-byte character cut at the end of the head is not a reason to call it binary.
  let end = head.byteLength;
  for (let k = 1; k <= 3 && end - k >= 0; k++) {
    const b = head[end - k]!;
    if ((b & 0xc0) === 0xc0) {
      end -= k;
      break;
    }
    if ((b & 0x80) === 0) break;
  }
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head.subarray(0, end));
    return true;
  } catch {
    return false;
  }
}

export function startsWith(bytes: Uint8Array, prefix: string): boolean {
  if (bytes.byteLength < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[i] !== prefix.charCodeAt(i)) return false;
  return true;
}

/** The text of recent PDFs, by sha256: a PDF is parsed once, then read page by page. */
export function createPdfCache(sandbox: ViewSandbox, maxChars = 32 * 1024 * 1024) {
  const kept = new Map<string, PdfText>();
  const parsing = new Map<string, Promise<PdfText>>();
  let chars = 0;
  const size = (p: PdfText) => p.pages.reduce((a, t) => a + t.length, 0);
  return {
    async get(ref: ArtifactRef, src: ByteSource): Promise<PdfText> {
      const hit = kept.get(ref.sha256);
      if (hit) {
        kept.delete(ref.sha256);
        kept.set(ref.sha256, hit);
        return hit;
      }
      let job = parsing.get(ref.sha256);
      if (!job) {
        job = (async () => sandbox.pdfText(await src.read(0, ref.sizeBytes - 1)))().finally(() =>
          parsing.delete(ref.sha256),
        );
        parsing.set(ref.sha256, job);
      }
      const pdf = await job;
      if (!kept.has(ref.sha256)) {
        kept.set(ref.sha256, pdf);
        chars += size(pdf);
        while (chars > maxChars && kept.size > 1) {
          const [oldest, text] = kept.entries().next().value!;
          kept.delete(oldest);
          chars -= size(text);
        }
      }
      return pdf;
    },
  };
}
