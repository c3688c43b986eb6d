/** The files the service serves from this package on Node: Swagger UI's and the artifact browser's. */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DOCS_ASSET_NAMES, type DocsAssets } from '../http/routes/docs.js';
import { UI_ASSET_TYPES, type UiAssets } from '../http/routes/ui.js';

/** Named files read on first request and kept (a failed read is retried next time); other names are null. */
function filesOnDemand(files: Record<string, string>): DocsAssets & UiAssets {
  const cache = new Map<string, Promise<Uint8Array>>();
  return {
    get(name) {
      const file = Object.hasOwn(files, name) ? files[name] : undefined;
      if (!file) return Promise.resolve(null);
      let bytes = cache.get(name);
      if (!bytes) {
        bytes = readFile(file).then((b) => new Uint8Array(b));
        bytes.catch(() => cache.delete(name));
        cache.set(name, bytes);
      }
      return bytes;
    },
  };
}

/** Swagger UI's files from the swagger-ui-dist package. */
export function nodeDocsAssets(): DocsAssets {
  // Resolve the package folder without loading its 1.7 MB bundle into this process.
  const root = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  return filesOnDemand(Object.fromEntries(DOCS_ASSET_NAMES.map((name) => [name, join(root, name)])));
}

/**
 * The artifact browser's files: ui/ beside this module's folder (src/ui/ when running from source, dist/ui/ in
 * a built or installed package, which scripts/build.mjs copies there), and the SSE parser from its own package.
 */
export function nodeUiAssets(): UiAssets {
  const files: Record<string, string> = Object.fromEntries(
    Object.keys(UI_ASSET_TYPES).map((name) => [name, fileURLToPath(new URL(`../ui/${name}`, import.meta.url))]),
  );
  // The package's ESM build sits beside the CommonJS entry require() resolves to.
  files['eventsource-parser.js'] = join(
    dirname(createRequire(import.meta.url).resolve('eventsource-parser')),
    'index.js',
  );
  return filesOnDemand(files);
}
