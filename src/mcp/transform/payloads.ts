/**
 * Storing one payload, whichever layer found it: decode it (streamed when big), detect its type, put
 * it in the store under a name, and return the Outcome that stands in for it, stored or not (too
 * large, corrupt, refused by the store). A payload met twice in one result is stored once.
 */
import { isUnstoredRef } from '../../client/noop-store.js';
import { formatBytes } from '../../core/bytes.js';
import { isArtifactError } from '../../core/errors.js';
import type { ArtifactRef, PutOptions } from '../../core/schemas.js';
import type { BlockSpec, FieldSpec, Layer } from '../config.js';
import {
  cleanBase64,
  CorruptBase64Error,
  decodeClean,
  decodeHead,
  detectBinary,
  type CleanBase64,
  type DetectedType,
} from '../detect.js';
import type { JsonValue, WorkValue } from '../json.js';
import { isPlainObject } from '../paths.js';
import {
  countByteLines,
  countLines,
  describeType,
  modelRef,
  renderTemplate,
  viewClause,
  viewKindOf,
  withClause,
} from '../summary.js';
import { baseMime, capitalize, defaultFilename, defaultSummary, extFor } from './names.js';
import { hideBase64 } from './previews.js';
import type { TransformRun } from './run.js';

/** What stands in for a stored (or refused) payload. */
export type Outcome =
  | { ok: true; ref: ArtifactRef; summary: string; stored: boolean }
  | {
      ok: false;
      error: 'too_large' | 'corrupt_base64' | 'not_stored';
      summary: string;
      details: Record<string, JsonValue>;
    };

export interface PayloadContext {
  layer: Layer;
  /** Where it was found, for summaries (`content`, `files[2].data`, `image block`). */
  where?: string;
  spec?: FieldSpec | BlockSpec;
  /** Template variables: sibling fields, resource name and uri. */
  vars: Record<string, string | number | boolean>;
  /** Media type the source declared (block mimeType, data: URL). */
  declaredMime?: string;
  /** A name to store it under when no template gives one. */
  name?: string;
}

/** What a base64 probe already learnt about a payload, so it is not decoded twice. */
export interface KnownBase64 {
  clean: CleanBase64;
  detected: DetectedType | undefined;
}

/** The outcome inside JSON: `{ artifact, summary }`, or `{ error, summary, ...details }`. */
export const placeholder = (o: Outcome): Record<string, WorkValue> =>
  o.ok
    ? { artifact: modelRef(o.ref) as WorkValue, summary: o.summary }
    : { error: o.error, summary: o.summary, ...o.details };

/** Where a preview says the bytes of a hidden base64 run are: the artifact that holds the whole text. */
export const holderOf = (o: Outcome): string | undefined => (o.ok && o.stored ? `in artifact ${o.ref.id}` : undefined);

/** A value placeholder() made: later layers leave it alone. */
export function isOutcomePlaceholder(v: WorkValue): boolean {
  return (
    isPlainObject(v) &&
    typeof v.summary === 'string' &&
    (isPlainObject(v.artifact) || typeof v.error === 'string') &&
    Object.keys(v).length <= 6
  );
}

/** A base64 payload (the `memoKey` it was found as: a data: URL, a bare string) → stored bytes. */
export async function storeBase64(
  run: TransformRun,
  body: string,
  ctx: PayloadContext,
  memoKey = body,
  known?: KnownBase64,
): Promise<Outcome> {
  const memoized = run.memo.get(memoKey);
  if (memoized) return memoized;
  const pending = storeBase64Once(run, body, ctx, known);
  run.memo.set(memoKey, pending);
  return pending;
}

async function storeBase64Once(
  run: TransformRun,
  body: string,
  ctx: PayloadContext,
  known?: KnownBase64,
): Promise<Outcome> {
  let clean: CleanBase64;
  try {
    clean = known?.clean ?? cleanBase64(body);
  } catch (err) {
    return corrupt(run, ctx, err, body.length);
  }
  const limit = run.config.maxArtifactBytes;
  if (clean.byteLength > limit) return tooLarge(run, ctx, clean.byteLength, known?.detected ?? (await headType(clean)));
  if (clean.byteLength === 0) return corrupt(run, ctx, new CorruptBase64Error('it is empty'), body.length);
  const failure: { error?: CorruptBase64Error } = {};
  try {
    if (clean.byteLength > run.config.streamDecodeAboveBytes) {
      const detected = known?.detected ?? (await headType(clean));
      return await put(run, ctx, clean.byteLength, detected, (o) =>
        run.store.putStream(decodeStream(clean, failure), o),
      );
    }
    const bytes = decodeClean(clean);
    return await put(
      run,
      ctx,
      bytes.byteLength,
      (await detectBinary(bytes)) ?? sniffText(bytes),
      (o) => run.store.putBytes(bytes, o),
      undefined,
      () => countByteLines(bytes),
    );
  } catch (err) {
    // A stream that failed mid-way surfaces as the store's error; the decoder noted the real cause.
    const corruption = failure.error ?? (err instanceof CorruptBase64Error ? err : undefined);
    if (corruption) return corrupt(run, ctx, corruption, body.length);
    throw err;
  }
}

