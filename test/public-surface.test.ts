/**
 * The public names: every entry of both packages exports exactly the names docs/sdk.md § Public names
 * lists, values and types alike. Adding or removing an export without the list fails here, so the
 * surface only changes on purpose. Read from the sources with the compiler (no build needed).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ENTRIES, ROOT, readDoc, SDK_FOLDERS } from './doc-blocks.js';

/** Each entry and the source file it is built from (package.json exports, scripts/build.mjs). */
const ENTRIES = PACKAGE_ENTRIES;

function exportsOf(files: string[]): Record<string, string[]> {
  const program = ts.createProgram(
    files.map((f) => join(ROOT, f)),
    {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2023,
      strict: true,
      noEmit: true,
      skipLibCheck: true,
    },
  );
  const checker = program.getTypeChecker();
  const found: Record<string, string[]> = {};
  for (const file of files) {
    const source = program.getSourceFile(join(ROOT, file))!;
    const symbol = checker.getSymbolAtLocation(source)!;
    found[file] = checker
      .getExportsOfModule(symbol)
      .map((s) => s.name)
      .sort();
  }
  return found;
}

/** docs/sdk.md § Public names: one line per entry, `- **\`entry\`**: \`Name\`, \`Name\`, …`. */
function listed(): Record<string, string[]> {
  const page = readDoc('docs/sdk.md');
  const start = page.indexOf('\n## Public names');
  expect(start, 'docs/sdk.md has a "## Public names" section').toBeGreaterThan(0);
  const section = page.slice(start + 1).split(/\n## /)[0]!;
  const lists: Record<string, string[]> = {};
  for (const [, entry, names] of section.matchAll(/^- \*\*`([^`]+)`\*\*: (.+)$/gm))
    lists[entry!] = [...names!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!).sort();
  return lists;
}

describe('the public surface', () => {
  const actual = exportsOf(Object.values(ENTRIES));

  it('docs/sdk.md lists every entry of both packages, and each entry exports exactly its list', () => {
    const lists = listed();
    expect(Object.keys(lists).sort()).toEqual(Object.keys(ENTRIES).sort());
    for (const [entry, file] of Object.entries(ENTRIES)) expect(actual[file], entry).toEqual(lists[entry]);
  });

  it("names every entry of both packages' exports, each built from its source file", () => {
    const built: Record<string, string> = {};
    for (const [dir, name, srcOf] of [
      ['.', 'artifact-store', (dist: string) => dist.replace(/^\.\/dist\//, 'src/')],
      ['packages/sdk', 'artifact-store-sdk', (dist: string) => dist.replace(/^\.\/dist\//, 'src/')],
    ] as const) {
      const { exports } = JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) as {
        exports: Record<string, string | { default: string }>;
      };
      for (const [key, target] of Object.entries(exports)) {
        if (typeof target === 'string' || key.startsWith('./internal/')) continue;
        built[name + key.slice(1)] = srcOf(target.default).replace(/\.js$/, '.ts');
      }
    }
    expect(built).toEqual(ENTRIES);
  });

  it('server internals leave every root: no app factory, repository, authenticator or raw service', () => {
    const all = Object.values(actual).flat();
    for (const internal of [
      'createApp',
      'AppDeps',
      'ArtifactRepository',
      'createAuthenticator',
      'createArtifactService',
    ])
      expect(all, internal).not.toContain(internal);
    expect(actual['src/index.ts']).toContain('composeApp');
  });
});

describe('the SDK package', () => {
  it("declares exactly the packages its sources import (packages/sdk/package.json), and the server's pins its version", () => {
    const imported = new Set<string>();
    for (const folder of SDK_FOLDERS) {
      for (const file of readdirSync(join(ROOT, 'src', folder), { recursive: true, encoding: 'utf8' })) {
        if (!file.endsWith('.ts')) continue;
        const text = readFileSync(join(ROOT, 'src', folder, file), 'utf8');
        for (const [, spec] of text.matchAll(/(?:from|import)\s*\(?\s*'([^'.][^']*)'/g)) {
          if (spec!.startsWith('node:')) continue;
          imported.add(spec!.startsWith('@') ? spec!.split('/').slice(0, 2).join('/') : spec!.split('/')[0]!);
        }
      }
    }
    const sdk = JSON.parse(readFileSync(join(ROOT, 'packages', 'sdk', 'package.json'), 'utf8'));
    const declared = [...Object.keys(sdk.dependencies), ...Object.keys(sdk.peerDependencies)].sort();
    expect([...imported].sort()).toEqual(declared);
    const server = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    expect(sdk.version).toBe(server.version);
    expect(server.dependencies['artifact-store-sdk']).toBe(sdk.version);
  });
});
