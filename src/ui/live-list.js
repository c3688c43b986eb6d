// @ts-check
/**
 * The live list of one scope: pages of GET /v1/artifacts for the view the toolbar asks for (the
 * service searches, filters and sorts the whole scope), kept current by /v1/events. Starting a scope
 * (sign-in, another session) drops what the page held and follows the new one; changing the view
 * lists again. A listing that fails is tried again with the stream's backoff; after the stream
 * reconnects, the first page is read again so that nothing that happened in the gap is missing.
 * Other views hear of a new scope, and of the stream's resource.updated events, through onScopeStart
 * and onResourceUpdated.
 */
import { api, may, SignedOut } from './api.js';
import { keyOf } from './artifacts.js';
import { Backoff, pause, setConnection } from './connection.js';
import { createParser } from './eventsource-parser.js';
import { ui } from './page.js';
import { closePreview, showPreview } from './preview.js';
import { state } from './state.js';
import { arrive, changed, render } from './table.js';
import { scheduleUsage } from './usage.js';
import { addViewParams, inView } from './view.js';

/** @typedef {import('./types.js').ArtifactRef} ArtifactRef */
/** @typedef {import('./types.js').ResourceUpdated} ResourceUpdated */

const PAGE_SIZE = 100;

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

/** A page of the view's listing: its scope, the toolbar's view, and where to go on. @param {string | null} cursor */
function listQuery(cursor) {
  const q = addViewParams(scopeQuery());
  q.set('limit', String(PAGE_SIZE));
  if (cursor) q.set('cursor', cursor);
  return q;
}

/** The listing's own generation: bumped by a new scope and by a new view. */
let listing = 0;

/** What the indicator combines: the stream's state, and a listing that keeps failing. */
const health = {
  /** @type {'connecting' | 'live' | 'reconnecting' | 'down'} */
  stream: 'connecting',
  /** @type {{ reason: string, retryAt: number } | null} */
  listing: null,
  /** @type {{ reason: string, retryAt: number } | null} */
  streamDown: null,
};

/** One state for the service: a failing listing or a stream that is down says so, else the stream's. */
function report() {
  if (health.listing) setConnection('down', health.listing);
  else if (health.stream === 'down' && health.streamDown) setConnection('down', health.streamDown);
  else setConnection(health.stream);
}

/** Starts over on the current scope: empties the list, follows its events, then lists its first page. */
export function startScope() {
  const generation = ++state.generation;
  state.stream?.abort();
  state.removed.clear();
  closePreview(false);
  const scope = state.bound
    ? `session ${String(state.claims?.session)}`
    : state.session
      ? `session ${state.session}`
      : 'all sessions';
  ui.scopeLabel.textContent = `· ${scope}`;
  ui.dropScope.textContent = state.bound || state.session ? ` in ${scope}` : ' (no session)';
  ui.endSession.hidden = !(state.bound || state.session) || !may('write');
  health.stream = 'connecting';
  health.listing = null;
  report();
  listing++;
  state.entries.clear();
  state.listed = false;
  render();
  for (const listener of scopeStarts) listener();
  // The stream first: once it reports its position, the listing cannot miss a change made in between
  // (anything later arrives as an event; doubles collapse by key).
  const positioned = follow(generation);
  Promise.race([positioned, new Promise((ok) => setTimeout(ok, 3000))]).then(() => {
    if (generation === state.generation) startView();
  });
}

/** Lists the view again from its first page (the toolbar changed, or the scope started). */
export function startView() {
  const run = ++listing;
  state.entries.clear();
  state.names.clear();
  state.expanded.clear();
  state.picked.clear();
  state.cursor = null;
  state.listed = false;
  state.focused = null;
  ui.listError.textContent = '';
  render();
  loadPage(run, null);
}

/**
 * One page of the view; tried again with the backoff until it is read or the view moves on.
 * @param {number} run @param {string | null} cursor
 */
