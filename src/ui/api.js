// @ts-check
/** Calls to /v1 with the token, and the signed links that let previews and downloads go without it. */
import { signOut } from './sign-out.js';
import { state } from './state.js';

/** Thrown after a 401 has signed the page out: the sign-in form already says what to do. */
export class SignedOut extends Error {}

/** Thrown when the service cannot be reached, or answers that it cannot serve now (5xx). */
export class Unreachable extends Error {}

/** What a 401 means to a person, without the service's details (which may name its files). @param {string} message */
export function refusedText(message) {
  const why = /expired/i.test(message)
    ? 'This token has expired.'
    : 'The service did not accept this token: it may have expired, been signed with another key, or been revoked.';
  return `${why} Paste a new one (npm start prints a sign-in link; artifact-store token mints one).`;
}

/**
 * A call to /v1 with the token. Errors carry the service's own message ({ code, message }); a 401
 * signs out with a message saying what to do. No answer at all, or a 5xx, is Unreachable, in plain
 * words.
 * @param {string} path @param {RequestInit} [init]
 */
export async function api(path, init = {}) {
  const headers = new Headers(init.headers);
  headers.set('Authorization', `Bearer ${state.token}`);
  /** @type {Response} */
  let res;
  try {
    res = await fetch(path, { ...init, headers });
  } catch (err) {
    if (init.signal?.aborted) throw err;
    throw new Unreachable('the service cannot be reached (is it running, and is this device online?)');
  }
  if (res.ok) return res;
  const body = await res.json().catch(() => null);
  const message = body && typeof body.message === 'string' ? body.message : `${res.status} ${res.statusText}`;
  if (res.status === 401) {
    signOut(refusedText(message));
    throw new SignedOut(message);
  }
  if (res.status >= 500) throw new Unreachable(`the service cannot answer right now (${res.status}): ${message}`);
  throw new Error(message);
}

/**
 * Whether the token may do `perm` (read, write, admin), as its claims say. An API key's permissions
 * are not visible to the page: the service decides, and says so if it refuses.
 * @param {string} perm
 */
export function may(perm) {
  const perms = state.claims?.perms;
  return !Array.isArray(perms) || perms.includes(perm);
}

/**
 * A signed link for one artifact: no token in it. `direct` comes from S3 or the CDN where the store
 * can presign and falls back to the service otherwise; fetchMode says which it is.
 * @param {string} id @param {'inline' | 'attachment'} disposition @param {'direct' | 'proxy'} mode
 * @param {number} [expiresIn] seconds (the service's default, 15 minutes, when left out)
 * @returns {Promise<import('./types.js').Link>}
 */
export async function signedLink(id, disposition, mode, expiresIn) {
  const res = await api(`/v1/artifacts/${encodeURIComponent(id)}/url`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ mode, disposition, ...(expiresIn ? { expiresIn } : {}) }),
  });
  return res.json();
}
