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
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
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
  /** The page's text between the previous block (or the page's start) and this one: what a reader was just told. */
  before: string;
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
  let proseStart = 0;
  for (let i = 0; i < lines.length; i++) {
    const open = /^(`{3,})(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const fence = open[1]!;
    let end = i + 1;
    while (end < lines.length && lines[end]!.trimEnd() !== fence) end++;
    if (end === lines.length) throw new Error(`${doc}:${i + 1}: a code block that never closes`);
    const marker = i > 0 ? parseMarker(lines[i - 1]!) : undefined;
    const body = lines.slice(i + 1, end).join('\n');
    const before = lines.slice(proseStart, marker ? i - 1 : i).join('\n');
    blocks.push({ doc, line: i + 1, lang: open[2]!, body, before, ...(marker ? { marker } : {}) });
    i = end;
    proseStart = end + 1;
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
 * Bash that makes `artifact-store …` (the command `npm install -g` of the package puts on PATH) run this
 * checkout's CLI, from source, from any folder, so a block can run as written in a scratch folder.
 * `npx artifact-store …` too, for a page not yet rewritten (test/docs.test.ts fails it: npx would fetch the
 * name from the registry).
 */
export const CLI_SHIM = `artifact-store() { node ${CLI_ARGS.map((a) => JSON.stringify(a)).join(' ')} "$@"; }
npx() {
  if [ "$1" = artifact-store ]; then shift; artifact-store "$@"
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

// ---- What a reader copies: every TypeScript and Python block compiles, and uses no name it never defines ----

/**
 * The packages' entries and the source file each is built from: what a snippet imports and is checked
 * against, what the package test rewrites the examples' imports to, and what test/public-surface.test.ts
 * holds package.json's exports to.
 */
export const PACKAGE_ENTRIES: Record<string, string> = {
  'artifact-store-sdk': 'src/client/index.ts',
  'artifact-store-sdk/mcp': 'src/mcp/index.ts',
  'artifact-store-sdk/adk': 'src/adk/index.ts',
  'artifact-store-sdk/ai-sdk': 'src/ai-sdk/index.ts',
  'artifact-store-sdk/langchain': 'src/langchain/index.ts',
  'artifact-store': 'src/index.ts',
  'artifact-store/node': 'src/node.ts',
  'artifact-store/blob': 'src/blob.ts',
};

/** The folders of src/ that make the SDK package: what its build compiles (packages/sdk/tsconfig.build.json). */
export const SDK_FOLDERS: string[] = (
  JSON.parse(readFileSync(join(ROOT, 'packages', 'sdk', 'tsconfig.build.json'), 'utf8')) as { include: string[] }
).include.map((path) => path.split('/').pop()!);

/** Entries that are gone, and what replaced them. */
export const GONE_ENTRIES: Record<string, string> = {
  'artifact-store/client': 'artifact-store-sdk',
  'artifact-store/mcp': 'artifact-store-sdk/mcp',
  'artifact-store/adk': 'artifact-store-sdk/adk',
};

export const TS_LANGS = new Set(['ts', 'typescript', 'tsx', 'js', 'javascript', 'mjs']);
export const PY_LANGS = new Set(['python', 'py']);

const where = (b: Pick<DocBlock, 'doc' | 'line'>) => `${b.doc}:${b.line}`;

/** The code spans of a block's prose (a span may wrap onto the next line). */
export function codeSpans(prose: string): string[] {
  return [...prose.replace(/\n/g, ' ').matchAll(/`([^`]+)`/g)].map((m) => m[1]!.trim());
}

/**
 * What the prose right before a block names for the reader, in backticks: `store`, `toolOutput.content`
 * (a name, or a name's property or call), and import statements (`import { x } from 'artifact-store-sdk'`,
 * `from artifact_store_client import X`), which the check compiles in front of the block.
 */
export function proseGivens(block: DocBlock): { names: Set<string>; imports: string[] } {
  const names = new Set<string>();
  const imports: string[] = [];
  const python = PY_LANGS.has(block.lang);
  for (const span of codeSpans(block.before)) {
    const isImport = python
      ? /^(from\s+[\w.]+\s+)?import\s+[\w., ]+$/.test(span)
      : /^import\s.+\sfrom\s+'[^']+';?$/.test(span);
    if (isImport) imports.push(span.replace(/;?$/, python ? '' : ';'));
    const name = /^([A-Za-z_$][\w$]*)(?:\??\.[\w$]+|\(\)|!)*$/.exec(span);
    if (name) names.add(name[1]!);
  }
  return { names, imports };
}

/**
 * What the page has given the reader by the time they reach each block of `chosen` (all of one
 * language): the names and imports in backticks in its prose so far (proseGivens of each block's
 * `before`, accumulated down the page).
 */
function pageGivens(chosen: DocBlock[]): Map<DocBlock, { names: Set<string>; imports: string[] }> {
  const sofar = new Map<string, { names: Set<string>; imports: string[] }>();
  const result = new Map<DocBlock, { names: Set<string>; imports: string[] }>();
  for (const block of chosen) {
    const page = sofar.get(block.doc) ?? { names: new Set<string>(), imports: [] };
    const here = proseGivens(block);
    const next = {
      names: new Set([...page.names, ...here.names]),
      imports: [...new Set([...page.imports, ...here.imports])],
    };
    sofar.set(block.doc, next);
    result.set(block, next);
  }
  return result;
}

/** An example block that shows a region: a part of a file, read with what the page told the reader. */
const isRegion = (b: DocBlock) => b.marker?.kind === 'example' && b.marker.region !== undefined;

/** A whole example file is the file itself, which `npm run typecheck` (TypeScript) or its test (Python) compiles. */
const isWholeExample = (b: DocBlock) => b.marker?.kind === 'example' && b.marker.region === undefined;

/** Names bound at the top level of a TypeScript snippet: variables (destructured too), functions, classes, imports. */
function topLevelNames(source: ts.SourceFile): string[] {
  const names: string[] = [];
  const bind = (n: ts.BindingName) => {
    if (ts.isIdentifier(n)) names.push(n.text);
    else for (const e of n.elements) if (!ts.isOmittedExpression(e)) bind(e.name);
  };
  for (const s of source.statements) {
    if (ts.isVariableStatement(s)) for (const d of s.declarationList.declarations) bind(d.name);
    else if ((ts.isFunctionDeclaration(s) || ts.isClassDeclaration(s) || ts.isEnumDeclaration(s)) && s.name) {
      names.push(s.name.text);
    } else if (ts.isInterfaceDeclaration(s) || ts.isTypeAliasDeclaration(s)) names.push(s.name.text);
    else if (ts.isImportDeclaration(s) && s.importClause) {
      const c = s.importClause;
      if (c.name) names.push(c.name.text);
      const b = c.namedBindings;
      if (b && ts.isNamespaceImport(b)) names.push(b.name.text);
      if (b && ts.isNamedImports(b)) for (const e of b.elements) names.push(e.name.text);
    }
  }
  return names;
}

/** Messages of the diagnostics that say a name is not defined, with the name. */
function undefinedName(d: ts.Diagnostic): string | undefined {
  const text = ts.flattenDiagnosticMessageText(d.messageText, '\n');
  return /^(?:Cannot find name|No value exists in scope for the shorthand property) '([^']+)'/.exec(text)?.[1];
}

/** The package imports of a snippet or of the prose before it that name an entry that is gone. */
export function goneImports(blocks: DocBlock[]): string[] {
  const found: string[] = [];
  for (const b of blocks) {
    const code = TS_LANGS.has(b.lang) ? [b.body, ...proseGivens(b).imports] : proseGivens(b).imports;
    for (const text of code) {
      for (const m of text.matchAll(/from\s+'([^']+)'|import\s*\(\s*'([^']+)'\s*\)/g)) {
        const spec = m[1] ?? m[2]!;
        if (GONE_ENTRIES[spec]) found.push(`${where(b)}: '${spec}' is gone; import '${GONE_ENTRIES[spec]}'`);
      }
    }
  }
  return found;
}

/**
 * Type-checks the TypeScript and JavaScript blocks of the pages, in one program with the project's
 * strict settings, each block its own module in a scratch folder under test-results/, the packages'
 * names mapped to their sources.
 *
 * - A block that is not an example region (run:, not run:) is a whole module: every error fails it.
 * - A region is part of an example file, which `npm run typecheck` compiles whole; here it fails only
 *   for a name it uses that the reader was never given: not defined in it, nor at the top level of an
 *   earlier TypeScript block of the page, nor named in backticks by the page's prose above it (where
 *   an import statement in backticks is compiled as the block's import).
 */
export function checkTypeScriptBlocks(blocks: DocBlock[]): string[] {
  const chosen = blocks.filter((b) => TS_LANGS.has(b.lang) && !isWholeExample(b));
  if (chosen.length === 0) return [];
  mkdirSync(join(ROOT, 'test-results'), { recursive: true });
  const dir = mkdtempSync(join(ROOT, 'test-results', 'doc-snippets-'));
  try {
    const files = new Map<string, { block: DocBlock; allowed: Set<string>; prefixLines: number }>();
    const earlier = new Map<string, Set<string>>();
    const given = pageGivens(chosen);
    chosen.forEach((block, i) => {
      const seen = earlier.get(block.doc) ?? new Set<string>();
      earlier.set(block.doc, seen);
      const region = isRegion(block);
      const givens = given.get(block)!;
      const prefix = region ? givens.imports : [];
      const ext = /^(js|javascript|mjs)$/.test(block.lang) ? '.mjs' : '.ts';
      const file = join(dir, `${block.doc.replace(/[^\w]+/g, '_')}_${block.line}_${i}${ext}`);
      writeFileSync(file, [...prefix, block.body, ''].join('\n'));
      files.set(file, { block, allowed: new Set([...seen, ...givens.names]), prefixLines: prefix.length });
      for (const n of topLevelNames(ts.createSourceFile(file, block.body, ts.ScriptTarget.Latest))) seen.add(n);
    });
    const paths: Record<string, string[]> = {};
    for (const [spec, file] of Object.entries({ ...PACKAGE_ENTRIES, ...gonePaths() })) {
      if (existsSync(join(ROOT, file))) paths[spec] = [join(ROOT, file)];
    }
    const program = ts.createProgram([...files.keys()], {
      target: ts.ScriptTarget.ES2023,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      moduleDetection: ts.ModuleDetectionKind.Force,
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
      types: ['node'],
      typeRoots: [join(ROOT, 'node_modules', '@types')],
      strict: true,
      noUncheckedIndexedAccess: true,
      noImplicitOverride: true,
      esModuleInterop: true,
      skipLibCheck: true,
      allowJs: true,
      checkJs: true,
      noEmit: true,
      paths,
    });
    const problems: string[] = [];
    for (const [file, { block, allowed, prefixLines }] of files) {
      const source = program.getSourceFile(file)!;
      const diagnostics = [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)];
      for (const d of diagnostics) {
        const name = undefinedName(d);
        if (isRegion(block) && (name === undefined || allowed.has(name))) continue;
        const line = d.start === undefined ? 0 : source.getLineAndCharacterOfPosition(d.start).line - prefixLines;
        const text = ts.flattenDiagnosticMessageText(d.messageText, ' ');
        const hint = name ? ' (define it in the block, or name it in backticks in the sentence before the block)' : '';
        problems.push(`${block.doc}:${block.line + 1 + Math.max(line, 0)}: TS${d.code} ${text}${hint}`);
      }
    }
    return problems;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The gone entries still resolve, so that a snippet that imports one fails once, for that reason (goneImports). */
const gonePaths = () =>
  Object.fromEntries(Object.entries(GONE_ENTRIES).map(([old, now]) => [old, PACKAGE_ENTRIES[now]!]));

/**
 * Compiles every Python block (syntax, as `py_compile` does) in one python3 process, and reports each
 * name a block reads but never binds (builtins aside). Python's symtable says which names a block
 * binds and which it reads from the module's scope. A region may also use the names an earlier
 * Python block of the page binds, and those the page's prose above it names in backticks.
 */
export function checkPythonBlocks(blocks: DocBlock[]): string[] {
  const python = blocks.filter((b) => PY_LANGS.has(b.lang) && !isWholeExample(b));
  const given = pageGivens(python);
  const chosen = python.map((b) => {
    const givens = given.get(b)!;
    return {
      where: where(b),
      doc: b.doc,
      line: b.line,
      body: b.body,
      region: isRegion(b),
      ...givens,
      names: [...givens.names],
    };
  });
  if (chosen.length === 0) return [];
  const out = execFileSync('python3', ['-c', PYTHON_CHECKER], { input: JSON.stringify(chosen), encoding: 'utf8' });
  return JSON.parse(out) as string[];
}

const PYTHON_CHECKER = `
import builtins, json, symtable, sys

def bound_and_read(table, module_bound, read):
    for sym in table.get_symbols():
        name = sym.get_name()
        if table.get_type() == "module":
            if sym.is_assigned() or sym.is_imported() or sym.is_namespace():
                module_bound.add(name)
            if sym.is_referenced() and not sym.is_imported():
                read.add(name)
        else:
            if sym.is_declared_global() and sym.is_assigned():
                module_bound.add(name)
            if sym.is_referenced() and sym.is_global():
                read.add(name)
    for child in table.get_children():
        bound_and_read(child, module_bound, read)

problems, earlier = [], {}
for b in json.load(sys.stdin):
    seen = earlier.setdefault(b["doc"], set())
    try:
        compile(b["body"], b["where"], "exec", dont_inherit=True)
        table = symtable.symtable(b["body"], b["where"], "exec")
    except SyntaxError as e:
        problems.append("%s:%d: %s" % (b["doc"], b["line"] + (e.lineno or 0), e.msg))
        continue
    module_bound, read = set(), set()
    bound_and_read(table, module_bound, read)
    allowed = set(dir(builtins)) | module_bound | {"__name__", "__file__"}
    if b["region"]:
        allowed |= seen | set(b["names"])
        for line in b["imports"]:
            bound_and_read(symtable.symtable(line, "prose", "exec"), allowed, set())
    for name in sorted(read - allowed):
        problems.append("%s: undefined name %r (define or import it in the block, or name it in backticks in the sentence before the block)" % (b["where"], name))
    seen |= module_bound
print(json.dumps(problems))
`;

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href && process.argv.includes('--write')) {
  const changed = writeExampleBlocks();
  const done = changed.length
    ? `rewrote the example blocks of ${changed.join(', ')}`
    : 'every example block matches its region';
  console.log(done);
}
