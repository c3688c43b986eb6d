import type { WorkValue } from './json.js';

/**
 * Field paths of the per-tool layer: dot-separated keys, `[N]` for one array item and `[*]` for
 * every item (`content`, `result.pdf_data`, `files[*].data`, `[*].image`).
 */
export type PathSegment = { key: string } | { index: number } | { any: true };

const PATH_SHAPE = /^(?:[^.[\]]+|\[(?:\*|\d+)\])(?:\.[^.[\]]+|\[(?:\*|\d+)\])*$/;

export function parseFieldPath(path: string): PathSegment[] {
  if (!PATH_SHAPE.test(path)) {
    throw new Error(
      `Invalid field path ${JSON.stringify(path)}: use dot-separated keys with [N] or [*] for arrays, as in "files[*].data".`,
    );
  }
  const segments: PathSegment[] = [];
  for (const m of path.matchAll(/([^.[\]]+)|\[(\*|\d+)\]/g)) {
    if (m[1] !== undefined) segments.push({ key: m[1] });
    else segments.push(m[2] === '*' ? { any: true } : { index: Number(m[2]) });
  }
  return segments;
}

/** A place in a document: `parent[key]` holds the value. */
export interface FieldSite {
  parent: Record<string, WorkValue> | WorkValue[];
  key: string | number;
  value: WorkValue;
  /** The concrete path (`files[2].data`), for summaries and sources. */
  path: string;
}

/** Every place the path matches; missing keys and type mismatches simply match nothing. */
export function resolveFieldPath(root: WorkValue, segments: PathSegment[]): FieldSite[] {
  let frontier: { value: WorkValue; parent?: FieldSite['parent']; key?: string | number; path: string }[] = [
    { value: root, path: '' },
  ];
  for (const seg of segments) {
    const next: typeof frontier = [];
    for (const node of frontier) {
      const v = node.value;
      if ('key' in seg) {
        if (isPlainObject(v) && Object.hasOwn(v, seg.key))
          next.push({
            value: v[seg.key]!,
            parent: v,
            key: seg.key,
            path: node.path ? `${node.path}.${seg.key}` : seg.key,
          });
      } else if (Array.isArray(v)) {
        const indexes = 'any' in seg ? v.keys() : seg.index < v.length ? [seg.index] : [];
        for (const i of indexes) next.push({ value: v[i]!, parent: v, key: i, path: `${node.path}[${i}]` });
      }
    }
    frontier = next;
  }
  return frontier
    .filter((n): n is Required<typeof n> => n.parent !== undefined)
    .map((n) => ({ parent: n.parent, key: n.key, value: n.value, path: n.path }));
}

export function isPlainObject(v: unknown): v is Record<string, WorkValue> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;
}
