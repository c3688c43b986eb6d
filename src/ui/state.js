// @ts-check
/**
 * What the page knows: the token, the scope and view it looks at, and the rows it holds. One object
 * that the other modules read and change; `generation` lets a late response see that the view moved on.
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
  /**
   * The rows the page holds, by key (keyOf), in the service's order for the view: the listing's
   * pages, then arrivals put where the view's order says.
   * @type {Map<string, import('./types.js').Entry>}
   */
  entries: new Map(),
  /** @type {Map<string, import('./types.js').Gone>} removals seen before the listing had the row */
  removed: new Map(),
  /** @type {Set<string>} the names (nameKeyOf) whose versions are shown */
  expanded: new Set(),
  /** @type {Map<string, import('./types.js').NameFacts>} each name's versions as the service lists them */
  names: new Map(),
  /** @type {Set<string>} the rows ticked for a bulk action */
  picked: new Set(),
  /** @type {string | null} the next page of the listing, if there is one */
  cursor: null,
  /** the listing has been read at least once for this view */
  listed: false,
  /** @type {string | null} the previewed row */
  selected: null,
  /** @type {string | null} the row keyboard focus sits on */
  focused: null,
  /** bumped whenever the scope or the view changes or the user signs out: stale responses are dropped */
  generation: 0,
  /** @type {AbortController | null} */
  stream: null,
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  usageTimer: undefined,
  /** @type {import('./types.js').UsageReport | null} the last usage report, redrawn at once when the session changes */
  usage: null,
};
