// @ts-check
/**
 * The artifact table: the rows the page holds, filtered and sorted as the toolbar says, drawn from
 * scratch on each change. Keyboard use follows the grid pattern: one tab stop for the table; arrows,
 * Home and End move; Enter or Space opens the preview.
 */
import { nameOf, previewKind } from './artifacts.js';
import { h, timeEl } from './dom.js';
import { formatBytes } from './format.js';
import { ui } from './page.js';
import { showPreview } from './preview.js';
import { state } from './state.js';

/** @typedef {import('./types.js').ArtifactRef} ArtifactRef */

/** @param {import('./types.js').Entry} entry */
function matches(entry) {
  const r = entry.ref;
  const kind = ui.kind.value;
  if (kind === 'text' || kind === 'other') {
    if (previewKind(r.mimeType) !== kind) return false;
  } else if (kind && !r.mimeType.startsWith(kind)) {
    return false;
  }
  const q = ui.filter.value.trim().toLowerCase();
  if (!q) return true;
  const fields = [r.filename, r.id, r.mimeType, r.namespace, r.source?.tool, r.scope.sessionId];
  return fields.some((v) => typeof v === 'string' && v.toLowerCase().includes(q));
}

/** Text that may wrap after "/" and "." (mime types), rather than anywhere. @param {string} text */
function breakable(text) {
  return text.split(/(?<=[/.])/).flatMap((part, i) => (i === 0 ? [part] : [document.createElement('wbr'), part]));
}

const SORTS = {
  /** @param {ArtifactRef} a @param {ArtifactRef} b */
  created: (a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id),
  /** @param {ArtifactRef} a @param {ArtifactRef} b */
  name: (a, b) => nameOf(a).localeCompare(nameOf(b), undefined, { numeric: true, sensitivity: 'base' }),
  /** @param {ArtifactRef} a @param {ArtifactRef} b */
  size: (a, b) => a.sizeBytes - b.sizeBytes,
  /** @param {ArtifactRef} a @param {ArtifactRef} b */
  expires: (a, b) => (a.expiresAt ?? '9999').localeCompare(b.expiresAt ?? '9999'),
};

function sortedVisible() {
  const [field, dir] = /** @type {[keyof typeof SORTS, string]} */ (ui.sort.value.split(':'));
  const compare = SORTS[field] ?? SORTS.created;
  const sign = dir === 'desc' ? -1 : 1;
  return [...state.entries.entries()]
    .filter(([, e]) => matches(e))
    .sort(([, a], [, b]) => sign * compare(a.ref, b.ref));
}

/** Draws the table, keeping keyboard focus on the same row if it was in the table. */
export function render() {
  const rows = sortedVisible();
  const active = document.activeElement;
  const focusedBefore = active instanceof HTMLTableRowElement && ui.rows.contains(active);
  if (!rows.some(([key]) => key === state.focused)) state.focused = rows[0]?.[0] ?? null;
  /** @type {HTMLTableRowElement | null} */
  let focusRow = null;
  const out = rows.map(([key, entry]) => {
    const r = entry.ref;
    const tool = [r.namespace, r.source?.tool].filter(Boolean).join(' / ');
    const tr = h('tr', { 'data-key': key, 'data-id': r.id, tabindex: key === state.focused ? '0' : '-1' }, [
      h('td', { class: 'name' }, [h('span', { title: r.id }, [nameOf(r)])]),
      h('td', { class: 'type' }, breakable(r.mimeType)),
      h('td', { class: 'size' }, [formatBytes(r.sizeBytes)]),
      h('td', { class: 'tool' }, [tool || '—']),
      h('td', { class: 'created' }, [timeEl(r.createdAt)]),
      h(
        'td',
        { class: 'expires' },
        entry.gone ? [`${entry.gone.type} `, timeEl(entry.gone.at)] : [r.expiresAt ? timeEl(r.expiresAt) : 'never'],
      ),
    ]);
    if (entry.gone) {
      tr.classList.add('gone');
      tr.setAttribute('aria-disabled', 'true');
    }
    // Flashes once: the next render draws it plain.
    if (entry.fresh) tr.classList.add('fresh');
    entry.fresh = false;
    if (key === state.selected) tr.setAttribute('aria-selected', 'true');
    if (key === state.focused) focusRow = tr;
    return tr;
  });
  ui.rows.replaceChildren(...out);
  if (focusedBefore && focusRow) /** @type {HTMLTableRowElement} */ (focusRow).focus();
  ui.empty.hidden = rows.length > 0;
  ui.table.hidden = rows.length === 0;
  ui.more.hidden = state.cursor === null;
  const [field, dir] = ui.sort.value.split(':');
  for (const th of ui.table.querySelectorAll('th[data-sort]')) {
    if (!(th instanceof HTMLElement)) continue;
    th.setAttribute('aria-sort', th.dataset.sort === field ? (dir === 'desc' ? 'descending' : 'ascending') : 'none');
  }
}

let renderQueued = false;
/** Events come in bursts (a retention run evicts hundreds): one redraw per frame. */
export function scheduleRender() {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(() => {
    renderQueued = false;
    render();
  });
}

for (const control of [ui.filter, ui.kind, ui.sort]) control.addEventListener('input', render);

// Column headers sort too: a second click on the sorted column reverses it.
ui.table.querySelector('thead')?.addEventListener('click', (event) => {
  const th = event.target instanceof Element ? event.target.closest('th[data-sort]') : null;
  if (!(th instanceof HTMLElement) || !th.dataset.sort) return;
  const [field, dir] = ui.sort.value.split(':');
  const natural = th.dataset.sort === 'name' || th.dataset.sort === 'expires' ? 'asc' : 'desc';
  const next = field === th.dataset.sort ? (dir === 'asc' ? 'desc' : 'asc') : natural;
  const value = `${th.dataset.sort}:${next}`;
  if (![...ui.sort.options].some((o) => o.value === value)) {
    ui.sort.append(h('option', { value }, [`${th.dataset.sort}, ${next === 'asc' ? 'ascending' : 'descending'}`]));
  }
  ui.sort.value = value;
  render();
});

ui.rows.addEventListener('click', (event) => {
  const tr = event.target instanceof Element ? event.target.closest('tr[data-key]') : null;
  if (tr instanceof HTMLTableRowElement && tr.dataset.key) {
    state.focused = tr.dataset.key;
    showPreview(tr.dataset.key);
  }
});

ui.rows.addEventListener('keydown', (event) => {
  const tr = event.target instanceof HTMLTableRowElement ? event.target : null;
  if (!tr?.dataset.key) return;
  const all = /** @type {HTMLTableRowElement[]} */ ([...ui.rows.querySelectorAll('tr[data-key]')]);
  const at = all.indexOf(tr);
  /** @type {HTMLTableRowElement | undefined} */
  let next;
  switch (event.key) {
    case 'ArrowDown':
      next = all[at + 1];
      break;
    case 'ArrowUp':
      next = all[at - 1];
      break;
    case 'Home':
      next = all[0];
      break;
    case 'End':
      next = all[all.length - 1];
      break;
    case 'Enter':
    case ' ':
      event.preventDefault();
      showPreview(tr.dataset.key);
      return;
    default:
      return;
  }
  event.preventDefault();
  if (!next?.dataset.key) return;
  tr.tabIndex = -1;
  next.tabIndex = 0;
  state.focused = next.dataset.key;
  next.focus();
});
