// @ts-check
/** Facts about one artifact reference that the list and the preview both use. Pure: no DOM. */

/** @typedef {import('./types.js').ArtifactRef} ArtifactRef */

/** One row per reference: the same id may sit in several sessions. @param {ArtifactRef} ref */
export const keyOf = ({ id, scope: s }) =>
  JSON.stringify([id, s.tenantId, s.userId ?? '', s.sessionId ?? '', s.traceId ?? '']);

/** @param {ArtifactRef} r */
export const nameOf = (r) => r.filename || r.id;

const TEXT_TYPES =
  /^(text\/|application\/(json|x-ndjson|xml|yaml|x-yaml|toml|csv|javascript|ecmascript|sql|graphql)\b|application\/[\w.+-]+\+(json|xml)\b)/i;

/** What kind of preview a type gets. @param {string} mime */
export function previewKind(mime) {
  const m = mime.split(';')[0].trim().toLowerCase();
  if (m.startsWith('image/')) return 'image';
  if (m === 'application/pdf') return 'pdf';
  if (m.startsWith('audio/')) return 'audio';
  if (m.startsWith('video/')) return 'video';
  if (TEXT_TYPES.test(m)) return 'text';
  return 'other';
}
