/**
 * The documentation holds up. Every fenced block of README.md, CONTRIBUTING.md and docs/*.md is an
 * example file's region, a shell block a test runs, or says why it cannot run; every example file is
 * run by a test; every setting is documented; links between the pages resolve. And the docs' own
 * shell blocks and examples run here, as written. The troubleshooting claims are
 * test/docs-troubleshooting.test.ts's.
 */
import { type ChildProcessByStdio, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { spawnProcess, stopProcess } from './helpers/processes.js';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ENV_NAMES, loadConfig } from '../src/core/config.js';
import { startServer, type RunningServer } from '../src/node.js';
import {
  blocksOf,
  checkPythonBlocks,
  checkTypeScriptBlocks,
  CLI_SHIM,
  commentOf,
  docFiles,
  goneImports,
  exampleText,
  readDoc,
  regionsOf,
  ROOT,
  runBash,
  runBlock,
  runExample,
  type DocBlock,
} from './doc-blocks.js';
import { startCliServer } from './helpers/cli-server.js';
import { createTestBucket, describeS3, s3TestTarget } from './helpers/s3.js';

const hasCurl = spawnSync('curl', ['--version']).status === 0;
if (process.env.CI && !hasCurl) throw new Error('curl is required in CI for the documentation walkthroughs');

/** How many blocks may say they cannot run: raise it only for a block that truly cannot. */
const MAX_NOT_RUN = 13;

const allBlocks = docFiles().flatMap((doc) => blocksOf(doc));

describe('every code block is an example region, a block a test runs, or says why not', () => {
  for (const block of allBlocks) {
    const where = `${block.doc}:${block.line}`;
    it(`${where} ${block.marker ? JSON.stringify(block.marker) : '(no marker)'}`, () => {
      const m = block.marker;
      const markers = '<!-- example: … -->, <!-- run: … --> or <!-- not run: reason -->';
      if (!m) throw new Error(`${where}: put ${markers} on the line before the block`);
      if (m.kind === 'unknown') throw new Error(`${where}: unknown marker <!-- ${m.text} -->`);
      if (m.kind === 'not-run') expect(m.reason, `${where}: a not-run block needs a reason`).not.toBe('');
      if (m.kind === 'example') {
        expect(m.file, `${where}: examples live in examples/`).toMatch(/^examples\/[\w.-]+\.(ts|py)$/);
        const source = `${m.file}${m.region ? `#${m.region}` : ''}`;
        expect(block.body, `${where} must be byte for byte ${source}`).toBe(exampleText(m.file, m.region));
      }
      if (m.kind === 'run') {
        expect(['sh', 'bash'], `${where}: only shell blocks are run by tests`).toContain(block.lang);
        const test = join(ROOT, m.test);
        expect(existsSync(test), `${where}: ${m.test} does not exist`).toBe(true);
        // The test looks the block up by its id (runBlock), or runs the example file it names.
        expect(readFileSync(test, 'utf8'), `${where}: ${m.test} never mentions '${m.id}'`).toContain(`'${m.id}'`);
      }
    });
  }

  it(`at most ${MAX_NOT_RUN} blocks are not run`, () => {
    const notRun = allBlocks.filter((b) => b.marker?.kind === 'not-run').map((b) => `${b.doc}:${b.line}`);
    expect(notRun.length, notRun.join('\n')).toBeLessThanOrEqual(MAX_NOT_RUN);
  });
});

