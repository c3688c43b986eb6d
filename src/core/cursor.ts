import { errors } from './errors.js';

/**
 * Where a listing's page ended, in its sort's key. Every key ends in (createdAt, refId), which makes
 * it unique; `largest` and `smallest` start with the size, `name` with the filename (else the id).
 */
export type ListPosition =
  | { sort: 'newest' | 'oldest'; createdAt: number; refId: number }
  | { sort: 'largest' | 'smallest'; sizeBytes: number; createdAt: number; refId: number }
  | { sort: 'name'; key: string; createdAt: number; refId: number };

/**
 * Opaque listing cursor, base64url of UTF-8: `v1:createdAt:refId` for `newest` (the cursor every
 * listing gave before there were other sorts), `v2:<sort>:createdAt:refId[:sizeBytes | :key]` for
 * the others (a name's key last, since it may hold any character).
 */
export function encodeCursor(pos: ListPosition): string {
  const text =
    pos.sort === 'newest'
      ? `v1:${pos.createdAt}:${pos.refId}`
      : `v2:${pos.sort}:${pos.createdAt}:${pos.refId}${
          pos.sort === 'largest' || pos.sort === 'smallest'
            ? `:${pos.sizeBytes}`
            : pos.sort === 'name'
              ? `:${pos.key}`
              : ''
        }`;
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The position a cursor holds; bad_request for anything encodeCursor did not make. */
export function decodeCursor(cursor: string): ListPosition {
  let text: string;
  try {
    const binary = atob(cursor.replace(/-/g, '+').replace(/_/g, '/'));
    text = new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
  } catch {
    throw badCursor();
  }
  const v1 = /^v1:(\d{1,16}):(\d{1,16})$/.exec(text);
  if (v1) return { sort: 'newest', createdAt: Number(v1[1]), refId: Number(v1[2]) };
  const v2 = /^v2:(oldest|largest|smallest|name):(\d{1,16}):(\d{1,16})(?::([\s\S]*))?$/.exec(text);
  if (!v2) throw badCursor();
  const [, sort, created, ref, rest] = v2;
  const at = { createdAt: Number(created), refId: Number(ref) };
  if (sort === 'oldest' && rest === undefined) return { sort, ...at };
  if ((sort === 'largest' || sort === 'smallest') && rest !== undefined && /^\d{1,16}$/.test(rest))
    return { sort, sizeBytes: Number(rest), ...at };
  if (sort === 'name' && rest !== undefined && rest !== '') return { sort, key: rest, ...at };
  throw badCursor();
}

const badCursor = () =>
  errors.badRequest('Invalid cursor. Pass back the nextCursor of a previous page unchanged, or omit it to start over.');
