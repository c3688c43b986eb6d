import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../context.js';

/** Serves the API reference page's static files (Swagger UI) from the service itself: no CDN. */
export interface DocsAssets {
  get(name: string): Promise<Uint8Array | null>;
}

const ASSET_TYPES: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

// No inline script, so the page runs under a strict CSP.
const INIT_JS = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true, persistAuthorization: true });
});
`;

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>artifact-store API</title>
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<noscript>The API reference needs JavaScript. The raw description is at <a href="/openapi.json">/openapi.json</a>.</noscript>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/init.js"></script>
</body>
</html>
`;

const CSP =
  "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'";

export function registerDocs(app: OpenAPIHono<AppEnv>, assets: DocsAssets | undefined) {
  app.get('/docs', (c) => c.html(PAGE, 200, { 'Content-Security-Policy': CSP, 'Cache-Control': 'no-cache' }));
  app.get('/docs/assets/:name', async (c) => {
    const name = c.req.param('name');
    if (name === 'init.js')
      return c.body(INIT_JS, 200, { 'Content-Type': 'text/javascript; charset=utf-8', 'Cache-Control': 'no-cache' });
    const type = ASSET_TYPES[name];
    const bytes = type && assets ? await assets.get(name) : null;
    if (!type || !bytes) return c.json({ code: 'not_found', message: `No docs asset ${JSON.stringify(name)}.` }, 404);
    return c.body(bytes as Uint8Array<ArrayBuffer>, 200, {
      'Content-Type': type,
      'Cache-Control': 'public, max-age=3600',
      'X-Content-Type-Options': 'nosniff',
    });
  });
}

export const DOCS_ASSET_NAMES = Object.keys(ASSET_TYPES);