describe('what a reader copies compiles, and uses no name the page never gave', () => {
  // A TypeScript block that is not an example region is a whole module: it type-checks (strict), its
  // package imports resolved to this checkout's sources. A region is part of an example file, which
  // `npm run typecheck` compiles whole; here it may use only the names it defines, those an earlier
  // block of the page defines, and those the page's prose above it names in backticks. Python blocks
  // compile, with the same rule for names. See checkTypeScriptBlocks and checkPythonBlocks.
  const block = (doc: string, line: number, lang: string, body: string, more: Partial<DocBlock> = {}): DocBlock => ({
    doc: `(made up) ${doc}`,
    line,
    lang,
    body,
    before: '',
    marker: { kind: 'not-run', reason: 'a test' },
    ...more,
  });
  const made = (problems: string[]) => problems.filter((p) => p.startsWith('(made up) '));
  const real = (problems: string[]) => problems.filter((p) => !p.startsWith('(made up) '));
  // Blocks the checks must fail, checked in the same program as the pages' (one compile is the slow part).
  const region = { kind: 'example', file: 'examples/sdk.ts', region: 'links' } as const;
  const given =
    "Ask for a link (`store` is an `ArtifactStore`, `report` a ref it returned, and the import is `import { createHttpArtifactStore } from 'artifact-store-sdk'`):";
  const madeTs = [
    block(
      'a.md',
      1,
      'ts',
      "import { createHttpArtifactStore } from 'artifact-store-sdk';\nconst s = createHttpArtifactStore({ baseUrl: 'x' });\nawait s.get(toolOutput.id);",
    ),
    block('a.md', 5, 'ts', "const n: number = 'text';"),
    block(
      'b.md',
      1,
      'ts',
      "await store.url!(report.id, { mode: 'direct' });\nconst s = createHttpArtifactStore({ baseUrl: 'x' });",
      {
        marker: region,
        before: given,
      },
    ),
    block('b.md', 9, 'ts', 'await store.url!(later.id);\nawait s.get(report.id);', { marker: region }),
    block('c.md', 1, 'ts', 'await store.url!(report.id);', { marker: region }),
    block('d.md', 1, 'ts', "import { nothing } from 'artifact-store-sdk/mcp';"),
  ];
  let tsProblems: string[] | undefined;
  const tsCheck = () => (tsProblems ??= checkTypeScriptBlocks([...allBlocks, ...madeTs]));

  it('every TypeScript and JavaScript block', () => {
    expect(real(tsCheck())).toEqual([]);
  }, 180_000);

  it('every Python block', () => {
    expect(real(checkPythonBlocks(allBlocks))).toEqual([]);
  });

  it('no block, and no import in the prose, names an entry that is gone (artifact-store/client, /mcp, /adk)', () => {
    expect(goneImports(allBlocks)).toEqual([]);
  });

  it('the checks fail: an undefined name, a type error, a name given only on another page, a gone import, bad Python', () => {
    expect(made(tsCheck())).toEqual([
      expect.stringMatching(/^\(made up\) a\.md:4: TS2304 Cannot find name 'toolOutput'/),
      expect.stringMatching(/^\(made up\) a\.md:6: TS2322 Type 'string' is not assignable to type 'number'/),
      // `store`, `report` and `s` were given by b.md's prose and first block; `later` never is.
      expect.stringMatching(/^\(made up\) b\.md:10: TS2304 Cannot find name 'later'/),
      expect.stringMatching(/^\(made up\) c\.md:2: TS\d+ Cannot find name 'store'/),
      expect.stringMatching(/^\(made up\) c\.md:2: TS\d+ Cannot find name 'report'/),
      expect.stringMatching(
        /^\(made up\) d\.md:2: TS2305 Module '"artifact-store-sdk\/mcp"' has no exported member 'nothing'/,
      ),
    ]);
    const gone = goneImports([
      block('e.md', 3, 'ts', "import { createHttpArtifactStore } from 'artifact-store/client';"),
      block('e.md', 9, 'sh', 'true', { before: "The import is `import { wrapMcpClient } from 'artifact-store/mcp'`." }),
    ]);
    expect(gone).toEqual([
      "(made up) e.md:3: 'artifact-store/client' is gone; import 'artifact-store-sdk'",
      "(made up) e.md:9: 'artifact-store/mcp' is gone; import 'artifact-store-sdk/mcp'",
    ]);
    const py = checkPythonBlocks([
      block('p.md', 1, 'python', 'async def main():\n    await asyncio.sleep(0)\n    return [x for x in data]'),
      block('p.md', 7, 'python', 'def broken(:\n    pass'),
      block('p.md', 12, 'python', 'with Client() as store:\n    store.put(pdf_bytes)\nprint(store, open)', {
        marker: { kind: 'example', file: 'examples/python_client.py', region: 'quickstart' },
        before:
          '(`pdf_bytes` is what a tool returned; `from artifact_store_client import ArtifactStoreClient as Client`)',
      }),
      block('p.md', 20, 'python', 'print(store, data)', {
        marker: { kind: 'example', file: 'examples/names.py', region: 'x' },
      }),
    ]);
    expect(py).toEqual([
      expect.stringMatching(/^\(made up\) p\.md:1: undefined name 'asyncio'/),
      expect.stringMatching(/^\(made up\) p\.md:1: undefined name 'data'/),
      expect.stringMatching(/^\(made up\) p\.md:8: invalid syntax/),
      // `store` is bound by the earlier region of the page; `data` never is.
      expect.stringMatching(/^\(made up\) p\.md:20: undefined name 'data'/),
    ]);
  }, 180_000);
});

