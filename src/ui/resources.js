// @ts-check
/**
 * The Resources tab: the MCP servers behind the service's gateway (GET /v1/mcp/servers), one server's
 * resources page by page, and one resource read through the gateway. Short text shows inline; what
 * the read stored as artifacts opens in the artifact preview beside it. A resource.updated event for
 * the resource on screen says so, and "Read again" reads it past the cache. The tab shows only when
 * the service has a gateway.
 */
import { api, SignedOut } from './api.js';
import { keyOf, nameOf } from './artifacts.js';
import { h, timeEl } from './dom.js';
import { formatBytes, formatTime } from './format.js';
import { onResourceUpdated, onScopeStart, scopeQuery, upsert } from './live-list.js';
import { ui } from './page.js';
import { showPreview } from './preview.js';
import { state } from './state.js';
import { render } from './table.js';

/** @typedef {import('./types.js').McpServer} McpServer */
/** @typedef {import('./types.js').McpResource} McpResource */
/** @typedef {import('./types.js').ResourceRead} ResourceRead */

const view = {
  /** the token the gateway was last looked for with */
  checkedFor: '',
  /** @type {string | null} the server whose resources are listed */
  server: null,
  /** @type {string | null} */
  cursor: null,
  /** @type {{ server: string, uri: string, name: string } | null} the resource on screen */
  reading: null,
  /** bumped by each listing and each read: an answer to an older one is dropped */
  listSeq: 0,
  readSeq: 0,
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  poll: undefined,
};

/** @param {Error} err */
const failed = (err) => !(err instanceof SignedOut);
/** @param {string} server */
const serverPath = (server) => `/v1/mcp/servers/${encodeURIComponent(server)}`;

/** Shows one tab's panel; the other's is hidden but keeps its state. @param {'artifacts' | 'resources'} name */
function showTab(name) {
  const resources = name === 'resources';
  /** @type {[HTMLButtonElement, HTMLElement, boolean][]} */
  const tabs = [
    [ui.tabArtifacts, ui.artifactsView, !resources],
    [ui.tabResources, ui.resourcesView, resources],
  ];
  for (const [tab, panel, on] of tabs) {
    tab.setAttribute('aria-selected', String(on));
    tab.tabIndex = on ? 0 : -1;
    panel.hidden = !on;
  }
  if (resources) loadServers();
}
ui.tabArtifacts.addEventListener('click', () => showTab('artifacts'));
ui.tabResources.addEventListener('click', () => showTab('resources'));
// The tabs pattern: one tab stop, arrow keys move between the tabs.
ui.tabs.addEventListener('keydown', (event) => {
  if (event.key !== 'ArrowLeft' && event.key !== 'ArrowRight') return;
  const next = event.target === ui.tabArtifacts ? ui.tabResources : ui.tabArtifacts;
  showTab(next === ui.tabResources ? 'resources' : 'artifacts');
  next.focus();
});

/**
 * Shows the tabs when the gateway has servers open to this tenant (a service without a gateway
 * answers an empty list). A new token starts the tab over.
 */
async function checkGateway() {
  const token = state.token;
  if (view.checkedFor === token) return;
  view.checkedFor = token;
  view.server = null;
  ui.serverResources.hidden = true;
  const present = (await loadServers()) > 0;
  if (token !== state.token) return;
  ui.tabs.hidden = !present;
  ui.tabs.dataset.gateway = present ? 'yes' : 'no';
  if (!present) showTab('artifacts');
}

/** Lists the servers; how many there are (0 when the service did not answer). While one is starting, asks again shortly. */
async function loadServers() {
  clearTimeout(view.poll);
  const generation = state.generation;
  try {
    const { servers } = /** @type {{ servers: McpServer[] }} */ (await (await api('/v1/mcp/servers')).json());
    if (generation !== state.generation) return 0;
    ui.serversError.textContent = '';
    renderServers(servers);
    if (!ui.resourcesView.hidden && servers.some((s) => s.state === 'starting')) {
      view.poll = setTimeout(loadServers, 2000);
    }
    return servers.length;
  } catch (err) {
    if (generation === state.generation && failed(/** @type {Error} */ (err))) {
      ui.serversError.textContent = `Could not list the MCP servers: ${/** @type {Error} */ (err).message}`;
    }
    return 0;
  }
}
ui.serversRefresh.addEventListener('click', () => loadServers());

