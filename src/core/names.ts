/**
 * Named versions' rules every store follows: what a name, an app and a version may be, and which
 * scope a NameRef means for a store acting for `scope`.
 */
import type { NameRef } from './artifact-store.js';
import { decodeBase64, encodeBase64 } from './base64.js';
import { errors } from './errors.js';
import { NAMESPACE_PATTERN } from './ids.js';
import { narrowFilter } from './scope.js';
import type { ArtifactScope, NameKey, NamePage, NameScope } from './schemas.js';

const NAME_MAX = 512;
const SCOPE_PART_MAX = 256;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
const CONTROL = /[\u0000-\u001f\u007f]/;

/** bad_request unless `app` is a namespace a URL path can carry (so not "." or ".."). */
export function checkApp(app: string): void {
  if (!NAMESPACE_PATTERN.test(app) || app === '.' || app === '..')
    throw errors.badRequest(
      `Invalid app ${JSON.stringify(app)}: use 1-128 letters, digits, '.', '_' or '-', not "." or ".." (it is the versions' namespace).`,
    );
}

/** Refuses a malformed key with bad_request, naming the part. */
export function checkNameKey(key: NameScope & { name?: string }): void {
  checkApp(key.app);
  if (key.name !== undefined && (key.name.length < 1 || key.name.length > NAME_MAX || CONTROL.test(key.name)))
    throw errors.badRequest(`Invalid name: use 1-${NAME_MAX} characters without control characters.`);
  for (const [part, value] of [
    ['user', key.userId],
    ['session', key.sessionId],
  ] as const)
    if (value.length > SCOPE_PART_MAX || CONTROL.test(value))
      throw errors.badRequest(`Invalid ${part} ${JSON.stringify(value)}: use at most ${SCOPE_PART_MAX} characters.`);
}

/** bad_request unless a whole number from 0 (undefined: the latest). */
export function checkVersion(version: number | undefined): void {
  if (version !== undefined && (!Number.isSafeInteger(version) || version < 0))
    throw errors.badRequest(`Invalid version ${JSON.stringify(version)}: versions are whole numbers from 0.`);
}

/**
 * The key a NameRef means for a store acting for `scope`: its tenant; the ref's user or the store's
 * (a bound one may not be changed: forbidden); user-wide, or the ref's session or the store's, or
 * user-wide when there is none.
 */
export function nameKeyFor(
  scope: ArtifactScope,
  ref: Omit<NameRef, 'name'> & { name?: string },
): NameScope & { name: string } {
  const narrowed = narrowFilter(
    { userId: scope.userId, sessionId: scope.sessionId, traceId: scope.traceId },
    { userId: ref.userId, sessionId: ref.userWide ? undefined : ref.sessionId },
  );
  const key = {
    tenantId: scope.tenantId,
    app: ref.app,
    userId: narrowed.userId ?? '',
    sessionId: ref.userWide ? '' : (narrowed.sessionId ?? ''),
    name: ref.name ?? '',
  };
  checkNameKey(ref.name === undefined ? { ...key, name: undefined } : key);
  return key;
}

export type { NameKey };

/** A listing of names resumes after the last name it gave: that name, base64url. */
export const nameCursorOf = (name: string): string =>
  encodeBase64(new TextEncoder().encode(name)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

/** The name a cursor resumes after; bad_request for anything nameCursorOf did not make. */
export function nameOfCursor(cursor: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(decodeBase64(cursor).bytes);
  } catch {
    throw errors.badRequest('Invalid cursor: pass back nextCursor exactly as it came, or start without one.');
  }
}

/** How many names a listing gives: 100 unless asked; bad_request outside 1-1000. */
export function nameListLimit(limit: number | undefined): number {
  const n = limit ?? 100;
  if (!Number.isInteger(n) || n < 1 || n > 1000)
    throw errors.badRequest('limit must be a whole number from 1 to 1000.');
  return n;
}

/** A name as a listing reads it: its latest version, how many are live, when the latest was saved. */
export interface NameRow {
  name: string;
  latestVersion: number;
  versions: number;
  updatedAt: number;
}

/** One page of names of `scope` from rows read by name, one past `limit`: a cursor after the last when there are more. */
export function namePageOf(scope: NameScope, rows: NameRow[], limit: number): NamePage {
  const items = rows.slice(0, limit).map((r) => ({
    name: r.name,
    scope: scope.sessionId ? ('session' as const) : ('user' as const),
    latestVersion: r.latestVersion,
    versions: r.versions,
    updatedAt: new Date(r.updatedAt).toISOString(),
  }));
  return rows.length > limit ? { items, nextCursor: nameCursorOf(items[items.length - 1]!.name) } : { items };
}
