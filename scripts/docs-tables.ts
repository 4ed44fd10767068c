/**
 * Renders the README's limits and error-code tables from specs/ (the single source), between
 * `<!-- generated:NAME -->` markers. `npm run docs` writes them; a test fails when they are stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

interface LimitRow {
  name: string;
  flag: string;
  env: string;
  default: number;
  unit: string;
  min: number;
  max: number;
}

function limitsTable(): string {
  const spec = JSON.parse(readFileSync(root + 'specs/limits.json', 'utf8')) as { limits: LimitRow[] };
  const rows = spec.limits.map(
    (l) => `| \`${l.name}\` | \`${l.flag}\` | \`${l.env}\` | ${l.default} ${l.unit} | ${l.min}–${l.max} |`,
  );
  return ['| option | flag | environment | default | range |', '| --- | --- | --- | --- | --- |', ...rows].join('\n');
}

function errorsTable(): string {
  const md = readFileSync(root + 'specs/agent-mcp-result-budget.md', 'utf8');
  const start = md.indexOf('| code | when | CLI exit |');
  const end = md.indexOf('\n\n', start);
  return md.slice(start, end);
}

export function renderReadme(readme: string): string {
  const tables: Record<string, string> = { limits: limitsTable(), errors: errorsTable() };
  return readme.replace(
    /<!-- generated:(\w+) -->[\s\S]*?<!-- \/generated -->/g,
    (_m, name: string) => `<!-- generated:${name} -->\n${tables[name] ?? ''}\n<!-- /generated -->`,
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const path = root + 'README.md';
  writeFileSync(path, renderReadme(readFileSync(path, 'utf8')));
}