/** One item per server: its state, the error of an unavailable one, and a button for one with resources. @param {McpServer[]} servers */
function renderServers(servers) {
  if (servers.length === 0) {
    ui.servers.replaceChildren(
      h('li', { class: 'muted' }, ['No MCP server behind the gateway is open to this tenant.']),
    );
    return;
  }
  ui.servers.replaceChildren(
    ...servers.map((s) => {
      const name = s.resources
        ? h('button', { type: 'button', class: 'linkish', 'data-server': s.name }, [s.name])
        : h('strong', {}, [s.name]);
      if (s.name === view.server) name.setAttribute('aria-current', 'true');
      const offers = s.resources ? (s.subscribe ? 'resources, with updates' : 'resources') : 'no resources';
      const about = [s.serverInfo && `${s.serverInfo.name} ${s.serverInfo.version}`, `${s.tools} tools`, offers];
      return h('li', { 'data-server': s.name, 'data-state': s.state }, [
        name,
        ' ',
        h('span', { class: 'state' }, [s.state]),
        h('div', { class: 'muted' }, [about.filter(Boolean).join(' · ')]),
        ...(s.error ? [h('div', { class: 'error' }, [s.error])] : []),
      ]);
    }),
  );
}

/** Lists a server's resources from the first page. @param {string} server */
function pickServer(server) {
  view.server = server;
  view.cursor = null;
  for (const b of ui.servers.querySelectorAll('button[data-server]')) {
    if (!(b instanceof HTMLElement)) continue;
    if (b.dataset.server === server) b.setAttribute('aria-current', 'true');
    else b.removeAttribute('aria-current');
  }
  ui.serverResources.hidden = false;
  ui.resourcesOf.textContent = `Resources of ${server}`;
  ui.resourceList.replaceChildren();
  ui.resourcesEmpty.hidden = true;
  loadResources();
}
ui.servers.addEventListener('click', (event) => {
  const pick = event.target instanceof Element ? event.target.closest('button[data-server]') : null;
  if (pick instanceof HTMLElement && pick.dataset.server) pickServer(pick.dataset.server);
});

/** The next page of the picked server's resources, as the server pages them. */
async function loadResources() {
  const server = view.server;
  if (!server) return;
  const seq = ++view.listSeq;
  const cursor = view.cursor ? `?cursor=${encodeURIComponent(view.cursor)}` : '';
  ui.resourcesMore.disabled = true;
  try {
    const res = await api(`${serverPath(server)}/resources${cursor}`);
    const page = /** @type {{ resources: McpResource[], nextCursor?: string }} */ (await res.json());
    if (seq !== view.listSeq) return;
    ui.resourceList.append(...page.resources.map(resourceItem));
    view.cursor = page.nextCursor ?? null;
    ui.resourcesError.textContent = '';
    ui.resourcesEmpty.hidden = ui.resourceList.childElementCount > 0;
  } catch (err) {
    if (seq === view.listSeq && failed(/** @type {Error} */ (err))) {
      ui.resourcesError.textContent = `Could not list its resources: ${/** @type {Error} */ (err).message}`;
    }
  } finally {
    if (seq === view.listSeq) {
      ui.resourcesMore.disabled = false;
      ui.resourcesMore.hidden = view.cursor === null;
    }
  }
}
ui.resourcesMore.addEventListener('click', () => loadResources());

/** @param {McpResource} r */
function resourceItem(r) {
  const about = [r.mimeType, r.size === undefined ? '' : formatBytes(r.size), r.uri].filter(Boolean).join(' · ');
  return h('li', {}, [
    h('button', { type: 'button', class: 'linkish', 'data-uri': r.uri }, [r.title || r.name]),
    h('div', { class: 'muted' }, [about]),
    ...(r.description ? [h('div', {}, [r.description])] : []),
  ]);
}
ui.resourceList.addEventListener('click', (event) => {
  const pick = event.target instanceof Element ? event.target.closest('button[data-uri]') : null;
  if (pick instanceof HTMLElement && pick.dataset.uri && view.server) {
    read(view.server, pick.dataset.uri, false, pick.textContent ?? pick.dataset.uri);
  }
});
ui.readUriForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const uri = ui.readUri.value.trim();
  if (uri && view.server) read(view.server, uri, false, uri);
});