it('no page, example or help text runs or installs the packages from the registry, where they are not (yet)', () => {
  // Until they are published, `npx artifact-store` and `npm install artifact-store` fetch whatever
  // someone else published under the name. A registry install may appear only as what it becomes
  // "once published".
  const sources = (dir: string, ext: RegExp): string[] =>
    readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
      .filter((f) => ext.test(f))
      .map((f) => `${dir}/${f}`);
  const files = [
    ...docFiles(),
    ...sources('examples', /\.(ts|py)$/),
    ...sources('src', /\.ts$/),
    'clients/python/README.md',
  ];
  const found: string[] = [];
  for (const file of files) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const rules: [RegExp, string][] = [
      [/npx\s+(?:-y\s+|--yes\s+)?artifact-store(?:-sdk)?\b(?![\w.-]*\.tgz)/g, 'npx fetches the name from the registry'],
      [/"command":\s*"npx",\s*"args":\s*\[[^\]]*"artifact-store(?:-sdk)?"/g, 'npx fetches the name from the registry'],
      [/npm\s+(?:install|i|add)\s+(?:-g\s+|--global\s+)?artifact-store(?:-sdk)?(?![\w.-])/g, 'not on the registry'],
    ];
    for (const [rule, why] of rules) {
      for (const m of text.matchAll(rule)) {
        const sentence = text.slice(Math.max(0, m.index - 120), m.index);
        if (why === 'not on the registry' && /once published/i.test(sentence)) continue;
        const line = text.slice(0, m.index).split('\n').length;
        found.push(`${file}:${line}: ${m[0]} (${why})`);
      }
    }
  }
  expect(found).toEqual([]);
});

describe('examples', () => {
  const files = readdirSync(join(ROOT, 'examples')).filter((f) => f.endsWith('.ts') || f.endsWith('.py'));
  const read = (dir: string, suffix: string) =>
    readdirSync(join(ROOT, dir))
      .filter((f) => f.endsWith(suffix))
      .map((f) => readFileSync(join(ROOT, dir, f), 'utf8'))
      .join('\n');
  const tests = read('test', '.test.ts');
  // Python examples are run by the Python suite (clients/python/tests), which npm test runs.
  const pythonTests = read('clients/python/tests', '.py');

  it.each(files)('examples/%s is run by a test, and its regions are balanced', (file) => {
    const runs = file.endsWith('.py')
      ? pythonTests.includes(`run_example("${file}"`)
      : tests.includes(`runExample('${file}'`) || tests.includes(`'examples', '${file}'`);
    const how = file.endsWith('.py')
      ? `run_example("${file}", …) in clients/python/tests`
      : `runExample('${file}', …) in a test file`;
    expect(runs, `no test runs examples/${file} (${how})`).toBe(true);
    const text = readFileSync(join(ROOT, 'examples', file), 'utf8');
    const c = commentOf(file);
    const count = (marker: string) => text.split('\n').filter((l) => l.trim().startsWith(`${c} ${marker}`)).length;
    expect(count('#region ')).toBe(count('#endregion'));
    for (const region of regionsOf(`examples/${file}`)) exampleText(`examples/${file}`, region);
  });
});

