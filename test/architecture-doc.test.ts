/**
 * docs/architecture.md stays true of the tree: its layer table names every rule .dependency-cruiser.cjs
 * checks, its code map names every source module in its folder (and nothing that is not there), its
 * list of files over 400 lines is the list, and the package entries it names are the ones
 * package.json exports.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('..', import.meta.url).pathname;
const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');

/** The text of the section under `heading` (to the next heading of the same or a higher level). */
function section(heading: string): string {
  const start = doc.indexOf(`\n${heading}\n`);
  expect(start, `docs/architecture.md has a section "${heading}"`).toBeGreaterThan(-1);
  const level = heading.match(/^#+/)![0].length;
  const rest = doc.slice(start + heading.length + 2);
  const next = rest.search(new RegExp(`\\n#{1,${level}} `));
  return next < 0 ? rest : rest.slice(0, next);
}

/** Source modules (not tests) directly in a folder of src/. */
function modulesIn(folder: string): string[] {
  return readdirSync(join(ROOT, folder)).filter(
    (name) =>
      /\.(ts|js|html|css)$/.test(name) &&
      !/\.test\.ts$|\.d\.ts$/.test(name) &&
      statSync(join(ROOT, folder, name)).isFile(),
  );
}

function foldersIn(folder: string): string[] {
  return readdirSync(join(ROOT, folder)).filter((name) => statSync(join(ROOT, folder, name)).isDirectory());
}

/** Every source file of src/, recursively, with its line count. */
function sourceFiles(folder = 'src'): { path: string; lines: number }[] {
  return readdirSync(join(ROOT, folder)).flatMap((name) => {
    const path = `${folder}/${name}`;
    if (statSync(join(ROOT, path)).isDirectory()) return sourceFiles(path);
    if (!/\.ts$/.test(name) || /\.test\.ts$|\.d\.ts$/.test(name)) return [];
    return [{ path, lines: readFileSync(join(ROOT, path), 'utf8').split('\n').length - 1 }];
  });
}

/**
 * The code map, as folder -> what it says of that folder. Each entry starts at a line beginning with
 * the folder's path (`src/http/`, `src/http/middleware/`) and runs to the next such line.
 */
function codeMap(): Map<string, string> {
  const block = section('## Code map').match(/```\n([\s\S]*?)```/)![1]!;
  const map = new Map<string, string>();
  let current: string | undefined;
  for (const line of block.split('\n')) {
    const head = /^(src\/[a-z0-9-]+(?:\/[a-z0-9-]+)*\/|[a-z0-9-]+\/)\s/.exec(line);
    if (head) {
      current = head[1]!;
      map.set(current, line.slice(current.length));
    } else if (current) map.set(current, `${map.get(current)} ${line}`);
  }
  return map;
}

describe('docs/architecture.md', () => {
  it('names every rule of .dependency-cruiser.cjs in its layer table, and only those', () => {
    const config = createRequire(import.meta.url)(join(ROOT, '.dependency-cruiser.cjs')) as {
      forbidden: { name: string }[];
    };
    const rules = config.forbidden.map((r) => r.name).sort();
    const layers = section('## Layers');
    // The table's last column, and the rules the paragraph under it names ("Also checked: …").
    const cells = layers
      .split('\n')
      .filter((l) => l.startsWith('| `'))
      .map((l) => l.split('|').at(-2)!);
    const also = layers.slice(layers.indexOf('Also checked'));
    const named = [...[...cells, also].join(' ').matchAll(/`([a-z]+(?:-[a-z]+)+)`/g)].map((m) => m[1]!);
    const missing = rules.filter((r) => !named.includes(r));
    const unknown = [...new Set(named)].filter((n) => !rules.includes(n));
    expect({ missing, unknown }).toEqual({ missing: [], unknown: [] });
  });

  it('its code map names every module of each folder it maps, and none that is not there', () => {
    const map = codeMap();
    const problems: string[] = [];
    for (const [folder, text] of map) {
      if (!folder.startsWith('src/')) continue;
      const mentioned = new Set([...text.matchAll(/\b([a-z0-9-]+\.(?:ts|js|html|css))\b/g)].map((m) => m[1]!));
      const subfolders = new Set([...text.matchAll(/\b([a-z-]+)\/(?=[\s(,:;.]|$)/g)].map((m) => m[1]!));
      for (const name of modulesIn(folder))
        if (!mentioned.has(name)) problems.push(`${folder}${name} is not in the code map`);
      for (const name of foldersIn(folder))
        if (!subfolders.has(name) && !map.has(`${folder}${name}/`))
          problems.push(`${folder}${name}/ is not in the code map`);
      for (const name of mentioned) {
        const exists =
          modulesIn(folder).includes(name) ||
          foldersIn(folder).some((sub) => modulesIn(`${folder}${sub}`).includes(name));
        if (!exists) problems.push(`the code map names ${folder}${name}, which is not there`);
      }
    }
    // Every folder of src/ is mapped, on its own line or inside its parent's.
    for (const folder of foldersIn('src')) {
      if (!map.has(`src/${folder}/`)) problems.push(`src/${folder}/ has no line in the code map`);
    }
    expect(problems.join('\n')).toBe('');
  });

  it('lists exactly the source files over 400 lines, each with its size to within a tenth', () => {
    const listed = [...section('### Files over 400 lines').matchAll(/`(src\/[^`]+\.ts)` \(~(\d+)\)/g)].map((m) => ({
      path: m[1]!,
      approx: Number(m[2]),
    }));
    const over = sourceFiles().filter((f) => f.lines > 400);
    expect(listed.map((l) => l.path).sort()).toEqual(over.map((f) => f.path).sort());
    for (const l of listed) {
      const actual = over.find((f) => f.path === l.path)!.lines;
      expect(
        Math.abs(actual - l.approx) / actual,
        `${l.path}: ~${l.approx} in the doc, ${actual} lines`,
      ).toBeLessThanOrEqual(0.1);
    }
  });

  it("names the packages' entries as package.json exports them", () => {
    const packages = section('## Packages');
    const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
    const sdk = JSON.parse(readFileSync(join(ROOT, 'packages/sdk/package.json'), 'utf8')) as {
      exports: Record<string, unknown>;
    };
    const rows = packages.split('\n').filter((l) => l.startsWith('| `artifact-store'));
    const entriesOf = (row: string) => [...row.split('|')[3]!.matchAll(/`(\.(?:\/[a-z-]+)?)`/g)].map((m) => m[1]!);
    const sdkRow = rows.find((r) => r.startsWith('| `artifact-store-sdk`'))!;
    const rootRow = rows.find((r) => r.startsWith('| `artifact-store` '))!;
    const publicOf = (exports: Record<string, unknown>) =>
      Object.keys(exports).filter((k) => k !== './package.json' && !k.startsWith('./internal'));
    expect(entriesOf(sdkRow).sort()).toEqual(publicOf(sdk.exports).sort());
    expect(entriesOf(rootRow).sort()).toEqual(publicOf(root.exports).sort());
    // Each entry's source file, as the row names it, exists.
    for (const source of [...packages.matchAll(/`(src\/[a-z/.-]+\.ts)`/g)].map((m) => m[1]!))
      expect(statSync(join(ROOT, source)).isFile(), source).toBe(true);
  });
});
