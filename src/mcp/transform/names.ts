/** How a stored payload is named and described: filenames, default summaries, previews and paths. */
import { formatBytes } from '../../core/bytes.js';
import type { ArtifactRef } from '../../core/schemas.js';
import type { Layer } from '../config.js';
import { formatCount } from '../summary.js';

const EXT_BY_MIME: Record<string, string> = {
  'text/plain': 'txt',
  'application/json': 'json',
  'text/csv': 'csv',
  'text/markdown': 'md',
  'text/html': 'html',
  'image/svg+xml': 'svg',
  'application/pdf': 'pdf',
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'audio/wav': 'wav',
  'audio/mpeg': 'mp3',
};

/** `text/plain; charset=utf-8` → `text/plain`. */
export const baseMime = (mime: string) => mime.split(';')[0]!.trim().toLowerCase();
export const extFor = (mime: string) => EXT_BY_MIME[baseMime(mime)];
export const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** The last segment of a URI, decoded, when it can serve as a filename. */
export function nameFromUri(uri: string): string | undefined {
  const path = uri.split(/[?#]/)[0]!;
  const last = path.slice(path.lastIndexOf('/') + 1);
  try {
    const decoded = decodeURIComponent(last);
    return decoded.length > 0 && decoded.length <= 255 ? decoded : undefined;
  } catch {
    return last || undefined;
  }
}

/** A name from the fields beside a payload (`filename`, `name`, `title`, `path`…), if one holds one. */
export function nameFromSiblings(vars: Record<string, string | number | boolean>): { name?: string } {
  for (const key of ['filename', 'fileName', 'file_name', 'name', 'title', 'path']) {
    const v = vars[key];
    if (typeof v === 'string' && v.trim()) return { name: v.trim() };
  }
  return {};
}

/** `name` (with `ext` added when it has none), else `toolName.ext`. */
export function defaultFilename(name: string | undefined, toolName: string, ext: string | undefined): string {
  if (name) {
    const base = name.slice(name.lastIndexOf('/') + 1);
    return ext && !/\.[A-Za-z0-9]{1,8}$/.test(base) ? `${base}.${ext}` : base;
  }
  return ext ? `${toolName}.${ext}` : toolName;
}

/** What the summary says about a stored payload when no spec gives a template. */
export interface SummaryFacts {
  layer: Layer;
  /** Where the payload was found; not repeated for typed blocks and resource links. */
  where?: string;
  label: string;
  ref: ArtifactRef;
  toolName: string;
  /** The filename came from the source (a template or a name beside the payload), so it is worth quoting. */
  sourceNamed: boolean;
  /** Characters of stored text. */
  chars?: number;
}

/** "PDF 'q3.pdf' (50 KiB) from get_report (files[0].data), stored as artifact …". */
export function defaultSummary({ layer, where, label, ref, toolName, sourceNamed, chars }: SummaryFacts): string {
  const size =
    chars !== undefined ? `${formatCount(chars)} chars, ${formatBytes(ref.sizeBytes)}` : formatBytes(ref.sizeBytes);
  const named = ref.filename && sourceNamed && layer !== 'size' ? ` '${ref.filename}'` : '';
  const from =
    layer === 'blocks' || layer === 'links' || !where || where === 'result' ? toolName : `${toolName} (${where})`;
  const lead = layer === 'size' ? `Large ${label}` : capitalize(label);
  return `${lead}${named} (${size}) from ${from}, stored as artifact ${ref.id}.`;
}

/** Paths in summaries stay readable: `next.next.…next.payload` past 80 characters. */
export function shortPath(path: string): string {
  return path.length <= 80 ? path : `${path.slice(0, 24)}…${path.slice(-55)}`;
}
