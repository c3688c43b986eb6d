// @ts-check
/**
 * The view: what the toolbar asks for (search, type, dates, sort), as the service's listing
 * parameters (GET /v1/artifacts: q, mimePrefix, createdAfter, createdBefore, sort), and the same
 * rules in the page, for the live arrivals it places without asking the service again.
 */
import { ui } from './page.js';

/** @typedef {import('./types.js').ArtifactRef} ArtifactRef */

/** The sorts the service knows, and the column whose header shows each. */
export const SORTS = /** @type {const} */ ({
  newest: { column: 'created', dir: 'descending' },
  oldest: { column: 'created', dir: 'ascending' },
  largest: { column: 'size', dir: 'descending' },
  smallest: { column: 'size', dir: 'ascending' },
  name: { column: 'name', dir: 'ascending' },
});

/** @returns {keyof typeof SORTS} */
export function sortOf() {
  const v = ui.sort.value;
  return v in SORTS ? /** @type {keyof typeof SORTS} */ (v) : 'newest';
}

/** A date field's day as an ISO instant: the start of that day, local time; '' when empty. @param {string} day */
function dayStart(day) {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return '';
  const d = new Date(`${day}T00:00:00`);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString();
}

/** The day after, for an inclusive "to" date. @param {string} day */
function dayEnd(day) {
  const start = dayStart(day);
  if (!start) return '';
  const d = new Date(start);
  d.setDate(d.getDate() + 1);
  return d.toISOString();
}

/** What the toolbar asks for, read once per use. */
export function viewOf() {
  return {
    q: ui.filter.value.trim(),
    mimePrefix: ui.kind.value,
    createdAfter: dayStart(ui.from.value),
    createdBefore: dayEnd(ui.to.value),
    sort: sortOf(),
  };
}

/** Whether the toolbar narrows the list at all (an empty list then says "nothing matches"). */
export function filtering() {
  const v = viewOf();
  return Boolean(v.q || v.mimePrefix || v.createdAfter || v.createdBefore);
}

/** The view as listing parameters, added to `q`. @param {URLSearchParams} q */
export function addViewParams(q) {
  const v = viewOf();
  if (v.q) q.set('q', v.q);
  if (v.mimePrefix) q.set('mimePrefix', v.mimePrefix);
  if (v.createdAfter) q.set('createdAfter', v.createdAfter);
  if (v.createdBefore) q.set('createdBefore', v.createdBefore);
  if (v.sort !== 'newest') q.set('sort', v.sort);
  return q;
}

/** ASCII letters only, as the service folds case (SQL's lower()). @param {string} s */
const fold = (s) => s.replace(/[A-Z]/g, (c) => c.toLowerCase());

/** Whether a reference belongs in the view, by the service's rules. @param {ArtifactRef} r */
export function inView(r) {
  const v = viewOf();
  if (v.q) {
    const q = fold(v.q);
    const fields = [r.filename, r.id, r.name];
    if (!fields.some((f) => typeof f === 'string' && fold(f).includes(q))) return false;
  }
  if (v.mimePrefix && !r.mimeType.startsWith(v.mimePrefix)) return false;
  if (v.createdAfter && r.createdAt < v.createdAfter) return false;
  if (v.createdBefore && r.createdAt >= v.createdBefore) return false;
  return true;
}

const utf8 = new TextEncoder();
/** Byte order of UTF-8, as the service compares names. @param {string} a @param {string} b */
function byteCompare(a, b) {
  const x = utf8.encode(a);
  const y = utf8.encode(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

/** The view's order, for placing an arrival among the rows already shown (< 0: `a` first). */
export function compareInView(/** @type {ArtifactRef} */ a, /** @type {ArtifactRef} */ b) {
  switch (sortOf()) {
    case 'oldest':
      return a.createdAt.localeCompare(b.createdAt);
    case 'largest':
      return b.sizeBytes - a.sizeBytes;
    case 'smallest':
      return a.sizeBytes - b.sizeBytes;
    case 'name':
      return byteCompare(a.filename ?? a.id, b.filename ?? b.id);
    default:
      return b.createdAt.localeCompare(a.createdAt);
  }
}
