// @ts-check
/** The usage panel's retention part: what the latest retention runs freed (admins see them). */
import { h } from './dom.js';
import { formatBytes, formatTime } from './format.js';
import { ui } from './page.js';

const SVG = 'http://www.w3.org/2000/svg';

/**
 * The latest retention runs as a small bar chart of bytes freed, oldest on the left, with the same
 * numbers in a table for screen readers. Our own SVG, built node by node.
 * @param {import('./types.js').RetentionRun[]} runs newest first
 */
export function renderRetention(runs) {
  if (runs.length === 0) {
    ui.usageRetention.replaceChildren();
    return;
  }
  const ordered = [...runs].reverse();
  const width = 300;
  const height = 80;
  const max = Math.max(1, ...ordered.map((r) => r.bytesFreed));
  const step = width / ordered.length;
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.setAttribute('class', 'chart');
  svg.setAttribute('aria-hidden', 'true');
  ordered.forEach((run, i) => {
    const barHeight = run.bytesFreed > 0 ? Math.max(2, (run.bytesFreed / max) * (height - 4)) : 1;
    const rect = document.createElementNS(SVG, 'rect');
    rect.setAttribute('x', String(i * step + 1));
    rect.setAttribute('y', String(height - barHeight));
    rect.setAttribute('width', String(Math.max(1, step - 2)));
    rect.setAttribute('height', String(barHeight));
    const title = document.createElementNS(SVG, 'title');
    const freed = `${formatBytes(run.bytesFreed)} freed, ${run.expiredRefs} expired, ${run.evictedRefs} evicted`;
    title.textContent = `${formatTime(run.startedAt)} (${run.trigger}): ${freed}`;
    rect.append(title);
    svg.append(rect);
  });
  // Wrapped: a table itself ignores the 1px box that hides it, and would widen the page.
  const table = h('div', { class: 'visually-hidden' }, [
    h('table', {}, [
      h('caption', {}, ['Retention runs']),
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
