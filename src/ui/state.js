// @ts-check
/**
 * What the page knows: the token, the scope it looks at, and the rows it holds. One object that the
 * other modules read and change; `generation` lets a late response see that the scope moved on.
 */

/** The key the token is kept under in this tab's sessionStorage. */
export const TOKEN_KEY = 'artifact-store.token';

export const state = {
  token: '',
  /** @type {Record<string, unknown> | null} the JWT's claims, for display and scope; null for API keys */
  claims: null,
  /** a session-bound token: it sees its session only */
  bound: false,
  /** the session a tenant-wide token is looking at ('' = all) */
  session: '',
  /** @type {Map<string, import('./types.js').Entry>} */
  entries: new Map(),
  /** @type {Map<string, import('./types.js').Gone>} removals seen before the listing had the row */
  removed: new Map(),
  /** @type {Set<string>} the names (nameKeyOf) whose versions are shown */
  expanded: new Set(),
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
  /** @type {import('./types.js').UsageReport | null} the last usage report, redrawn at once when the session changes */
  usage: null,
};
