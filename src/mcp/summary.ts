/**
 * One-line summaries a person would write: "Downloaded workbook 'Sales' as PDF (2.3 MiB)." Byte sizes
 * in them follow formatBytes (core/bytes.ts).
 */
import { isUnstoredRef } from '../client/noop-store.js';
import type { ArtifactRef } from '../core/schemas.js';

/**
 * The ref as the model sees it: what identifies and describes the bytes (the seeds' "LLM-safe"
 * ArtifactRef: id, type, size, sha256, filename, source). Scope and timestamps stay out: they say
 * nothing to a model, cost tokens, and change on every call, which defeats prompt caching. The full
 * ArtifactRef is in the transformer's `artifacts`. A ref whose bytes were not kept says so.
 */
export function modelRef(ref: ArtifactRef): Record<string, unknown> {
  return {
    id: ref.id,
    mimeType: ref.mimeType,
    sizeBytes: ref.sizeBytes,
    sha256: ref.sha256,
    ...(ref.filename !== undefined ? { filename: ref.filename } : {}),
    ...(ref.source !== undefined ? { source: ref.source } : {}),
    ...(isUnstoredRef(ref) ? { stored: false } : {}),
  };
}

/** 48210 → "48,210" */
export const formatCount = (n: number): string => n.toLocaleString('en-US');

const NAMED_TYPES: Record<string, string> = {
  'application/pdf': 'PDF',
  'application/zip': 'ZIP archive',
  'application/json': 'JSON',
  'application/gzip': 'gzip archive',
  'text/plain': 'text',
  'text/csv': 'CSV',
  'text/markdown': 'Markdown',
  'text/html': 'HTML',
  'image/svg+xml': 'SVG image',
  'image/jpeg': 'JPEG image',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'Word document',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'Excel workbook',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': 'PowerPoint deck',
  'application/vnd.tableau.packaged-workbook': 'Tableau packaged workbook',
  'application/octet-stream': 'binary file',
};

/** "PNG image", "WAV audio", "PDF", "Excel workbook"; `ext` (from magic bytes) sharpens the guess. */
export function describeType(mimeType: string, ext?: string): string {
  const base = mimeType.split(';')[0]!.trim().toLowerCase();
  const named = NAMED_TYPES[base];
  if (named) return named;
  const [top, sub = ''] = base.split('/');
  const label = (ext ?? sub.replace(/^(x-|vnd\.)/, '').split(/[.+]/)[0] ?? '').toUpperCase();
  if (top === 'image' || top === 'audio' || top === 'video') return label ? `${label} ${top}` : top!;
  if (top === 'text') return label ? `${label} text` : 'text';
  return label ? `${label} file` : 'file';
}

/**
 * Fills `{name}` placeholders. Undefined when a placeholder has no value, so the caller falls back to
 * its default summary instead of printing "undefined" or an empty quote.
 */
export function renderTemplate(
  template: string,
  vars: Record<string, string | number | boolean | undefined>,
): string | undefined {
  let missing = false;
  const out = template.replace(/\{([A-Za-z0-9_.-]+)\}/g, (_, name: string) => {
    const v = vars[name];
    if (v === undefined || v === '') {
      missing = true;
      return '';
    }
    return String(v);
  });
  return missing ? undefined : out;
}

/** Strings, numbers and booleans beside a field (its siblings), usable as template variables. */
export function siblingVars(parent: unknown, maxChars = 200): Record<string, string | number | boolean> {
  const vars: Record<string, string | number | boolean> = {};
  if (typeof parent !== 'object' || parent === null || Array.isArray(parent)) return vars;
  for (const [k, v] of Object.entries(parent)) {
    if ((typeof v === 'string' && v.length <= maxChars) || typeof v === 'number' || typeof v === 'boolean') vars[k] = v;
  }
  return vars;
}

/** How the model can look inside a stored artifact with the view tools, by its type; none for images and other binaries. */
export type ViewKind = 'json' | 'text' | 'pdf' | 'zip';

const TEXT_APPLICATION =
  /^application\/(?:[\w.-]+\+)?(?:json|xml|yaml|x-yaml|toml|csv|javascript|x-javascript|typescript|x-typescript|ecmascript|x-sh|x-shellscript|x-python|sql|graphql|x-ndjson|jsonl|x-httpd-php|x-ruby|x-perl|x-tex|rtf)$/;

export function viewKindOf(mimeType: string): ViewKind | undefined {
  const base = mimeType.split(';')[0]!.trim().toLowerCase();
  if (base === 'application/json' || base.endsWith('+json')) return 'json';
  if (base === 'application/pdf') return 'pdf';
  if (base === 'application/zip' || base === 'application/x-zip-compressed') return 'zip';
  if (base.startsWith('text/') || TEXT_APPLICATION.test(base)) return 'text';
  return undefined;
}

/**
 * The one clause a summary ends with when the view tools are there for the model:
 * "18,432 lines; artifact_search or artifact_read to look inside". Undefined for types they cannot open.
 */
export function viewClause(mimeType: string, lines?: number): string | undefined {
  const counted = lines !== undefined && lines > 1 ? `${formatCount(lines)} lines; ` : '';
  switch (viewKindOf(mimeType)) {
    case 'json':
      return `${counted}artifact_query, artifact_search or artifact_read to look inside`;
    case 'text':
      return `${counted}artifact_search or artifact_read to look inside`;
    case 'pdf':
      return 'artifact_read (by page) or artifact_search to look inside';
    case 'zip':
      return 'artifact_read lists its entries';
    default:
      return undefined;
  }
}

/** A summary with a clause added: "… stored as artifact X; artifact_read lists its entries." */
export function withClause(summary: string, clause: string | undefined): string {
  if (!clause) return summary;
  return `${summary.replace(/[.\s]+$/, '')}; ${clause}.`;
}

/** Lines of a text: its line ends, plus one for a last line without one. */
export function countLines(text: string): number {
  if (text.length === 0) return 0;
  let n = 0;
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) n++;
  return text.endsWith('\n') ? n : n + 1;
}

/** The same, over UTF-8 bytes. */
export function countByteLines(bytes: Uint8Array): number {
  if (bytes.byteLength === 0) return 0;
  let n = 0;
  for (let at = bytes.indexOf(10); at >= 0; at = bytes.indexOf(10, at + 1)) n++;
  return bytes[bytes.byteLength - 1] === 10 ? n : n + 1;
}
