// @ts-check
/**
 * The artifact browser: a client of /v1 like any other. It keeps the token in this tab's
 * sessionStorage and sends it only as an Authorization header; downloads and previews use signed
 * URLs. Stored bytes are untrusted, so nothing from them is ever parsed as markup here: images go in
 * <img>, PDFs in a frame whose response carries `Content-Security-Policy: sandbox`, text through
 * textContent.
 */
import { createParser } from './eventsource-parser.js';

/**
 * @typedef {{ tenantId: string, userId?: string, sessionId?: string, traceId?: string }} Scope
 * @typedef {{ id: string, mimeType: string, sizeBytes: number, sha256: string, filename?: string | null,
 *   namespace?: string | null, scope: Scope, source?: { tool?: string } | null, createdAt: string,
 *   expiresAt?: string | null }} ArtifactRef
 * @typedef {{ ref: ArtifactRef, gone?: { type: string, at: string }, fresh?: boolean }} Entry
 * @typedef {{ url: string, fetchMode: 'direct' | 'proxy', urlExpiresAt: string }} Link
 * @typedef {{ tenantId: string, bytes: number, count: number }} UsageRow
 * @typedef {{ at: string, tenants: (UsageRow & { limitBytes: number | null })[],
 *   sessions: (UsageRow & { sessionId: string, limitBytes: number, limitCount: number })[],
 *   retentionRuns: { startedAt: string, trigger: string, durationMs: number, expiredRefs: number,
 *     evictedRefs: number, blobsCollected: number, bytesFreed: number }[] }} UsageReport
 */

const TOKEN_KEY = 'artifact-store.token';
/** Text previews read at most this much (a Range request); the rest is a download away. */
const TEXT_PREVIEW_BYTES = 256 * 1024;
const PAGE_SIZE = 200;

/** @param {string} id */
function el(id) {
  const node = document.getElementById(id);
  if (!node) throw new Error(`#${id} is missing from the page`);
  return node;
}
/** @template {HTMLElement} T @param {string} id @param {new () => T} type @returns {T} */
function elOf(id, type) {
  const node = el(id);
  if (!(node instanceof type)) throw new Error(`#${id} is not a ${type.name}`);
  return node;
}
/**
 * A new element with text content (never markup) and attributes.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag @param {Record<string, string>} [attrs] @param {(Node | string)[]} [children]
 * @returns {HTMLElementTagNameMap[K]}
 */
function h(tag, attrs = {}, children = []) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  node.append(...children);
  return node;
}

const ui = {
  who: el('who'),
  signout: elOf('signout', HTMLButtonElement),
  signin: el('signin'),
  signinForm: elOf('signin-form', HTMLFormElement),
  tokenInput: elOf('token', HTMLTextAreaElement),
  signinError: el('signin-error'),
  browser: el('browser'),
  scopeLabel: el('scope-label'),
  sessionField: el('session-field'),
  session: elOf('session', HTMLInputElement),
  sessionIds: el('session-ids'),
  filter: elOf('filter', HTMLInputElement),
  kind: elOf('kind', HTMLSelectElement),
  sort: elOf('sort', HTMLSelectElement),
  live: el('live'),
  drop: el('drop'),
  dropScope: el('drop-scope'),
  choose: elOf('choose', HTMLButtonElement),
  file: elOf('file', HTMLInputElement),
  uploads: el('uploads'),
  table: elOf('list', HTMLTableElement),
  rows: el('rows'),
  empty: el('empty'),
  listError: el('list-error'),
  more: elOf('more', HTMLButtonElement),
  preview: el('preview'),
  previewTitle: el('preview-title'),
  previewClose: elOf('preview-close', HTMLButtonElement),
  previewFacts: el('preview-facts'),
  previewBody: el('preview-body'),
  download: elOf('download', HTMLButtonElement),
  downloadNote: el('download-note'),
  usageScope: el('usage-scope'),
  usageTop: el('usage-top'),
  usageRetention: el('usage-retention'),
};

