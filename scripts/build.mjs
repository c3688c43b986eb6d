/**
 * `npm run build` (and `prepare`, which npm ci, npm pack and git installs run): dist/ from scratch.
 *
 * tsc compiles src/ into dist/; then the files the service reads at run time that tsc does not emit are
 * copied beside the code that reads them: the artifact browser's page, stylesheet and script modules
 * (src/ui → dist/ui, read by src/node/assets.ts). The migrations stay in migrations/ at the package root,
 * where src/db/sqlite/connection.ts finds them from src/ and dist/ alike. dist/ is emptied first, so a
 * file deleted from src/ never lingers in a packed package.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');

rmSync(dist, { recursive: true, force: true });
execFileSync(
  process.execPath,
  [createRequire(import.meta.url).resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
  {
    cwd: root,
    stdio: 'inherit',
  },
);

// The browser's files as they are (no bundler): the page, its stylesheet and its script modules, not the
// type declarations and tsconfig that only `npm run typecheck` reads.
const ui = join(root, 'src', 'ui');
mkdirSync(join(dist, 'ui'), { recursive: true });
for (const name of readdirSync(ui)) {
  if (/\.(html|css|js)$/.test(name)) copyFileSync(join(ui, name), join(dist, 'ui', name));
}
