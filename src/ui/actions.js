// @ts-check
/**
 * What a person does to artifacts: delete (one, the picked ones, a name, a version, a whole session),
 * each after a confirmation in a modal dialog; copy a link with a chosen expiry, the id, or the ref.
 * Controls the token may not use are hidden (may('write')); the service still decides.
 */
import { api, may, SignedOut, signedLink } from './api.js';
import { keyOf, nameKeyOf, nameOf, nameQueryOf } from './artifacts.js';
import { formatTime } from './format.js';
import { ui } from './page.js';
import { closePreview } from './preview.js';
import { state } from './state.js';
import { clearPicked, drop, lineOf } from './table.js';
import { scheduleUsage } from './usage.js';

/** @typedef {import('./types.js').ArtifactRef} ArtifactRef */

/**
 * Asks in the modal dialog; resolves true when the person confirms.
 * @param {string} title @param {string} text @param {string} ok
 */
export function confirmAction(title, text, ok) {
  ui.confirmTitle.textContent = title;
  ui.confirmText.textContent = text;
  ui.confirmOk.textContent = ok;
  ui.confirm.returnValue = '';
  ui.confirm.showModal();
  return new Promise((resolve) => {
    ui.confirm.addEventListener('close', () => resolve(ui.confirm.returnValue === 'ok'), { once: true });
  });
}

/** The scope parameters that narrow a delete to the reference's own session and trace. @param {ArtifactRef} r */
function refScope(r) {
  const q = new URLSearchParams();
  if (r.scope.sessionId) q.set('session', r.scope.sessionId);
  if (r.scope.traceId) q.set('trace', r.scope.traceId);
  return q;
}

/** Deletes one reference: a version by its number, anything else by id in its scope. @param {ArtifactRef} r */
async function deleteRef(r) {
  if (typeof r.version === 'number' && r.name) {
    const q = nameQueryOf(r);
    q.set('version', String(r.version));
    await api(`/v1/names/${encodeURIComponent(r.namespace ?? '')}?${q}`, { method: 'DELETE' });
  } else {
    await api(`/v1/artifacts/${encodeURIComponent(r.id)}?${refScope(r)}`, { method: 'DELETE' });
  }
}

/** Deletes a name with every version. @param {ArtifactRef} r a version of it */
async function deleteName(r) {
  await api(`/v1/names/${encodeURIComponent(r.namespace ?? '')}?${nameQueryOf(r)}`, { method: 'DELETE' });
}

/** Says what happened, where the person looks: the preview's note, or the list's. @param {string} text */
function tell(text) {
  if (!ui.preview.hidden) ui.downloadNote.textContent = text;
  else ui.listError.textContent = text;
}

/** The ref of a row's key (a name's line: its version the listing met). @param {string} key */
function refOf(key) {
  return state.entries.get(key)?.ref ?? state.entries.get(lineOf(key)?.entry ?? '')?.ref;
}

/**
 * What deleting a row's key means: a name's line is the whole name, any other row its reference.
 * @param {string} key
 */
function targetOf(key) {
  const r = refOf(key);
  const line = lineOf(key);
  const whole = Boolean(r && line && line.key === key && line.key !== line.entry);
  /** The line that goes from the table on success: the row's own, or the name's. */
  const gone = line && line.key === key ? line.key : null;
  return { r, whole, gone };
}

/** Asks, then deletes the row of `key` (a version, an artifact, or for a name's line: the name). @param {string} key */
export async function deleteRow(key) {
  if (!may('write')) return;
  const { r, whole, gone } = targetOf(key);
  if (!r) return;
  const what = whole
    ? `the name ${nameOf(r)} and every version of it`
    : typeof r.version === 'number'
      ? `version ${r.version} of ${nameOf(r)}`
      : nameOf(r);
  if (!(await confirmAction('Delete?', `Delete ${what}? This cannot be undone.`, 'Delete'))) return;
  try {
    if (whole) await deleteName(r);
    else await deleteRef(r);
    if (state.selected === key || (whole && state.selected && nameKeyOf(refOf(state.selected) ?? r) === key))
      closePreview(false);
    if (gone) drop(gone);
    tell(`Deleted ${what}.`);
    scheduleUsage();
  } catch (err) {
    if (!(err instanceof SignedOut)) tell(`Could not delete ${what}: ${/** @type {Error} */ (err).message}`);
  }
}

