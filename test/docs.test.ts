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