const state = {
  token: '',
  /** @type {Record<string, unknown> | null} the JWT's claims, for display and scope; null for API keys */
  claims: null,
  /** a session-bound token: it sees its session only */
  bound: false,
  /** the session a tenant-wide token is looking at ('' = all) */
  session: '',
  /** @type {Map<string, Entry>} */
  entries: new Map(),
  /** @type {Map<string, { type: string, at: string }>} removals seen before the listing had the row */
  removed: new Map(),
  /** @type {string | null} */
  cursor: null,
  /** @type {string | null} the previewed row */
  selected: null,
  /** @type {string | null} the row keyboard focus sits on */
  focused: null,
  /** bumped whenever the scope changes or the user signs out: stale responses are dropped */
  generation: 0,
  /** @type {AbortController | null} */
  stream: null,
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  usageTimer: undefined,
  /** @type {UsageReport | null} the last usage report, redrawn at once when the session changes */
  usage: null,
};

class SignedOut extends Error {}

/**
 * A call to /v1 with the token. Errors carry the service's own message ({ code, message }); a 401
 * signs out with a message saying what to do.
 * @param {string} path @param {RequestInit} [init]
 */
async function api(path, init = {}) {
  const headers = new Headers(init.headers);
  headers.set('Authorization', `Bearer ${state.token}`);
  const res = await fetch(path, { ...init, headers });
  if (res.ok) return res;
  const body = await res.json().catch(() => null);
  const message = body && typeof body.message === 'string' ? body.message : `${res.status} ${res.statusText}`;
  if (res.status === 401) {
    signOut(`The service refused the token (${message}) Paste a new one.`);
    throw new SignedOut(message);
  }
  throw new Error(message);
}

// ---------------------------------------------------------------------------------------------
// Sign-in

/** @param {string} token @returns {Record<string, unknown> | null} */
function decodeClaims(token) {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  try {
    const json = atob(parts[1].replace(/-/g, '+').replace(/_/g, '/'));
    const claims = JSON.parse(new TextDecoder().decode(Uint8Array.from(json, (c) => c.charCodeAt(0))));
    return claims && typeof claims === 'object' ? claims : null;
  } catch {
    return null;
  }
}

/** @param {string} token */
async function signIn(token) {
  state.token = token;
  state.claims = decodeClaims(token);
  state.bound = typeof state.claims?.session === 'string';
  // One call proves the token before anything is shown.
  const report = /** @type {UsageReport} */ (await (await api('/v1/usage?top=200')).json());
  sessionStorage.setItem(TOKEN_KEY, token);
  ui.signin.hidden = true;
  ui.browser.hidden = false;
  ui.signout.hidden = false;
  ui.who.hidden = false;
  ui.who.textContent = describeToken();
  ui.sessionField.hidden = state.bound;
  if (state.bound) state.session = '';
  ui.session.value = state.session;
  renderUsage(report);
  startScope();
}

function describeToken() {
  const c = state.claims;
  if (!c) return 'API key';
  const parts = [`tenant ${String(c.tenant ?? '?')}`];
  if (typeof c.session === 'string') parts.push(`session ${c.session}`);
  if (typeof c.trace === 'string') parts.push(`trace ${c.trace}`);
  if (Array.isArray(c.perms)) parts.push(c.perms.join(', '));
  if (typeof c.exp === 'number') parts.push(`until ${formatTime(new Date(c.exp * 1000).toISOString())}`);
  return parts.join(' · ');
}

/** @param {string} [message] */
function signOut(message = '') {
  state.generation++;
  state.stream?.abort();
  state.stream = null;
  state.token = '';
  sessionStorage.removeItem(TOKEN_KEY);
  ui.browser.hidden = true;
  ui.signout.hidden = true;
  ui.who.hidden = true;
  ui.signin.hidden = false;
  ui.signinError.textContent = message;
  ui.tokenInput.value = '';
  ui.tokenInput.focus();
}

ui.signinForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const token = ui.tokenInput.value.trim().replace(/^Bearer\s+/i, '');
  if (!token) return;
  ui.signinError.textContent = '';
  signIn(token).catch((err) => {
    if (!(err instanceof SignedOut)) ui.signinError.textContent = `Could not sign in: ${err.message}`;
  });
});
ui.signout.addEventListener('click', () => signOut());

