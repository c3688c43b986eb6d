/**
 * Loaded with `node --import`: appends the URL of every module the process resolves (node: builtins
 * left out) to the file named by RECORD_IMPORTS, one per line. Tests use it to see what a command
 * loads.
 */
import { register } from 'node:module';

register(new URL('./record-imports-hooks.mjs', import.meta.url), { data: process.env.RECORD_IMPORTS });
