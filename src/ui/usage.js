// @ts-check
/**
 * The usage panel (GET /v1/usage): bytes and counts against their limits for the scope in view, a
 * tenant-wide token's top sessions, and the latest retention runs. Redrawn shortly after changes.
 */
import { api } from './api.js';
import { h } from './dom.js';
import { formatBytes } from './format.js';
import { ui } from './page.js';
import { renderRetention } from './retention-chart.js';
import { state } from './state.js';

/** Fetches the report again half a second from now; calls in between fold into one. */
export function scheduleUsage() {
  clearTimeout(state.usageTimer);
  const generation = state.generation;
  state.usageTimer = setTimeout(async () => {
    try {
      const report = await (await api('/v1/usage?top=200')).json();
      if (generation === state.generation) renderUsage(report);
    } catch {
      // The panel keeps its last numbers.
    }
  }, 500);
}

/**
 * A labelled bar: `<meter>` when there is a limit.
 * @param {string} label @param {number} value @param {number | null} limit @param {(n: number) => string} format
 */
function bar(label, value, limit, format) {
  const text = limit ? `${format(value)} of ${format(limit)}` : `${format(value)} (no limit)`;
  const children = [h('span', { class: 'bar-label' }, [label]), ' '];
  if (limit) {
    const meter = h('meter', {
      min: '0',
      max: String(limit),
      value: String(value),
      high: String(limit * 0.8),
      optimum: '0',
      'aria-label': `${label}: ${text}`,
    });
    children.push(meter, ' ');
  }
  children.push(h('span', { class: 'bar-text' }, [text]));
  return h('div', { class: 'bar' }, children);
}

/**
 * Draws a report and keeps it for redraws. The top sessions are buttons carrying `data-session`;
 * session-choice.js handles their clicks.
 * @param {import('./types.js').UsageReport} report
 */
export function renderUsage(report) {
  state.usage = report;
  const sessions = report.sessions ?? [];
  ui.sessionIds.replaceChildren(...sessions.map((s) => h('option', { value: s.sessionId })));
  const session = state.bound ? String(state.claims?.session) : state.session;
  if (session) {
    const row = sessions.find((s) => s.sessionId === session);
    ui.usageScope.replaceChildren(
      h('h3', {}, [`Session ${session}`]),
      row ? bar('Bytes', row.bytes, row.limitBytes, formatBytes) : h('p', { class: 'muted' }, ['No live artifacts.']),
      ...(row ? [bar('Artifacts', row.count, row.limitCount, (n) => n.toLocaleString())] : []),
    );
  } else {
    ui.usageScope.replaceChildren(
      ...(report.tenants ?? [])
        .slice(0, 5)
        .map((t) =>
          h('div', {}, [
            h('h3', {}, [`Tenant ${t.tenantId}`]),
            bar('Bytes', t.bytes, t.limitBytes, formatBytes),
            bar('Artifacts', t.count, null, (n) => n.toLocaleString()),
          ]),
        ),
    );
  }
  // Tenant-wide tokens see their top sessions by bytes; a click looks at one.
  if (!state.bound && sessions.length > 0) {
    const top = sessions.slice(0, 10);
    const multiTenant = new Set(top.map((s) => s.tenantId)).size > 1;
    ui.usageTop.replaceChildren(
      h('h3', {}, ['Top sessions by bytes']),
      h(
        'ol',
        { class: 'top-sessions' },
        top.map((s) => {
          const label = multiTenant ? `${s.tenantId} / ${s.sessionId}` : s.sessionId;
          const pick = h('button', { type: 'button', class: 'linkish', 'data-session': s.sessionId }, [label]);
          const count = h('span', { class: 'muted' }, [` ${s.count.toLocaleString()} artifacts`]);
          return h('li', {}, [pick, bar('', s.bytes, s.limitBytes, formatBytes), count]);
        }),
      ),
    );
  } else {
    ui.usageTop.replaceChildren();
  }
  renderRetention(report.retentionRuns ?? []);
}