async function loadPage(run, cursor) {
  const backoff = new Backoff();
  ui.more.disabled = true;
  ui.loading.hidden = false;
  try {
    for (;;) {
      try {
        const res = await api(`/v1/artifacts?${listQuery(cursor)}`);
        const page = /** @type {{ items: ArtifactRef[], nextCursor?: string }} */ (await res.json());
        if (run !== listing) return;
        // The first page is the view: what arrived while it was read goes in after it, in its place.
        const arrived = cursor ? [] : [...state.entries.values()];
        if (!cursor) state.entries.clear();
        const keys = page.items.map((ref) => upsert(ref, false));
        state.cursor = page.nextCursor ?? null;
        state.listed = true;
        ui.listError.textContent = '';
        if (health.listing) {
          health.listing = null;
          report();
        }
        if (cursor) render(keys);
        else render();
        for (const entry of arrived) {
          const key = keyOf(entry.ref);
          if (state.entries.has(key) || !inView(entry.ref)) continue;
          state.entries.set(key, entry);
          arrive(key);
        }
        return;
      } catch (err) {
        if (run !== listing || err instanceof SignedOut) return;
        const wait = backoff.next();
        const reason = `Could not list the artifacts: ${plain(err)}`;
        ui.listError.textContent = reason;
        health.listing = { reason, retryAt: Date.now() + wait };
        report();
        await pause(wait);
        if (run !== listing) return;
      }
    }
  } finally {
    if (run === listing) {
      ui.more.disabled = false;
      ui.loading.hidden = true;
    }
  }
}
ui.more.addEventListener('click', () => loadPage(listing, state.cursor));

// The toolbar: a new view is listed by the service; typing waits for a pause.
/** @type {ReturnType<typeof setTimeout> | undefined} */
let typing;
ui.filter.addEventListener('input', () => {
  clearTimeout(typing);
  typing = setTimeout(startView, 250);
});
for (const control of [ui.kind, ui.from, ui.to, ui.sort]) control.addEventListener('change', startView);

/** What went wrong, in words a person can act on. @param {unknown} err */
const plain = (err) => (err instanceof Error ? err.message : String(err));

/**
 * Adds or replaces a row; a removal seen earlier still marks it gone. Returns its key.
 * @param {ArtifactRef} ref @param {boolean} fresh
 */
export function upsert(ref, fresh) {
  const key = keyOf(ref);
  const before = state.entries.get(key);
  const gone = state.removed.get(key);
  state.entries.set(key, { ref, ...(gone ? { gone } : {}), fresh: fresh || Boolean(before?.fresh) });
  return key;
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
  void stream(generation, positioned);
  return ready;
}

/** @param {number} generation @param {() => void} positioned */
async function stream(generation, positioned) {
  /** @type {string | null} */
  let lastId = null;
  const backoff = new Backoff();
  let dropped = false;
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
      health.stream = 'live';
      health.streamDown = null;
      report();
      backoff.reset();
      // Back after a gap: the listing is read again, so what changed meanwhile is there.
      if (dropped) relist();
      dropped = false;
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
      throw new Error('the stream ended');
    } catch (err) {
      if (err instanceof SignedOut || controller.signal.aborted || generation !== state.generation) return;
      dropped = true;
      const wait = backoff.next();
      health.stream = wait <= 2000 ? 'reconnecting' : 'down';
      health.streamDown = { reason: 'The service cannot be reached.', retryAt: Date.now() + wait };
      report();
      await pause(wait, controller.signal);
    }
  }
}

/** The first page again, merged: rows that arrived in the gap take their places; failures retry. */
async function relist() {
  const run = listing;
  const backoff = new Backoff();
  for (;;) {
    try {
      const page = /** @type {{ items: ArtifactRef[] }} */ (
        await (await api(`/v1/artifacts?${listQuery(null)}`)).json()
      );
      if (run !== listing) return;
      if (!state.listed) return startView();
      for (const ref of page.items) arriveRef(ref, false);
      ui.listError.textContent = '';
      return;
    } catch (err) {
      if (run !== listing || err instanceof SignedOut) return;
      await pause(backoff.next());
    }
  }
}

/** A reference the page may not hold yet: placed where the view's order says. @param {ArtifactRef} ref @param {boolean} fresh */
function arriveRef(ref, fresh) {
  const key = keyOf(ref);
  const before = state.entries.get(key);
  if (before) {
    if (JSON.stringify(before.ref) === JSON.stringify(ref)) return;
    upsert(ref, false);
    changed(key);
    return;
  }
  if (!inView(ref)) return;
  state.entries.set(key, { ref, fresh });
  arrive(key);
}

/** @param {string} type @param {{ ref: ArtifactRef, at: string }} data */
function onArtifactEvent(type, data) {
  if (type === 'artifact.stored') {
    arriveRef(data.ref, true);
  } else if (type === 'artifact.deleted' || type === 'artifact.evicted' || type === 'artifact.expired') {
    const key = keyOf(data.ref);
    const gone = { type: type.slice('artifact.'.length), at: data.at };
    state.removed.set(key, gone);
    const entry = state.entries.get(key);
    if (entry) entry.gone = gone;
    changed(key, data.ref);
    if (state.selected === key) showPreview(key);
  } else {
    return;
  }
  scheduleUsage();
}
