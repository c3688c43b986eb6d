// @ts-check
/**
 * The preview panel and the download button. Stored bytes are untrusted, so nothing from them is
 * ever parsed as markup: images go in <img>, PDFs in a frame whose response carries
 * `Content-Security-Policy: sandbox`, text through textContent. Every link is a signed one.
 */
import { may, SignedOut, signedLink } from './api.js';
import { nameOf, previewKind } from './artifacts.js';
import { h, timeEl } from './dom.js';
import { formatBytes, formatTime } from './format.js';
import { rowOf, ui } from './page.js';
import { state } from './state.js';

/** @typedef {import('./types.js').ArtifactRef} ArtifactRef */

/** Text previews read at most this much (a Range request); the rest is a download away. */
const TEXT_PREVIEW_BYTES = 256 * 1024;

/** Where a reference sits, narrowest first. @param {import('./types.js').Scope} s */
function scopeText(s) {
  const parts = [
    s.sessionId && `session ${s.sessionId}`,
    s.traceId && `trace ${s.traceId}`,
    s.userId && `user ${s.userId}`,
  ];
  return parts.filter(Boolean).join(', ') || `tenant ${s.tenantId}`;
}

/** Shows (or refreshes) the preview of a row. @param {string} key */
export async function showPreview(key) {
  const entry = state.entries.get(key);
  if (!entry) return;
  const r = entry.ref;
  const opening = state.selected !== key;
  state.selected = key;
  for (const tr of ui.rows.querySelectorAll('tr[aria-selected]')) tr.removeAttribute('aria-selected');
  rowOf(key)?.setAttribute('aria-selected', 'true');
  ui.preview.hidden = false;
  ui.previewTitle.textContent = typeof r.version === 'number' ? `${nameOf(r)} · v${r.version}` : nameOf(r);
  /** @type {[string, Node | string][]} */
  const facts = [
    ['Type', r.mimeType],
    ['Size', `${formatBytes(r.sizeBytes)} (${r.sizeBytes.toLocaleString()} bytes)`],
    ['Id', r.id],
    ['sha256', r.sha256],
    ['Namespace / tool', [r.namespace, r.source?.tool].filter(Boolean).join(' / ') || '—'],
    ['Scope', scopeText(r.scope)],
    ['Created', timeEl(r.createdAt)],
    ['Last read', r.lastAccessedAt ? timeEl(r.lastAccessedAt) : '—'],
    ['Expires', r.expiresAt ? timeEl(r.expiresAt) : 'never'],
  ];
  // A version's file name, where it differs from the name the title shows.
  if (r.name && r.filename && r.filename !== r.name) facts.splice(2, 0, ['File name', r.filename]);
  if (r.source && Object.keys(r.source).length > 0) facts.push(['Source', jsonBlock(r.source)]);
  if (r.meta !== undefined && r.meta !== null) facts.push(['Metadata', jsonBlock(r.meta)]);
  ui.previewFacts.replaceChildren(...facts.flatMap(([k, v]) => [h('dt', {}, [k]), h('dd', {}, [v])]));
  const writable = may('write') && !entry.gone;
  ui.deleteOne.hidden = !writable;
  ui.deleteOne.textContent = typeof r.version === 'number' ? `Delete v${r.version}…` : 'Delete…';
  ui.deleteName.hidden = !writable || !r.name;
  ui.copyLink.disabled = Boolean(entry.gone);
  ui.linkExpiry.disabled = Boolean(entry.gone);
  ui.downloadNote.textContent = '';
  ui.download.hidden = Boolean(entry.gone);
  ui.download.dataset.key = key;
  if (opening) ui.previewTitle.focus();
  if (entry.gone) {
    const ended = `This reference was ${entry.gone.type} at ${formatTime(entry.gone.at)}`;
    const note = `${ended}; its bytes are no longer served to this scope.`;
    ui.previewBody.replaceChildren(h('p', { class: 'card' }, [note]));
    return;
  }
  ui.previewBody.replaceChildren(h('p', { class: 'muted' }, ['Loading preview…']));
  try {
    const body = await previewOf(r);
    if (state.selected === key) ui.previewBody.replaceChildren(body);
  } catch (err) {
    if (state.selected === key && !(err instanceof SignedOut)) {
      ui.previewBody.replaceChildren(h('p', { class: 'error' }, [`No preview: ${/** @type {Error} */ (err).message}`]));
    }
  }
}

/** A JSON value as text, never as markup. @param {unknown} value */
const jsonBlock = (value) => h('pre', { class: 'meta' }, [JSON.stringify(value, null, 2)]);

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
      // The frame is out of the tab order (keys inside a viewer never reach this page, so focus could
      // not leave it): the keyboard opens the PDF in its own tab instead.
      const link = await signedLink(r.id, 'inline', 'direct');
      const out = document.createDocumentFragment();
      out.append(
        h('iframe', { src: link.url, title: `PDF preview of ${name}`, class: 'pdf', tabindex: '-1' }),
        h('p', {}, [
          h('a', { href: link.url, target: '_blank', rel: 'noopener noreferrer' }, ['Open the PDF in a new tab']),
        ]),
      );
      return out;
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
  if (!whole) {
    const shown = `Showing the first ${formatBytes(bytes.byteLength)} of ${formatBytes(r.sizeBytes)}.`;
    out.append(h('p', { class: 'muted' }, [`${shown} Download for the rest.`]));
  }
  return out;
}

/** @param {boolean} restoreFocus */
export function closePreview(restoreFocus) {
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
    const via = link.fetchMode === 'direct' ? 'direct (storage)' : 'service';
    ui.downloadNote.textContent = `Through a ${via} link, valid until ${formatTime(link.urlExpiresAt)}.`;
  } catch (err) {
    if (!(err instanceof SignedOut)) {
      ui.downloadNote.textContent = `Download failed: ${/** @type {Error} */ (err).message}`;
    }
  }
});
