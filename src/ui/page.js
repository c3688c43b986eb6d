// @ts-check
/** The page's elements (index.html), looked up once; module scripts run after the page is parsed. */
import { el, elOf } from './dom.js';

export const ui = {
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

/** The table row of a key, if it is shown. @param {string} key */
export function rowOf(key) {
  for (const tr of ui.rows.children) if (tr instanceof HTMLTableRowElement && tr.dataset.key === key) return tr;
  return undefined;
}
