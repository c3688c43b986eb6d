// @ts-check
/** The usage panel's retention part: what the latest retention runs freed (admins see them). */
import { h } from './dom.js';
import { formatBytes, formatTime } from './format.js';
import { ui } from './page.js';

const SVG = 'http://www.w3.org/2000/svg';

/**
 * The latest retention runs as a small bar chart of bytes freed, oldest on the left, its axes
 * labelled (bytes up to the largest run; the first and last run's time), with the same numbers in a
 * table a click away. Our own SVG, built node by node.
 * @param {import('./types.js').RetentionRun[]} runs newest first
 */
export function renderRetention(runs) {
  if (runs.length === 0) {
    ui.usageRetention.replaceChildren();
    return;
  }
  const ordered = [...runs].reverse();
  // The plot sits right of the y axis's labels and above the x axis's.
  const width = 320;
  const height = 110;
  const left = 52;
  const bottom = 16;
  const plot = { w: width - left - 4, h: height - bottom - 8 };
  const max = Math.max(1, ...ordered.map((r) => r.bytesFreed));
  const step = plot.w / ordered.length;
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.setAttribute('class', 'chart');
  svg.setAttribute('aria-hidden', 'true');
  /** @param {string} tag @param {Record<string, string | number>} attrs @param {string} [text] */
  const node = (tag, attrs, text) => {
    const n = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) n.setAttribute(k, String(v));
    if (text !== undefined) n.textContent = text;
    svg.append(n);
    return n;
  };
  const base = height - bottom;
  node('line', { x1: left, y1: 8, x2: left, y2: base });
  node('line', { x1: left, y1: base, x2: width - 4, y2: base });
  node('text', { x: left - 4, y: 14, 'text-anchor': 'end' }, formatBytes(max));
  node('text', { x: left - 4, y: base, 'text-anchor': 'end' }, '0 B');
  node('text', { x: left, y: height - 3 }, formatTime(ordered[0].startedAt));
  if (ordered.length > 1)
    node(
      'text',
      { x: width - 4, y: height - 3, 'text-anchor': 'end' },
      formatTime(ordered[ordered.length - 1].startedAt),
    );
  ordered.forEach((run, i) => {
    const barHeight = run.bytesFreed > 0 ? Math.max(2, (run.bytesFreed / max) * plot.h) : 1;
    const rect = node('rect', {
      x: left + i * step + 1,
      y: base - barHeight,
      width: Math.max(1, step - 2),
      height: barHeight,
    });
    const title = document.createElementNS(SVG, 'title');
    const freed = `${formatBytes(run.bytesFreed)} freed, ${run.expiredRefs} expired, ${run.evictedRefs} evicted`;
    title.textContent = `${formatTime(run.startedAt)} (${run.trigger}): ${freed}`;
    rect.append(title);
  });
  // The same numbers as a table, a click away (and for screen readers, instead of the chart).
  const table = h('details', { class: 'retention-numbers' }, [
    h('summary', {}, ['The numbers']),
    h('table', { class: 'retention-table' }, [
      h('caption', { class: 'visually-hidden' }, ['Retention runs, newest first']),
      h(
        'tr',
        {},
        ['Started', 'Trigger', 'Freed', 'Expired', 'Evicted'].map((t) => h('th', { scope: 'col' }, [t])),
      ),
      ...runs.map((r) => {
        const cells = [
          formatTime(r.startedAt),
          r.trigger,
          formatBytes(r.bytesFreed),
          String(r.expiredRefs),
          String(r.evictedRefs),
        ];
        return h(
          'tr',
          {},
          cells.map((t) => h('td', {}, [t])),
        );
      }),
    ]),
  ]);
  const total = runs.reduce((n, r) => n + r.bytesFreed, 0);
  const lastRuns = `The last ${runs.length === 1 ? 'run' : `${runs.length} runs`}`;
  const newest = `${formatTime(runs[0].startedAt)} (${runs[0].trigger})`;
  ui.usageRetention.replaceChildren(
    h('h3', {}, ['Retention']),
    svg,
    h('p', { class: 'muted' }, [`${lastRuns} freed ${formatBytes(total)}; the newest ran ${newest}.`]),
    table,
  );
}