// ---------------------------------------------------------------------------------------------
// The scope: listing plus live events

function scopeQuery() {
  const q = new URLSearchParams();
  if (!state.bound && state.session) q.set('session', state.session);
  return q;
}

function startScope() {
  const generation = ++state.generation;
  state.stream?.abort();
  state.entries.clear();
  state.removed.clear();
  state.cursor = null;
  state.focused = null;
  closePreview(false);
  ui.listError.textContent = '';
  const scope = state.bound ? `session ${String(state.claims?.session)}` : state.session ? `session ${state.session}` : 'all sessions';
  ui.scopeLabel.textContent = `· ${scope}`;
  ui.dropScope.textContent = state.bound || state.session ? ` in ${scope}` : ' (no session)';
  render();
  // The stream first: once it reports its position, the listing cannot miss a change made in between
  // (anything later arrives as an event; doubles collapse by key).
  const positioned = follow(generation);
  Promise.race([positioned, new Promise((ok) => setTimeout(ok, 3000))]).then(() => loadPage(generation));
}

/** @param {number} generation */
async function loadPage(generation) {
  const q = scopeQuery();
  q.set('limit', String(PAGE_SIZE));
  if (state.cursor) q.set('cursor', state.cursor);
  ui.more.disabled = true;
  try {
    const page = /** @type {{ items: ArtifactRef[], nextCursor?: string }} */ (await (await api(`/v1/artifacts?${q}`)).json());
    if (generation !== state.generation) return;
    for (const ref of page.items) upsert(ref, false);
    state.cursor = page.nextCursor ?? null;
    ui.listError.textContent = '';
  } catch (err) {
    if (generation === state.generation && !(err instanceof SignedOut)) ui.listError.textContent = `Could not list artifacts: ${/** @type {Error} */ (err).message}`;
  } finally {
    ui.more.disabled = false;
    if (generation === state.generation) render();
  }
}
ui.more.addEventListener('click', () => loadPage(state.generation));

/** One row per reference: the same id may sit in several sessions. @param {ArtifactRef} ref */
const keyOf = (ref) => JSON.stringify([ref.id, ref.scope.tenantId, ref.scope.userId ?? '', ref.scope.sessionId ?? '', ref.scope.traceId ?? '']);

/** @param {ArtifactRef} ref @param {boolean} fresh */
function upsert(ref, fresh) {
  const key = keyOf(ref);
  const before = state.entries.get(key);
  const gone = state.removed.get(key);
  state.entries.set(key, { ref, ...(gone ? { gone } : {}), fresh: fresh || Boolean(before?.fresh) });
}

/**
 * Follows /v1/events for this scope until the scope changes. EventSource cannot send an
 * Authorization header, so this reads the stream with fetch and parses it with eventsource-parser,
 * resuming from the last position after a drop. Resolves once the stream has reported its position.
 * @param {number} generation
 */
function follow(generation) {
  /** @type {(v?: unknown) => void} */
  let positioned = () => {};
  const ready = new Promise((ok) => (positioned = ok));
  (async () => {
    /** @type {string | null} */
    let lastId = null;
    let delay = 1000;
    while (generation === state.generation) {
      const controller = new AbortController();
      state.stream = controller;
      try {
        const q = scopeQuery();
        if (lastId) q.set('lastEventId', lastId);
        const res = await api(`/v1/events?${q}`, { signal: controller.signal, headers: { Accept: 'text/event-stream' } });
        if (!res.body) throw new Error('no stream');
        ui.live.textContent = 'live';
        ui.live.dataset.state = 'live';
        delay = 1000;
        const parser = createParser({
          onEvent(event) {
            if (event.id) lastId = event.id;
            positioned();
            if (!event.event || !event.data || generation !== state.generation) return;
            onArtifactEvent(event.event, JSON.parse(event.data));
          },
        });
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          parser.feed(value);
        }
      } catch (err) {
        if (err instanceof SignedOut || controller.signal.aborted) return;
        ui.live.textContent = 'reconnecting…';
        ui.live.dataset.state = 'down';
        await new Promise((ok) => setTimeout(ok, delay));
        delay = Math.min(delay * 2, 15_000);
      }
    }
  })();
  return ready;
}