/**
 * Reads a resource into the scope in view (the session a tenant-wide token looks at, as uploads do),
 * so its resource.updated events come on the same stream as the list's.
 * @param {string} server @param {string} uri @param {boolean} fresh past the gateway's cache @param {string} name
 */
async function read(server, uri, fresh, name) {
  const seq = ++view.readSeq;
  const generation = state.generation;
  view.reading = { server, uri, name };
  ui.reading.hidden = false;
  ui.readingTitle.textContent = name;
  ui.readingFacts.replaceChildren();
  ui.readingUpdated.textContent = '';
  ui.readingBody.replaceChildren(h('p', { class: 'muted' }, ['Reading…']));
  const q = scopeQuery();
  q.set('uri', uri);
  if (fresh) q.set('fresh', 'true');
  try {
    const result = /** @type {ResourceRead} */ (await (await api(`${serverPath(server)}/resources/read?${q}`)).json());
    if (seq === view.readSeq && generation === state.generation) showRead(server, result);
  } catch (err) {
    if (seq === view.readSeq && generation === state.generation && failed(/** @type {Error} */ (err))) {
      ui.readingBody.replaceChildren(
        h('p', { class: 'error' }, [`Could not read it: ${/** @type {Error} */ (err).message}`]),
      );
    }
  }
}
ui.reread.addEventListener('click', () => {
  if (view.reading) read(view.reading.server, view.reading.uri, true, view.reading.name);
});

/**
 * What a read gave: its text blocks, inline text as text (never markup), and each stored artifact
 * as a link to it in the Artifacts tab; the first opens in the preview.
 * @param {string} server @param {ResourceRead} result
 */
function showRead(server, result) {
  /** @type {[string, Node | string][]} */
  const facts = [
    ['Server', server],
    ['URI', result.uri],
    ['Read', timeEl(new Date().toISOString())],
    ['From the cache', result.fromCache ? 'yes' : 'no'],
  ];
  ui.readingFacts.replaceChildren(...facts.flatMap(([k, v]) => [h('dt', {}, [k]), h('dd', {}, [v])]));
  /** @type {Node[]} */
  const body = [];
  for (const block of result.content) {
    if (block.type === 'text') {
      // What a model is told of the read (a summary of what was stored): the links below say it too.
      body.push(h('p', { class: 'muted' }, [block.text ?? '']));
    } else if (block.type === 'resource' && typeof block.resource?.text === 'string') {
      const pre = h('pre', { class: 'text', tabindex: '0', 'aria-label': `Text of ${block.resource.uri}` });
      pre.textContent = block.resource.text;
      body.push(pre);
    } else if (!(block.type === 'resource_link' && block.uri?.startsWith('artifact://'))) {
      body.push(h('p', { class: 'muted' }, [`(a ${block.type} block the page does not show)`]));
    }
  }
  for (const ref of result.artifacts) {
    upsert(ref, true);
    const link = h('button', { type: 'button', class: 'linkish', 'data-key': keyOf(ref), title: 'Show in Artifacts' }, [
      ref.id,
    ]);
    const about = ` · ${nameOf(ref)}, ${ref.mimeType}, ${formatBytes(ref.sizeBytes)}`;
    body.push(h('p', { class: 'stored' }, ['Stored as artifact ', link, about]));
  }
  ui.readingBody.replaceChildren(...body);
  if (result.artifacts.length > 0) {
    render();
    showPreview(keyOf(result.artifacts[0]));
  }
}
ui.readingBody.addEventListener('click', (event) => {
  const link = event.target instanceof Element ? event.target.closest('button[data-key]') : null;
  if (!(link instanceof HTMLElement) || !link.dataset.key) return;
  showTab('artifacts');
  showPreview(link.dataset.key);
});

onResourceUpdated(({ resource, at }) => {
  const on = view.reading;
  if (!on || ui.reading.hidden || on.server !== resource.server || on.uri !== resource.uri) return;
  ui.readingUpdated.textContent = `It changed upstream at ${formatTime(at)}: read it again for the new content.`;
});

// A read belongs to its scope: another one's stream will not carry its updates.
onScopeStart(() => {
  view.readSeq++;
  view.reading = null;
  ui.reading.hidden = true;
  checkGateway();
});
