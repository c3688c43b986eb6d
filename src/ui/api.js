// @ts-check
/** Calls to /v1 with the token, and the signed links that let previews and downloads go without it. */
import { signOut } from './sign-out.js';
import { state } from './state.js';

/** Thrown after a 401 has signed the page out: the sign-in form already says what to do. */
export class SignedOut extends Error {}

/**
 * A call to /v1 with the token. Errors carry the service's own message ({ code, message }); a 401
 * signs out with a message saying what to do.
 * @param {string} path @param {RequestInit} [init]
 */
export async function api(path, init = {}) {
  const headers = new Headers(init.headers);
  headers.set('Authorization', `Bearer ${state.token}`);
  const res = await fetch(path, { ...init, headers });
  if (res.ok) return res;
  const body = await res.json().catch(() => null);
  const message = body && typeof body.message === 'string' ? body.message : `${res.status} ${res.statusText}`;
  if (res.status === 401) {
    signOut(`The service refused the token (${message}) Paste a new one.`);
    throw new SignedOut(message);
  }
  throw new Error(message);
}

/**
 * A signed link for one artifact: no token in it. `direct` comes from S3 or the CDN where the store
 * can presign and falls back to the service otherwise; fetchMode says which it is.
 * @param {string} id @param {'inline' | 'attachment'} disposition @param {'direct' | 'proxy'} mode
 * @returns {Promise<import('./types.js').Link>}
 */
export async function signedLink(id, disposition, mode) {
  const res = await api(`/v1/artifacts/${encodeURIComponent(id)}/url`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ mode, disposition }),
  });
  return res.json();
}
