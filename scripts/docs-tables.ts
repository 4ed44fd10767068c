/**
 * Renders the README's limits and error-code tables from specs/ (the single source), between
 * `<!-- generated:NAME -->` markers. `npm run docs` writes them; a test fails when they are stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { fraction } from '../src/cli/spec.js';

const root = fileURLToPath(new URL('..', import.meta.url));

interface LimitRow {
  name: string;
  flag: string;
  env: string;
  default: number;
  unit: string;
  min: number;
  max: number;
  /** Share of maxResultBytes the limit takes unless set. */
  scale?: number;
  /** The default as help shows it, when the number would mislead. */
  defaultText?: string;
  /** A host's variable read when the limit's own is unset. */
  hostEnv?: string;
}

function limitsTable(): string {
  const spec = JSON.parse(readFileSync(root + 'specs/limits.json', 'utf8')) as { limits: LimitRow[] };
  const rows = spec.limits.map((l) => {
    const scaled = l.scale === undefined ? '' : ` (${fraction(l.scale)} of \`--max-bytes\` unless set)`;
    const env = l.hostEnv === undefined ? `\`${l.env}\`` : `\`${l.env}\`, else \`${l.hostEnv}\``;
    return `| \`${l.name}\` | \`${l.flag}\` | ${env} | ${l.defaultText ?? `${l.default} ${l.unit}`}${scaled} | ${l.min}–${l.max} |`;
  });
  return ['| option | flag | environment | default | range |', '| --- | --- | --- | --- | --- |', ...rows].join('\n');
}

function errorsTable(): string {
  const md = readFileSync(root + 'specs/agent-mcp-result-budget.md', 'utf8');
  const start = md.indexOf('| code | when | CLI exit |');
  const end = md.indexOf('\n\n', start);
  return md.slice(start, end);
}

interface ToolRow {
  name: string;
  classification: string;
  limit: { default: number; max: number; over_max: string } | null;
  paging: string;
  backend_query_bound: string;
  input_caps?: Record<string, number>;
}

function toolsTable(): string {
  const inv = JSON.parse(readFileSync(root + 'specs/agent-mcp-tool-inventory.json', 'utf8')) as { tools: ToolRow[] };
  const rows = inv.tools.map((t) => {
    const limit = t.limit === null ? '—' : `${t.limit.default} (max ${t.limit.max}, over max: ${t.limit.over_max})`;
    const caps = t.input_caps === undefined ? '' : ` Caps: ${Object.entries(t.input_caps).map(([k, v]) => `${k} ${v}`).join(', ')}.`;
    return `| \`${t.name}\` | ${t.classification} | ${limit} | ${t.paging} | ${t.backend_query_bound}.${caps} |`;
  });
  return ['| tool | kind | limit | paging | reads at the source |', '| --- | --- | --- | --- | --- |', ...rows].join('\n');
}

export function renderReadme(readme: string): string {
  const tables: Record<string, string> = { limits: limitsTable(), errors: errorsTable(), tools: toolsTable() };
  return readme.replace(
    /<!-- generated:(\w+) -->[\s\S]*?<!-- \/generated -->/g,
    (_m, name: string) => `<!-- generated:${name} -->\n${tables[name] ?? ''}\n<!-- /generated -->`,
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const path = root + 'README.md';
  writeFileSync(path, renderReadme(readFileSync(path, 'utf8')));
}
