/**
 * Browser bundle rows: what an in-memory store costs a page, which decides whether the SDK keeps a
 * store of its own. The SDK's in-memory store (src/client/memory-store.ts) against what a browser
 * would need to run the service's own rules instead: the service, the embedded store, the D1
 * repository (the SQL plans over a D1-like API) and the memory blob store, plus a WebAssembly SQLite
 * to run the plans in (sql.js, packed from npm into the bench's folder, never a dependency). Both
 * bundles are made by esbuild for the browser, minified, as a page's build would; sizes are of their
 * gzip (level 9), whole and beyond the SDK's HTTP store (what each adds to a page that has it). The
 * service-backed side is a lower bound: it leaves out the adapter from D1's API to sql.js's and a
 * sha256 for the memory blob store (a browser has no streaming one).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { REPO_ROOT } from './children.js';
import { infoRow, markdownTable, type Row, type Samples } from './report.js';

/** The WebAssembly SQLite measured, pinned so the row is repeatable, and the files a page loads. */
const ENGINE = {
  spec: 'sql.js@1.17.0',
  files: ['package/dist/sql-wasm-browser.wasm', 'package/dist/sql-wasm-browser.js'],
};

/** The two sides, as entry modules over the sources, and the SDK's HTTP store, which a page has anyway. */
const ENTRIES = {
  sdk: "export { createInMemoryArtifactStore } from './src/client/memory-store.ts';",
  service: [
    "export { createArtifactService } from './src/service/artifact-service.ts';",
    "export { createEmbeddedArtifactStore } from './src/service/embedded-store.ts';",
    "export { createD1Repository } from './src/db/d1.ts';",
    "export { createMemoryBlobStore } from './src/blob/memory.ts';",
  ].join('\n'),
  http: "export { createHttpArtifactStore } from './src/client/http-store.ts';",
};

/** Gzipped bytes of a set of files (each file's gzip, added up: a page fetches them apart). */
const gzipSize = (parts: Uint8Array[]): number => parts.reduce((n, p) => n + gzipSync(p, { level: 9 }).byteLength, 0);

/** The gzipped bundle of one entry for the browser, minified; a Node built-in reaching it fails the build. */
async function bundleSize(contents: string): Promise<number> {
  const result = await build({
    stdin: { contents, resolveDir: REPO_ROOT, loader: 'ts', sourcefile: 'entry.ts' },
    bundle: true,
    minify: true,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  return gzipSize(result.outputFiles.map((f) => f.contents));
}

function run(command: string, args: string[], cwd: string): Promise<string> {
  return new Promise((ok, fail) =>
    execFile(command, args, { cwd, encoding: 'utf8' }, (err, stdout, stderr) =>
      err ? fail(new Error(`${command} ${args.join(' ')} failed in ${cwd}:\n${stderr.slice(-2000)}`)) : ok(stdout),
    ),
  );
}

/** The engine's files gzipped, from its npm tarball packed into `dir`. */
async function engineSize(dir: string): Promise<number> {
  mkdirSync(dir, { recursive: true });
  const packed = JSON.parse(await run('npm', ['pack', ENGINE.spec, '--json', '--pack-destination', dir], dir)) as {
    filename: string;
  }[];
  await run('tar', ['xzf', join(dir, packed[0]!.filename), '-C', dir, ...ENGINE.files], dir);
  return gzipSize(ENGINE.files.map((f) => readFileSync(join(dir, f))));
}

const kib = (bytes: number) => bytes / 1024;
const pair = (sdk: number, service: number): Samples => ({ service: [kib(sdk)], baseline: [kib(service)] });

/** The browser rows (sizes do not vary between rounds, so each is measured once). */
export async function browserSizeRows(options: {
  work: string;
  progress: (msg: string) => void;
}): Promise<{ rows: Row[]; problems: string[] }> {
  try {
    options.progress(`browser: bundling both in-memory stores with esbuild, packing ${ENGINE.spec}`);
    const sdk = await bundleSize(ENTRIES.sdk);
    const service = await bundleSize(ENTRIES.service);
    // What each adds to a page that has the HTTP store (most of either bundle is zod, which every entry loads).
    const http = await bundleSize(ENTRIES.http);
    const sdkBeyond = (await bundleSize(`${ENTRIES.http}\n${ENTRIES.sdk}`)) - http;
    const serviceBeyond = (await bundleSize(`${ENTRIES.http}\n${ENTRIES.service}`)) - http;
    const engine = await engineSize(join(options.work, 'browser-engine'));
    const label = `the service-backed store: service, embedded store, D1 repository, memory blobs + ${ENGINE.spec}`;
    return {
      rows: [
        infoRow(`browser: the SDK's in-memory store, KiB gzip (baseline: ${label})`, pair(sdk, service + engine), 1),
        infoRow(
          `browser: the same, KiB gzip beyond the SDK's HTTP store (baseline: ${label})`,
          pair(sdkBeyond, serviceBeyond + engine),
          1,
        ),
        infoRow(
          `browser: of that baseline, KiB gzip: the service's code (baseline: ${ENGINE.spec}'s wasm and loader)`,
          pair(service, engine),
          1,
        ),
      ],
      problems: [],
    };
  } catch (err) {
    return { rows: [], problems: [`browser: ${err instanceof Error ? err.message : String(err)}`] };
  }
}

// `npx tsx bench/browser-size.ts`: these rows alone, as a table (the bench runs them in its install section).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const work = mkdtempSync(join(tmpdir(), 'artifact-store-browser-'));
  try {
    const { rows, problems } = await browserSizeRows({ work, progress: (msg) => process.stderr.write(`${msg}\n`) });
    console.log(markdownTable(rows));
    for (const problem of problems) console.error(problem);
    if (problems.length > 0) process.exitCode = 1;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
