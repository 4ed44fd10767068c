/**
 * Question: how many tokens does a model read for a tool answer, against the tokens of the useful
 * content in it? Fixed fixtures, the real `serve` over stdio with the SDK client, counted with
 * o200k_base and the Claude tokenizer (all text blocks of the answer, as the model reads them):
 *
 *   - a directory page: 120 files named as in a real package (TypeScript's lib/), `limit` 200;
 *     useful content: the names, one a line;
 *   - a file read of source code (9 KiB of TypeScript, one window); useful content: the window;
 *   - a git log page of 30 commits with real subjects; useful content: `hash author date subject`
 *     a line;
 *   - a message page of 30 messages; useful content: `author: body` a line.
 *
 * The same directory and file through `@modelcontextprotocol/server-filesystem` (its
 * `list_directory` and `read_text_file`) in the same run. Goals (issue 23): file reads ≤ 1.1×,
 * listings ≤ 1.5× the raw names.
 *
 * Command: npm run bench:tokens-read
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { TOKENIZERS } from './tokens/tokenizers.js';
import { machineLine, table } from './util.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(root, 'dist', 'cli.js');
const FS_SERVER = join(root, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');
const COUNTERS = { o200k_base: TOKENIZERS.o200k_base!, claude: TOKENIZERS.claude! };

type Result = { content?: { type: string; text?: string }[]; structuredContent?: Record<string, unknown>; isError?: boolean };
const textOf = (r: Result): string => (r.content ?? []).filter((b) => b.type === 'text').map((b) => b.text ?? '').join('\n');

const work = mkdtempSync(join(tmpdir(), 'tokens-read-'));
const ws = join(work, 'ws');
const names = readdirSync(join(root, 'node_modules', 'typescript', 'lib')).filter((n) => n.includes('.')).slice(0, 120);
execFileSync('mkdir', ['-p', join(ws, 'lib')]);
for (const n of names) writeFileSync(join(ws, 'lib', n), '');
const source = readFileSync(join(root, 'src', 'engine', 'budgeter-strings.ts'), 'utf8');
writeFileSync(join(ws, 'source.ts'), source);
// A repository of 30 commits with this project's own subjects.
const subjects = execFileSync('git', ['log', '--format=%s', '-n', '30'], { cwd: root, encoding: 'utf8' }).trim().split('\n').map((s) => s.slice(0, 200));
const git = (args: string[]): string => execFileSync('git', ['-c', 'user.name=Ada Lovelace', '-c', 'user.email=ada@example.com', ...args], { cwd: ws, encoding: 'utf8' });
git(['init', '-q']);
for (const [i, s] of subjects.entries()) {
  writeFileSync(join(ws, 'history.txt'), `${i}\n`);
  git(['add', 'history.txt']);
  git(['commit', '-q', '-m', s]);
}
const logLines = git(['log', '--format=%H %an %aI %s', '-n', '30']).trim();

async function connect(args: string[]): Promise<Client> {
  const client = new Client({ name: 'tokens-read', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args, stderr: 'pipe' }));
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Result> {
  const r = (await client.callTool({ name, arguments: args })) as Result;
  if (r.isError === true) throw new Error(`${name}: ${textOf(r).slice(0, 300)}`);
  return r;
}

const rowsOut: (string | number)[][] = [];
function row(fixture: string, server: string, read: string, useful: string): void {
  const cells: (string | number)[] = [fixture, server];
  for (const count of Object.values(COUNTERS)) {
    const r = count(read);
    const u = count(useful);
    cells.push(`${r} / ${u} = ${(r / u).toFixed(2)}×`);
  }
  rowsOut.push(cells);
}

console.log(`# tokens read per useful token\n${machineLine()}\n`);
const serve = await connect([CLI, 'serve', '--root', ws, '--team-db', join(work, 'team.db')]);
try {
  const page = await call(serve, 'workspace_list_dir', { path: 'lib', limit: 200 });
  row('directory page (120 names)', 'serve', textOf(page), names.slice().sort().join('\n'));
  const file = await call(serve, 'workspace_read_file', { path: 'source.ts', max_bytes: 65536 });
  // One read window (the whole file: the default window carries about 29 KiB of plain text): its useful content is the window.
  const window = (file.structuredContent!.content as string[]).join('');
  row(`file read (${Buffer.byteLength(window)} B window of TypeScript)`, 'serve', textOf(file), window);
  const log = await call(serve, 'git_log', { limit: 30 });
  row('git log page (30 commits)', 'serve', textOf(log), logLines);
  const me = (await call(serve, 'message_send', { channel: 'general', body: 'first' })).structuredContent!;
  void me;
  const bodies = subjects.slice(0, 29);
  for (const b of bodies) await call(serve, 'message_send', { channel: 'general', body: b });
  const messages = await call(serve, 'message_history_read', { channel: 'general', limit: 30 });
  const items = (messages.structuredContent!.messages as { author: string; body: string }[]) ?? [];
  row(`message page (${items.length} messages)`, 'serve', textOf(messages), items.map((m) => `${m.author}: ${m.body}`).join('\n'));
} finally {
  await serve.close();
}
const fs = await connect([FS_SERVER, ws]);
try {
  const page = await call(fs, 'list_directory', { path: join(ws, 'lib') });
  row('directory page (120 names)', 'server-filesystem', textOf(page), names.slice().sort().join('\n'));
  const file = await call(fs, 'read_text_file', { path: join(ws, 'source.ts') });
  row(`file read (${Buffer.byteLength(source)} B of TypeScript)`, 'server-filesystem', textOf(file), source);
} finally {
  await fs.close();
}
console.log(table(['fixture', 'server', ...Object.keys(COUNTERS).map((n) => `${n}: read / useful`)], rowsOut));
rmSync(work, { recursive: true, force: true });