/** @param {string} type @param {{ ref: ArtifactRef, at: string }} data */
function onArtifactEvent(type, data) {
  if (type === 'artifact.stored') {
    upsert(data.ref, true);
  } else if (type === 'artifact.deleted' || type === 'artifact.evicted' || type === 'artifact.expired') {
    const key = keyOf(data.ref);
    const gone = { type: type.slice('artifact.'.length), at: data.at };
    state.removed.set(key, gone);
    const entry = state.entries.get(key);
    if (entry) entry.gone = gone;
    if (state.selected === key) showPreview(key);
  } else {
    return;
  }
  scheduleRender();
  scheduleUsage();
}

let renderQueued = false;
/** Events come in bursts (a retention run evicts hundreds): one redraw per frame. */
function scheduleRender() {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(() => {
    renderQueued = false;
    render();
  });
}

// ---------------------------------------------------------------------------------------------
// The table

const TEXT_TYPES = /^(text\/|application\/(json|x-ndjson|xml|yaml|x-yaml|toml|csv|javascript|ecmascript|sql|graphql)\b|application\/[\w.+-]+\+(json|xml)\b)/i;

/** What kind of preview a type gets. @param {string} mime */
function previewKind(mime) {
  const m = mime.split(';')[0].trim().toLowerCase();
  if (m.startsWith('image/')) return 'image';
  if (m === 'application/pdf') return 'pdf';
  if (m.startsWith('audio/')) return 'audio';
  if (m.startsWith('video/')) return 'video';
  if (TEXT_TYPES.test(m)) return 'text';
  return 'other';
}

/** @param {Entry} entry */
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
  return [r.filename, r.id, r.mimeType, r.namespace, r.source?.tool, r.scope.sessionId].some((v) => typeof v === 'string' && v.toLowerCase().includes(q));
}

/** Text that may wrap after "/" and "." (mime types), rather than anywhere. @param {string} text */
function breakable(text) {
  return text.split(/(?<=[/.])/).flatMap((part, i) => (i === 0 ? [part] : [document.createElement('wbr'), part]));
}

/** The table row of a key, if it is shown. @param {string} key */
function rowOf(key) {
  for (const tr of ui.rows.children) if (tr instanceof HTMLTableRowElement && tr.dataset.key === key) return tr;
  return undefined;
}

/** @param {ArtifactRef} r */
const nameOf = (r) => r.filename || r.id;

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
  return [...state.entries.entries()].filter(([, e]) => matches(e)).sort(([, a], [, b]) => sign * compare(a.ref, b.ref));
}

function render() {
  const rows = sortedVisible();
  const focusedBefore = document.activeElement instanceof HTMLTableRowElement && ui.rows.contains(document.activeElement);
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
      h('td', { class: 'expires' }, entry.gone ? [`${entry.gone.type} `, timeEl(entry.gone.at)] : [r.expiresAt ? timeEl(r.expiresAt) : 'never']),
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
    if (th instanceof HTMLElement) th.setAttribute('aria-sort', th.dataset.sort === field ? (dir === 'desc' ? 'descending' : 'ascending') : 'none');
  }
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
  if (![...ui.sort.options].some((o) => o.value === value)) ui.sort.append(h('option', { value }, [`${th.dataset.sort}, ${next === 'asc' ? 'ascending' : 'descending'}`]));
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

// Keyboard: one tab stop for the table; arrows, Home and End move; Enter or Space opens.
ui.rows.addEventListener('keydown', (event) => {
  const tr = event.target instanceof HTMLTableRowElement ? event.target : null;
  if (!tr?.dataset.key) return;
  const all = /** @type {HTMLTableRowElement[]} */ ([...ui.rows.querySelectorAll('tr[data-key]')]);
  const at = all.indexOf(tr);
  /** @type {HTMLTableRowElement | undefined} */
  let next;
  switch (event.key) {
    case 'ArrowDown': next = all[at + 1]; break;
    case 'ArrowUp': next = all[at - 1]; break;
    case 'Home': next = all[0]; break;
    case 'End': next = all[all.length - 1]; break;
    case 'Enter':
    case ' ':
      event.preventDefault();
      showPreview(tr.dataset.key);
      return;
    default: return;
  }
  event.preventDefault();
  if (!next?.dataset.key) return;
  tr.tabIndex = -1;
  next.tabIndex = 0;
  state.focused = next.dataset.key;
  next.focus();
});

