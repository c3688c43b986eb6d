/**
 * The fenced code blocks of README.md, CONTRIBUTING.md and docs/*.md, and the marker comment that
 * says how each one is proven to work:
 *
 *   <!-- example: examples/sdk.ts#quickstart -->   the block is that region of the file (or the whole file)
 *   <!-- run: test/docs.test.ts#cli-walkthrough --> that test looks the block up by its id and runs it
 *   <!-- not run: output of npm start -->           it cannot run here, for the reason given
 *
 * Example files mark regions with `// #region name` and `// #endregion` on lines of their own (`# #region`
 * and `# #endregion` in Python). After
 * changing an example (or formatting it), `npx tsx test/doc-blocks.ts --write` copies every region
 * back into the blocks that show it.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { CLI_ARGS } from './helpers/cli-server.js';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

export type Marker =
  | { kind: 'example'; file: string; region?: string }
  | { kind: 'run'; test: string; id: string }
  | { kind: 'not-run'; reason: string }
  | { kind: 'unknown'; text: string };

export interface DocBlock {
  /** The Markdown file, relative to the repository root. */
  doc: string;
  /** 1-based line of the opening fence. */
  line: number;
  lang: string;
  /** The lines between the fences, joined with \n (no trailing newline). */
  body: string;
  /** The HTML comment on the line right before the fence, if any. */
  marker?: Marker;
}

/** README.md, CONTRIBUTING.md and every docs/*.md, relative to the root. */
export function docFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`);
  return ['README.md', 'CONTRIBUTING.md', ...docs];
}

export function readDoc(doc: string): string {
  return readFileSync(join(ROOT, doc), 'utf8');
}

function parseMarker(line: string): Marker | undefined {
  const m = /^<!--\s*([\s\S]*?)\s*-->$/.exec(line.trim());
  if (!m) return undefined;
  const text = m[1]!;
  const example = /^example:\s*(\S+?)(?:#(\S+))?$/.exec(text);
  if (example) return { kind: 'example', file: example[1]!, ...(example[2] ? { region: example[2] } : {}) };
  const run = /^run:\s*(\S+)#(\S+)$/.exec(text);
  if (run) return { kind: 'run', test: run[1]!, id: run[2]! };
  const notRun = /^not run:\s*([\s\S]*)$/.exec(text);
  if (notRun) return { kind: 'not-run', reason: notRun[1]!.trim() };
  return { kind: 'unknown', text };
}

/** Every fenced block of one Markdown file, with its marker. */
export function blocksOf(doc: string): DocBlock[] {
  const lines = readDoc(doc).split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(`{3,})(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const fence = open[1]!;
    let end = i + 1;
    while (end < lines.length && lines[end]!.trimEnd() !== fence) end++;
    if (end === lines.length) throw new Error(`${doc}:${i + 1}: a code block that never closes`);
    const marker = i > 0 ? parseMarker(lines[i - 1]!) : undefined;
    const body = lines.slice(i + 1, end).join('\n');
    blocks.push({ doc, line: i + 1, lang: open[2]!, body, ...(marker ? { marker } : {}) });
    i = end;
  }
  return blocks;
}

/** The block a test runs: the one marked `<!-- run: <test>#<id> -->` in `doc`. */
export function runBlock(doc: string, id: string): string {
  const found = blocksOf(doc).filter((b) => b.marker?.kind === 'run' && b.marker.id === id);
  if (found.length !== 1) throw new Error(`${doc} has ${found.length} blocks marked run: …#${id} (expected one)`);
  return found[0]!.body;
}

/** How an example file comments a region marker: `//` in TypeScript, `#` in Python. */
export const commentOf = (file: string) => (file.endsWith('.py') ? '#' : '//');

/** A whole example file, or the lines between `// #region <name>` and `// #endregion`. */
export function exampleText(file: string, region?: string): string {
  const text = readFileSync(join(ROOT, file), 'utf8');
  if (!region) return text.replace(/\n$/, '');
  const c = commentOf(file);
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.trim() === `${c} #region ${region}`);
  if (start < 0) throw new Error(`${file} has no "${c} #region ${region}"`);
  const end = lines.findIndex((l, i) => i > start && l.trim() === `${c} #endregion`);
  if (end < 0) throw new Error(`${file}: region ${region} has no "${c} #endregion"`);
  return lines.slice(start + 1, end).join('\n');
}

/** Region names of an example file, in order. */
export function regionsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const c = commentOf(file) === '#' ? '#' : '\\/\\/';
  return [...text.matchAll(new RegExp(`^\\s*${c} #region (\\S+)\\s*$`, 'gm'))].map((m) => m[1]!);
}

/**
 * Runs examples/<name> as a reader would (`npx tsx examples/<name>`): Node with tsx's loader, from
 * the repository root, with the given ARTIFACT_STORE_* variables and no others inherited.
 */
export async function runExample(name: string, env: Record<string, string> = {}, timeout = 60_000): Promise<string> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ARTIFACT_STORE_')));
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', join(ROOT, 'examples', name)], {
    cwd: ROOT,
    env: { ...inherited, ...env },
    timeout,
    encoding: 'utf8',
  });
  return stdout;
}

/**
 * Bash that makes `npx artifact-store …` run this checkout's CLI, from source, from any folder (npx would
 * look for the package elsewhere outside the repository), so a block can run as written in a scratch folder.
 */
export const CLI_SHIM = `npx() {
  if [ "$1" = artifact-store ]; then shift; node ${CLI_ARGS.map((a) => JSON.stringify(a)).join(' ')} "$@"
  else command npx "$@"; fi
}
`;

/** Runs a bash script (with `set -euo pipefail`) asynchronously: a server answering it may live in this process. */
export async function runBash(
  script: string,
  options: { cwd: string; env?: Record<string, string>; timeout?: number },
): Promise<string> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ARTIFACT_STORE_')));
  const { stdout } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', script], {
    cwd: options.cwd,
    env: { ...inherited, ...options.env },
    timeout: options.timeout ?? 120_000,
    encoding: 'utf8',
  });
  return stdout;
}

/** Rewrites every `<!-- example: … -->` block of the pages from its region; returns the pages changed. */
export function writeExampleBlocks(): string[] {
  const changed: string[] = [];
  for (const doc of docFiles()) {
    const before = readDoc(doc);
    const lines = before.split('\n');
    const out: string[] = [];
    for (let i = 0; i < lines.length; i++) {
      out.push(lines[i]!);
      const marker = parseMarker(lines[i]!);
      const fence = /^(`{3,})/.exec(lines[i + 1] ?? '')?.[1];
      if (marker?.kind !== 'example' || !fence) continue;
      let end = i + 2;
      while (end < lines.length && lines[end]!.trimEnd() !== fence) end++;
      out.push(lines[i + 1]!, ...exampleText(marker.file, marker.region).split('\n'), lines[end]!);
      i = end;
    }
    const after = out.join('\n');
    if (after !== before) {
      writeFileSync(join(ROOT, doc), after);
      changed.push(doc);
    }
  }
  return changed;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href && process.argv.includes('--write')) {
  const changed = writeExampleBlocks();
  const done = changed.length
    ? `rewrote the example blocks of ${changed.join(', ')}`
    : 'every example block matches its region';
  console.log(done);
}