describe('the README is a front page', () => {
  const readme = readDoc('README.md');
  it('is 200 to 300 lines long', () => {
    const lines = readme.split('\n').length;
    expect(lines).toBeGreaterThanOrEqual(200);
    expect(lines).toBeLessThanOrEqual(300);
  });
  it('tells no history and links nothing outside the repository', () => {
    expect(readme).not.toMatch(/\b(issue|wave|round)\s*#?\d/i);
    expect(readme).not.toMatch(/\bwave\b|was added in|\.\.\/shared/i);
  });
});

it('docs/configuration.md names every ARTIFACT_STORE_* setting', () => {
  const doc = readDoc('docs/configuration.md');
  const missing = Object.values(ENV_NAMES).filter((name) => !doc.includes(`\`${name}\``));
  expect(missing).toEqual([]);
});

it('every file path the pages name in backticks exists', () => {
  const missing = docFiles().flatMap((doc) =>
    [...readDoc(doc).matchAll(/`((?:src|test|scripts|examples|bench|infra|migrations|docs|\.ci)\/[\w./-]+)`/g)]
      .map((m) => m[1]!)
      .filter((path) => !existsSync(join(ROOT, path)))
      .map((path) => `${doc}: ${path}`),
  );
  expect(missing).toEqual([]);
});

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

function anchorsOf(doc: string): Set<string> {
  const text = readDoc(doc).replace(/^```[\s\S]*?^```/gm, '');
  return new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => slug(m[1]!)));
}

it('relative links between the pages resolve, down to the heading', () => {
  const broken: string[] = [];
  for (const doc of docFiles()) {
    const text = readDoc(doc).replace(/^```[\s\S]*?^```/gm, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue;
      const [path, anchor] = target!.split('#') as [string, string | undefined];
      const file = path === '' ? doc : join(doc, '..', path);
      if (!existsSync(join(ROOT, file))) broken.push(`${doc}: ${target} (no ${file})`);
      else if (anchor && file.endsWith('.md') && !anchorsOf(file).has(anchor)) {
        broken.push(`${doc}: ${target} (no heading #${anchor})`);
      }
    }
  }
  expect(broken).toEqual([]);
});

// ---- The docs' own blocks, run as written ----

let server: RunningServer | undefined;
const scratch: string[] = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(() => {
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
});

/** A scratch folder with ./data, and the service on it (development: its dev secret in ./data). */
async function serveIn(overrides: Parameters<typeof loadConfig>[1] = {}) {
  const cwd = mkdtempSync(join(tmpdir(), 'docs-'));
  scratch.push(cwd);
  const config = { port: 0, dataDir: join(cwd, 'data'), logLevel: 'silent', env: 'development', ...overrides } as const;
  server = await startServer(loadConfig({}, config));
  return { cwd, server };
}

async function put(
  s: RunningServer,
  token: string,
  body: Uint8Array<ArrayBuffer> | string,
  more: Record<string, string> = {},
) {
  const headers = { Authorization: `Bearer ${token}`, 'Content-Type': 'application/octet-stream', ...more };
  const res = await fetch(`${s.url}/v1/artifacts`, { method: 'POST', headers, body });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; sizeBytes: number };
}

/** The whole-line comments of a shell block: the output it shows. */
function shownOutput(block: string): string {
  return block
    .split('\n')
    .filter((l) => l === '#' || l.startsWith('# '))
    .map((l) => l.slice(2))
    .join('\n');
}

/** Times, dates and durations vary from run to run. */
const steady = (text: string) =>
  text
    .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>')
    .replace(/\d{4}-\d\d-\d\d/g, '<date>')
    .replace(/\(\d+ ms\)/g, '(<ms>)')
    .trim();

