/**
 * How an ADK artifact (a `@google/genai` Part) is kept as a named version, and how it comes back.
 *
 * - `inlineData`: the base64 is decoded and the bytes are stored under the part's mimeType.
 * - `text`: stored as UTF-8 under `text/plain; charset=utf-8`, and loaded back as `{ text }`.
 * - `fileData`: the external URI is kept as a reference, a `text/uri-list` of that one URI.
 *
 * What the part was (and its own mimeType and displayName, which the stored type may not say: a
 * mimeType the store refuses, or none) goes in the version's `source` as `{ adk: AdkSource }`. The
 * version's `meta` is the ADK customMetadata and nothing else.
 */
import type { Part } from '@google/genai';
import { decodeBase64, encodeBase64 } from '../core/base64.js';
import { DEFAULT_MIME, TEXT_MIME, validatePutOptions } from '../core/put-options.js';
import type { ArtifactRef, PutOptions } from '../core/schemas.js';

/** The stored type of a fileData reference: RFC 2483's list of URIs, here exactly one. */
export const URI_LIST_MIME = 'text/uri-list';

/** What the adapter records about the part in the version's `source.adk`. */
export interface AdkSource {
  /** Which field of the Part held the artifact. */
  part: 'inlineData' | 'text' | 'fileData';
  /** inlineData / fileData: the part's own mimeType, null when it had none. */
  mimeType?: string | null;
  /** inlineData / fileData: the part's displayName, when it had one. */
  displayName?: string;
}

/** What a save sends to the store for one Part. */
export interface StoredPart {
  data: Uint8Array | string;
  /** The put's mimeType, filename and source (meta and ttl are added by the caller). */
  options: Pick<PutOptions, 'mimeType' | 'filename' | 'source'>;
}

/**
 * The same check ADK's own services make before a save (a Part with none of the three, or with an
 * empty text and nothing else, is refused), with a message that says what is accepted.
 */
export function toStored(part: Part, filename: string): StoredPart {
  if (!part || typeof part !== 'object' || (!part.inlineData && !part.text && !part.fileData)) {
    throw new Error(
      `Artifact ${JSON.stringify(filename)} has no content: an artifact Part needs inlineData ({ data: base64, mimeType }), ` +
        'a non-empty text, or fileData ({ fileUri, mimeType }).',
    );
  }
  const displayName = part.inlineData?.displayName ?? part.fileData?.displayName;
  const downloadName = displayName || baseName(filename);
  if (part.inlineData) {
    const given = part.inlineData.mimeType;
    const source: AdkSource = { part: 'inlineData', mimeType: given ?? null, ...(displayName ? { displayName } : {}) };
    let bytes: Uint8Array;
    try {
      bytes = decodeBase64(part.inlineData.data ?? '').bytes;
    } catch (err) {
      throw new Error(
        `Artifact ${JSON.stringify(filename)}: inlineData.data is not base64 (${(err as Error).message})`,
        { cause: err },
      );
    }
    return {
      data: bytes,
      options: { mimeType: puttable(given) ?? DEFAULT_MIME, filename: downloadName, source: { adk: source } },
    };
  }
  if (typeof part.text === 'string') {
    return {
      data: part.text,
      options: { mimeType: TEXT_MIME, filename: downloadName, source: { adk: { part: 'text' } satisfies AdkSource } },
    };
  }
  const fileData = part.fileData!;
  if (!fileData.fileUri) throw new Error(`Artifact ${JSON.stringify(filename)}: fileData needs a fileUri.`);
  const source: AdkSource = {
    part: 'fileData',
    mimeType: fileData.mimeType ?? null,
    ...(displayName ? { displayName } : {}),
  };
  return {
    data: `${fileData.fileUri}\r\n`,
    options: { mimeType: URI_LIST_MIME, filename: downloadName, source: { adk: source } },
  };
}

/** The version's bytes as the Part that was saved. */
export function toPart(ref: ArtifactRef, bytes: Uint8Array): Part {
  const adk = adkSourceOf(ref);
  const kind = adk?.part ?? (/^text\/plain\b/i.test(ref.mimeType) ? 'text' : 'inlineData');
  if (kind === 'text') return { text: utf8(bytes) };
  const mimeType = adk && adk.mimeType !== undefined ? adk.mimeType : ref.mimeType;
  const extra = {
    ...(mimeType !== null ? { mimeType } : {}),
    ...(adk?.displayName ? { displayName: adk.displayName } : {}),
  };
  if (kind === 'fileData') return { fileData: { fileUri: utf8(bytes).replace(/\r\n$/, ''), ...extra } };
  return { inlineData: { data: encodeBase64(bytes), ...extra } };
}

/**
 * The mimeType an ArtifactVersion reports: the part's own (inlineData, fileData; undefined for a
 * fileData without one), else the stored type (text, and inlineData without one).
 */
export function versionMimeType(ref: ArtifactRef): string | undefined {
  const adk = adkSourceOf(ref);
  if (adk?.part === 'fileData') return adk.mimeType ?? undefined;
  return adk?.mimeType ?? ref.mimeType;
}

function adkSourceOf(ref: ArtifactRef): AdkSource | undefined {
  const adk = ref.source?.adk as AdkSource | undefined;
  return adk && typeof adk === 'object' && ['inlineData', 'text', 'fileData'].includes(adk.part) ? adk : undefined;
}

/** The part's mimeType when the store takes it as it is; undefined otherwise (stored as octet-stream). */
function puttable(mimeType: string | undefined): string | undefined {
  if (!mimeType || mimeType !== mimeType.trim()) return undefined;
  try {
    validatePutOptions({ mimeType }, { maxTtlSeconds: Number.MAX_SAFE_INTEGER });
    return mimeType;
  } catch {
    return undefined;
  }
}

/** The last path segment, without ADK's `user:` prefix: the download's filename. */
function baseName(filename: string): string {
  const bare = filename.startsWith('user:') ? filename.slice('user:'.length) : filename;
  return bare.split('/').filter(Boolean).pop() ?? bare;
}

// ignoreBOM: a text that starts with U+FEFF keeps it.
const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
const utf8 = (bytes: Uint8Array) => decoder.decode(bytes);
