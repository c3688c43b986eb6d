// @ts-check
/**
 * Signing in: a token pasted into the form, or one in the link `npm start` prints. The token stays in
 * this tab's sessionStorage and leaves the page only as an Authorization header.
 */
import { api, may, refusedText, SignedOut, Unreachable } from './api.js';
import { Backoff, pause, setConnection } from './connection.js';
import { formatTime } from './format.js';
import { startScope } from './live-list.js';
import { ui } from './page.js';
import { signOut } from './sign-out.js';
import { state, TOKEN_KEY } from './state.js';
import { renderUsage } from './usage.js';

/**
 * A JWT's claims, read for display and scope (the service checks the signature); null for API keys.
 * @param {string} token @returns {Record<string, unknown> | null}
 */
function decodeClaims(token) {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  try {
    const json = atob(parts[1].replace(/-/g, '+').replace(/_/g, '/'));
    const claims = JSON.parse(new TextDecoder().decode(Uint8Array.from(json, (c) => c.charCodeAt(0))));
    return claims && typeof claims === 'object' ? claims : null;
  } catch {
    return null;
  }
}

/**
 * Signs in with a token: one call proves it before anything is shown. A refusal (401) signs out with
 * a message; a service that cannot be reached keeps the token and tries again.
 * @param {string} token
 */
async function signIn(token) {
  state.token = token;
  state.claims = decodeClaims(token);
  state.bound = typeof state.claims?.session === 'string';
  const report = /** @type {import('./types.js').UsageReport} */ (await (await api('/v1/usage?top=200')).json());
  sessionStorage.setItem(TOKEN_KEY, token);
  ui.signinError.textContent = '';
  ui.signin.hidden = true;
  ui.browser.hidden = false;
  ui.signout.hidden = false;
  ui.who.hidden = false;
  ui.live.hidden = false;
  ui.who.textContent = describeToken();
  ui.sessionField.hidden = state.bound;
  ui.drop.hidden = !may('write');
  if (state.bound) state.session = '';
  ui.session.value = state.session;
  watchExpiry();
  renderUsage(report);
  startScope();
}

/** Tries a sign-in until it is answered: the service may be starting, or the network back soon. @param {string} token */
async function signInKeeping(token) {
  const backoff = new Backoff();
  for (;;) {
    try {
      return await signIn(token);
    } catch (err) {
      if (err instanceof SignedOut) return;
      if (!(err instanceof Unreachable)) return signOut(`Could not sign in: ${/** @type {Error} */ (err).message}`);
      const wait = backoff.next();
      ui.browser.hidden = true;
      ui.signin.hidden = false;
      ui.tokenInput.value = token;
      ui.signinError.textContent = `Could not sign in: ${err.message}. Your token is kept; trying again in ${Math.round(wait / 1000)} s.`;
      await pause(wait);
      if (state.token !== token) return;
    }
  }
}

/** @type {ReturnType<typeof setTimeout>[]} */
let expiryTimers = [];

/**
 * A token with an expiry: a warning two minutes before, with a way to paste a new one; at the
 * expiry the live stream closes (the service would refuse it) and the view stays as it is.
 */
function watchExpiry() {
  for (const t of expiryTimers) clearTimeout(t);
  expiryTimers = [];
  ui.expiry.hidden = true;
  const exp = typeof state.claims?.exp === 'number' ? state.claims.exp * 1000 : null;
  if (!exp) return;
  const token = state.token;
  const at = formatTime(new Date(exp).toISOString());
  const warn = () => {
    if (state.token !== token) return;
    ui.expiryText.textContent = `Your token expires at ${at}. Paste a new one to keep this view.`;
    ui.expiry.hidden = false;
  };
  const end = () => {
    if (state.token !== token) return;
    state.generation++;
    state.stream?.abort();
    state.stream = null;
    setConnection('down', { reason: 'The token expired: the list no longer updates.' });
    ui.expiryText.textContent = `Your token expired at ${at}. The list stopped updating; paste a new token to go on.`;
    ui.expiry.hidden = false;
  };
  const left = exp - Date.now();
  // setTimeout holds at most ~24.8 days.
  if (left > 2 ** 31 - 1) return;
  expiryTimers.push(setTimeout(warn, Math.max(0, left - 120_000)), setTimeout(end, Math.max(0, left)));
}

ui.renew.addEventListener('click', () => {
  ui.renewError.textContent = '';
  ui.renewToken.value = '';
  ui.renewDialog.showModal();
});
ui.renewCancel.addEventListener('click', () => ui.renewDialog.close());
ui.renewForm.addEventListener('submit', async (event) => {
  event.preventDefault();
  const token = ui.renewToken.value.trim().replace(/^Bearer\s+/i, '');
  if (!token) return;
  try {
    // Proved first: a token the service refuses leaves the page as it was.
    const res = await fetch('/v1/usage?top=1', { headers: { Authorization: `Bearer ${token}` } });
    if (res.status === 401) {
      const body = await res.json().catch(() => null);
      ui.renewError.textContent = refusedText(String(body?.message ?? ''));
      return;
    }
    if (!res.ok) throw new Unreachable(`the service answered ${res.status}`);
  } catch (err) {
    ui.renewError.textContent = `Could not check the token: ${/** @type {Error} */ (err).message}. Try again.`;
    return;
  }
  ui.renewDialog.close();
  await signInKeeping(token);
});

/** Who the page is signed in as, from the token's claims. */
function describeToken() {
  const c = state.claims;
  if (!c) return 'API key';
  const parts = [`tenant ${String(c.tenant ?? '?')}`];
  if (typeof c.session === 'string') parts.push(`session ${c.session}`);
  if (typeof c.trace === 'string') parts.push(`trace ${c.trace}`);
  if (Array.isArray(c.perms)) parts.push(c.perms.join(', '));
  if (typeof c.exp === 'number') parts.push(`until ${formatTime(new Date(c.exp * 1000).toISOString())}`);
  return parts.join(' · ');
}

ui.signinForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const token = ui.tokenInput.value.trim().replace(/^Bearer\s+/i, '');
  if (!token) return;
  ui.signinError.textContent = '';
  void signInKeeping(token);
});
ui.signout.addEventListener('click', () => {
  for (const t of expiryTimers) clearTimeout(t);
  ui.expiry.hidden = true;
  signOut();
});

/**
 * A sign-in link: its token wins over the one this tab kept, and leaves the address bar at once (the
 * fragment never reaches the server; history keeps no token). A session in it is the one to look at.
 * @returns {string | null} the link's token
 */
function tokenFromAddress() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const fromLink = fragment.get('token');
  if (!fromLink) return null;
  state.session = fragment.get('session') ?? '';
  history.replaceState(null, '', state.session ? `#session=${encodeURIComponent(state.session)}` : location.pathname);
  return fromLink;
}

/** The page's first step: the link's token, else the one this tab kept, else the form. */
export function signInOnLoad() {
  const fromLink = tokenFromAddress();
  if (!fromLink) state.session = new URLSearchParams(location.hash.slice(1)).get('session') ?? '';
  const saved = fromLink ?? sessionStorage.getItem(TOKEN_KEY);
  if (saved) void signInKeeping(saved);
  else signOut();
}

// A new sign-in link pasted into this tab replaces the token, and leaves the address bar too.
window.addEventListener('hashchange', () => {
  const token = tokenFromAddress();
  if (token && token !== state.token) void signInKeeping(token);
});
