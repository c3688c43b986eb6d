// @ts-check
/**
 * The artifact table, a treegrid: one line per artifact, and one per name (its latest version and
 * count as GET /v1/names/{app}/versions says) that expands onto every version. Rows are kept by key
 * and changed one at a time: a listing page appends its lines, an event touches its own row, and an
 * arrival goes where the view's order puts it, unless that would move what the reader looks at:
 * then it waits behind the "N new" bar. Keyboard: one tab stop; arrows, Home and End move; Enter
 * opens the preview (or a name's versions; Right and Left too); Space picks a row for a bulk action;
 * Delete asks to delete it.
 */
import { api, SignedOut } from './api.js';
import { keyOf, nameKeyOf, nameOf, nameQueryOf } from './artifacts.js';
import { h, timeEl } from './dom.js';
import { formatBytes } from './format.js';
import { rowOf, ui } from './page.js';
import { showPreview } from './preview.js';
import { state } from './state.js';
import { compareInView, filtering, SORTS, sortOf } from './view.js';

/** @typedef {import('./types.js').ArtifactRef} ArtifactRef */
/** @typedef {import('./types.js').Entry} Entry */

/**
 * The lines in the table's order: each an entry's key, or a name's (nameKeyOf) with the key of the
 * version the listing met first.
 * @type {{ key: string, entry: string }[]}
 */
let lines = [];
/** @type {Map<string, { key: string, entry: string }>} line by key */
const lineByKey = new Map();
/** Arrivals waiting behind the "N new" bar, in arrival order. @type {string[]} */
let waiting = [];
/** Whether the reader is at the list: the pointer over it, or focus in it. */
let reading = false;

/** Text that may wrap after "/" and "." (mime types), rather than anywhere. @param {string} text */
function breakable(text) {
  return text.split(/(?<=[/.])/).flatMap((part, i) => (i === 0 ? [part] : [document.createElement('wbr'), part]));
}

/** A name's versions as the service listed them, newest first; undefined until read. @param {string} nameKey */
function versionsOf(nameKey) {
  const facts = state.names.get(nameKey);
  return facts && !facts.failed ? [...facts.versions].reverse() : undefined;
}

/** The version a name's line shows: its latest live one, as listed (else the one the listing met). @param {{ key: string, entry: string }} line */
function shownOf(line) {
  const versions = versionsOf(line.key);
  const latest = versions?.[0];
  if (latest) return { key: keyOf(latest), entry: state.entries.get(keyOf(latest)) ?? { ref: latest } };
  return { key: line.entry, entry: /** @type {Entry} */ (state.entries.get(line.entry)) };
}

/**
 * One table row's cells from a reference: `name` is its first cell's content.
 * @param {string} key @param {Entry} entry @param {(Node | string)[]} name @param {Record<string, string>} attrs
 */
