/**
 * The package as a newcomer gets it: `npm pack`, then installed from the tarball outside the
 * repository with install scripts disabled and the optional dependencies left out.
 *
 * - The library install holds no native module and no database driver, and every library entry
 *   imports and does its work: the engine bounds a result, the decorator bounds an SDK server's
 *   answer, the proxy bounds a child server's.
 * - A global install runs every client entry of the README and of `serve`'s terminal help, exactly
 *   as written (`npx -y mcp-result-budget …`), from an empty directory, with npm offline: each
 *   starts, lists its tools and answers a listing of the workspace through the SDK client.
 * - Without the drivers, the team surfaces answer STORE_DRIVER_MISSING naming the package, and the
 *   workspace tools still work.
 *
 * The installs read npm's cache first (which `npm ci` of this repository fills); the entries run
 * with npm offline, so `npx -y mcp-result-budget` can only be the package installed here.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectHelp } from '../../src/commands/serve.js';
import { REPORT_KEY } from '../../src/engine/index.js';
import { ensureBuilt, repoRoot } from '../helpers/cli.js';

const run = promisify(execFile);
const TIMEOUT = 180_000;

let dir: string;
let tarball: string;
/** The library user's project. */
let project: string;
/** The global install's prefix (`npm install -g --prefix`). */
let prefix: string;
/** What `npm install` took for each, in ms. */
const installMs: Record<string, number> = {};

/** The environment npm runs in: none of the enclosing `npm test`'s settings (its prefix is this repository), offline from the cache. */
function npmEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k) || /^npm_config_cache$/i.test(k)) env[k] = v;
  return { ...env, npm_config_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false', ...extra };
}

/** The global install's environment: its bin first on PATH, npm's prefix pointing at it. */
const globalEnv = (): NodeJS.ProcessEnv => npmEnv({ PATH: `${join(prefix, 'bin')}${delimiter}${process.env.PATH ?? ''}`, npm_config_prefix: prefix });

async function npmInstall(cwd: string, args: string[], name: string): Promise<void> {
  const t0 = performance.now();
  await run('npm', ['install', ...args, tarball, '--omit=optional', '--ignore-scripts', '--no-package-lock'], {
    cwd,
    // From the cache where it has what the tarball needs, else from the registry (a cache filled
    // by `npm ci` alone may lack the documents npm reads to resolve a range).
    env: npmEnv({ npm_config_offline: 'false', npm_config_prefer_offline: 'true', ...(args.includes('-g') ? { npm_config_prefix: prefix } : {}) }),
  });
  installMs[name] = Math.round(performance.now() - t0);
}

function walk(d: string, found: string[] = []): string[] {
  for (const e of readdirSync(d, { withFileTypes: true })) {
    if (e.isDirectory()) walk(join(d, e.name), found);
    else found.push(join(d, e.name));
  }
  return found;
}

beforeAll(async () => {
  ensureBuilt();
  // Outside the repository: Node resolves a package by walking up, and the repository's own
  // node_modules (with both drivers built) would answer for a missing one.
  dir = mkdtempSync(join(tmpdir(), 'mcp-budget-packed-'));
  const packed = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: repoRoot, env: npmEnv() });
  tarball = join(dir, (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0]!.filename);
  project = join(dir, 'project');
  prefix = join(dir, 'prefix');
  mkdirSync(project);
  mkdirSync(prefix);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'a-library-user', version: '1.0.0', private: true, type: 'module' }));
  await Promise.all([npmInstall(project, [], 'library'), npmInstall(dir, ['-g'], 'global')]);
}, TIMEOUT);

