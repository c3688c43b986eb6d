/**
 * Tool outputs are untrusted values: native tools hand back Dates, BigInts, Buffers, Maps, cycles and
 * structures thousands of levels deep. `toJsonSafe` copies any of that into plain JSON data the
 * transformer owns (and may rewrite), keeping raw bytes aside as `BinaryValue` so they get stored
 * instead of serialized as number arrays.
 */

/** Raw bytes met inside a native tool's output; the transformer replaces each with an ArtifactRef. */
export class BinaryValue {
  constructor(readonly bytes: Uint8Array) {}
}

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
/** JSON plus bytes not yet stored. */
export type WorkValue = null | boolean | number | string | BinaryValue | WorkValue[] | { [key: string]: WorkValue };

export interface SanitizeReport {
  circular: number;
  /** Subtrees replaced by a marker because they were nested deeper than maxDepth. */
  depthLimited: number;
}

export const CIRCULAR_MARKER = '[Circular reference]';
export const depthMarker = (maxDepth: number) => `[Nested deeper than ${maxDepth} levels: not shown]`;

/** Sets a key even when it is `__proto__` (an own property, as JSON.parse makes it). */
export function setKey(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/**
 * A JSON-safe copy with JSON.stringify's rules (undefined and functions dropped from objects, null in
 * arrays; NaN and Infinity → null) plus: bigint → decimal string, Date → ISO string, Error → name and
 * message, Map → object, Set → array, bytes → BinaryValue, cycles and over-deep subtrees → a marker
 * string (counted in the report, never thrown).
 */
export function toJsonSafe(value: unknown, maxDepth: number): { value: WorkValue; report: SanitizeReport } {
  const report: SanitizeReport = { circular: 0, depthLimited: 0 };
  const ancestors = new Set<object>();

  const visit = (v: unknown, depth: number): WorkValue | undefined => {
    switch (typeof v) {
      case 'string':
      case 'boolean':
        return v;
      case 'number':
        return Number.isFinite(v) ? v : null;
      case 'bigint':
        return v.toString();
      case 'undefined':
      case 'function':
      case 'symbol':
        return undefined;
    }
    if (v === null) return null;
    const obj = v as object;
    if (obj instanceof Uint8Array) return new BinaryValue(obj);
    if (obj instanceof ArrayBuffer) return new BinaryValue(new Uint8Array(obj));
    if (obj instanceof DataView) return new BinaryValue(new Uint8Array(obj.buffer, obj.byteOffset, obj.byteLength));
    if (obj instanceof BinaryValue) return obj;
    if (obj instanceof Date) return Number.isNaN(obj.getTime()) ? null : obj.toISOString();
    if (ancestors.has(obj)) {
      report.circular++;
      return CIRCULAR_MARKER;
    }
    if (depth >= maxDepth) {
      report.depthLimited++;
      return depthMarker(maxDepth);
    }
    ancestors.add(obj);
    try {
      if (ArrayBuffer.isView(obj))
        return Array.from(obj as unknown as ArrayLike<number>, (n) => visit(n, depth + 1) ?? null);
      if (Array.isArray(obj) || obj instanceof Set) {
        const out: WorkValue[] = [];
        for (const item of obj) out.push(visit(item, depth + 1) ?? null);
        return out;
      }
      const out: Record<string, WorkValue> = {};
      if (obj instanceof Map) {
        for (const [k, item] of obj) {
          const safe = visit(item, depth + 1);
          if (safe !== undefined) setKey(out, String(k), safe);
        }
        return out;
      }
      if (obj instanceof Error) return { name: obj.name, message: obj.message };
      const toJSON = (obj as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') {
        let replaced: unknown;
        try {
          replaced = toJSON.call(obj);
        } catch (err) {
          return `[Unreadable: ${(err as Error)?.message ?? String(err)}]`;
        }
        if (replaced !== obj) return visit(replaced, depth + 1) ?? null;
      }
      for (const key of Object.keys(obj)) {
        let item: unknown;
        try {
          item = (obj as Record<string, unknown>)[key];
        } catch (err) {
          item = `[Unreadable: ${(err as Error)?.message ?? String(err)}]`;
        }
        const safe = visit(item, depth + 1);
        if (safe !== undefined) setKey(out, key, safe);
      }
      return out;
    } finally {
      ancestors.delete(obj);
    }
  };

  return { value: visit(value, 0) ?? null, report };
}

/**
 * Serialized JSON length of a value, without building the string. Escapes are counted exactly in
 * strings up to 64 Ki characters; longer ones count as their length (they are over every budget and
 * get replaced, and scanning megabytes of base64 for quotes would cost as much as decoding it).
 *
 * With a `cap`, the walk stops as soon as the size passes it: the answer is exact when it is at most
 * `cap`, and otherwise only some number above `cap`. "Is this over the limit?" then costs no more
 * than the limit, however big the value.
 */
export function jsonSize(value: JsonValue | WorkValue, cap = Infinity): number {
  if (value === null) return 4;
  switch (typeof value) {
    case 'boolean':
      return value ? 4 : 5;
    case 'number':
      return numberSize(value);
    case 'string':
      return stringSize(value);
  }
  if (value instanceof BinaryValue) return Math.ceil(value.bytes.byteLength / 3) * 4 + 2;
  let total = 1;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length && total <= cap; i++) total += jsonSize(value[i]!, cap - total) + 1;
    if (value.length === 0) total += 1;
  } else {
    let n = 0;
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      total += stringSize(key) + 1 + jsonSize((value as Record<string, WorkValue>)[key]!, cap - total) + 1;
      n++;
      if (total > cap) break;
    }
    if (n === 0) total += 1;
  }
  return total;
}

/** Small integers are most numbers in tool output; counting their digits skips String(). */
function numberSize(n: number): number {
  if (Number.isInteger(n) && n >= 0 && n < 1e9)
    return n < 10
      ? 1
      : n < 100
        ? 2
        : n < 1000
          ? 3
          : n < 1e4
            ? 4
            : n < 1e5
              ? 5
              : n < 1e6
                ? 6
                : n < 1e7
                  ? 7
                  : n < 1e8
                    ? 8
                    : 9;
  return Number.isFinite(n) ? String(n).length : 4;
}

// Characters JSON escapes: ", \ and controls.
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what JSON escapes.
const NEEDS_ESCAPE = /["\\\u0000-\u001f]/;

const EXACT_UP_TO = 64 * 1024;

function stringSize(s: string): number {
  if (s.length > EXACT_UP_TO) return s.length + 2;
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s).length : s.length + 2;
}