async function headType(clean: CleanBase64): Promise<DetectedType | undefined> {
  try {
    return await detectBinary(decodeHead(clean));
  } catch {
    return undefined;
  }
}

/** Raw bytes from a native tool. */
export function storeBytes(run: TransformRun, bytes: Uint8Array, ctx: PayloadContext): Promise<Outcome> {
  const memoized = run.memo.get(bytes);
  if (memoized) return memoized;
  const pending = (async (): Promise<Outcome> => {
    if (bytes.byteLength > run.config.maxArtifactBytes)
      return tooLarge(run, ctx, bytes.byteLength, await detectBinary(bytes));
    if (bytes.byteLength === 0) return corrupt(run, ctx, new CorruptBase64Error('it is empty'), 0);
    return put(
      run,
      ctx,
      bytes.byteLength,
      (await detectBinary(bytes)) ?? sniffText(bytes),
      (o) => run.store.putBytes(bytes, o),
      undefined,
      () => countByteLines(bytes),
    );
  })();
  run.memo.set(bytes, pending);
  return pending;
}

/** Text (or serialized JSON, described by `shape`) stored as UTF-8 under `mimeType`. */
export function storeText(
  run: TransformRun,
  text: string,
  mimeType: string,
  ctx: PayloadContext,
  shape?: string,
): Promise<Outcome> {
  const memoized = run.memo.get(text);
  if (memoized) return memoized;
  const pending = (async (): Promise<Outcome> => {
    const bytes = new TextEncoder().encode(text);
    if (bytes.byteLength > run.config.maxArtifactBytes)
      return tooLarge(run, { ...ctx, declaredMime: mimeType }, bytes.byteLength, undefined);
    return put(
      run,
      { ...ctx, declaredMime: mimeType },
      bytes.byteLength,
      undefined,
      (o) => run.store.putBytes(bytes, o),
      { chars: text.length, ...(shape ? { shape } : {}) },
      () => countLines(text),
    );
  })();
  run.memo.set(text, pending);
  return pending;
}

/** Names, types and writes one payload, and words its summary; the store's refusals become outcomes. */
async function put(
  run: TransformRun,
  ctx: PayloadContext,
  sizeBytes: number,
  detected: DetectedType | undefined,
  write: (o: PutOptions) => Promise<ArtifactRef>,
  text?: { chars: number; shape?: string },
  /** Counts the payload's lines, for the view tools' clause (only asked for text-like types). */
  lines?: () => number,
): Promise<Outcome> {
  const { toolName } = run;
  const spec = ctx.spec;
  const specMime = spec && 'mimeType' in spec ? spec.mimeType : undefined;
  const sniffed = detected?.guessed ? detected : undefined;
  if (sniffed) detected = undefined;
  const mimeType = detected?.mime ?? specMime ?? ctx.declaredMime ?? sniffed?.mime ?? 'application/octet-stream';
  const label = spec?.contentType ?? text?.shape ?? describeType(mimeType, detected?.ext);
  const vars: Record<string, string | number | boolean | undefined> = {
    ...ctx.vars,
    tool: toolName,
    mime_type: mimeType,
    content_type: label,
    type: text?.shape ?? describeType(mimeType, detected?.ext),
    ext: detected?.ext ?? extFor(mimeType),
    size_bytes: sizeBytes,
    size_human: formatBytes(sizeBytes),
    field: ctx.where,
  };
  const namedByTemplate = spec?.filename ? renderTemplate(spec.filename, vars) : undefined;
  const filename = namedByTemplate ?? defaultFilename(ctx.name, toolName, detected?.ext ?? extFor(mimeType));
  const sourceNamed = namedByTemplate !== undefined || ctx.name !== undefined;
  const source: Record<string, unknown> = {
    tool: toolName,
    ...(run.options.serverName ? { server: run.options.serverName } : {}),
  };
  if (ctx.where && ctx.layer !== 'blocks') source.field = ctx.where;
  if (detected && ctx.declaredMime && baseMime(ctx.declaredMime) !== detected.mime)
    source.declaredMimeType = ctx.declaredMime;
  let ref: ArtifactRef;
  try {
    ref = await write(run.putOptions({ mimeType, filename, source }));
  } catch (err) {
    if (isArtifactError(err) && (err.code === 'payload_too_large' || err.code === 'quota_exceeded')) {
      run.stats.notStored++;
      run.warn(`${toolName}: ${err.message}`);
      const summary = `${capitalize(label)} (${formatBytes(sizeBytes)}) from ${toolName} was not stored: ${err.message}`;
      return { ok: false, error: 'not_stored', summary, details: { code: err.code, sizeBytes, mimeType } };
    }
    throw err;
  }
  run.record(ref, ctx.layer);
  vars.filename = ref.filename;
  vars.artifact_id = ref.id;
  const stored = !isUnstoredRef(ref);
  // Names and sibling fields in a summary may hold base64: shown as placeholders, as in previews.
  const summary = hideBase64(
    (spec?.summary ? renderTemplate(spec.summary, vars) : undefined) ??
      defaultSummary({ layer: ctx.layer, where: ctx.where, label, ref, toolName, sourceNamed, chars: text?.chars }),
  );
  if (stored) {
    // The view tools read text, JSON, PDFs and ZIPs: the summary says which to use, and how many lines there are.
    const view = run.config.viewTools ? viewKindOf(mimeType) : undefined;
    const clause = view ? viewClause(mimeType, view === 'json' || view === 'text' ? lines?.() : undefined) : undefined;
    return { ok: true, ref, stored, summary: withClause(summary, clause) };
  }
  const unstored = `${summary} Not stored: no artifact store is configured, so these bytes cannot be downloaded.`;
  return { ok: true, ref, stored, summary: unstored };
}

