import { errors } from '../core/errors.js';

/** Opaque listing cursor: the (createdAt, refId) of the last row of a page, base64url. */
export function encodeCursor(pos: { createdAt: number; refId: number }): string {
  return btoa(`v1:${pos.createdAt}:${pos.refId}`).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function decodeCursor(cursor: string): { createdAt: number; refId: number } {
  let text: string;
  try {
    text = atob(cursor.replace(/-/g, '+').replace(/_/g, '/'));
  } catch {
    throw badCursor();
  }
  const m = /^v1:(\d{1,16}):(\d{1,16})$/.exec(text);
  if (!m) throw badCursor();
  return { createdAt: Number(m[1]), refId: Number(m[2]) };
}

const badCursor = () =>
  errors.badRequest('Invalid cursor. Pass back the nextCursor of a previous page unchanged, or omit it to start over.');
