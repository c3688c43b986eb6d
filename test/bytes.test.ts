import { describe, expect, it } from 'vitest';
import { concatBytes, formatBytes } from '../src/core/bytes.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;
const TiB = 1024 * GiB;

describe('formatBytes', () => {
  it.each([
    [0, '0 B'],
    [1, '1 B'],
    [1023, '1023 B'],
    [1024, '1.0 KiB'],
    [1536, '1.5 KiB'],
    [10239, '10.0 KiB'],
    [10240, '10 KiB'],
    [49_356, '48 KiB'],
    [1_048_575, '1024 KiB'],
    [MiB, '1.0 MiB'],
    [2_411_520, '2.3 MiB'],
    [50 * MiB, '50 MiB'],
    [GiB, '1.0 GiB'],
    [5 * TiB, '5.0 TiB'],
    [2048 * TiB, '2048 TiB'],
  ])('%d bytes → %s', (n, text) => {
    expect(formatBytes(n)).toBe(text);
  });
});

describe('concatBytes', () => {
  it('joins chunks in order, and returns a single chunk as it is', () => {
    const one = new Uint8Array([1, 2]);
    expect(concatBytes([one])).toBe(one);
    expect([...concatBytes([one, new Uint8Array([]), new Uint8Array([3])])]).toEqual([1, 2, 3]);
  });
});
