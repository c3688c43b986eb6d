// After each test file: nothing it started through test/helpers/processes.ts keeps running.
import { afterAll } from 'vitest';
import { stopAllProcesses } from './helpers/processes.js';

afterAll(stopAllProcesses);