function rowFor(key, entry, name, attrs) {
  const r = entry.ref;
  const tool = [r.namespace, r.source?.tool].filter(Boolean).join(' / ');
  const pick = h('input', { type: 'checkbox', tabindex: '-1' });
  pick.checked = state.picked.has(key);
  const tr = h('tr', { role: 'row', 'data-key': key, ...attrs, tabindex: key === state.focused ? '0' : '-1' }, [
    h('td', { class: 'pick' }, [
      h('label', {}, [pick, h('span', { class: 'visually-hidden' }, [`Pick ${nameOf(r)}`])]),
    ]),
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
    pick.disabled = true;
  }
  if (key === state.selected) tr.setAttribute('aria-selected', 'true');
  if (entry.fresh) tr.classList.add('fresh');
  entry.fresh = false;
  return tr;
}

/** The rows of a line: an artifact's, or a name's and, expanded, its versions'. @param {{ key: string, entry: string }} line */
function rowsOf(line) {
  const entry = state.entries.get(line.entry);
  if (!entry) return [];
  if (line.key === line.entry) {
    const r = entry.ref;
    return [rowFor(line.key, entry, [h('span', { title: r.id }, [nameOf(r)])], { 'data-id': r.id, 'aria-level': '1' })];
  }
  const open = state.expanded.has(line.key);
  const shown = shownOf(line);
  const r = shown.entry.ref;
  const versions = versionsOf(line.key);
  const badge = versions
    ? `v${r.version} · ${versions.length} version${versions.length === 1 ? '' : 's'}`
    : `v${r.version} · versions…`;
  const head = rowFor(
    line.key,
    shown.entry,
    [
      h('span', { class: 'twisty', 'aria-hidden': 'true' }, [open ? '▾' : '▸']),
      h('span', { title: `${r.namespace ?? ''} / ${r.name}` }, [nameOf(r)]),
      ' ',
      h('span', { class: 'badge' }, [badge]),
    ],
    { 'data-name': r.name ?? '', 'data-latest': r.id, 'aria-level': '1', 'aria-expanded': String(open) },
  );
  const out = [head];
  // The live versions as listed, and those seen going while the page was open (greyed, in place).
  const listed = new Set((versions ?? []).map((v) => keyOf(v)));
  const goneHere = [...state.entries]
    .filter(([k, e]) => e.gone && !listed.has(k) && nameKeyOf(e.ref) === line.key)
    .map(([, e]) => e.ref);
  const all = [...(versions ?? []), ...goneHere].sort((a, b) => (b.version ?? 0) - (a.version ?? 0));
  if (open)
    for (const v of all) {
      const k = keyOf(v);
      if (!state.entries.has(k)) state.entries.set(k, { ref: v });
      const e = /** @type {Entry} */ (state.entries.get(k));
      /** @type {(Node | string)[]} */
      const label = [h('span', { class: 'vnum' }, [`v${v.version}`])];
      if (v.filename && v.filename !== v.name) label.push(' ', h('span', { class: 'muted' }, [v.filename]));
      const tr = rowFor(k, e, label, { 'data-id': v.id, 'data-of': line.key, 'aria-level': '2' });
      tr.classList.add('version');
      out.push(tr);
    }
  return out;
}

/** The rows a line has in the table now. @param {string} lineKey */
function rowsInTable(lineKey) {
  const head = rowOf(lineKey);
  if (!head) return [];
  const out = [head];
  for (let next = head.nextElementSibling; next instanceof HTMLTableRowElement; next = next.nextElementSibling) {
    if (next.dataset.of !== lineKey) break;
    out.push(next);
  }
  return out;
}

/** Draws a line again in place (an event, its versions read, expanded or closed). @param {string} lineKey */
function redraw(lineKey) {
  const line = lineByKey.get(lineKey);
  const old = rowsInTable(lineKey);
  if (!line || old.length === 0) return;
  const hadFocus = old.some((tr) => tr === document.activeElement);
  const fresh = rowsOf(line);
  old[0].replaceWith(...fresh);
  for (const tr of old.slice(1)) tr.remove();
  if (hadFocus && state.focused) rowOf(state.focused)?.focus();
}

/** Reads a name's versions from the service, then draws its line again. @param {string} nameKey @param {ArtifactRef} ref */
async function readName(nameKey, ref) {
  const generation = state.generation;
  try {
    const res = await api(`/v1/names/${encodeURIComponent(ref.namespace ?? '')}/versions?${nameQueryOf(ref)}`);
    const { items } = /** @type {{ items: ArtifactRef[] }} */ (await res.json());
    if (generation !== state.generation) return;
    state.names.set(nameKey, { versions: items });
  } catch (err) {
    if (err instanceof SignedOut || generation !== state.generation) return;
    state.names.set(nameKey, { versions: [], failed: true });
  }
  if (lineByKey.has(nameKey)) redraw(nameKey);
}

/** A line for an entry, or the line it belongs to (a name's); whether it is new. @param {string} key */
function lineFor(key) {
  const entry = state.entries.get(key);
  const nameKey = entry ? nameKeyOf(entry.ref) : null;
  const lineKey = nameKey ?? key;
  const known = lineByKey.get(lineKey);
  if (known) return { line: known, added: false };
  const line = { key: lineKey, entry: key };
  lineByKey.set(lineKey, line);
  if (nameKey && entry) void readName(nameKey, entry.ref);
  return { line, added: true };
}

/** Keeps one row in the tab order: the focused one, else the first. */
function keepTabStop() {
  if (state.focused && rowOf(state.focused)) return;
  const first = ui.rows.querySelector('tr[data-key]');
  state.focused = first instanceof HTMLTableRowElement ? (first.dataset.key ?? null) : null;
  first?.setAttribute('tabindex', '0');
}

/** The empty state, the "more" button and the sort's column. */
function frame() {
  const none = lines.length === 0;
  ui.empty.hidden = !(none && state.listed);
  ui.empty.textContent = filtering()
    ? 'No artifacts match this search and these filters. Clear them to see everything in this scope.'
    : 'No artifacts in this scope yet. New ones appear here as tools store them.';
  ui.table.hidden = none;
  ui.more.hidden = state.cursor === null;
  const { column, dir } = SORTS[sortOf()];
  for (const th of ui.table.querySelectorAll('th[data-sort]')) {
    if (th instanceof HTMLElement) th.setAttribute('aria-sort', th.dataset.sort === column ? dir : 'none');
  }
  ui.bulk.hidden = state.picked.size === 0;
  ui.bulkCount.textContent = `${state.picked.size} picked`;
}

/**
 * Draws the table: all of it from the entries (a new view), or with `keys` only the lines of a page
 * just read, appended.
 * @param {string[]} [keys]
 */
export function render(keys) {
  if (!keys) {
    lines = [];
    lineByKey.clear();
    waiting = [];
    ui.newBar.hidden = true;
    ui.rows.replaceChildren();
  }
  const fresh = [];
  for (const key of keys ?? [...state.entries.keys()]) {
    const { line, added } = lineFor(key);
    if (!added) continue;
    lines.push(line);
    fresh.push(...rowsOf(line));
  }
  ui.rows.append(...fresh);
  keepTabStop();
  frame();
}

/**
 * Whether putting rows before `tr` would move what the reader looks at: the pointer or focus is on
 * the list, or the page is scrolled and `tr` is on screen or above it.
 * @param {Element | undefined} tr
 */
function wouldShift(tr) {
  if (reading) return true;
  return tr !== undefined && scrollY > 0 && tr.getBoundingClientRect().top < innerHeight;
}

/**
 * A reference new to the page, in the view: its row goes where the view's order puts it, or behind
 * the "N new" bar when that would move what the reader looks at. A name's line is read again.
 * @param {string} key
 */
export function arrive(key) {
  const entry = state.entries.get(key);
  if (!entry) return;
  const nameKey = nameKeyOf(entry.ref);
  if (nameKey && lineByKey.has(nameKey)) {
    void readName(nameKey, entry.ref);
    return;
  }
  const at = placeOf(entry.ref);
  // After every line held, while there are pages to come: the listing will bring it.
  if (at < 0 && state.cursor !== null) return;
  const before = at < 0 ? undefined : rowOf(lines[at].key);
  if (lines.length > 0 && wouldShift(before)) {
    waiting.push(key);
    ui.newBar.hidden = false;
    ui.newCount.textContent = `${waiting.length} new`;
    return;
  }
  place(key, at);
  frame();
}

/** Where a reference's line goes: before the first line that comes after it (-1: the end). @param {ArtifactRef} ref */
const placeOf = (ref) =>
  lines.findIndex((l) => {
    const other = state.entries.get(l.entry);
    return other !== undefined && compareInView(ref, other.ref) < 0;
  });

/** Puts a line in the table at `at` (-1: the end). @param {string} key @param {number} at */
function place(key, at) {
  const { line, added } = lineFor(key);
  if (!added) return;
  const rows = rowsOf(line);
  if (at < 0) {
    lines.push(line);
    ui.rows.append(...rows);
  } else {
    rowOf(lines[at].key)?.before(...rows);
    lines.splice(at, 0, line);
  }
  keepTabStop();
}

/** Shows what waited behind the bar, each in its place, and goes to the top of the list. */
function showWaiting() {
  const keys = waiting;
  waiting = [];
  ui.newBar.hidden = true;
  for (const key of keys) {
    const entry = state.entries.get(key);
    if (!entry) continue;
    place(key, placeOf(entry.ref));
  }
  frame();
  ui.table.scrollIntoView({ block: 'start' });
}
ui.newBar.addEventListener('click', showWaiting);

/**
 * An entry changed (gone, or stored again): its row is drawn again, or its name's line read again.
 * @param {string} key @param {ArtifactRef} [ref]
 */
export function changed(key, ref) {
  const known = state.entries.get(key)?.ref ?? ref;
  const nameKey = known ? nameKeyOf(known) : null;
  if (known && nameKey && lineByKey.has(nameKey)) return void readName(nameKey, known);
  if (lineByKey.has(key)) redraw(key);
}

/** Removes a line whose reference is no longer listed (deleted here). @param {string} lineKey */
export function drop(lineKey) {
  const at = lines.findIndex((l) => l.key === lineKey);
  if (at < 0) return;
  for (const tr of rowsInTable(lineKey)) tr.remove();
  lines.splice(at, 1);
  lineByKey.delete(lineKey);
  state.picked.delete(lineKey);
  if (state.focused === lineKey) state.focused = null;
  keepTabStop();
  frame();
}

/** The line a row belongs to (its own, or its name's). @param {string} key */
export const lineOf = (key) => lineByKey.get(key) ?? lines.find((l) => l.entry === key);

/** Shows or hides a name's versions, focus staying on its row. @param {string} key @param {boolean} open */
function expand(key, open) {
  if (open) state.expanded.add(key);
  else state.expanded.delete(key);
  state.focused = key;
  redraw(key);
  rowOf(key)?.focus();
}

/** Picks a row for a bulk action, or unpicks it. @param {string} key @param {boolean} on */
function pick(key, on) {
  const entry = state.entries.get(key) ?? state.entries.get(lineByKey.get(key)?.entry ?? '');
  if (!entry || entry.gone) return;
  if (on) state.picked.add(key);
  else state.picked.delete(key);
  const box = rowOf(key)?.querySelector('input[type="checkbox"]');
  if (box instanceof HTMLInputElement) box.checked = on;
  frame();
}

/** Unpicks every row. */
export function clearPicked() {
  for (const key of [...state.picked]) pick(key, false);
}

ui.bulkClear.addEventListener('click', clearPicked);

// Column headers sort: a second click on the sorted column reverses it where the service can.
ui.table.querySelector('thead')?.addEventListener('click', (event) => {
  const th = event.target instanceof Element ? event.target.closest('th[data-sort]') : null;
  if (!(th instanceof HTMLElement) || !th.dataset.sort) return;
  const now = sortOf();
  const next =
    th.dataset.sort === 'name'
      ? 'name'
      : th.dataset.sort === 'size'
        ? now === 'largest'
          ? 'smallest'
          : 'largest'
        : now === 'newest'
          ? 'oldest'
          : 'newest';
  ui.sort.value = next;
  ui.sort.dispatchEvent(new Event('change', { bubbles: true }));
});

ui.rows.addEventListener('pointerenter', () => (reading = true));
ui.rows.addEventListener('pointerleave', () => (reading = false));
ui.rows.addEventListener('focusin', () => (reading = true));
ui.rows.addEventListener('focusout', (event) => {
  if (!(event.relatedTarget instanceof Node && ui.rows.contains(event.relatedTarget))) reading = false;
});

ui.rows.addEventListener('click', (event) => {
  const target = event.target instanceof Element ? event.target : null;
  const tr = target?.closest('tr[data-key]');
  if (!(tr instanceof HTMLTableRowElement) || !tr.dataset.key) return;
  const key = tr.dataset.key;
  if (target instanceof HTMLInputElement && target.type === 'checkbox') return pick(key, target.checked);
  if (tr.hasAttribute('aria-expanded') && target?.closest('.twisty, .badge'))
    return expand(key, !state.expanded.has(key));
  state.focused = key;
  if (tr.hasAttribute('aria-expanded')) return expand(key, !state.expanded.has(key));
  showPreview(key);
});

ui.rows.addEventListener('keydown', (event) => {
  const tr = event.target instanceof HTMLTableRowElement ? event.target : null;
  if (!tr?.dataset.key) return;
  const key = tr.dataset.key;
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
      event.preventDefault();
      if (tr.hasAttribute('aria-expanded')) expand(key, !state.expanded.has(key));
      else showPreview(key);
      return;
    case ' ':
      event.preventDefault();
      pick(key, !state.picked.has(key));
      return;
    case 'Delete':
      event.preventDefault();
      ui.rows.dispatchEvent(new CustomEvent('delete-row', { detail: key }));
      return;
    case 'ArrowRight':
    case 'ArrowLeft': {
      // Right opens a name, Left closes it; Left on a version goes up to its name.
      const open = event.key === 'ArrowRight';
      if (tr.getAttribute('aria-expanded') === String(!open)) {
        event.preventDefault();
        expand(key, open);
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
