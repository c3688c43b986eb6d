// Byte arrays compared by toEqual / toStrictEqual in one native call, not element by element: vitest's
// deep equality walks a typed array one index at a time, which took 16 s for two 3 MiB arrays. Only
// arrays of the same class are taken here (vitest tells a Buffer from a Uint8Array; anything else
// falls back to its own comparison), and a difference is still shown as vitest's diff.
import { Buffer } from 'node:buffer';
import { expect } from 'vitest';

expect.addEqualityTesters([
  function sameBytes(a: unknown, b: unknown): boolean | undefined {
    if (!(a instanceof Uint8Array) || !(b instanceof Uint8Array) || a.constructor !== b.constructor) return undefined;
    return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
  },
]);
