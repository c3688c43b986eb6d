import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createSmallBlobCache } from '../src/service/small-blob-cache.js';

const bytes = (n: number, fill = 1) => new Uint8Array(n).fill(fill);

describe('small blob cache', () => {
  it('keeps total bytes within its budget; a read entry is kept over older unread ones', () => {
    const cache = createSmallBlobCache(300);
    cache.set('a', bytes(100, 1));
    cache.set('b', bytes(100, 2));
    cache.set('c', bytes(100, 3));
    expect(cache.get('a')?.[0]).toBe(1); // a was the oldest: read, it moves to the front
    cache.set('d', bytes(100, 4)); // no room: b (oldest now) goes
    expect(cache.sizeBytes).toBe(300);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('d')?.[0]).toBe(4);
    expect(cache.get('a')?.[0]).toBe(1);
  });

  it('keeps a hot entry through a stream of new ones many times its budget', () => {
    const cache = createSmallBlobCache(1000);
    cache.set('hot', bytes(50, 7));
    for (let i = 0; i < 500; i++) {
      cache.set(`cold-${i}`, bytes(30, i % 256));
      if (i % 5 === 0) expect(cache.get('hot')?.[0]).toBe(7);
    }
    expect(cache.get('cold-0')).toBeUndefined();
    expect(cache.get('cold-499')?.[0]).toBe(499 % 256);
    expect(cache.sizeBytes).toBeLessThanOrEqual(1000);
  });

  it('returns a copy of the asked range, which later writes to the cache do not change', () => {
    const cache = createSmallBlobCache(64);
    cache.set('a', Uint8Array.from([0, 1, 2, 3, 4, 5, 6, 7]));
    const range = cache.get('a', 2, 4)!;
    expect([...range]).toEqual([2, 3, 4]);
    const whole = cache.get('a')!;
    for (let i = 0; i < 20; i++) cache.set(`x${i}`, bytes(16, 9)); // the whole arena is rewritten
    expect(cache.get('a')).toBeUndefined();
    expect([...range]).toEqual([2, 3, 4]);
    expect([...whole]).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('never holds an entry larger than the whole budget, and a zero budget caches nothing', () => {
    const cache = createSmallBlobCache(50);
    cache.set('big', bytes(51));
    expect(cache.get('big')).toBeUndefined();
    const off = createSmallBlobCache(0);
    off.set('x', bytes(1));
    expect(off.get('x')).toBeUndefined();
    expect(off.sizeBytes).toBe(0);
  });

  it('holds empty blobs too', () => {
    const cache = createSmallBlobCache(10);
    cache.set('empty', new Uint8Array(0));
    expect(cache.get('empty')?.byteLength).toBe(0);
  });

  it('delete frees the bytes', () => {
    const cache = createSmallBlobCache(100);
    cache.set('a', bytes(60));
    cache.delete('a');
    expect(cache.get('a')).toBeUndefined();
    expect(cache.sizeBytes).toBe(0);
  });

  it('under any sequence of sets, reads and deletes, a hit is exactly the bytes set and the budget holds', () => {
    const op = fc.oneof(
      fc.record({
        kind: fc.constant('set' as const),
        key: fc.integer({ min: 0, max: 30 }),
        size: fc.integer({ min: 0, max: 120 }),
      }),
      fc.record({
        kind: fc.constant('get' as const),
        key: fc.integer({ min: 0, max: 30 }),
        start: fc.integer({ min: 0, max: 130 }),
        len: fc.integer({ min: 1, max: 130 }),
      }),
      fc.record({ kind: fc.constant('delete' as const), key: fc.integer({ min: 0, max: 30 }) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 400 }), fc.array(op, { maxLength: 300 }), (budget, ops) => {
        const cache = createSmallBlobCache(budget);
        // What each key's bytes are (the cache is keyed by content, so a key's bytes never change).
        const content = (key: number, size: number) =>
          Uint8Array.from({ length: size }, (_, i) => (key * 31 + i * 7) % 256);
        const sizes = new Map<number, number>();
        for (const o of ops) {
          if (o.kind === 'set') {
            const size = sizes.get(o.key) ?? o.size;
            sizes.set(o.key, size);
            cache.set(`k${o.key}`, content(o.key, size));
          } else if (o.kind === 'delete') {
            cache.delete(`k${o.key}`);
          } else {
            const size = sizes.get(o.key);
            const got = cache.get(`k${o.key}`, Math.min(o.start, Math.max(0, (size ?? 0) - 1)), o.start + o.len - 1);
            if (got && size !== undefined) {
              const start = Math.min(o.start, Math.max(0, size - 1));
              expect([...got]).toEqual([...content(o.key, size).subarray(start, o.start + o.len)]);
            } else if (got) throw new Error('a hit on a key never set');
          }
          expect(cache.sizeBytes).toBeLessThanOrEqual(budget);
          expect(cache.sizeBytes).toBeGreaterThanOrEqual(0);
        }
        // The sizes of the keys held add up to sizeBytes (has() does not move anything; a read may).
        const held = [...sizes].filter(([key]) => cache.has(`k${key}`));
        expect(held.reduce((n, [, size]) => n + size, 0)).toBe(cache.sizeBytes);
        // Each key held reads back whole and intact, even as the reads move entries and evict others.
        for (const [key, size] of held) {
          const got = cache.get(`k${key}`);
          if (got) expect([...got]).toEqual([...content(key, size)]);
        }
      }),
      {
        numRuns: 1000,
        // Cases found before: a read that moves one entry and evicts another; an entry ending exactly where a new one starts.
        examples: [
          [
            8,
            [
              { kind: 'set', key: 26, size: 1 },
              { kind: 'set', key: 0, size: 4 },
              { kind: 'get', key: 26, start: 0, len: 1 },
              { kind: 'set', key: 1, size: 2 },
            ],
          ],
          [
            72,
            [
              { kind: 'set', key: 0, size: 41 },
              { kind: 'set', key: 1, size: 31 },
              { kind: 'set', key: 2, size: 1 },
            ],
          ],
        ],
      },
    );
  });
});
