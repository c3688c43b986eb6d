/**
 * The package the CLI runs from: its version (`artifact-store --version`), and whether a clone's
 * compiled dist/ is older than its sources. The same code runs from src/ (tsx) and from dist/ (the
 * bin), so both are found from this module's own location.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = fileURLToPath(import.meta.url);

/** The folder of the nearest package.json above `file` named artifact-store, and its version. */
export function packageOf(file: string = HERE): { root: string; version: string } | undefined {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        const { name, version } = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version?: string };
        if (name === 'artifact-store' && typeof version === 'string') return { root: dir, version };
      } catch {
        // Not a manifest we can read: keep looking above.
      }
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** The newest modification time of the files under `dir`, in ms. */
function newestUnder(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    // Node 20 names the folder `path`, later ones `parentPath`.
    const parent = (entry as { parentPath?: string }).parentPath ?? (entry as { path?: string }).path ?? dir;
    newest = Math.max(newest, statSync(join(parent, entry.name)).mtimeMs);
  }
  return newest;
}

/**
 * When `file` is the compiled code of a clone (under ROOT/dist, with ROOT/src beside it) and a source
 * changed after it was built, a line saying so and how to rebuild; else undefined. An installed
 * package has no src/, so this says nothing there.
 */
export function staleBuildNote(file: string = HERE, pkg = packageOf(file)): string | undefined {
  if (!pkg) return undefined;
  const inDist = relative(join(pkg.root, 'dist'), file);
  const src = join(pkg.root, 'src');
  if (inDist.startsWith('..') || inDist.startsWith(sep) || !existsSync(src)) return undefined;
  try {
    if (newestUnder(src) <= statSync(file).mtimeMs) return undefined;
  } catch {
    return undefined;
  }
  return `artifact-store: note: this runs ${join(pkg.root, 'dist')}, built before the last change to ${src}: run npm run build in ${pkg.root} to run the current sources (npm start runs them without a build).`;
}
