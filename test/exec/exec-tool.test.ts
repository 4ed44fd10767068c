/**
 * `exec` through the SDK `Client` against a real `mcp-budget serve` over stdio: a typed success
 * for every action of the registry, oversized read-only answers whose guidance, followed,
 * succeeds, oversized mutations whose receipts name what really exists, unknown actions with the
 * nearest names, and refused input with schema paths and nothing written.
 */
import { execSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPORT_KEY } from '../../src/engine/limits.js';
import type { ActionRegistry } from '../../src/exec/index.js';
import { createWorkspaceServer } from '../../src/server/create-server.js';
import { ensureBuilt } from '../helpers/cli.js';
import { tempTree } from '../helpers/fs-tree.js';
import { connectClient, serveTransport, type Connected, type ToolResult } from '../helpers/mcp-stdio.js';

type Env = { action: string; ok: true; result: Record<string, unknown> };
type Answer = { error: string; envelope_bytes: number; limit_bytes: number; applied?: true; receipt?: Record<string, unknown>; continuation?: { continue_with: Record<string, unknown>; narrow_with: string[] } };

let tree: { dir: string; remove: () => void };
let store: { dir: string; remove: () => void };
let registry: ActionRegistry;
let a: Connected; // default limits
let big: Connected; // --max-bytes 1MiB: pages grow past exec's 64 KiB envelope
let small: Connected; // a tight server budget: a small envelope does not pass it whole
const git = (cmd: string): string => execSync(`git -c user.name=t -c user.email=t@example.com ${cmd}`, { cwd: tree.dir, encoding: 'utf8' });

async function exec(c: Connected, action: string, input?: unknown): Promise<ToolResult> {
  return (await c.client.callTool({ name: 'exec', arguments: input === undefined ? { action } : { action, input } })) as ToolResult;
}
async function ok(c: Connected, action: string, input?: unknown): Promise<Env> {
  const r = await exec(c, action, input);
  if (r.isError === true) throw new Error(`${action}: ${r.content?.[0]?.text ?? ''}`);
  return r.structuredContent as Env;
}
const answerOf = (r: ToolResult): Answer => r._meta?.[REPORT_KEY] as Answer;

beforeAll(async () => {
  ensureBuilt();
  tree = tempTree('exec-tool');
  store = tempTree('exec-store');
  writeFileSync(join(tree.dir, 'g.txt'), 'first\n');
  git('init -q');
  git('add g.txt');
  git('commit -qm first');
  const db = ['--team-db', join(store.dir, 'team.db'), '--as', 'tester'];
  a = await connectClient(serveTransport(tree.dir, db));
  big = await connectClient(serveTransport(tree.dir, [...db, '--max-bytes', '1MiB']));
  small = await connectClient(serveTransport(tree.dir, [...db, '--max-bytes', '7KiB', '--max-block-bytes', '1536', '--max-string-bytes', '1024']));
  const local = tempTree('exec-registry');
  const ws = await createWorkspaceServer(local.dir, {}, { dbPath: join(store.dir, 'registry.db') });
  registry = ws.actions;
  await ws.close();
  local.remove();
}, 120_000);

afterAll(async () => {
  await Promise.all([a?.close(), big?.close(), small?.close()]);
  tree?.remove();
  store?.remove();
});