// ---------------------------------------------------------------------------------------------
// Preview and download

/**
 * A signed link for one artifact: no token in it. `direct` comes from S3 or the CDN where the store
 * can presign and falls back to the service otherwise; fetchMode says which it is.
 * @param {string} id @param {'inline' | 'attachment'} disposition @param {'direct' | 'proxy'} mode
 * @returns {Promise<Link>}
 */
async function signedLink(id, disposition, mode) {
  const res = await api(`/v1/artifacts/${encodeURIComponent(id)}/url`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ mode, disposition }),
  });
  return res.json();
}

/** @param {string} key */
async function showPreview(key) {
  const entry = state.entries.get(key);
  if (!entry) return;
  const r = entry.ref;
  const opening = state.selected !== key;
  state.selected = key;
  for (const tr of ui.rows.querySelectorAll('tr[aria-selected]')) tr.removeAttribute('aria-selected');
  rowOf(key)?.setAttribute('aria-selected', 'true');
  ui.preview.hidden = false;
  ui.previewTitle.textContent = nameOf(r);
  /** @type {[string, Node | string][]} */
  const facts = [
    ['Type', r.mimeType],
    ['Size', `${formatBytes(r.sizeBytes)} (${r.sizeBytes.toLocaleString()} bytes)`],
    ['Id', r.id],
    ['sha256', r.sha256],
    ['Namespace / tool', [r.namespace, r.source?.tool].filter(Boolean).join(' / ') || '—'],
    ['Scope', [r.scope.sessionId && `session ${r.scope.sessionId}`, r.scope.traceId && `trace ${r.scope.traceId}`, r.scope.userId && `user ${r.scope.userId}`].filter(Boolean).join(', ') || `tenant ${r.scope.tenantId}`],
    ['Created', timeEl(r.createdAt)],
    ['Expires', r.expiresAt ? timeEl(r.expiresAt) : 'never'],
  ];
  ui.previewFacts.replaceChildren(...facts.flatMap(([k, v]) => [h('dt', {}, [k]), h('dd', {}, [v])]));
  ui.downloadNote.textContent = '';
  ui.download.hidden = Boolean(entry.gone);
  ui.download.dataset.key = key;
  if (opening) ui.previewTitle.focus();
  if (entry.gone) {
    ui.previewBody.replaceChildren(h('p', { class: 'card' }, [`This reference was ${entry.gone.type} at ${formatTime(entry.gone.at)}; its bytes are no longer served to this scope.`]));
    return;
  }
  ui.previewBody.replaceChildren(h('p', { class: 'muted' }, ['Loading preview…']));
  try {
    const body = await previewOf(r);
    if (state.selected === key) ui.previewBody.replaceChildren(body);
  } catch (err) {
    if (state.selected === key && !(err instanceof SignedOut)) ui.previewBody.replaceChildren(h('p', { class: 'error' }, [`No preview: ${/** @type {Error} */ (err).message}`]));
  }
}

