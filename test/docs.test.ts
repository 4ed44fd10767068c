import { readFileSync } from 'node:fs';
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
