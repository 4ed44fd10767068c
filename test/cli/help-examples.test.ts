/**
 * Every command's help example runs as printed, in the order a newcomer would try them, in a fresh
 * directory with its own state directory: `apply` bounds a file, `limits` shows what the variable
 * and the flag set, `demo` bounds its result, `serve` and `proxy` answer an SDK client, `team`
 * adds a member, and `exec` (and `serve`, as the OS user) still work after it. (`team add` on an
 * empty store once left the administrator out, and every later `serve` refused to start.) The
 * proxy's example wraps a third party's server (`npx -y …`, which npm cannot fetch offline): an
 * SDK server of the fixtures stands in for what follows `--`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/cli/spec.js';
import { REPORT_KEY } from '../../src/engine/index.js';
import { cleanEnv, cliPath, ensureBuilt, repoRoot, runCli } from '../helpers/cli.js';

let dir: string;
/** The workspace each example runs in (the state directory is beside it: a store inside the root is refused). */
let ws: string;
let env: Record<string, string>;

beforeAll(() => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'help-examples-'));
  env = { XDG_STATE_HOME: join(dir, 'state') };
  ws = join(dir, 'ws');
  mkdirSync(ws);
  writeFileSync(join(ws, 'result.json'), JSON.stringify({ content: [{ type: 'text', text: 'line\n'.repeat(20000) }] }));
  writeFileSync(join(ws, 'notes.txt'), 'hello\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The example of `name` as words, with its leading `VAR=value` assignments apart. */
function example(name: string): { env: Record<string, string>; args: string[] } {
  const text = COMMANDS.find((c) => c.name === name)!.example;
  const words = [...text.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map((m) => (m[1] !== undefined ? m[1] : m[2]!));
  const assigned: Record<string, string> = {};
  while (/^[A-Z_][A-Z0-9_]*=/.test(words[0]!)) {
    const [k, v] = words.shift()!.split(/=(.*)/s);
    assigned[k!] = v!;
  }
  expect(words.shift(), text).toBe('mcp-budget');
  return { env: assigned, args: words };
}

async function withClient<T>(args: string[], use: (client: Client) => Promise<T>): Promise<T> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [cliPath, ...args], cwd: ws, env: cleanEnv(env) as Record<string, string>, stderr: 'pipe' });
  const client = new Client({ name: 'newcomer', version: '1.0.0' });
  await client.connect(transport);
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

describe('every help example runs as printed', { timeout: 60_000 }, () => {
  it('covers every command', () => {
    expect(COMMANDS.map((c) => c.name).sort()).toEqual(['apply', 'demo', 'exec', 'limits', 'proxy', 'serve', 'team']);
  });

  it('apply, limits and demo', () => {
    const apply = example('apply');
    const r = runCli(apply.args, { cwd: ws, env: { ...env, ...apply.env } });
    expect(r.code, r.stderr).toBe(0);
    expect(Buffer.byteLength(r.stdout.trim())).toBeLessThanOrEqual(16 * 1024);
    expect(JSON.parse(r.stdout)._meta[REPORT_KEY].truncated).toBe(true);

    const limits = example('limits');
    const l = runCli(limits.args, { cwd: ws, env: { ...env, ...limits.env } });
    expect(l.code, l.stderr).toBe(0);
    expect(l.stdout).toMatch(/maxItems\D+50\b/);
    expect(l.stdout).toMatch(/32768|32 ?KiB/);

    const demo = example('demo');
    const d = runCli(demo.args, { cwd: ws, env: { ...env, ...demo.env } });
    expect(d.code, d.stderr).toBe(0);
  });

  it('serve, then team add, then exec and serve as the OS user', async () => {
    const serve = example('serve');
    const listed = await withClient(serve.args, async (c) => (await c.listTools()).tools.map((t) => t.name));
    expect(listed).toContain('workspace_list_dir');

    const team = example('team');
    const t = runCli(team.args, { cwd: ws, env: { ...env, ...team.env } });
    expect(t.code, t.stderr).toBe(0);
    expect(t.stdout).toMatch(/the store was empty: added \S+ \(owner; the OS user, whom serve runs as unless --as names another member\)/);
    expect(t.stdout).toMatch(/added alice \(lead\)\n$/);

    const exec = example('exec');
    const e = runCli(exec.args, { cwd: ws, env: { ...env, ...exec.env } });
    expect(e.code, e.stderr).toBe(0);
    expect(JSON.parse(e.stdout).structuredContent.result.entries.map((x: { name: string }) => x.name)).toContain('notes.txt');
    // the team surfaces answer the administrator, who is now the store's owner
    const tasks = runCli(['exec', 'task.list', '--input', '{}'], { cwd: ws, env });
    expect(tasks.code, tasks.stdout + tasks.stderr).toBe(0);
    const members = await withClient(serve.args, async (c) => c.callTool({ name: 'task_list', arguments: {} }));
    expect(members.isError ?? false).toBe(false);
  });

  it('proxy', async () => {
    const proxy = example('proxy');
    const args = [...proxy.args.slice(0, proxy.args.indexOf('--') + 1), process.execPath, join(repoRoot, 'test', 'fixtures', 'sdk-server.mjs')];
    const cut = await withClient(args, async (c) => c.callTool({ name: 'big', arguments: {} }));
    expect(Buffer.byteLength(JSON.stringify(cut))).toBeLessThanOrEqual(32 * 1024);
  });
});