afterAll(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** A server of the SDK's with one tool answering 200 KB, for the decorator and the proxy. */
const BIG_SERVER = `
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
export function bigServer() {
  const server = new McpServer({ name: 'big', version: '1.0.0' });
  server.registerTool('dump', { description: 'a log with no paging' }, async () => ({ content: [{ type: 'text', text: 'line\\n'.repeat(40000) }] }));
  return server;
}
if (process.argv[2] === 'stdio') await bigServer().connect(new StdioServerTransport());
`;

/** Every library entry, imported by name from the installed package and used. Prints what it saw as JSON. */
const LIBRARY_CHECK = `
import { PassThrough } from 'node:stream';
import { boundResult, REPORT_KEY } from 'mcp-result-budget';
import { withResultBudget } from 'mcp-result-budget/transport';
import { runProxy } from 'mcp-result-budget/proxy';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { bigServer } from './big-server.js';

const out = {};
const engine = boundResult({ content: [{ type: 'text', text: 'x'.repeat(100000) }] }, { maxResultBytes: 8192 }).result;
out.engine = { bytes: Buffer.byteLength(JSON.stringify(engine)), truncated: engine._meta?.[REPORT_KEY]?.truncated };

const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
await bigServer().connect(withResultBudget(serverSide, { maxResultBytes: 16384 }));
const client = new Client({ name: 'c', version: '1.0.0' });
await client.connect(clientSide);
const decorated = await client.callTool({ name: 'dump', arguments: {} });
out.decorator = { bytes: Buffer.byteLength(JSON.stringify(decorated)), truncated: decorated._meta?.[REPORT_KEY]?.truncated };
await client.close();

const stdin = new PassThrough();
const stdout = new PassThrough();
let text = '';
stdout.on('data', (c) => { text += c; });
const done = runProxy({ command: process.execPath, args: ['big-server.js', 'stdio'], limits: { maxResultBytes: 16384 }, stdin, stdout, stderr: process.stderr, handleSignals: false });
const send = (m) => stdin.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\\n');
send({ id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } } });
send({ method: 'notifications/initialized' });
send({ id: 2, method: 'tools/call', params: { name: 'dump', arguments: {} } });
while (!text.split('\\n').some((l) => l.includes('"id":2'))) await new Promise((r) => setTimeout(r, 20));
stdin.end();
out.proxyExit = await done;
const answer = JSON.parse(text.split('\\n').find((l) => l.includes('"id":2')));
out.proxy = { bytes: Buffer.byteLength(JSON.stringify(answer)), truncated: answer.result._meta?.[REPORT_KEY]?.truncated };
process.stdout.write(JSON.stringify(out));
`;

describe('the packed package, installed with no install scripts and no optional dependencies', () => {
  it('the library install holds no native module and no database driver', () => {
    const files = walk(join(project, 'node_modules'));
    expect(files.filter((f) => f.endsWith('.node'))).toEqual([]);
    const names = readdirSync(join(project, 'node_modules'));
    expect(names).toContain('mcp-result-budget');
    expect(names.filter((n) => n === 'better-sqlite3' || n === 'pg' || n === 'bindings' || n === 'prebuild-install')).toEqual([]);
  });

  it('every library entry imports by its name and bounds: the engine, the decorator, the proxy', async () => {
    writeFileSync(join(project, 'big-server.js'), BIG_SERVER);
    writeFileSync(join(project, 'check.js'), LIBRARY_CHECK);
    const r = await run(process.execPath, ['check.js'], { cwd: project, env: npmEnv(), timeout: 60_000 });
    const out = JSON.parse(r.stdout) as Record<string, { bytes: number; truncated: boolean }> & { proxyExit: number };
    expect(out.engine!.truncated).toBe(true);
    expect(out.engine!.bytes).toBeLessThanOrEqual(8192);
    for (const side of ['decorator', 'proxy'] as const) {
      expect(out[side]!.truncated, side).toBe(true);
      expect(out[side]!.bytes, side).toBeLessThanOrEqual(16384);
    }
    expect(out.proxyExit).toBe(0);
  }, TIMEOUT);

  it('without the drivers, the team surfaces say which package to install, and the workspace tools work while there is no store', async () => {
    const root = mkdtempSync(join(dir, 'root-'));
    writeFileSync(join(root, 'notes.txt'), 'hello\n');
    const exec = (action: string) => run('mcp-budget', ['exec', action, '--root', root, '--input', '{}'], { cwd: dir, env: globalEnv() }).catch((e: { stdout: string; stderr: string; code: number }) => e);
    const listed = await exec('workspace.list_dir');
    expect(listed.stdout).toContain('notes.txt');
    const team = (await exec('task.list')) as { stdout: string; stderr: string; code?: number };
    expect(team.code).toBe(1);
    expect(team.stdout).toContain('The team store cannot be opened on this server: a package it needs is not installed');
    // npm installs a global package's optional dependencies whatever --omit says: here the driver
    // is there, without the native module its install script would have built.
    expect(team.stderr).toMatch(/STORE_DRIVER_MISSING: The SQLite team store needs the package better-sqlite3, which was installed without its native module \(its install script did not run, or its build failed\)\. Install it .*npm install better-sqlite3@12/);
    // In the library user's project it is absent.
    const local = (await run(process.execPath, [join(project, 'node_modules', 'mcp-result-budget', 'dist', 'cli.js'), 'exec', 'task.list', '--root', root, '--input', '{}'], { cwd: project, env: npmEnv() }).catch((e) => e)) as { stderr: string; code: number };
    expect(local.code).toBe(1);
    expect(local.stderr).toMatch(/STORE_DRIVER_MISSING: The SQLite team store needs the package better-sqlite3, which is not installed\. Install it .*npm install better-sqlite3@12/);
    const pg = (await run(process.execPath, [join(project, 'node_modules', 'mcp-result-budget', 'dist', 'cli.js'), 'team', '--root', root, '--team-db', 'postgres:///nowhere', 'list'], { cwd: project, env: npmEnv() }).catch((e) => e)) as { stderr: string; code: number };
    expect(pg.code).not.toBe(0);
    expect(pg.stderr).toMatch(/STORE_DRIVER_MISSING: A PostgreSQL team store needs the package pg, which is not installed\. Install it .*npm install pg@8/);
  }, TIMEOUT);

  it('every client entry of the README and of serve\'s terminal help runs as written, from an empty directory', async () => {
    writeFileSync(join(project, 'big-server.js'), BIG_SERVER);
    const root = mkdtempSync(join(dir, 'root-'));
    writeFileSync(join(root, 'notes.txt'), 'hello\n');
    const empty = mkdtempSync(join(dir, 'empty-'));
    const entries = [...readmeEntries(), ...helpEntries('/path/to/dir')];
    // The README's proxy entries, its serve entries (shell and JSON) and a project's .mcp.json; the
    // help's two.
    expect(entries.filter((e) => e.args.includes('proxy')).length).toBeGreaterThanOrEqual(2);
    expect(entries.filter((e) => e.args.includes('serve')).length).toBeGreaterThanOrEqual(5);
    for (const entry of entries) {
      expect(entry.command, entry.from).toBe('npx');
      expect(entry.args.slice(0, 2), entry.from).toEqual(['-y', 'mcp-result-budget']);
      let args = entry.args.map((a) => (a === '/path/to/dir' ? root : a));
      // What follows a proxy's `--` is the wrapped server's own entry (a third party's, which npm
      // could not resolve offline): a server of the SDK's with a 200 KB tool stands in for it.
      const proxied = args.includes('--');
      if (proxied) args = [...args.slice(0, args.indexOf('--') + 1), process.execPath, join(project, 'big-server.js'), 'stdio'];
      // An entry with no root is a project's: the host starts it in the project's directory.
      const cwd = args.includes(root) ? empty : root;
      const transport = new StdioClientTransport({ command: entry.command, args, cwd, env: { ...(globalEnv() as Record<string, string>), ...entry.env }, stderr: 'pipe' });
      let stderr = '';
      transport.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
      const client = new Client({ name: 'newcomer', version: '1.0.0' });
      try {
        await client.connect(transport);
        const tools = (await client.listTools()).tools.map((t) => t.name);
        if (proxied) {
          const cut = await client.callTool({ name: 'dump', arguments: {} });
          expect((cut._meta?.[REPORT_KEY] as { truncated?: boolean } | undefined)?.truncated, entry.from).toBe(true);
          expect(Buffer.byteLength(JSON.stringify(cut)), entry.from).toBeLessThanOrEqual(32 * 1024);
          continue;
        }
        const listing = tools.includes('workspace_list_dir') ? 'workspace_list_dir' : 'list_directory';
        expect(tools, entry.from).toContain(listing);
        const answer = await client.callTool({ name: listing, arguments: listing === 'list_directory' ? { path: root } : {} });
        expect(answer.isError ?? false, `${entry.from}: ${stderr}`).toBe(false);
        expect(JSON.stringify(answer.content), entry.from).toContain('notes.txt');
      } finally {
        await client.close();
      }
    }
  }, TIMEOUT);

  it('states what the install took', () => {
    // Not a bound (the cache and the disk decide it): the figures for the record.
    process.stdout.write(`packed install with no optional dependencies: library ${installMs.library} ms, global ${installMs.global} ms\n`);
    expect(installMs.library).toBeGreaterThan(0);
  });
});

interface Entry {
  from: string;
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** Split a shell command line as the README writes one (words, single-quoted words). */
function shellWords(line: string): string[] {
  const words: string[] = [];
  for (const m of line.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)) words.push(m[1] !== undefined ? m[1].replace(/'\\''/g, "'") : m[2]!);
  return words;
}

function fromShell(line: string, from: string): Entry {
  const words = shellWords(line.slice(line.indexOf(' -- ') + 4));
  return { from, command: words[0]!, args: words.slice(1), env: {} };
}

function fromJson(value: { command: string; args: string[]; env?: Record<string, string> }, from: string): Entry {
  return { from, command: value.command, args: value.args, env: value.env ?? {} };
}

/** Every client entry of the README: `claude mcp add NAME -- …` lines, `mcpServers` blocks and inline `"name": { "command": … }` entries. */
function readmeEntries(): Entry[] {
  const text = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const entries: Entry[] = [];
  for (const m of text.matchAll(/claude mcp add \S+ -- ([^`\n]+)/g)) entries.push(fromShell(`x -- ${m[1]!}`, `README: ${m[0]}`));
  for (const m of text.matchAll(/```json\n([\s\S]*?)```/g)) {
    const servers = (JSON.parse(m[1]!) as { mcpServers?: Record<string, { command: string; args: string[]; env?: Record<string, string> }> }).mcpServers;
    for (const [name, value] of Object.entries(servers ?? {})) entries.push(fromJson(value, `README mcpServers.${name}`));
  }
  for (const m of text.matchAll(/`("\w+": \{ "command": [^`]+\})`/g)) {
    for (const [name, value] of Object.entries(JSON.parse(`{${m[1]!}}`) as Record<string, { command: string; args: string[] }>)) entries.push(fromJson(value, `README inline ${name}`));
  }
  return entries;
}

/** The two entries `serve` prints when started in a terminal. */
function helpEntries(root: string): Entry[] {
  const lines = connectHelp(root).split('\n');
  const shell = lines.find((l) => l.includes('claude mcp add'))!;
  const json = lines.find((l) => l.includes('"command"'))!.trim();
  return [fromShell(shell.trim(), 'serve help: claude mcp add'), ...Object.entries(JSON.parse(`{${json}}`) as Record<string, { command: string; args: string[] }>).map(([name, v]) => fromJson(v, `serve help: ${name}`))];
}
