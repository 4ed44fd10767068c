import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { renderReadme } from '../scripts/docs-tables.js';

it('docs: the README tables are generated from specs/ (run `npm run docs` when this fails)', () => {
  const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');
  expect(renderReadme(readme)).toBe(readme);
});

it('docs: the README shows the test command that .ci/run runs', () => {
  const readme = readFileSync(fileURLToPath(new URL('../README.md', import.meta.url)), 'utf8');
  const ci = readFileSync(fileURLToPath(new URL('../.ci/run', import.meta.url)), 'utf8');
  expect(ci).toMatch(/^npm ci$/m);
  expect(ci).toMatch(/^npm test$/m);
  expect(readme).toContain('npm test');
});

it('docs: ARCHITECTURE.md maps every source file, and names no file that is gone', () => {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const map = readFileSync(join(root, 'ARCHITECTURE.md'), 'utf8');
  const sources = readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') || f.endsWith('.c'))
    .map((f) => `src/${f.split(sep).join('/')}`);
  expect(sources.filter((f) => !map.includes(`\`${f}\``))).toEqual([]);
  const named = [...map.matchAll(/`(src\/[^`\s]+\.(?:ts|c))`/g)].map((m) => m[1]!);
  expect(named.filter((f) => !existsSync(join(root, f)))).toEqual([]);
});

/** Import edges between source folders (a folder is a file's directory: `transport/core`, `engine`, `.`). */
function folderEdges(): Map<string, Set<string>> {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const folderOf = (rel: string): string => (rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '.');
  const edges = new Map<string, Set<string>>();
  for (const f of readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' })) {
    if (!f.endsWith('.ts')) continue;
    const rel = f.split(sep).join('/');
    const from = folderOf(rel);
    edges.set(from, edges.get(from) ?? new Set());
    const text = readFileSync(join(root, 'src', f), 'utf8');
    for (const m of text.matchAll(/from '(\.{1,2}\/[^']+)'/g)) {
      const target = new URL(m[1]!, `file:///src/${rel}`).pathname.slice('/src/'.length);
      const to = folderOf(target);
      if (to !== from) edges.get(from)!.add(to);
    }
  }
  return edges;
}

it('docs: no two source folders import each other (the folders form floors, each importing only those below it)', () => {
  const edges = folderEdges();
  const mutual = [...edges].flatMap(([a, tos]) => [...tos].filter((b) => a < b && edges.get(b)?.has(a)).map((b) => `${a} <-> ${b}`));
  expect(mutual).toEqual([]);
  // and no longer cycle either: a topological order of the folders exists
  const left = new Map([...edges].map(([a, tos]) => [a, new Set(tos)]));
  for (let changed = true; changed; ) {
    changed = false;
    for (const [a, tos] of left) {
      for (const b of tos) if (!left.has(b)) tos.delete(b);
      if (tos.size === 0) {
        left.delete(a);
        changed = true;
      }
    }
  }
  expect([...left.keys()]).toEqual([]);
});

it('docs: the code map is grouped by folder, floor by floor (a folder after every folder it imports)', () => {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const map = readFileSync(join(root, 'ARCHITECTURE.md'), 'utf8');
  const rows = [...map.matchAll(/^\| `src\/([^`\s]+)\.(?:ts|c)` \|/gm)].map((m) => m[1]!);
  const folders: string[] = [];
  for (const r of rows) {
    const folder = r.includes('/') ? r.slice(0, r.lastIndexOf('/')) : '.';
    if (folders.at(-1) !== folder) folders.push(folder);
  }
  // One block a folder: a folder met twice is split.
  expect(folders.filter((f, i) => folders.indexOf(f) !== i)).toEqual([]);
  const edges = folderEdges();
  const late = [...edges].flatMap(([a, tos]) => [...tos].filter((b) => folders.includes(a) && folders.indexOf(b) > folders.indexOf(a)).map((b) => `${a} is listed before ${b}, which it imports`));
  expect(late).toEqual([]);
});
