// @ts-check
/**
 * The artifact table: the rows the page holds, filtered and sorted as the toolbar says, drawn from
 * scratch on each change. The versions of a name share one row, its latest live version's, which
 * expands to list them newest first. Keyboard use follows the grid pattern: one tab stop for the
 * table; arrows, Home and End move; Enter or Space opens the preview, or on a name shows or hides its
 * versions (as do Right and Left).
 */
import { nameKeyOf, nameOf, previewKind } from './artifacts.js';
import { h, timeEl } from './dom.js';
import { formatBytes } from './format.js';
import { rowOf, ui } from './page.js';
import { showPreview } from './preview.js';
import { state } from './state.js';

/** @typedef {import('./types.js').ArtifactRef} ArtifactRef */
/** @typedef {import('./types.js').Entry} Entry */
/**
 * A line of the table: one artifact, or one name (`entry` its latest live version, else its latest)
 * with its versions, newest first.
 * @typedef {{ key: string, entry: Entry, versions?: [string, Entry][] }} Line
 */

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
  const fields = [r.name, r.filename, r.id, r.mimeType, r.namespace, r.source?.tool, r.scope.sessionId];
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

/** The rows the page holds as lines: each unnamed artifact alone, each name's versions together. */
function linesOf() {
  /** @type {Map<string, [string, Entry][]>} */
  const names = new Map();
  /** @type {Line[]} */
  const lines = [];
  for (const [key, entry] of state.entries) {
    const name = nameKeyOf(entry.ref);
    const versions = name ? names.get(name) : undefined;
    if (versions) versions.push([key, entry]);
    else if (name) {
      /** @type {[string, Entry][]} */
      const first = [[key, entry]];
      names.set(name, first);
      lines.push({ key: name, entry, versions: first });
    } else lines.push({ key, entry });
  }
  for (const line of lines) {
    if (!line.versions) continue;
    line.versions.sort(([, a], [, b]) => (b.ref.version ?? 0) - (a.ref.version ?? 0));
    line.entry = (line.versions.find(([, e]) => !e.gone) ?? line.versions[0])[1];
  }
  return lines;
}

/** The lines the toolbar lets through (a name when any of its versions matches), in its order. */
function sortedVisible() {
  const [field, dir] = /** @type {[keyof typeof SORTS, string]} */ (ui.sort.value.split(':'));
  const compare = SORTS[field] ?? SORTS.created;
  const sign = dir === 'desc' ? -1 : 1;
  return linesOf()
    .filter((line) => (line.versions ? line.versions.some(([, e]) => matches(e)) : matches(line.entry)))
    .sort((a, b) => sign * compare(a.entry.ref, b.entry.ref));
}

/**
 * One table row: `name` for its first cell, the rest from the entry's reference.
 * @param {string} key @param {Entry} entry @param {(Node | string)[]} name @param {Record<string, string>} attrs
 */
function rowFor(key, entry, name, attrs) {
  const r = entry.ref;
  const tool = [r.namespace, r.source?.tool].filter(Boolean).join(' / ');
  const tr = h('tr', { 'data-key': key, ...attrs, tabindex: key === state.focused ? '0' : '-1' }, [
    h('td', { class: 'name' }, name),
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
  if (key === state.selected) tr.setAttribute('aria-selected', 'true');
  return tr;
}

/** The rows of one line: an artifact's, or a name's and, expanded, its matching versions'. @param {Line} line */
function rowsOf({ key, entry, versions }) {
  const r = entry.ref;
  if (!versions) {
    const tr = rowFor(key, entry, [h('span', { title: r.id }, [nameOf(r)])], { 'data-id': r.id });
    // Flashes once: the next render draws it plain.
    if (entry.fresh) tr.classList.add('fresh');
    entry.fresh = false;
    return [tr];
  }
  const open = state.expanded.has(key);
  const live = versions.filter(([, e]) => !e.gone).length;
  const badge = `v${r.version} · ${live} version${live === 1 ? '' : 's'}`;
  const head = rowFor(
    key,
    entry,
    [
      h('span', { class: 'twisty', 'aria-hidden': 'true' }, [open ? '▾' : '▸']),
      h('span', { title: `${r.namespace ?? ''} / ${r.name}` }, [nameOf(r)]),
      ' ',
      h('span', { class: 'badge' }, [badge]),
    ],
    { 'data-name': r.name ?? '', 'aria-expanded': String(open) },
  );
  if (versions.some(([, e]) => e.fresh)) head.classList.add('fresh');
  const out = [head];
  for (const [k, e] of versions) {
    if (open && matches(e)) {
      /** @type {(Node | string)[]} */
      const label = [h('span', { class: 'vnum' }, [`v${e.ref.version}`])];
      if (e.ref.filename && e.ref.filename !== e.ref.name)
        label.push(' ', h('span', { class: 'muted' }, [e.ref.filename]));
      const tr = rowFor(k, e, label, { 'data-id': e.ref.id, 'data-of': key });
      tr.classList.add('version');
      if (e.fresh) tr.classList.add('fresh');
      out.push(tr);
    }
    e.fresh = false;
  }
  return out;
}

/** Draws the table, keeping keyboard focus on the same row if it was in the table. */
export function render() {
  const lines = sortedVisible();
  const active = document.activeElement;
  const focusedBefore = active instanceof HTMLTableRowElement && ui.rows.contains(active);
  const out = lines.flatMap(rowsOf);
  if (!out.some((tr) => tr.dataset.key === state.focused)) {
    state.focused = out[0]?.dataset.key ?? null;
    out[0]?.setAttribute('tabindex', '0');
  }
  ui.rows.replaceChildren(...out);
  if (focusedBefore && state.focused) rowOf(state.focused)?.focus();
  ui.empty.hidden = lines.length > 0;
  ui.table.hidden = lines.length === 0;
  ui.more.hidden = state.cursor === null;
  const [field, dir] = ui.sort.value.split(':');
  for (const th of ui.table.querySelectorAll('th[data-sort]')) {
    if (!(th instanceof HTMLElement)) continue;
    th.setAttribute('aria-sort', th.dataset.sort === field ? (dir === 'desc' ? 'descending' : 'ascending') : 'none');
  }
}

/** Shows or hides a name's versions, focus staying on its row. @param {string} key @param {boolean} open */
function expand(key, open) {
  if (open) state.expanded.add(key);
  else state.expanded.delete(key);
  state.focused = key;
  render();
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
  if (!(tr instanceof HTMLTableRowElement) || !tr.dataset.key) return;
  if (tr.hasAttribute('aria-expanded')) return expand(tr.dataset.key, !state.expanded.has(tr.dataset.key));
  state.focused = tr.dataset.key;
  showPreview(tr.dataset.key);
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
      if (tr.hasAttribute('aria-expanded')) expand(tr.dataset.key, !state.expanded.has(tr.dataset.key));
      else showPreview(tr.dataset.key);
      return;
    case 'ArrowRight':
    case 'ArrowLeft': {
      // Right opens a name, Left closes it; Left on a version goes up to its name.
      const open = event.key === 'ArrowRight';
      if (tr.getAttribute('aria-expanded') === String(!open)) {
        event.preventDefault();
        expand(tr.dataset.key, open);
        return;
      }
      if (open || !tr.dataset.of) return;
      next = rowOf(tr.dataset.of);
      break;
    }
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
