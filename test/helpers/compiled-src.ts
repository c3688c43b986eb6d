/**
 * src/ compiled for the processes tests start (the CLI, `serve`, the gateway): each TypeScript file
 * transpiled on its own by esbuild, as tsx would at every start, once per test run instead
 * (test/global-setup-compile.ts). A CLI process under tsx spent 0.2-0.5 s of CPU in the loader before
 * its first line of its own, and the suite starts a few hundred of them.
 *
 * The layout keeps what the code finds from its own location: `<COMPILED_ROOT>/src/…` beside a
 * `migrations` link to the checkout's, under node_modules so that packages resolve as from src/,
 * and the package.json above it is the checkout's. Files are replaced one by one by rename, so a
 * process of another run in the same checkout never reads half a file.
 */
import {
  copyFileSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Where the compiled tree lives: `COMPILED_ROOT/src` mirrors the checkout's src/. */
export const COMPILED_ROOT = join(ROOT, 'node_modules', '.cache', 'artifact-store-tests');
export const COMPILED_SRC = join(COMPILED_ROOT, 'src');

function* filesUnder(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* filesUnder(path);
    else yield path;
  }
}

/** Writes `contents` to `path` through a temp file and a rename: readers see the old file or the new one. */
function replaceFile(path: string, write: (tmp: string) => void): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  write(tmp);
  renameSync(tmp, path);
}

/** Compiles src/ (not its tests) into COMPILED_SRC and links the migrations beside it. */
export async function compileSources(): Promise<void> {
  const src = join(ROOT, 'src');
  const files = [...filesUnder(src)];
  const typescript = files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !f.endsWith('.test.ts'));
  const result = await build({
    entryPoints: typescript,
    outbase: src,
    outdir: COMPILED_SRC,
    bundle: false,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    tsconfig: join(ROOT, 'tsconfig.json'),
    write: false,
    logLevel: 'silent',
  });
  for (const out of result.outputFiles) replaceFile(out.path, (tmp) => writeFileSync(tmp, out.contents));
  // What the code reads beside itself at run time: the artifact browser's files.
  for (const file of files.filter((f) => !f.endsWith('.ts'))) {
    replaceFile(join(COMPILED_SRC, relative(src, file)), (tmp) => copyFileSync(file, tmp));
  }
  const migrations = join(COMPILED_ROOT, 'migrations');
  let linked: string | undefined;
  try {
    linked = readlinkSync(migrations);
  } catch {
    linked = undefined;
  }
  if (linked !== join(ROOT, 'migrations')) {
    rmSync(migrations, { recursive: true, force: true });
    try {
      symlinkSync(join(ROOT, 'migrations'), migrations);
    } catch (err) {
      // Another run in this checkout linked it a moment ago.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}
