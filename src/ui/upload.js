// @ts-check
/**
 * Uploads, for trying things out: files dropped on the zone or chosen in the picker go to
 * POST /v1/artifacts, each with its own progress bar (XMLHttpRequest, since fetch reports no upload
 * progress), into the session in view.
 */
import { h } from './dom.js';
import { upsert } from './live-list.js';
import { ui } from './page.js';
import { signOut } from './sign-out.js';
import { state } from './state.js';
import { render } from './table.js';

/** @param {File} file */
function upload(file) {
  const bar = h('progress', {
    max: String(Math.max(file.size, 1)),
    value: '0',
    'aria-label': `Uploading ${file.name}`,
  });
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
    /** @type {{ message?: string } & Partial<import('./types.js').ArtifactRef>} */
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
        upsert(/** @type {import('./types.js').ArtifactRef} */ (body), true);
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
