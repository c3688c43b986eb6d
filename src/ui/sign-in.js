// @ts-check
/**
 * Signing in: a token pasted into the form, or one in the link `npm start` prints. The token stays in
 * this tab's sessionStorage and leaves the page only as an Authorization header.
 */
import { api, SignedOut } from './api.js';
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

/** @param {string} token */
async function signIn(token) {
  state.token = token;
  state.claims = decodeClaims(token);
  state.bound = typeof state.claims?.session === 'string';
  // One call proves the token before anything is shown.
  const report = /** @type {import('./types.js').UsageReport} */ (await (await api('/v1/usage?top=200')).json());
  sessionStorage.setItem(TOKEN_KEY, token);
  ui.signin.hidden = true;
  ui.browser.hidden = false;
  ui.signout.hidden = false;
  ui.who.hidden = false;
  ui.who.textContent = describeToken();
  ui.sessionField.hidden = state.bound;
  if (state.bound) state.session = '';
  ui.session.value = state.session;
  renderUsage(report);
  startScope();
}

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
  signIn(token).catch((err) => {
    if (!(err instanceof SignedOut)) ui.signinError.textContent = `Could not sign in: ${err.message}`;
  });
});
ui.signout.addEventListener('click', () => signOut());

/**
 * The page's first step: a token in the fragment (the link npm start prints) wins over the one this
 * tab kept. The fragment never reaches the server, and is cleared at once so the token does not stay
 * in history. A session in it is the one to look at.
 */
export function signInOnLoad() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const fromLink = fragment.get('token');
  state.session = fragment.get('session') ?? '';
  if (fromLink) {
    history.replaceState(null, '', state.session ? `#session=${encodeURIComponent(state.session)}` : location.pathname);
  }
  const saved = fromLink ?? sessionStorage.getItem(TOKEN_KEY);
  if (saved) {
    signIn(saved).catch((err) => {
      if (!(err instanceof SignedOut)) signOut(`Could not sign in: ${err.message}`);
    });
  } else {
    signOut();
  }
}
