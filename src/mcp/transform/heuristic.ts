/**
 * The heuristic layer: any string in the JSON that decodes to a recognised binary format (base64,
 * base64url, data: URLs, confirmed by magic bytes), and raw bytes from native tools.
 */
import {
  base64Candidate,
  cleanBase64,
  CorruptBase64Error,
  decodeHead,
  detectBinary,
  type CleanBase64,
  type DetectedType,
} from '../detect.js';
import { BinaryValue, depthMarker, type WorkValue } from '../json.js';
import { siblingVars } from '../summary.js';
import { nameFromSiblings, shortPath } from './names.js';
import {
  corrupt,
  isOutcomePlaceholder,
  placeholder,
  storeBase64,
  storeBytes,
  type Outcome,
  type PayloadContext,
} from './payloads.js';
import type { TransformRun } from './run.js';

/**
 * Stores every payload found under holder[rootKey]. `probe` false still stores raw bytes but probes no
 * strings; `parsedText` holds JSON parsed from a text block (not sanitized) to the depth limit.
 */
export async function applyHeuristics(
  run: TransformRun,
  holder: Record<string, WorkValue>,
  rootKey: string,
  probe: boolean,
  parsedText: boolean,
): Promise<void> {
  for (const { parent, key, path } of heuristicSites(run, holder, rootKey, probe, parsedText)) {
    const value = (parent as Record<string | number, WorkValue>)[key]!;
    const vars = siblingVars(parent);
    const ctx: PayloadContext = {
      layer: 'heuristic',
      where: shortPath(path) || 'result',
      vars,
      ...nameFromSiblings(vars),
    };
    if (value instanceof BinaryValue) {
      run.replace(parent, key, placeholder(await storeBytes(run, value.bytes, ctx)));
      continue;
    }
    const candidate = base64Candidate(value as string, run.config.minBase64Chars);
    if (!candidate) continue;
    const outcome = await probeCandidate(run, value as string, candidate, ctx);
    if (outcome) run.replace(parent, key, placeholder(outcome));
  }
}

/** A base64 candidate: stored only when its bytes are a recognised format (or it is a data: URL). */
export async function probeCandidate(
  run: TransformRun,
  raw: string,
  candidate: ReturnType<typeof base64Candidate> & object,
  ctx: PayloadContext,
): Promise<Outcome | undefined> {
  const memoized = run.memo.get(raw);
  if (memoized) return memoized;
  let clean: CleanBase64;
  try {
    clean = cleanBase64(candidate.body);
  } catch (err) {
    // A data: URL declared itself base64, so a bad body is corruption; a bare string was only a guess.
    if (candidate.dataUrl && err instanceof CorruptBase64Error) return corrupt(run, ctx, err, raw.length);
    return undefined;
  }
  let detected: DetectedType | undefined;
  try {
    detected = await detectBinary(decodeHead(clean));
  } catch (err) {
    if (candidate.dataUrl && err instanceof CorruptBase64Error) return corrupt(run, ctx, err, raw.length);
    return undefined;
  }
  // A data: URL is an explicit encoding, stored whatever its type; bare base64 needs a recognised format.
  if (!detected && !candidate.dataUrl) return undefined;
  if (candidate.declaredMime) ctx.declaredMime = candidate.declaredMime;
  return storeBase64(run, candidate.body, ctx, raw, { clean, detected });
}

interface Site {
  parent: Record<string, WorkValue> | WorkValue[];
  key: string | number;
  path: string;
}

interface SiteWalk {
  sites: Site[];
  /** Keys from the document root down to the current node. */
  keys: (string | number)[];
  minChars: number;
  maxDepth: number;
  tooDeep: (parent: Record<string, WorkValue> | WorkValue[], key: string | number) => void;
}

/** The places the heuristic looks at, in document order: see collectSites. */
function heuristicSites(
  run: TransformRun,
  holder: Record<string, WorkValue>,
  rootKey: string,
  probe: boolean,
  parsedText: boolean,
): Site[] {
  const { maxDepth, minBase64Chars } = run.config;
  const walk: SiteWalk = {
    sites: [],
    keys: [],
    minChars: probe ? minBase64Chars : Infinity,
    maxDepth: parsedText ? maxDepth : Infinity,
    tooDeep: (parent, key) => {
      // Parsed JSON text is not sanitized; hold it to the same depth limit.
      run.replace(parent, key, depthMarker(maxDepth));
      run.warn(`a subtree nested deeper than ${maxDepth} levels was replaced by a marker`);
    },
  };
  collectSites(walk, holder, rootKey, holder[rootKey]!, 0);
  return walk.sites;
}

/**
 * Collects strings long enough to hold a payload, and raw bytes, in one synchronous pass that
 * allocates nothing per node: tool output is mostly small values the walk only passes by, and a
 * site's path is built only for the sites. A module-level function and not a closure, so V8 keeps
 * its optimized code from one call to the next (a fresh closure per call starts cold after every
 * GC: 5 ms instead of 1 ms over 7,000 rows). Recursion is bounded by maxDepth, at most 5000: deeper
 * parsed JSON is cut here, and toJsonSafe cut everything else.
 */
function collectSites(
  walk: SiteWalk,
  parent: Record<string, WorkValue> | WorkValue[],
  key: string | number,
  value: WorkValue,
  depth: number,
): void {
  if (typeof value === 'string') {
    if (value.length >= walk.minChars) walk.sites.push({ parent, key, path: pathOf(walk.keys) });
    return;
  }
  if (value === null || typeof value !== 'object') return;
  if (value instanceof BinaryValue) {
    walk.sites.push({ parent, key, path: pathOf(walk.keys) });
    return;
  }
  if (depth >= walk.maxDepth) {
    walk.tooDeep(parent, key);
    return;
  }
  const { keys, minChars } = walk;
  // Values that cannot hold a payload are skipped here, without a call: most of a tool's output.
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item = value[i]!;
      if (typeof item === 'string' ? item.length < minChars : item === null || typeof item !== 'object') continue;
      keys.push(i);
      collectSites(walk, value, i, item, depth + 1);
      keys.pop();
    }
  } else if (!isOutcomePlaceholder(value)) {
    for (const k of Object.keys(value)) {
      const item = value[k]!;
      if (typeof item === 'string' ? item.length < minChars : item === null || typeof item !== 'object') continue;
      keys.push(k);
      collectSites(walk, value, k, item, depth + 1);
      keys.pop();
    }
  }
}

/** `a.b[2].c` from the keys below the document root. */
function pathOf(keys: readonly (string | number)[]): string {
  let path = '';
  for (const key of keys) {
    path = typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${key}` : key;
  }
  return path;
}
