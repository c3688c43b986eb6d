import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../context.js';

/**
 * The artifact browser's files (page, script modules, stylesheet, and the SSE parser they import),
 * read by the runtime entry point: the Node one reads src/ui/ from disk.
 */
export interface UiAssets {
  get(name: string): Promise<Uint8Array | null>;
}

/**
 * The page's script modules, src/ui/*.js (no bundler): app.js is the entry index.html loads, and it
 * imports the rest. A module missing here is a 404, and the page stops loading.
 */
const UI_SCRIPTS = [
  'app.js',
  'actions.js',
  'api.js',
  'artifacts.js',
  'connection.js',
  'dom.js',
  'format.js',
  'live-list.js',
  'page.js',
  'preview.js',
  'resources.js',
  'retention-chart.js',
  'session-choice.js',
  'sign-in.js',
  'sign-out.js',
  'state.js',
  'table.js',
  'upload.js',
  'usage.js',
  'view.js',
];

const JS = 'text/javascript; charset=utf-8';

/**
 * Every file /ui serves, with its type; anything else is a 404. Names only, one path segment each:
 * a request can never name a file outside this list.
 */
export const UI_ASSET_TYPES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
  ...Object.fromEntries(UI_SCRIPTS.map((name) => [name, JS])),
  'eventsource-parser.js': JS,
};

/**
 * The page's own policy. Scripts come only from /ui itself, so stored bytes can never run here even if
 * some markup slipped in; previews load from signed URLs, which may sit on another origin (S3, a CDN),
 * hence http:/https: for images, media and frames. Nothing may frame the page (clickjacking), and no
 * Referer leaves it.
 */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data: blob: https: http:",
  "media-src 'self' https: http:",
  "frame-src 'self' https: http:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE_HEADERS = {
  'Content-Security-Policy': CSP,
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-cache',
};

/**
 * GET /ui: the artifact browser. The page carries no data and no token: it signs in with a token the
 * user pastes (or one in the URL fragment, which never reaches the server) and talks to /v1 like any
 * client.
 */
export function registerUi(app: OpenAPIHono<AppEnv>, assets: UiAssets | undefined) {
  const serve = async (name: string) => {
    const type = UI_ASSET_TYPES[name];
    const bytes = type && assets ? await assets.get(name) : null;
    if (!type || !bytes) return null;
    return new Response(bytes as Uint8Array<ArrayBuffer>, {
      status: 200,
      headers: { ...PAGE_HEADERS, 'Content-Type': type },
    });
  };
  app.get(
    '/ui',
    async (c) =>
      (await serve('index.html')) ??
      c.json({ code: 'not_found', message: 'This build of the service has no /ui.' }, 404),
  );
  app.get('/ui/', (c) => c.redirect('/ui', 301));
  app.get(
    '/ui/:name',
    async (c) =>
      (await serve(c.req.param('name'))) ??
      c.json({ code: 'not_found', message: `No UI file ${JSON.stringify(c.req.param('name'))}.` }, 404),
  );
}
