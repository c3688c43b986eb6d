// After each test file: nothing it started through test/helpers/processes.ts keeps running.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { stopAllProcesses } from './helpers/processes.js';

// The services a test file starts record themselves (src/cli/data-dir.ts) in a folder of that file's
// own, not in the user's home: the ops commands it runs find its services and no other file's.
const state = mkdtempSync(join(tmpdir(), 'artifact-store-state-'));
process.env.XDG_STATE_HOME = state;

afterAll(async () => {
  await stopAllProcesses();
  rmSync(state, { recursive: true, force: true });
});
