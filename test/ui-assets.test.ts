/**
 * The artifact browser is native ES modules with no bundler, so /ui must serve every module the page
 * imports (a missing one stops the page), each as JavaScript under the page's policy, and nothing else.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { OpenAPIHono } from '@hono/zod-openapi';
import { describe, expect, it } from 'vitest';
import type { AppEnv } from '../src/http/context.js';
import { registerUi, UI_ASSET_TYPES, type UiAssets } from '../src/http/routes/ui.js';

const UI_DIR = new URL('../src/ui/', import.meta.url);
const read = (name: string) => readFileSync(new URL(name, UI_DIR), 'utf8');
/** Shipped by its own package, not from src/ui/ (the Node entry maps it to eventsource-parser's ESM build). */
const FROM_PACKAGE = 'eventsource-parser.js';

const scripts = readdirSync(UI_DIR).filter((name) => name.endsWith('.js'));

/** The relative specifiers a module imports, statically or for its side effects. */
function importsOf(source: string): string[] {
  return [...source.matchAll(/^\s*import\s+(?:[^'"]*?\s+from\s+)?['"](\.\/[^'"]+)['"]/gm)].map((m) => m[1]!);
}

describe('/ui files', () => {
  it('lists every script module in src/ui as JavaScript, and no name that is not a file there', () => {
    for (const name of scripts) expect(UI_ASSET_TYPES[name], name).toBe('text/javascript; charset=utf-8');
    const listed = Object.keys(UI_ASSET_TYPES).filter((name) => name !== FROM_PACKAGE);
    expect(listed.filter((name) => !readdirSync(UI_DIR).includes(name))).toEqual([]);
  });

  it('serves every module the page reaches from its entry', () => {
    const html = read('index.html');
    expect(html).toContain('<script type="module" src="/ui/app.js"></script>');
    const seen = new Set<string>();
    const walk = (name: string) => {
      if (seen.has(name)) return;
      seen.add(name);
      expect(UI_ASSET_TYPES[name], `${name} is imported but not served`).toBeDefined();
      if (name !== FROM_PACKAGE) for (const spec of importsOf(read(name))) walk(spec.slice(2));
    };
    walk('app.js');
    expect(seen).toContain(FROM_PACKAGE);
    // No module sits unused beside the ones the entry reaches.
    expect(scripts.filter((name) => !seen.has(name))).toEqual([]);
  });

  describe('over HTTP', () => {
    const assets: UiAssets = {
      async get(name) {
        if (name === FROM_PACKAGE) return new TextEncoder().encode('export {};');
        return new Uint8Array(readFileSync(new URL(name, UI_DIR)));
      },
    };
    const app = new OpenAPIHono<AppEnv>();
    registerUi(app, assets);

    it('answers each module as JavaScript under a policy that lets the page load its own modules only', async () => {
      for (const name of scripts) {
        const res = await app.request(`/ui/${name}`);
        expect(res.status, name).toBe(200);
        expect(res.headers.get('content-type'), name).toBe('text/javascript; charset=utf-8');
        expect(res.headers.get('x-content-type-options'), name).toBe('nosniff');
        const csp = res.headers.get('content-security-policy') ?? '';
        expect(csp.split('; '), name).toContain("script-src 'self'");
        expect(await res.text(), name).toBe(read(name));
      }
    });

    it('answers 404 for anything not listed, however the name is spelled', async () => {
      const paths = [
        '/ui/types.d.ts',
        '/ui/tsconfig.json',
        '/ui/..%2Fnode.ts',
        '/ui/%2E%2E%2Fhttp%2Fapp.ts',
        '/ui/..%2F..%2Fpackage.json',
        '/ui/format.js%00',
        '/ui/sub/format.js',
      ];
      for (const path of paths) expect((await app.request(path)).status, path).toBe(404);
    });
  });
});
