/** What callers see of a stored reference: the rule lives in core/refs.ts, shared with the SDK's in-memory store. */
export { rowScope, rowToRef } from '../core/refs.js';