/** @param {ArtifactRef} r @returns {Promise<Node>} */
async function previewOf(r) {
  const kind = previewKind(r.mimeType);
  const name = nameOf(r);
  switch (kind) {
    case 'image': {
      // SVG too: in <img> its scripts never run.
      const link = await signedLink(r.id, 'inline', 'direct');
      return h('img', { src: link.url, alt: `Preview of ${name}`, class: 'media' });
    }
    case 'pdf': {
      // The browser's own viewer. The link's response carries `Content-Security-Policy: sandbox`, so
      // the document runs in an opaque origin; an iframe sandbox attribute would stop the viewer itself.
      const link = await signedLink(r.id, 'inline', 'direct');
      return h('iframe', { src: link.url, title: `PDF preview of ${name}`, class: 'pdf' });
    }
    case 'audio':
    case 'video': {
      const link = await signedLink(r.id, 'inline', 'direct');
      const player = h(kind, { src: link.url, controls: '', preload: 'metadata', class: 'media' });
      player.append(`Your browser cannot play ${r.mimeType}; download it instead.`);
      return player;
    }
    case 'text':
      return textPreview(r);
    default:
      return h('div', { class: 'card' }, [
        h('p', {}, [h('strong', {}, [r.mimeType]), ` · ${formatBytes(r.sizeBytes)}`]),
        h('p', { class: 'muted' }, ['No preview for this type. Download it to open it with its own program.']),
      ]);
  }
}

/**
 * The first TEXT_PREVIEW_BYTES through a proxy link (same origin, so fetch may read it), shown as
 * text, JSON pretty-printed when it is whole. @param {ArtifactRef} r
 */
async function textPreview(r) {
  if (r.sizeBytes === 0) return h('p', { class: 'muted' }, ['(empty)']);
  const link = await signedLink(r.id, 'inline', 'proxy');
  const res = await fetch(link.url, { headers: { Range: `bytes=0-${TEXT_PREVIEW_BYTES - 1}` }, credentials: 'omit' });
  if (!res.ok) throw new Error(`the download answered ${res.status}`);
  const bytes = new Uint8Array(await res.arrayBuffer());
  const whole = bytes.byteLength >= r.sizeBytes;
  let text = new TextDecoder('utf-8').decode(bytes, { stream: !whole });
  if (whole && /json/i.test(r.mimeType)) {
    try {
      text = JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      // Not valid JSON after all: shown as it is.
    }
  }
  const pre = h('pre', { class: 'text', tabindex: '0', 'aria-label': `Text of ${nameOf(r)}` });
  pre.textContent = text;
  const out = document.createDocumentFragment();
  out.append(pre);
  if (!whole) out.append(h('p', { class: 'muted' }, [`Showing the first ${formatBytes(bytes.byteLength)} of ${formatBytes(r.sizeBytes)}. Download for the rest.`]));
  return out;
}

/** @param {boolean} restoreFocus */
function closePreview(restoreFocus) {
  const key = state.selected;
  state.selected = null;
  ui.preview.hidden = true;
  // Stops media and frees the frame.
  ui.previewBody.replaceChildren();
  for (const tr of ui.rows.querySelectorAll('tr[aria-selected]')) tr.removeAttribute('aria-selected');
  if (restoreFocus && key) {
    rowOf(key)?.focus();
  }
}
ui.previewClose.addEventListener('click', () => closePreview(true));
document.addEventListener('keydown', (event) => {
  if (event.key === 'Escape' && state.selected) closePreview(true);
});

ui.download.addEventListener('click', async () => {
  const entry = ui.download.dataset.key ? state.entries.get(ui.download.dataset.key) : undefined;
  if (!entry) return;
  ui.downloadNote.textContent = '';
  try {
    const link = await signedLink(entry.ref.id, 'attachment', 'direct');
    const a = h('a', { href: link.url, download: entry.ref.filename ?? '', rel: 'noopener', hidden: '' });
    document.body.append(a);
    a.click();
    a.remove();
    ui.downloadNote.textContent = `Through a ${link.fetchMode === 'direct' ? 'direct (storage)' : 'service'} link, valid until ${formatTime(link.urlExpiresAt)}.`;
  } catch (err) {
    if (!(err instanceof SignedOut)) ui.downloadNote.textContent = `Download failed: ${/** @type {Error} */ (err).message}`;
  }
});

// ---------------------------------------------------------------------------------------------
// Upload (for trying things out): drag and drop, or the file picker