describe('docs/cli.md', () => {
  it('the CLI walkthrough works as written, and the token it mints is accepted', async () => {
    const { cwd, server: s } = await serveIn();
    const script = runBlock('docs/cli.md', 'cli-walkthrough').replace(
      /^export ARTIFACT_STORE_URL=.*$/m,
      `export ARTIFACT_STORE_URL=${s.url} ARTIFACT_STORE_TOKEN=${s.token}`,
    );
    const out = await runBash(CLI_SHIM + script, { cwd });
    const printed = JSON.parse(out.slice(0, out.indexOf('\n}') + 2));
    expect(printed).toMatchObject({
      filename: 'report.pdf',
      mimeType: 'application/pdf',
      scope: { sessionId: 's-42' },
    });
    expect(out).toMatch(/^art_[0-9a-f]{24}\s+rows\.json\s+application\/json/m);
    expect(readFileSync(join(cwd, 'copy.pdf'))).toEqual(readFileSync(join(cwd, 'report.pdf')));
    expect(out).toMatch(new RegExp(`^${s.url}/v1/download/art_[0-9a-f]{24}\\?tenant=dev&`, 'm'));
    expect(out).toMatch(/^deleted art_[0-9a-f]{24}$/m);
    expect(out).toMatch(/^ended session s-42: 1 reference \(20 B\)$/m); // rows.json was left
    const [token, uiLink] = out.trim().split('\n').slice(-2);
    expect(uiLink).toMatch(new RegExp(`^${s.url}/ui#token=ey`));
    const res = await fetch(`${s.url}/v1/artifacts`, { headers: { Authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
  }, 120_000);
});

describe('docs/operations.md', () => {
  it('the retention run prints what the page shows', async () => {
    const { cwd, server: s } = await serveIn();
    for (const n of [1, 2, 3]) await put(s, s.token, new Uint8Array(1024).fill(n), { 'X-Artifact-Ttl': '1' });
    await new Promise((r) => setTimeout(r, 1100));
    const block = runBlock('docs/operations.md', 'retention-run');
    expect(steady(await runBash(CLI_SHIM + block, { cwd }))).toBe(steady(shownOutput(block)));
  }, 60_000);

  it('the usage report prints what the page shows', async () => {
    const { cwd, server: s } = await serveIn();
    const token = await s.mintToken({ tenant: 'acme', sub: 'u1', session: 's1', perms: ['read', 'write'] });
    await put(s, token, new Uint8Array(512 * 1024).fill(7));
    const block = runBlock('docs/operations.md', 'usage');
    expect(steady(await runBash(CLI_SHIM + block, { cwd }))).toBe(steady(shownOutput(block)));
  }, 60_000);

  it('backup while the service runs, then restore after it stopped: what came after goes, fsck --verify is clean', async () => {
    const { cwd, server: s } = await serveIn();
    const a = await put(s, s.token, new Uint8Array(1024).fill(1));
    await put(s, s.token, new Uint8Array(1024).fill(2));
    const backup = runBlock('docs/operations.md', 'backup');
    const out = await runBash(CLI_SHIM + backup, { cwd });
    expect(steady(out.replaceAll(cwd, '/srv/artifacts'))).toBe(steady(shownOutput(backup)));
    // Stored after the backup: the restored database does not know it.
    const late = await put(s, s.token, new Uint8Array(1024).fill(3));

    await s.close();
    server = undefined;
    const block = runBlock('docs/operations.md', 'restore');
    const restored = await runBash(CLI_SHIM + block, { cwd });
    expect(steady(restored.replaceAll(cwd, '/srv/artifacts'))).toBe(steady(shownOutput(block)));

    // The service comes back on the restored data, and the dev token still works.
    const again = await serveIn({ dataDir: join(cwd, 'data') });
    const res = await fetch(`${again.server.url}/v1/artifacts/${a.id}`, {
      headers: { Authorization: `Bearer ${s.token}` },
    });
    expect(res.status).toBe(200);
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(new Uint8Array(1024).fill(1));
    const gone = await fetch(`${again.server.url}/v1/artifacts/${late.id}`, {
      headers: { Authorization: `Bearer ${s.token}` },
    });
    expect(gone.status).toBe(404);
  }, 60_000);
});

describeS3('docs/operations.md with S3', () => {
  const target = s3TestTarget();
  it('backup-s3: the backup to a bucket prints what the page shows, and the restore recipe works from it', async () => {
    const bucket = await createTestBucket(target!, 'docs-backup');
    try {
      const { cwd, server: s } = await serveIn();
      await put(s, s.token, new Uint8Array(1024).fill(1));
      await put(s, s.token, new Uint8Array(1024).fill(2));
      const connection = {
        ARTIFACT_STORE_S3_ENDPOINT: target!.endpoint,
        ARTIFACT_STORE_S3_REGION: target!.region,
        ARTIFACT_STORE_S3_ACCESS_KEY_ID: target!.accessKeyId,
        ARTIFACT_STORE_S3_SECRET_ACCESS_KEY: target!.secretAccessKey,
      };
      const block = runBlock('docs/operations.md', 'backup-s3');
      // The page's bucket is on AWS; here it is the test's, and its settings come from the environment.
      const script = block
        .replace(/^export ARTIFACT_STORE_S3_REGION=.*$/m, 'true')
        .replaceAll('acme-artifact-backups', bucket.bucket);
      const out = await runBash(CLI_SHIM + script, { cwd, env: connection });
      expect(steady(out.replaceAll(bucket.bucket, 'acme-artifact-backups'))).toBe(steady(shownOutput(block)));
      await put(s, s.token, new Uint8Array(1024).fill(3));
      await s.close();
      server = undefined;

      const restore = runBlock('docs/operations.md', 'restore').replace(
        'backups/nightly',
        `s3://${bucket.bucket}/nightly`,
      );
      const restored = await runBash(CLI_SHIM + restore, { cwd, env: connection });
      expect(restored).toMatch(/^ {2}removed {4}1 blobs stored after the backup/m);
      expect(restored).toMatch(/^fsck: 2 blob rows, 2 stored blobs checked; 0 problems, 0 unresolved$/m);
    } finally {
      await bucket.cleanup();
    }
  }, 60_000);
});

describe('docs/http-api.md', () => {
  const curlNote = hasCurl ? '' : ' (skipped: curl not installed)';
  it.skipIf(!hasCurl)(
    `the event stream shows what the page shows${curlNote}`,
    async () => {
      const { cwd, server: s } = await serveIn();
      const block = runBlock('docs/http-api.md', 'events-stream');
      const env = { ...process.env, API: s.url, ARTIFACT_STORE_TOKEN: s.token };
      const proc = spawnProcess<ChildProcessByStdio<null, Readable, null>>('bash', ['-c', block], {
        cwd,
        env,
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      let out = '';
      proc.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      try {
        for (let i = 0; i < 100 && !out.includes('data\n\n'); i++) await new Promise((r) => setTimeout(r, 50));
        await put(s, s.token, 'hello', { 'Content-Type': 'text/plain' });
        const event = /event: artifact\.stored\ndata: .*\nid: \d+\n/;
        for (let i = 0; i < 100 && !event.test(out); i++) await new Promise((r) => setTimeout(r, 50));
      } finally {
        await stopProcess(proc, { signal: 'SIGKILL' });
      }
      const shown = shownOutput(block)
        .split('\n')
        .map((l) =>
          l
            .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
            .replace(/…/g, '.*?')
            .replace(/^id: \d+$/, 'id: \\d+'),
        )
        .join('\n');
      expect(out).toMatch(new RegExp(`^${shown}`));
    },
    30_000,
  );
});

describe('docs/http-api.md: ending a session', () => {
  it.skipIf(!hasCurl)(
    `the curl call answers what the page shows${hasCurl ? '' : ' (skipped: curl not installed)'}`,
    async () => {
      const { cwd, server: s } = await serveIn();
      const inSession = { 'X-Artifact-Session': 's-42' };
      await put(s, s.token, new Uint8Array(1024).fill(1), inSession);
      await put(s, s.token, new Uint8Array(512).fill(2), inSession);
      const saved = await fetch(`${s.url}/v1/names/my-agent?name=plan.md&session=s-42`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${s.token}`, 'Content-Type': 'text/markdown' },
        body: '#'.repeat(307),
      });
      expect(saved.status).toBe(201);
      const block = runBlock('docs/http-api.md', 'end-session');
      const out = await runBash(block, { cwd, env: { API: s.url, ARTIFACT_STORE_TOKEN: s.token } });
      expect(out.trim()).toBe(shownOutput(block));
    },
    30_000,
  );
});

describeS3('docs/s3-and-cdn.md', () => {
  const target = s3TestTarget();
  it.skipIf(!hasCurl)(
    `a direct upload with curl: begin, PUT straight to S3, complete${hasCurl ? '' : ' (skipped: curl not installed)'}`,
    async () => {
      const bucket = await createTestBucket(target!, 'docs');
      try {
        const { cwd, server: s } = await serveIn({
          env: 'test',
          blobDriver: 's3',
          s3Bucket: bucket.bucket,
          s3Region: target!.region,
          s3Endpoint: target!.endpoint,
          s3ForcePathStyle: target!.forcePathStyle ? 'true' : 'false',
          s3AccessKeyId: target!.accessKeyId,
          s3SecretAccessKey: target!.secretAccessKey,
        });
        const bytes = new Uint8Array(3 * 1024 * 1024).map((_, i) => (i * 31) % 251);
        writeFileSync(join(cwd, 'big.zip'), bytes);
        const env = { API: s.url, ARTIFACT_STORE_TOKEN: s.token };
        const out = await runBash(runBlock('docs/s3-and-cdn.md', 'direct-upload'), { cwd, env });
        const ref = JSON.parse(out.trim().split('\n').pop()!) as { id: string; filename: string; sizeBytes: number };
        expect(ref).toMatchObject({ filename: 'big.zip', sizeBytes: bytes.byteLength });
        const res = await fetch(`${s.url}/v1/artifacts/${ref.id}`, { headers: { Authorization: `Bearer ${s.token}` } });
        const got = Buffer.from(await res.arrayBuffer());
        // In one call: toEqual walks two 3 MiB arrays index by index (16 s here).
        expect(got.byteLength).toBe(bytes.byteLength);
        expect(got.equals(bytes), 'the bytes read back are the bytes put').toBe(true);
        await s.close();
        server = undefined;
      } finally {
        await bucket.cleanup();
      }
    },
    60_000,
  );
});

describeS3('docs/s3-and-cdn.md: uploads in parts', () => {
  const target = s3TestTarget();
  it('parts-upload: `put --resume` sends only the parts an earlier, cut-off attempt left out', async () => {
    const bucket = await createTestBucket(target!, 'docs-parts');
    try {
      const { cwd, server: s } = await serveIn({
        env: 'test',
        blobDriver: 's3',
        s3Bucket: bucket.bucket,
        s3Region: target!.region,
        s3Endpoint: target!.endpoint,
        s3ForcePathStyle: target!.forcePathStyle ? 'true' : 'false',
        s3AccessKeyId: target!.accessKeyId,
        s3SecretAccessKey: target!.secretAccessKey,
        multipartUploadBytes: String(8 * 1024 * 1024),
        uploadPartBytes: String(5 * 1024 * 1024),
      });
      const token = await s.mintToken({ tenant: 'dev', sub: 'docs', perms: ['read', 'write'] });
      const bytes = randomBytes(20 * 1024 * 1024);
      writeFileSync(join(cwd, 'big.iso'), bytes);
      const sha = createHash('sha256').update(bytes).digest('hex');
      // An earlier attempt that got the first two of four parts into the bucket, and its record.
      const api = (path: string, body: unknown) =>
        fetch(`${s.url}${path}`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        }).then((r) => r.json() as Promise<Record<string, any>>);
      const ticket = await api('/v1/uploads', { sizeBytes: bytes.byteLength, sha256: sha, filename: 'big.iso' });
      const half = [1, 2].map((n) => bytes.subarray((n - 1) * ticket.partSize, n * ticket.partSize));
      const { parts } = await api(`/v1/uploads/${ticket.uploadId}/parts`, {
        parts: half.map((b, i) => ({ partNumber: i + 1, sha256: createHash('sha256').update(b).digest('hex') })),
      });
      for (const [i, p] of (parts as { url: string; headers: Record<string, string> }[]).entries())
        expect((await fetch(p.url, { method: 'PUT', headers: p.headers, body: new Uint8Array(half[i]!) })).status).toBe(
          200,
        );
      const records = join(cwd, 'uploads.json');
      writeFileSync(records, JSON.stringify({ [`${s.url} ${sha} ${bytes.byteLength}`]: ticket.uploadId }));
      const env = { ARTIFACT_STORE_URL: s.url, ARTIFACT_STORE_TOKEN: token, ARTIFACT_STORE_RESUME_FILE: records };
      const script = `exec 2> stderr.txt\n${runBlock('docs/s3-and-cdn.md', 'parts-upload')}`;
      const id = (await runBash(CLI_SHIM + script, { cwd, env })).trim();
      expect(id).toMatch(/^art_[0-9a-f]{24}$/);
      expect(readFileSync(join(cwd, 'stderr.txt'), 'utf8')).toContain(
        `resuming upload ${ticket.uploadId}: 10 MiB of 20 MiB already uploaded`,
      );
      const got = Buffer.from(
        await (
          await fetch(`${s.url}/v1/artifacts/${id}`, { headers: { Authorization: `Bearer ${token}` } })
        ).arrayBuffer(),
      );
      expect(got.equals(bytes), 'the bytes read back are the bytes put').toBe(true);
      expect(JSON.parse(readFileSync(records, 'utf8'))).toEqual({});
      await s.close();
      server = undefined;
    } finally {
      await bucket.cleanup();
    }
  }, 120_000);
});

describe('docs/gateway.md', () => {
  it('gateway-list: the config on the page starts, and --list shows the tools a host would see', async () => {
    // Inside the checkout, so `npx -y <server>` finds the reference servers installed here.
    mkdirSync(join(ROOT, 'test-results'), { recursive: true });
    const work = mkdtempSync(join(ROOT, 'test-results', 'docs-gateway-'));
    try {
      const out = await runBash(CLI_SHIM + runBlock('docs/gateway.md', 'gateway-list'), { cwd: work });
      expect(out).toMatch(/^everything: ready, mcp-servers\/everything [\d.]+, 13 tools, resources, 4 prompts$/m);
      expect(out).toContain('\n  everything__get-tiny-image\n');
      expect(out).toMatch(/^files: ready, secure-filesystem-server/m);
      expect(out).toContain('\n  files__read_media_file\n');
      expect(out).toContain(
        'gateway: artifact_read, artifact_search, artifact_query, artifact_list, artifact_info, artifact_url',
      );
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('the examples the docs show run', () => {
  it('examples/mcp-resources.ts reads a blob resource into the store, then from the cache', async () => {
    const out = await runExample('mcp-resources.ts');
    expect(out).toContain('1 resource(s), 1 template(s)');
    expect(out).toMatch(
      /stored files\.resources_read_[0-9a-f]{24} \(application\/pdf, 50009 B\), from the cache: false/,
    );
    expect(out).toContain('read again: from the cache = true');
    expect(out).toMatch(/subscribe: \{"subscribed":false,"reason":"files does not offer resource subscriptions/);
    expect(out).toContain('planner tools: files.resources_list, files.resources_templates_list, files.resources_read');
    expect(out).not.toMatch(/JVBERi0/);
  }, 60_000);

  it('examples/mcp-server-content.ts returns typed blocks and a link, and refuses a path outside basePath', async () => {
    const out = await runExample('mcp-server-content.ts');
    expect(out).toContain('render_chart: image image/png');
    expect(out).toMatch(/make_report: text \| resource_link application\/pdf artifact:\/\/art_[0-9a-f]{24}/);
    expect(out).toMatch(/a path outside basePath: Path \.\.\/outside\.png leaves the base folder/);
  }, 60_000);

  it('examples/mcp-http.ts lists, reads and links artifacts over /mcp', async () => {
    const { server: s } = await serveIn({ env: 'test' });
    const out = await runExample('mcp-http.ts', { ARTIFACT_STORE_URL: s.url, ARTIFACT_STORE_TOKEN: s.token });
    expect(out).toMatch(/^resources: artifact:\/\/art_[0-9a-f]{24} \(application\/json\)$/m);
    expect(out).toContain('"text":"{\\"rows\\": [1, 2, 3]}"');
    expect(out).toMatch(/^artifact_url: Download link for art_[0-9a-f]{24}/m);
  }, 60_000);

  it('examples/stream-upload.ts stores a 9 MiB stream through its spool', async () => {
    const { server: s } = await serveIn({ env: 'test' });
    const out = await runExample('stream-upload.ts', { ARTIFACT_STORE_URL: s.url, ARTIFACT_STORE_TOKEN: s.token });
    expect(out).toMatch(/^stored big\.zip: 9437184 bytes as art_[0-9a-f]{24}$/m);
  }, 60_000);
});

it("README: the sample of npm start's output is what a start prints", async () => {
  const cwd = mkdtempSync(join(tmpdir(), 'docs-banner-'));
  scratch.push(cwd);
  const dataDir = join(cwd, 'data');
  mkdirSync(dataDir);
  const cli = await startCliServer(dataDir);
  try {
    await new Promise((r) => setTimeout(r, 300));
    const isSample = (b: DocBlock) => b.marker?.kind === 'not-run' && b.marker.reason.startsWith('output of npm start');
    const sample = blocksOf('README.md').find(isSample)!.body;
    const pattern = sample
      .split('\n')
      .map((l) =>
        l
          .replaceAll('http://127.0.0.1:8787', '\u0000')
          .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
          .replace(/…/g, '\\S*')
          .replaceAll('\u0000', cli.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')),
      )
      .join('\n');
    expect(cli.output().trimStart()).toMatch(new RegExp(`^${pattern}`));
  } finally {
    cli.kill();
    await cli.exited;
  }
}, 60_000);