describe('exec: a typed success for every action', () => {
  it('every action of the registry answers {action, ok, result} valid against its output schema', async () => {
    const seen: Record<string, Env> = {};
    const id = (): number => (seen['task.create']!.result.task as { id: number }).id;
    // Mutations first where reads need what they make; every registry action must have an input here.
    const inputs: [string, () => Record<string, unknown>][] = [
      ['workspace.seed_files', () => ({ files: [{ path: 'seeded/one.txt', content: 'one' }] })],
      ['workspace.list_dir', () => ({})],
      ['workspace.scan', () => ({})],
      ['workspace.search_files', () => ({ query: '**/*.txt' })],
      ['workspace.read_file', () => ({ path: 'g.txt' })],
      ['git.commit', () => ({ message: 'seeded', paths: ['seeded/one.txt'] })],
      ['git.create_branch', () => ({ name: 'feature-x' })],
      ['git.create_tag', () => ({ name: 'v1', message: 'tag one' })],
      ['git.log', () => ({ limit: 5 })],
      ['git.status', () => ({})],
      ['git.branches', () => ({})],
      ['git.tags', () => ({})],
      ['git.stashes', () => ({})],
      ['git.merge_status', () => ({})],
      ['message.send', () => ({ channel: 'general', body: 'hello exec', to: ['tester'] })],
      ['message.history_read', () => ({ channel: 'general' })],
      ['message.search', () => ({ q: 'hello' })],
      ['message.get', () => ({ id: seen['message.send']!.result.id })],
      ['inbox.read', () => ({})],
      ['inbox.ack', () => ({ ack_cursor: seen['inbox.read']!.result.ack_cursor })],
      ['task.create', () => ({ title: 'exec task', labels: ['exec'] })],
      ['task.list', () => ({})],
      ['task.search', () => ({ q: 'exec' })],
      ['task.get', () => ({ id: id() })],
      ['task.update', () => ({ id: id(), status: 'in_progress' })],
      ['task.comment', () => ({ id: id(), body: 'a note' })],
      ['task.options', () => ({ field: 'status' })],
    ];
    const names = registry.list().map((x) => x.name);
    expect(inputs.map(([n]) => n).sort(), 'one valid input per registry action').toEqual([...names].sort());
    for (const [name, input] of inputs) {
      const env = await ok(a, name, input());
      seen[name] = env;
      expect(env.action, name).toBe(name);
      expect(env.ok, name).toBe(true);
      const check = registry.get(name)!.output.safeParse(env.result);
      expect(check.success, `${name}: ${JSON.stringify(check.error?.issues ?? [])}`).toBe(true);
      expect(Buffer.byteLength(JSON.stringify(env)), name).toBeLessThanOrEqual(65536);
    }
    // The identifiers are real: the commit exists in git, the branch and tag point at commits.
    const commit = seen['git.commit']!.result.commit as string;
    expect(git(`cat-file -t ${commit}`).trim()).toBe('commit');
    expect(git('rev-parse feature-x').trim()).toBe(commit);
    expect((seen['inbox.ack']!.result.acked as number)).toBe(1);
  }, 120_000);
});

