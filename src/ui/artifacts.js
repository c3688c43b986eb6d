// @ts-check
/** Facts about one artifact reference that the list and the preview both use. Pure: no DOM. */

/** @typedef {import('./types.js').ArtifactRef} ArtifactRef */

/**
 * One row per reference: the same id may sit in several sessions, and two versions of a name that
 * hold the same bytes are one artifact but two references.
 * @param {ArtifactRef} ref
 */
export const keyOf = ({ id, scope: s, name, version }) =>
  JSON.stringify([id, s.tenantId, s.userId ?? '', s.sessionId ?? '', s.traceId ?? '', name ?? '', version ?? '']);

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

/**
 * The query that names a version's name in /v1/names/{app}/…: its name, its user and its session (or
 * user-wide). @param {ArtifactRef} r
 */
export function nameQueryOf(r) {
  const q = new URLSearchParams({ name: r.name ?? '' });
  if (r.scope.userId) q.set('user', r.scope.userId);
  if (r.scope.sessionId) q.set('session', r.scope.sessionId);
  else q.set('scope', 'user');
  return q;
}

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
