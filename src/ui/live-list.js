// @ts-check
/**
 * The live list of one scope: pages of GET /v1/artifacts, kept current by /v1/events. Starting a
 * scope (sign-in, another session) drops what the page held and follows the new one. Other views
 * hear of a new scope, and of the stream's resource.updated events, through onScopeStart and
 * onResourceUpdated.
 */
import { api, SignedOut } from './api.js';
import { keyOf } from './artifacts.js';
import { createParser } from './eventsource-parser.js';
import { ui } from './page.js';
import { closePreview, showPreview } from './preview.js';
import { state } from './state.js';
import { render, scheduleRender } from './table.js';
import { scheduleUsage } from './usage.js';

/** @typedef {import('./types.js').ArtifactRef} ArtifactRef */
/** @typedef {import('./types.js').ResourceUpdated} ResourceUpdated */

const PAGE_SIZE = 200;

/** @type {Set<() => void>} */
const scopeStarts = new Set();
/** @type {Set<(data: ResourceUpdated) => void>} */
const resourceUpdates = new Set();

/** Calls `listener` each time a scope starts (sign-in, another session). @param {() => void} listener */
export const onScopeStart = (listener) => void scopeStarts.add(listener);

/** Hands `listener` each resource.updated event of the scope's stream. @param {(data: ResourceUpdated) => void} listener */
export const onResourceUpdated = (listener) => void resourceUpdates.add(listener);

/** The scope's query parameters: a tenant-wide token may look at one session. */
export function scopeQuery() {
  const q = new URLSearchParams();
  if (!state.bound && state.session) q.set('session', state.session);
  return q;
}

/** Starts over on the current scope: empties the list, follows its events, then lists its first page. */
export function startScope() {
  const generation = ++state.generation;
  state.stream?.abort();
  state.entries.clear();
  state.removed.clear();
  state.expanded.clear();
  state.cursor = null;
  state.focused = null;
  closePreview(false);
  ui.listError.textContent = '';
  const scope = state.bound
    ? `session ${String(state.claims?.session)}`
    : state.session
      ? `session ${state.session}`
      : 'all sessions';
  ui.scopeLabel.textContent = `· ${scope}`;
  ui.dropScope.textContent = state.bound || state.session ? ` in ${scope}` : ' (no session)';
  render();
  for (const listener of scopeStarts) listener();
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
    const res = await api(`/v1/artifacts?${q}`);
    const page = /** @type {{ items: ArtifactRef[], nextCursor?: string }} */ (await res.json());
    if (generation !== state.generation) return;
    for (const ref of page.items) upsert(ref, false);
    state.cursor = page.nextCursor ?? null;
    ui.listError.textContent = '';
  } catch (err) {
    if (generation === state.generation && !(err instanceof SignedOut)) {
      ui.listError.textContent = `Could not list artifacts: ${/** @type {Error} */ (err).message}`;
    }
  } finally {
    ui.more.disabled = false;
    if (generation === state.generation) render();
  }
}
ui.more.addEventListener('click', () => loadPage(state.generation));

/**
 * Adds or replaces a row; a removal seen earlier still marks it gone.
 * @param {ArtifactRef} ref @param {boolean} fresh
 */
export function upsert(ref, fresh) {
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
        const res = await api(`/v1/events?${q}`, {
          signal: controller.signal,
          headers: { Accept: 'text/event-stream' },
        });
        if (!res.body) throw new Error('no stream');
        ui.live.textContent = 'live';
        ui.live.dataset.state = 'live';
        delay = 1000;
        const parser = createParser({
          onEvent(event) {
            if (event.id) lastId = event.id;
            positioned();
            if (!event.event || !event.data || generation !== state.generation) return;
            const data = JSON.parse(event.data);
            if (event.event === 'resource.updated') for (const listener of resourceUpdates) listener(data);
            else onArtifactEvent(event.event, data);
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
