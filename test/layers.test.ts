/**
 * The layer rules of docs/architecture.md, checked by dependency-cruiser (.dependency-cruiser.cjs):
 * the source obeys them, and a violation of each kind is caught.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '..');
const DEPCRUISE = join(ROOT, 'node_modules', '.bin', 'depcruise');

async function cruise(cwd: string): Promise<{ code: number; out: string }> {
  try {
    const { stdout } = await run(DEPCRUISE, ['src', '--config', '.dependency-cruiser.cjs', '--output-type', 'err'], {
      cwd,
      timeout: 120_000,
    });
    return { code: 0, out: stdout };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? 1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

describe('layer rules', () => {
  it('the source obeys every rule', async () => {
    const r = await cruise(ROOT);
    expect(r.out).toMatch(/no dependency violations found/);
    expect(r.code).toBe(0);
  });

  describe('a violation of each kind is caught', () => {
    const dir = mkdtempSync(join(tmpdir(), 'artifact-store-layers-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    cpSync(join(ROOT, '.dependency-cruiser.cjs'), join(dir, '.dependency-cruiser.cjs'));
    cpSync(join(ROOT, 'tsconfig.json'), join(dir, 'tsconfig.json'));
    // Packages resolve as in the repository (the ADK rule names them).
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
    const write = (path: string, text: string) => {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    };
    const cases: [rule: string, files: Record<string, string>][] = [
      [
        'http-asks-the-service',
        {
          'src/db/repo.ts': 'export const repo = 1;\n',
          'src/http/route.ts': "import { repo } from '../db/repo.js';\nexport const x = repo;\n",
        },
      ],
      [
        'service-below-transports',
        {
          'src/http/tokens.ts': 'export const PERMS = 1;\n',
          'src/service/keys.ts': "import { PERMS } from '../http/tokens.js';\nexport const x = PERMS;\n",
        },
      ],
      [
        'client-imports-core-only',
        {
          'src/service/cursor.ts': 'export const c = 1;\n',
          'src/client/store.ts': "import { c } from '../service/cursor.js';\nexport const x = c;\n",
        },
      ],
      [
        'web-standards-only',
        { 'src/client/spool.ts': "import { tmpdir } from 'node:os';\nexport const x = tmpdir();\n" },
      ],
      [
        'core-imports-nothing',
        {
          'src/service/s.ts': 'export const s = 1;\n',
          'src/core/c.ts': "import { s } from '../service/s.js';\nexport const x = s;\n",
        },
      ],
      [
        'cli-remote-commands-are-clients',
        {
          'src/node/keys.ts': 'export const k = 1;\n',
          'src/cli/remote-commands.ts': "import { k } from '../node/keys.js';\nexport const x = k;\n",
        },
      ],
      [
        'cli-main-loads-commands-when-run',
        {
          'src/cli/maintenance-commands.ts': 'export const fsck = 1;\n',
          'src/cli/main.ts': "import { fsck } from './maintenance-commands.js';\nexport const x = fsck;\n",
        },
      ],
      [
        'worker-runtime-not-node',
        {
          'src/db/sqlite.ts': 'export const db = 1;\n',
          'src/worker/app.ts': "import { db } from '../db/sqlite.js';\nexport const x = db;\n",
        },
      ],
      [
        'adk-imports-core-and-client',
        {
          'src/service/s.ts': 'export const s = 1;\n',
          'src/adk/a.ts': "import { s } from '../service/s.js';\nexport const x = s;\n",
        },
      ],
      [
        'adk-types-only',
        { 'src/adk/a.ts': "import { GoogleGenAI } from '@google/genai';\nexport const x = GoogleGenAI;\n" },
      ],
      [
        'ai-sdk-imports-core-client-mcp',
        {
          'src/db/d.ts': 'export const d = 1;\n',
          'src/ai-sdk/a.ts': "import { d } from '../db/d.js';\nexport const x = d;\n",
        },
      ],
      [
        'ai-sdk-types-only',
        { 'src/ai-sdk/a.ts': "import { generateText } from 'ai';\nexport const x = generateText;\n" },
      ],
      [
        'langchain-imports-core-client-mcp',
        {
          'src/blob/b.ts': 'export const b = 1;\n',
          'src/langchain/a.ts': "import { b } from '../blob/b.js';\nexport const x = b;\n",
        },
      ],
      [
        'langchain-peers-only',
        {
          'src/langchain/a.ts': "import { StateGraph } from '@langchain/langgraph';\nexport const x = StateGraph;\n",
        },
      ],
      [
        'sdk-package-dependencies',
        { 'src/mcp/store.ts': "import Database from 'better-sqlite3';\nexport const x = Database;\n" },
      ],
      [
        'service-not-http',
        {
          'src/http/status.ts': 'export const s = 1;\n',
          'src/service/s.ts': "import { s } from '../http/status.js';\nexport const x = s;\n",
        },
      ],
      [
        'module-fronts-only',
        {
          'src/service/retention/index.ts': "export { phase } from './phase.js';\n",
          'src/service/retention/phase.ts': 'export const phase = 1;\n',
          'src/compose/c.ts': "import { phase } from '../service/retention/phase.js';\nexport const x = phase;\n",
        },
      ],
      [
        'module-fronts-only',
        {
          'src/mcp/transform/index.ts': "export { p } from './previews.js';\n",
          'src/mcp/transform/previews.ts': 'export const p = 1;\n',
          'src/index.ts': "import { p } from './mcp/transform/previews.js';\nexport const x = p;\n",
        },
      ],
      [
        'module-fronts-only',
        {
          'src/db/sqlite/index.ts': "export { r } from './rows.js';\n",
          'src/db/sqlite/rows.ts': 'export const r = 1;\n',
          'src/db/d1/references.ts': "import { r } from '../sqlite/rows.js';\nexport const x = r;\n",
        },
      ],
      [
        'db-plans-are-db-private',
        {
          'src/db/plans/put.ts': 'export const plan = 1;\n',
          'src/service/puts.ts': "import { plan } from '../db/plans/put.js';\nexport const x = plan;\n",
        },
      ],
      [
        'no-circular',
        {
          'src/mcp/a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
          'src/mcp/b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
        },
      ],
    ];
    for (const [rule, files] of cases) {
      it(`${rule}: ${Object.keys(files).at(-1)}`, async () => {
        rmSync(join(dir, 'src'), { recursive: true, force: true });
        for (const [path, text] of Object.entries(files)) write(path, text);
        const r = await cruise(dir);
        expect(r.code).not.toBe(0);
        expect(r.out).toContain(rule);
      });
    }
  });
});
