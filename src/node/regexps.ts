/**
 * Switches on V8's linear-time regexp engine for this process (see src/service/views/pattern.ts): the
 * `l` flag then parses, so a search pattern can be checked to run in linear time, and any regexp that
 * backtracks more than 50,000 times finishes its match on the linear engine instead of stalling the
 * event loop. Flags set here apply to regexps compiled afterwards; setting them twice is harmless.
 */
import { setFlagsFromString } from 'node:v8';

export function enableLinearRegExps(): void {
  setFlagsFromString('--enable-experimental-regexp-engine');
  setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');
}