/** @param {File} file */
function upload(file) {
  const bar = h('progress', { max: String(Math.max(file.size, 1)), value: '0', 'aria-label': `Uploading ${file.name}` });
  const status = h('span', { class: 'muted' }, ['0%']);
  const item = h('li', {}, [h('span', { class: 'upload-name' }, [file.name]), ' ', bar, ' ', status]);
  ui.uploads.prepend(item);
  const xhr = new XMLHttpRequest();
  xhr.open('POST', '/v1/artifacts');
  xhr.setRequestHeader('Authorization', `Bearer ${state.token}`);
  xhr.setRequestHeader('Content-Type', file.type || 'application/octet-stream');
  xhr.setRequestHeader('X-Artifact-Filename', `UTF-8''${encodeURIComponent(file.name)}`);
  xhr.setRequestHeader('X-Artifact-Namespace', 'ui.upload');
  if (!state.bound && state.session) xhr.setRequestHeader('X-Artifact-Session', state.session);
  const generation = state.generation;
  xhr.upload.addEventListener('progress', (e) => {
    bar.value = e.loaded;
    status.textContent = `${Math.floor((100 * e.loaded) / Math.max(e.total, 1))}%`;
  });
  xhr.addEventListener('load', () => {
    /** @type {{ message?: string } & Partial<ArtifactRef>} */
    let body = {};
    try {
      body = JSON.parse(xhr.responseText);
    } catch {
      // The status says enough.
    }
    if (xhr.status >= 200 && xhr.status < 300) {
      bar.value = file.size;
      status.textContent = 'stored';
      if (generation === state.generation && body.id) {
        upsert(/** @type {ArtifactRef} */ (body), true);
        render();
      }
    } else {
      item.classList.add('failed');
      status.textContent = `failed: ${body.message ?? `${xhr.status} ${xhr.statusText}`}`;
      if (xhr.status === 401) signOut('The service refused the token. Paste a new one.');
    }
  });
  xhr.addEventListener('error', () => {
    item.classList.add('failed');
    status.textContent = 'failed: the connection dropped.';
  });
  xhr.send(file);
}

/** @param {FileList | null | undefined} files */
function uploadAll(files) {
  for (const file of files ?? []) upload(file);
}
ui.choose.addEventListener('click', () => ui.file.click());
ui.file.addEventListener('change', () => {
  uploadAll(ui.file.files);
  ui.file.value = '';
});
ui.drop.addEventListener('dragover', (event) => {
  event.preventDefault();
  ui.drop.classList.add('over');
});
ui.drop.addEventListener('dragleave', () => ui.drop.classList.remove('over'));
ui.drop.addEventListener('drop', (event) => {
  event.preventDefault();
  ui.drop.classList.remove('over');
  uploadAll(event.dataTransfer?.files);
});
// A file dropped beside the zone must not replace the page.
window.addEventListener('dragover', (event) => event.preventDefault());
window.addEventListener('drop', (event) => event.preventDefault());

// ---------------------------------------------------------------------------------------------
// Usage

function scheduleUsage() {
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
  if (limit) children.push(h('meter', { min: '0', max: String(limit), value: String(value), high: String(limit * 0.8), optimum: '0', 'aria-label': `${label}: ${text}` }), ' ');
  children.push(h('span', { class: 'bar-text' }, [text]));
  return h('div', { class: 'bar' }, children);
}

/** @param {UsageReport} report */
function renderUsage(report) {
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
      ...(report.tenants ?? []).slice(0, 5).map((t) => h('div', {}, [h('h3', {}, [`Tenant ${t.tenantId}`]), bar('Bytes', t.bytes, t.limitBytes, formatBytes), bar('Artifacts', t.count, null, (n) => n.toLocaleString())])),
    );
  }
  // Tenant-wide tokens see their top sessions by bytes; a click looks at one.
  if (!state.bound && sessions.length > 0) {
    const top = sessions.slice(0, 10);
    const multiTenant = new Set(top.map((s) => s.tenantId)).size > 1;
    ui.usageTop.replaceChildren(
      h('h3', {}, ['Top sessions by bytes']),
      h('ol', { class: 'top-sessions' }, top.map((s) => {
        const label = multiTenant ? `${s.tenantId} / ${s.sessionId}` : s.sessionId;
        const pick = h('button', { type: 'button', class: 'linkish' }, [label]);
        pick.addEventListener('click', () => selectSession(s.sessionId));
        return h('li', {}, [pick, bar('', s.bytes, s.limitBytes, formatBytes), h('span', { class: 'muted' }, [` ${s.count.toLocaleString()} artifacts`])]);
      })),
    );
  } else {
    ui.usageTop.replaceChildren();
  }
  renderRetention(report.retentionRuns ?? []);
}