/** Asks, then deletes every picked row, four at a time; says how many went and what failed. */
async function deletePicked() {
  const keys = [...state.picked];
  if (keys.length === 0) return;
  const n = `${keys.length} item${keys.length === 1 ? '' : 's'}`;
  if (!(await confirmAction('Delete?', `Delete ${n}? Names go with every version. This cannot be undone.`, 'Delete')))
    return;
  let done = 0;
  /** @type {string[]} */
  const failed = [];
  let next = 0;
  const worker = async () => {
    while (next < keys.length) {
      const key = keys[next++];
      const { r, whole, gone } = targetOf(key);
      if (!r) continue;
      try {
        if (whole) await deleteName(r);
        else await deleteRef(r);
        done++;
        if (gone) drop(gone);
      } catch (err) {
        if (err instanceof SignedOut) return;
        failed.push(`${nameOf(r)}: ${/** @type {Error} */ (err).message}`);
      }
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  clearPicked();
  ui.listError.textContent = failed.length
    ? `Deleted ${done} of ${keys.length}. Not deleted: ${failed.join('; ')}`
    : `Deleted ${done} item${done === 1 ? '' : 's'}.`;
  scheduleUsage();
}

/** Asks, then ends the session in view: everything it holds goes. */
async function endSession() {
  const session = state.bound ? String(state.claims?.session ?? '') : state.session;
  if (!session) return;
  const text = `Delete everything session ${session} holds, its named versions with their names? This cannot be undone.`;
  if (!(await confirmAction('End the session?', text, 'End the session'))) return;
  try {
    const res = await api(`/v1/sessions/${encodeURIComponent(session)}`, { method: 'DELETE' });
    const report = /** @type {{ refs: number, bytes: number }} */ (await res.json());
    ui.listError.textContent = `Session ${session} ended: ${report.refs} reference${report.refs === 1 ? '' : 's'} removed.`;
    scheduleUsage();
  } catch (err) {
    if (!(err instanceof SignedOut))
      ui.listError.textContent = `Could not end session ${session}: ${/** @type {Error} */ (err).message}`;
  }
}

/** Copies text, and says so (or shows it to copy by hand where the clipboard is refused). @param {string} text @param {string} what */
async function copy(text, what) {
  try {
    await navigator.clipboard.writeText(text);
    ui.downloadNote.textContent = `Copied the ${what}.`;
  } catch {
    ui.downloadNote.textContent = `The browser refused the clipboard. The ${what}: ${text}`;
  }
}

/** The reference the preview shows. */
const previewed = () => (state.selected ? state.entries.get(state.selected)?.ref : undefined);

ui.copyLink.addEventListener('click', async () => {
  const r = previewed();
  if (!r) return;
  try {
    const link = await signedLink(r.id, 'attachment', 'direct', Number(ui.linkExpiry.value));
    await copy(link.url, `link (valid until ${formatTime(link.urlExpiresAt)})`);
  } catch (err) {
    if (!(err instanceof SignedOut)) ui.downloadNote.textContent = `No link: ${/** @type {Error} */ (err).message}`;
  }
});
ui.copyId.addEventListener('click', () => {
  const r = previewed();
  if (r) void copy(r.id, 'id');
});
ui.copyRef.addEventListener('click', () => {
  const r = previewed();
  if (r) void copy(JSON.stringify(r, null, 2), 'ref');
});
ui.deleteOne.addEventListener('click', () => {
  const r = previewed();
  if (r) void deleteRow(keyOf(r));
});
ui.deleteName.addEventListener('click', () => {
  const r = previewed();
  const nameKey = r ? nameKeyOf(r) : null;
  if (nameKey) void deleteRow(nameKey);
});
ui.bulkDelete.addEventListener('click', () => void deletePicked());
ui.endSession.addEventListener('click', () => void endSession());
ui.rows.addEventListener('delete-row', (event) => {
  if (event instanceof CustomEvent && typeof event.detail === 'string') void deleteRow(event.detail);
});