function tooLarge(
  run: TransformRun,
  ctx: PayloadContext,
  sizeBytes: number,
  detected: DetectedType | undefined,
): Outcome {
  const { toolName } = run;
  run.stats.notStored++;
  const mime = detected?.mime ?? ctx.declaredMime ?? 'application/octet-stream';
  const label = ctx.spec?.contentType ?? describeType(mime, detected?.ext);
  const limit = run.config.maxArtifactBytes;
  run.warn(`${toolName}: a ${formatBytes(sizeBytes)} payload is over maxArtifactBytes (${formatBytes(limit)})`);
  const summary =
    `${capitalize(label)} of ${formatBytes(sizeBytes)} from ${toolName}${ctx.where ? ` (${ctx.where})` : ''} was not stored: ` +
    `it is over the ${formatBytes(limit)} artifact limit. Ask the tool for a smaller result, or raise maxArtifactBytes.`;
  return { ok: false, error: 'too_large', summary, details: { sizeBytes, limitBytes: limit, mimeType: mime } };
}

/** A payload that claimed to be base64 and was not: left out, and said so. */
export function corrupt(run: TransformRun, ctx: PayloadContext, err: unknown, chars: number): Outcome {
  run.stats.notStored++;
  const reason = err instanceof CorruptBase64Error ? err.message : String(err);
  run.warn(`${run.toolName}: corrupt base64 at ${ctx.where ?? 'result'}: ${reason}`);
  const summary =
    `The base64 payload from ${run.toolName}${ctx.where ? ` (${ctx.where})` : ''} could not be decoded: ${reason}. ` +
    'It was left out rather than passed on as garbage.';
  return { ok: false, error: 'corrupt_base64', summary, details: { chars } };
}

const TEXT_SNIFF_MAX_BYTES = 8 * 1024 * 1024;

/**
 * Bytes no magic number names, but which are valid UTF-8 with no NUL: text (a source file from
 * GitHub's contents API, a CSV). Stored as text/plain rather than application/octet-stream, so a
 * browser shows it. A declared or configured type still wins over this guess.
 */
function sniffText(bytes: Uint8Array): DetectedType | undefined {
  if (bytes.byteLength > TEXT_SNIFF_MAX_BYTES || bytes.includes(0)) return undefined;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
  return { mime: 'text/plain; charset=utf-8', ext: 'txt', guessed: true };
}

/** base64 → bytes in ~1 MiB chunks, for payloads too big to decode in one piece. */
function decodeStream(clean: CleanBase64, failure: { error?: CorruptBase64Error }): ReadableStream<Uint8Array> {
  const step = (1024 * 1024 * 4) / 3; // chars per ~1 MiB, a multiple of 4
  const chunkChars = Math.floor(step / 4) * 4;
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at >= clean.text.length) {
        controller.close();
        return;
      }
      const end = Math.min(clean.text.length, at + chunkChars);
      let chunk: Uint8Array;
      try {
        chunk = decodeClean(clean, at, end);
      } catch (err) {
        if (err instanceof CorruptBase64Error) failure.error = err;
        throw err;
      }
      at = end;
      controller.enqueue(chunk);
    },
  });
}