describe('exec: oversized answers are never cut', () => {
  it("a read window whose escaping triples it is cut to exec's envelope: never withheld, next_offset goes on from what came", async () => {
    writeFileSync(join(tree.dir, 'ctl.txt'), '\x01'.repeat(40_000));
    const env = await ok(big, 'workspace.read_file', { path: 'ctl.txt', offset: 100 });
    expect(env.result.offset).toBe(100);
    const bytes = env.result.bytes as number;
    expect(bytes).toBeGreaterThan(0);
    expect(bytes).toBeLessThan(40_000 - 100);
    expect((env.result.content as string[]).join('')).toBe('\x01'.repeat(bytes));
    expect(env.result.next_offset).toBe(100 + bytes);
    expect(Buffer.byteLength(JSON.stringify(env))).toBeLessThanOrEqual(65536);
  });

  it("a directory page of control-character names is sized to exec's envelope: never withheld, its cursor goes on", async () => {
    const dir = join(tree.dir, 'wide');
    mkdirSync(dir);
    for (let i = 0; i < 120; i++) writeFileSync(join(dir, `${'\x02'.repeat(150)}${String(i).padStart(3, '0')}`), '');
    // At 1 MiB the tool's own page would take all 120 (each name escaped is 900 bytes); inside exec it stops at the envelope's limit.
    const first = await ok(big, 'workspace.list_dir', { path: 'wide', limit: 120 });
    const n = (first.result.entries as unknown[]).length;
    expect(n).toBeGreaterThan(0);
    expect(n).toBeLessThan(120);
    expect(first.result.has_more).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(first))).toBeLessThanOrEqual(65536);
    const next = await ok(big, 'workspace.list_dir', { path: 'wide', limit: 120, cursor: first.result.next_cursor });
    expect((next.result.entries as unknown[]).length).toBe(120 - n);
  });

  it('an oversized mutation answers a receipt of real paths, applied, with no replay advice', async () => {
    const files = Array.from({ length: 100 }, (_, i) => ({ path: `long/${'d'.repeat(250)}/${'e'.repeat(250)}/${String(i).padStart(3, '0')}${'f'.repeat(240)}`, content: `file ${i}` }));
    const r = await exec(a, 'workspace.seed_files', { files });
    expect(r.isError).toBe(true);
    const ans = answerOf(r);
    expect(ans).toMatchObject({ error: 'result_budget_exceeded', applied: true, receipt: { action: 'workspace.seed_files', applied: true, written: 100, paths_count: 100 } });
    expect(ans.envelope_bytes).toBeGreaterThan(65536);
    expect(ans.continuation).toBeUndefined();
    const text = r.content?.[0]?.text ?? '';
    expect(text).toMatch(/was applied/);
    expect(text).toMatch(/Do not repeat/);
    expect(text).not.toMatch(/(call|try)[^.]*again/i);
    const paths = ans.receipt!.paths as string[];
    expect(paths.length).toBeGreaterThan(0);
    for (const p of paths) expect(((await ok(a, 'workspace.read_file', { path: p })).result.content as string[]).join('')).toMatch(/^file \d+$/);
    for (const f of files) expect(existsSync(join(tree.dir, f.path))).toBe(true);
  });

  it('a mutation over a tight server budget answers a receipt whose task exists (task.get elsewhere)', async () => {
    const labels = Array.from({ length: 20 }, (_, i) => `l${i}-${'x'.repeat(58)}`);
    const r = await exec(small, 'task.create', { title: 'tight budget task', labels });
    expect(r.isError).toBe(true);
    const ans = answerOf(r);
    expect(ans).toMatchObject({ error: 'result_budget_exceeded', applied: true, receipt: { action: 'task.create', applied: true } });
    const task = ans.receipt!.task as { id: number; key: string; title: string };
    expect(task.title).toBe('tight budget task');
    const got = await ok(a, 'task.get', { id: task.key });
    expect((got.result.task as { id: number }).id).toBe(task.id);
    expect((got.result.task as { labels: string[] }).labels.sort()).toEqual([...labels].sort());
  });
});

describe('exec: bad input', () => {
  it('an unknown action lists the nearest names', async () => {
    const r = await exec(a, 'git.lgo', {});
    expect(r.isError).toBe(true);
    expect(r.content?.[0]?.text).toMatch(/^INVALID_PARAMS: Unknown action "git\.lgo"\. Nearest: git\.log, /);
    expect((r._meta?.['io.github.mcp-result-budget/error'] as { nearest: string[] }).nearest[0]).toBe('git.log');
  });

  it('input that fails the schema names its path, and nothing of the mutation is applied', async () => {
    const before = git('rev-list --count HEAD');
    const seed = await exec(a, 'workspace.seed_files', { files: [{ path: 'refused.txt', content: 'x' }, { path: 'refused2.txt', content: 5 }] });
    expect(seed.isError).toBe(true);
    expect(seed.content?.[0]?.text).toContain('/input/files/1/content');
    expect(seed.content?.[0]?.text).toContain('Nothing was applied');
    expect(existsSync(join(tree.dir, 'refused.txt'))).toBe(false);
    const commit = await exec(a, 'git.commit', { message: 42 });
    expect(commit.content?.[0]?.text).toContain('/input/message');
    expect(git('rev-list --count HEAD')).toBe(before);
    const task = await exec(a, 'task.create', { title: 'never', labels: 'not-a-list' });
    expect(task.content?.[0]?.text).toContain('/input/labels');
    expect((await ok(a, 'task.search', { q: 'never' })).result.tasks).toEqual([]);
  });
});
