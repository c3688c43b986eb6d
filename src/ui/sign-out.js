// @ts-check
/**
 * Signing out: the one way back to the sign-in form, whether the user asked or the service refused
 * the token. It stops the live stream, forgets the token and says why, if there is a reason.
 */
import { ui } from './page.js';
import { state, TOKEN_KEY } from './state.js';

/** @param {string} [message] */
export function signOut(message = '') {
  state.generation++;
  state.stream?.abort();
  state.stream = null;
  state.token = '';
  sessionStorage.removeItem(TOKEN_KEY);
  ui.browser.hidden = true;
  ui.expiry.hidden = true;
  ui.live.hidden = true;
  ui.signout.hidden = true;
  ui.who.hidden = true;
  ui.signin.hidden = false;
  ui.signinError.textContent = message;
  ui.tokenInput.value = '';
  ui.tokenInput.focus();
}
