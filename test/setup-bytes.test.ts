// The byte comparison test/setup-bytes.ts gives toEqual keeps its meaning.
import { describe, expect, it } from 'vitest';

describe('byte arrays under toEqual', () => {
  it('equal bytes are equal; one byte off, or one byte more, is not', () => {
    const big = new Uint8Array(3 * 1024 * 1024).map((_, i) => (i * 31) % 251);
    expect(big.slice()).toEqual(big);
    const off = big.slice();
    off[off.length - 1]! ^= 1;
    expect(off).not.toEqual(big);
    expect(new Uint8Array([1, 2, 3])).not.toEqual(new Uint8Array([1, 2]));
  });

  it('compares the views, not the memory behind them', () => {
    const backing = new Uint8Array([9, 1, 2, 3, 9]);
    expect(backing.subarray(1, 4)).toEqual(new Uint8Array([1, 2, 3]));
    expect(backing.subarray(0, 3)).not.toEqual(new Uint8Array([1, 2, 3]));
  });

  it('a Buffer against a Uint8Array, and other typed arrays, compare as vitest compares them', () => {
    expect(Buffer.from([1, 2])).not.toEqual(new Uint8Array([1, 2]));
    expect(Buffer.from([1, 2])).toEqual(Buffer.from([1, 2]));
    expect(new Uint16Array([1, 2])).toEqual(new Uint16Array([1, 2]));
    expect(new Uint16Array([1, 2])).not.toEqual(new Uint16Array([1, 3]));
  });
});
