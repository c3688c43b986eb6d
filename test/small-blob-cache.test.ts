import { describe, expect, it } from 'vitest';
import { createSmallBlobCache } from '../src/service/small-blob-cache.js';

const bytes = (n: number, fill = 1) => new Uint8Array(n).fill(fill);

describe('small blob cache', () => {
  it('keeps total bytes within its budget, evicting the least recently used first', () => {
    const cache = createSmallBlobCache(300);
    cache.set('a', bytes(100, 1));
    cache.set('b', bytes(100, 2));
    cache.set('c', bytes(100, 3));
    expect(cache.get('a')?.[0]).toBe(1); // a is now the most recent
    cache.set('d', bytes(100, 4)); // over budget: b (least recent) goes
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')?.[0]).toBe(1);
    expect(cache.get('c')?.[0]).toBe(3);
    expect(cache.get('d')?.[0]).toBe(4);
    expect(cache.sizeBytes).toBe(300);
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

  it('delete frees the bytes', () => {
    const cache = createSmallBlobCache(100);
    cache.set('a', bytes(60));
    cache.delete('a');
    expect(cache.get('a')).toBeUndefined();
    expect(cache.sizeBytes).toBe(0);
  });
});
