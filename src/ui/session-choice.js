// @ts-check
/**
 * Which session a tenant-wide token looks at: typed in the Session field or picked from the top
 * sessions, and kept in the URL fragment so a view can be linked.
 */
import { startScope } from './live-list.js';
import { ui } from './page.js';
import { state } from './state.js';
import { renderUsage, scheduleUsage } from './usage.js';

/** @param {string} session '' for all sessions */
export function selectSession(session) {
  state.session = session.trim();
  ui.session.value = state.session;
  history.replaceState(null, '', state.session ? `#session=${encodeURIComponent(state.session)}` : location.pathname);
  startScope();
  if (state.usage) renderUsage(state.usage);
  scheduleUsage();
}

ui.session.addEventListener('change', () => selectSession(ui.session.value));
// The top sessions' buttons (usage.js draws them).
ui.usageTop.addEventListener('click', (event) => {
  const pick = event.target instanceof Element ? event.target.closest('button[data-session]') : null;
  if (pick instanceof HTMLElement && pick.dataset.session !== undefined) selectSession(pick.dataset.session);
});
