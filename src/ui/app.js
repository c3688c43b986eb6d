// @ts-check
/**
 * The artifact browser's entry (index.html loads it as a module): a client of /v1 like any other.
 * Each module below wires its own part of the page when it loads; then the page signs in.
 *
 *   sign-in.js, sign-out.js   the token: pasted or from the link, kept in this tab only
 *   live-list.js, table.js    the listing of one scope, kept live by /v1/events, and its table
 *   view.js, connection.js    the toolbar's view as listing parameters; the service's state
 *   preview.js, actions.js    previews, downloads, links, copies and deletes
 *   upload.js                 drag and drop or the file picker
 *   resources.js              the Resources tab: the MCP gateway's servers and their resources
 *   usage.js, retention-chart.js, session-choice.js   the usage panel and the session in view
 *   api.js, state.js, page.js, dom.js, format.js, artifacts.js   shared by the above
 */
import './session-choice.js';
import './upload.js';
import './actions.js';
import './resources.js';
import { signInOnLoad } from './sign-in.js';

signInOnLoad();
