/**
 * parseJsonText: JSON.parse for big text blocks, with long base64 string literals taken from the text
 * as slices instead of going through the parser. Whatever the text, it returns what JSON.parse
 * returns and throws where JSON.parse throws.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { parseJsonText } from '../src/mcp/parse-text.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const b64 = (bytes: number) => randomBytes(bytes).toString('base64');
const b64url = (bytes: number) => randomBytes(bytes).toString('base64url');
const rows = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ id: i, name: `row ${i}`, note: 'a "quoted" \\ value' }));

/** The lengths of the texts JSON.parse was given while `fn` ran. */
function parsedLengths(fn: () => void): number[] {
  const spy = vi.spyOn(JSON, 'parse');
  try {
    fn();
    return spy.mock.calls.map((call) => String(call[0]).length);
  } finally {
    spy.mockRestore();
  }
}

/** Parses `text` with both; expects the same value. Returns the lengths parseJsonText gave JSON.parse. */
function parsesAlike(text: string): number[] {
  const expected = JSON.parse(text) as unknown;
  let got: unknown;
  const lengths = parsedLengths(() => {
    got = parseJsonText(text);
  });
  expect(got).toEqual(expected);
  return lengths;
}

describe('parseJsonText', () => {
  it('parses a big text without its long base64 literal, and returns what JSON.parse returns', () => {
    const text = JSON.stringify({ rows: rows(2000), content: b64(1.5 * MiB), name: 'Sales.pdf' });
    const lengths = parsesAlike(text);
    // The parser saw the rows and a marker, not the 2 MiB literal.
    expect(lengths).toHaveLength(1);
    expect(lengths[0]).toBeLessThan(text.length - 2 * MiB + 1000);
  });

  it('cuts several literals: in arrays, nested, indented, either alphabet, padded or not', () => {
    const doc = {
      files: [b64(200 * KiB), { deep: { url: b64url(300 * KiB + 1) } }],
      one: b64(MiB + 1),
      two: b64(MiB + 2),
      small: b64(1000),
    };
    const text = JSON.stringify(doc, null, 2);
    const lengths = parsesAlike(text);
    expect(lengths).toHaveLength(1);
    expect(lengths[0]).toBeLessThan(100 * KiB);
  });

  it('parses the plain way what is not a plain base64 value, with the same result', () => {
    const big = b64(MiB);
    const cases = {
      // PHP's json_encode escapes "/" by default: the literal holds escapes.
      'escaped slashes': `{"a":"${big.replace(/\//g, '\\/')}"}`,
      'a data: URL with an escaped slash in its header': `{"a":"data:image\\/png;base64,${big}"}`,
      'a data: URL whose body is not plain base64': JSON.stringify({ a: `data:application/pdf;base64,${big} ` }),
      'an object key': `{"${b64(100 * KiB)}":1,"pad":"${'x'.repeat(MiB)} "}`,
      // 200 KiB encode with one "=" at their end.
      '"=" in the middle': JSON.stringify({ a: `${b64(200 * KiB)}${big}` }),
      'inside another string, after an escaped quote': `{"a":"x\\"${big}\\"y"}`,
      // 4n + 1 characters, the last one a space the decoder would skip.
      'a space after a megabyte of base64 characters': `{"a":"${'A'.repeat(MiB)} "}`,
    };
    for (const [name, text] of Object.entries(cases)) {
      const lengths = parsesAlike(text);
      expect(lengths, name).toEqual([text.length]);
    }
  });

  it('cuts a base64 data: URL, header and all, and returns the same string', () => {
    const cases = [
      `data:application/pdf;base64,${b64(MiB)}`,
      `data:image/svg+xml;charset=utf-8;base64,${b64(MiB + 1)}`,
      `data:;base64,${b64url(MiB + 2)}`,
    ];
    for (const url of cases) {
      const text = JSON.stringify({ rows: rows(100), a: url, b: 'after' });
      const lengths = parsesAlike(text);
      expect(lengths).toHaveLength(1);
      expect(lengths[0]).toBeLessThan(100 * KiB);
    }
  });

  it('cuts a literal that is an array item, and one that ends the text', () => {
    const big = b64(MiB + 100);
    expect(parsesAlike(`[ "${big}" ]`)[0]).toBeLessThan(100);
    expect(parsesAlike(`{"a":[1,"${big}"]}`)[0]).toBeLessThan(100);
  });

  it('throws where JSON.parse throws', () => {
    const half = b64(600 * KiB);
    const broken = {
      // A raw line break inside a string is not JSON: the literal is not cut, the parse fails.
      'a raw line break inside the literal': `{"a":"${half}\n${half}"}`,
      'a raw tab inside the literal': `{"a":"${half}\t${half}"}`,
      'a trailing comma elsewhere': `{"a":"${half}${half}","b":[1,2,],"c":1}`,
      'an unquoted key': `{"a":"${half}${half}",b:1}`,
    };
    for (const [name, text] of Object.entries(broken)) {
      expect(() => JSON.parse(text), name).toThrow(SyntaxError);
      expect(() => parseJsonText(text), name).toThrow(SyntaxError);
    }
  });

  it('keeps the last of duplicate keys, as JSON.parse does', () => {
    const big = b64(MiB + 3);
    expect(parsesAlike(`{"a":"${big}","a":1}`)[0]).toBeLessThan(100);
    expect(parseJsonText(`{"a":"${big}","a":1}`)).toEqual({ a: 1 });
    expect(parseJsonText(`{"a":1,"a":"${big}"}`)).toEqual({ a: big });
  });

  it('puts a literal back under "__proto__" as an own property, not the prototype', () => {
    const big = b64(MiB + 4);
    const got = parseJsonText(`{"__proto__":"${big}","b":1}`) as Record<string, unknown>;
    expect(Object.getPrototypeOf(got)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(got, '__proto__')?.value).toBe(big);
    expect(got.b).toBe(1);
  });

  it('hands texts under 1 MiB to JSON.parse as they are', () => {
    const text = JSON.stringify({ content: b64(300 * KiB) });
    expect(parsesAlike(text)).toEqual([text.length]);
  });
});