const SVG = 'http://www.w3.org/2000/svg';

/**
 * The latest retention runs (admins) as a small bar chart of bytes freed, oldest on the left, with
 * the same numbers in a table for screen readers. Our own SVG, built node by node.
 * @param {UsageReport['retentionRuns']} runs
 */
function renderRetention(runs) {
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
    title.textContent = `${formatTime(run.startedAt)} (${run.trigger}): ${formatBytes(run.bytesFreed)} freed, ${run.expiredRefs} expired, ${run.evictedRefs} evicted`;
    rect.append(title);
    svg.append(rect);
  });
  // Wrapped: a table itself ignores the 1px box that hides it, and would widen the page.
  const table = h('div', { class: 'visually-hidden' }, [h('table', {}, [
    h('caption', {}, ['Retention runs']),
    h('tr', {}, ['Started', 'Trigger', 'Freed', 'Expired', 'Evicted'].map((t) => h('th', { scope: 'col' }, [t]))),
    ...runs.map((r) => h('tr', {}, [formatTime(r.startedAt), r.trigger, formatBytes(r.bytesFreed), String(r.expiredRefs), String(r.evictedRefs)].map((t) => h('td', {}, [t])))),
  ])]);
  const total = runs.reduce((n, r) => n + r.bytesFreed, 0);
  ui.usageRetention.replaceChildren(
    h('h3', {}, ['Retention']),
    svg,
    h('p', { class: 'muted' }, [`The last ${runs.length === 1 ? 'run' : `${runs.length} runs`} freed ${formatBytes(total)}; the newest ran ${formatTime(runs[0].startedAt)} (${runs[0].trigger}).`]),
    table,
  );
}

// ---------------------------------------------------------------------------------------------
// Session choice (tenant-wide tokens), kept in the URL fragment so a view can be linked

/** @param {string} session */
function selectSession(session) {
  state.session = session.trim();
  ui.session.value = state.session;
  history.replaceState(null, '', state.session ? `#session=${encodeURIComponent(state.session)}` : location.pathname);
  startScope();
  if (state.usage) renderUsage(state.usage);
  scheduleUsage();
}
ui.session.addEventListener('change', () => selectSession(ui.session.value));

// ---------------------------------------------------------------------------------------------
// Formatting

/** @param {number} n */
function formatBytes(n) {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

const timeOnly = new Intl.DateTimeFormat(undefined, { timeStyle: 'short' });
const dayAndTime = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit' });
const full = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
/** Short where the context is obvious: today's times alone, this year's without the year. @param {string} iso */
function formatTime(iso) {
  const d = new Date(iso);
  const now = new Date();
  if (d.toDateString() === now.toDateString()) return timeOnly.format(d);
  return (d.getFullYear() === now.getFullYear() ? dayAndTime : full).format(d);
}
/** @param {string} iso */
const timeEl = (iso) => h('time', { datetime: iso, title: iso }, [formatTime(iso)]);

// ---------------------------------------------------------------------------------------------
// Start: a token in the fragment (the link npm start prints) wins over the one this tab kept. The
// fragment never reaches the server, and is cleared at once so the token does not stay in history.

const fragment = new URLSearchParams(location.hash.slice(1));
const fromLink = fragment.get('token');
state.session = fragment.get('session') ?? '';
if (fromLink) history.replaceState(null, '', state.session ? `#session=${encodeURIComponent(state.session)}` : location.pathname);
const saved = fromLink ?? sessionStorage.getItem(TOKEN_KEY);
if (saved) {
  signIn(saved).catch((err) => {
    if (!(err instanceof SignedOut)) signOut(`Could not sign in: ${err.message}`);
  });
} else {
  signOut();
}
