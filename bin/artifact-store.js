#!/usr/bin/env node
// The CLI, compiled: dist/ is what `npm run build` emits, and npm install, npm ci and npm pack run it
// (the `prepare` script). In this repository `npm start` and the tests run the TypeScript source instead.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const main = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  process.stderr.write(
    `artifact-store: ${fileURLToPath(main)} is missing: run npm run build in ${root} (an install with --ignore-scripts skips it).\n`,
  );
  process.exit(1);
}
await import(main.href);
