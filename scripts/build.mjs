/**
 * `npm run build` (and `prepare`, which npm ci and git installs run): both packages' dist/ from scratch.
 *
 * One source tree, two packages (docs/architecture.md § Packages):
 * - artifact-store-sdk (packages/sdk) is src/core, src/client, src/mcp and src/adk, compiled into
 *   packages/sdk/dist. The layer rules keep those folders free of server code and node:* modules.
 * - artifact-store (the repository root) is the rest of src/, compiled into dist/. It does not carry a
 *   second copy of the SDK's modules: its imports of them are rewritten to `artifact-store-sdk/internal/…`,
 *   so a process that loads both packages has one ArtifactError class, one set of schemas. The internal
 *   entry is for the server package of the same version only (it pins the SDK's exact version).
 *
 * The files the service reads at run time that tsc does not emit are copied beside the code that reads
 * them: the artifact browser's page, stylesheet and script modules (src/ui → dist/ui, read by
 * src/node/assets.ts). The migrations stay in migrations/ at the package root, where
 * src/db/sqlite/connection.ts finds them from src/ and dist/ alike. Each dist/ is emptied first, so a file
 * deleted from src/ never lingers in a packed package.
 *
 * `node scripts/build.mjs sdk` builds the SDK alone.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
/** The source folders that make up artifact-store-sdk. */
export const SDK_FOLDERS = ['core', 'client', 'mcp', 'adk', 'ai-sdk', 'langchain'];
const SDK_NAME = 'artifact-store-sdk';

function compile(project, outDir) {
  rmSync(outDir, { recursive: true, force: true });
  execFileSync(process.execPath, [tsc, '-p', project], { cwd: root, stdio: 'inherit' });
}

function* filesUnder(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* filesUnder(path);
    else yield path;
  }
}

// Relative specifiers in emitted code and declarations: `from '…'`, `import '…'`, `import('…')`.
const SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.\.?\/[^'"\n]*)\2/g;

/** The server's dist/ without the SDK's folders, its imports of them pointed at the SDK package. */
function pointAtSdk(dist) {
  const inSdk = new RegExp(`^(${SDK_FOLDERS.join('|')})/`);
  for (const file of filesUnder(dist)) {
    if (!/\.(js|d\.ts)$/.test(file)) continue;
    const rel = relative(dist, file).split(sep).join('/');
    if (inSdk.test(rel)) continue;
    const text = readFileSync(file, 'utf8');
    const rewritten = text.replace(SPECIFIER, (whole, lead, quote, spec) => {
      const target = relative(dist, resolve(dirname(file), spec))
        .split(sep)
        .join('/');
      return inSdk.test(target) ? `${lead}${quote}${SDK_NAME}/internal/${target}${quote}` : whole;
    });
    if (rewritten !== text) writeFileSync(file, rewritten);
  }
  for (const folder of SDK_FOLDERS) rmSync(join(dist, folder), { recursive: true, force: true });
}

const only = process.argv[2];
compile('packages/sdk/tsconfig.build.json', join(root, 'packages', 'sdk', 'dist'));
if (only !== 'sdk') {
  const dist = join(root, 'dist');
  compile('tsconfig.build.json', dist);
  pointAtSdk(dist);
  // The browser's files as they are (no bundler): the page, its stylesheet and its script modules, not the
  // type declarations and tsconfig that only `npm run typecheck` reads.
  const ui = join(root, 'src', 'ui');
  mkdirSync(join(dist, 'ui'), { recursive: true });
  for (const name of readdirSync(ui)) {
    if (/\.(html|css|js)$/.test(name)) copyFileSync(join(ui, name), join(dist, 'ui', name));
  }
}
