/**
 * `mcp-budget exec` over a temp workspace: the same envelope as the tool, exit 0 on ok, 1 on an
 * isError envelope, 2 on usage errors (an `--input-file` that is not UTF-8 among them), 3 on an
 * isError envelope after the write was made; `--input-file` and the team flags.
 */
import { execSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPORT_KEY } from '../../src/engine/limits.js';
import { ensureBuilt, runCli } from '../helpers/cli.js';
import { tempTree } from '../helpers/fs-tree.js';

let ws: { dir: string; remove: () => void };
let side: { dir: string; remove: () => void };
let flags: string[];

beforeAll(() => {
  ensureBuilt();
  ws = tempTree('exec-cli');
  side = tempTree('exec-cli-side');
  execSync('git init -q', { cwd: ws.dir });
  flags = ['--root', ws.dir, '--team-db', join(side.dir, 'team.db'), '--as', 'cli'];
}, 120_000);

afterAll(() => {
  ws?.remove();
  side?.remove();
});

const run = (args: string[]) => {
  const r = runCli(['exec', ...args, ...flags]);
  return { ...r, json: r.stdout === '' ? undefined : (JSON.parse(r.stdout) as { isError?: boolean; structuredContent?: { action: string; ok: boolean; result: Record<string, unknown> }; _meta?: Record<string, unknown>; content: { text: string }[] }) };
};

describe('mcp-budget exec', () => {
  it('runs an action and prints the typed envelope (exit 0); --input-file works the same', () => {
    const seed = run(['workspace.seed_files', '--input', JSON.stringify({ files: [{ path: 'a/b.txt', content: 'bee' }] })]);
    expect(seed.code, seed.stderr).toBe(0);
    expect(seed.json?.structuredContent).toEqual({ action: 'workspace.seed_files', ok: true, result: { written: 1, bytes: 3, paths: ['a/b.txt'], created_directories: 1 } });
    writeFileSync(join(side.dir, 'in.json'), JSON.stringify({ path: 'a/b.txt' }));
    const read = run(['workspace.read_file', '--input-file', join(side.dir, 'in.json')]);
    expect(read.code).toBe(0);
    expect(read.json?.structuredContent?.result.content).toEqual(['bee']);
    const task = run(['task.create', '--input', '{"title":"from the cli"}']);
    expect(task.code, task.stderr).toBe(0);
    expect((task.json?.structuredContent?.result.task as { created_by: string }).created_by).toBe('cli');
  });

  it('an isError envelope exits 1: unknown action, refused input (nothing written), tool failure', () => {
    const unknown = run(['workspace.lst_dir']);
    expect(unknown.code).toBe(1);
    expect(unknown.json?.content[0]!.text).toMatch(/Nearest: workspace\.list_dir/);
    const bad = run(['workspace.seed_files', '--input', '{"files":[{"path":"x.txt"}]}']);
    expect(bad.code).toBe(1);
    expect(bad.json?.content[0]!.text).toContain('/input/files/0/content');
    expect(existsSync(join(ws.dir, 'x.txt'))).toBe(false);
    expect(run(['workspace.read_file', '--input', '{"path":"missing.txt"}']).code).toBe(1);
  });

  it('an oversized mutation prints the receipt under the report key (exit 3: applied, do not repeat)', () => {
    const files = Array.from({ length: 100 }, (_, i) => ({ path: `big/${'p'.repeat(250)}/${'q'.repeat(250)}/${i}${'r'.repeat(240)}`, content: '' }));
    const r = run(['workspace.seed_files', '--input', JSON.stringify({ files })]);
    expect(r.code).toBe(3);
    expect(r.json?._meta?.[REPORT_KEY]).toMatchObject({ error: 'result_budget_exceeded', applied: true, receipt: { written: 100, paths_count: 100 } });
  });

  it('usage errors exit 2: no action, bad JSON, both inputs, an unknown flag', () => {
    expect(run([]).code).toBe(2);
    expect(run(['workspace.list_dir', '--input', '{nope']).code).toBe(2);
    expect(run(['workspace.list_dir', '--input', '[]']).code).toBe(2);
    expect(run(['workspace.list_dir', '--input', '{}', '--input-file', 'x']).code).toBe(2);
    expect(run(['workspace.list_dir', '--bogus', '1']).code).toBe(2);
    writeFileSync(join(side.dir, 'bad.json'), Buffer.concat([Buffer.from('{"title":"caf'), Buffer.from([0xff, 0xfe]), Buffer.from(' ok"}')]));
    const bad = run(['task.create', '--input-file', join(side.dir, 'bad.json')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/not valid UTF-8/);
    expect(run(['task.list', '--input', '{}']).stdout).not.toContain('caf');
  });
});
