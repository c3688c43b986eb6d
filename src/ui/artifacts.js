// @ts-check
/** Facts about one artifact reference that the list and the preview both use. Pure: no DOM. */

/** @typedef {import('./types.js').ArtifactRef} ArtifactRef */

/** One row per reference: the same id may sit in several sessions. @param {ArtifactRef} ref */
export const keyOf = ({ id, scope: s }) =>
  JSON.stringify([id, s.tenantId, s.userId ?? '', s.sessionId ?? '', s.traceId ?? '']);

/** @param {ArtifactRef} r */
export const nameOf = (r) => r.name || r.filename || r.id;

/**
 * The name a version belongs to, or null for an unnamed artifact: versions of one name share the
 * tenant, the app (namespace), the name, the user and the session (none when user-wide).
 * @param {ArtifactRef} r
 */
export const nameKeyOf = (r) =>
  typeof r.name === 'string' && typeof r.version === 'number'
    ? JSON.stringify([
        'name',
        r.scope.tenantId,
        r.namespace ?? '',
        r.name,
        r.scope.userId ?? '',
        r.scope.sessionId ?? '',
      ])
    : null;

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
