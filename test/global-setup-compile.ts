import { compileSources } from './helpers/compiled-src.js';

/**
 * src/ compiled once for the run (test/helpers/compiled-src.ts), before any file starts: the CLI,
 * `serve` and gateway processes that tests start run it without tsx's loader.
 */
export default async function setup() {
  const started = performance.now();
  await compileSources();
  console.log(`Compiled src/ for the processes tests start in ${Math.round(performance.now() - started)} ms`);
}
