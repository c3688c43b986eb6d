/**
 * The artifact browser writes sizes with its own formatBytes (src/ui/format.js: the browser cannot
 * import src/core), which must follow the server's rule exactly.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatBytes } from '../src/core/bytes.js';

const KiB = 1024;
const MiB = KiB * 1024;
const GiB = MiB * 1024;
const TiB = GiB * 1024;

// Loaded as the browser loads it: a plain ES module, type-checked by src/ui/tsconfig.json rather than here.
const ui = (await import(new URL('../src/ui/format.js', import.meta.url).href)) as { formatBytes: typeof formatBytes };

const TABLE: [number, string][] = [
  [0, '0 B'],
  [1, '1 B'],
  [1023, '1023 B'],
  [KiB, '1.0 KiB'],
  [KiB + 1, '1.0 KiB'],
  [1.5 * KiB, '1.5 KiB'],
  [10188, '9.9 KiB'],
  [10189, '10.0 KiB'],
  [10 * KiB - 1, '10.0 KiB'],
  [10 * KiB, '10 KiB'],
  [49356, '48 KiB'],
  [256 * KiB, '256 KiB'],
  [703 * KiB, '703 KiB'],
  [MiB - 1, '1024 KiB'],
  [MiB, '1.0 MiB'],
  [1.5 * MiB, '1.5 MiB'],
  [10 * MiB - 1, '10.0 MiB'],
  [GiB, '1.0 GiB'],
  [3 * GiB, '3.0 GiB'],
  [5 * TiB, '5.0 TiB'],
  [1024 * TiB, '1024 TiB'],
  [Number.MAX_SAFE_INTEGER, '8192 TiB'],
];

describe('the UI formatBytes', () => {
  it.each(TABLE)('%d bytes → %s, as the server writes it', (n, text) => {
    expect(formatBytes(n)).toBe(text);
    expect(ui.formatBytes(n)).toBe(text);
  });

  it('agrees with the server on every size near a unit or rounding edge, and on random ones', () => {
    for (const unit of [1, KiB, MiB, GiB, TiB]) {
      for (const at of [1, 9.95, 10, 1023.5, 1024]) {
        for (let d = -2; d <= 2; d++) {
          const n = Math.max(0, Math.round(at * unit) + d);
          expect(ui.formatBytes(n), `${n}`).toBe(formatBytes(n));
        }
      }
    }
    fc.assert(
      fc.property(fc.maxSafeNat(), (n) => ui.formatBytes(n) === formatBytes(n)),
      { numRuns: 10_000 },
    );
  });
});
