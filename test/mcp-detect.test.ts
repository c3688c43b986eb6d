import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { cleanBase64, CorruptBase64Error, decodeClean } from '../src/mcp/detect.js';

describe('decodeClean on payloads decoded a megabyte at a time', () => {
  it('round-trips base64 and base64url of every length class across step boundaries', () => {
    for (const n of [3 * (1 << 18), 3 * (1 << 18) + 1, 3 * (1 << 18) + 2, 5_000_001]) {
      const bytes = randomBytes(n);
      for (const enc of ['base64', 'base64url'] as const)
        expect(Buffer.from(decodeClean(cleanBase64(bytes.toString(enc)))).equals(bytes), `${n} bytes as ${enc}`).toBe(
          true,
        );
    }
  });

  it('refuses a "=" that ends a step in the middle, and a stray character', () => {
    const s = randomBytes(3_000_000).toString('base64');
    expect(() => decodeClean(cleanBase64(`${s.slice(0, (1 << 20) - 2)}==${s.slice(1 << 20)}`))).toThrow(
      CorruptBase64Error,
    );
    expect(() => decodeClean(cleanBase64(`${s.slice(0, 2_000_001)}*${s.slice(2_000_002)}`))).toThrow(
      CorruptBase64Error,
    );
  });
});
