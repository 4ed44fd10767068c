/**
 * The bound on running tool handlers: a unit test of the limiter (places, queue, a cancelled
 * waiter never starts), and a flood through the real `serve` of `git_status` calls each cancelled
 * at once (the transport frees a cancelled call's slot, so only this bound keeps the git children
 * of the server from growing with the flood).
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_RUNNING_TOOL_CALLS, WorkLimiter } from '../../src/tools/work-limiter.js';
import { cliPath, ensureBuilt } from '../helpers/cli.js';
import { tempTree } from '../helpers/fs-tree.js';
import { git } from '../helpers/git-repo.js';

const trees: { remove: () => void }[] = [];
afterAll(() => trees.forEach((t) => t.remove()));

describe('WorkLimiter', () => {
  it('runs at most maxRunning at once, in order, and a waiter cancelled before its turn never runs', async () => {
    const limiter = new WorkLimiter(3);
    let running = 0;
    let peak = 0;
    const started: number[] = [];
    const gates: (() => void)[] = [];
    const controllers = Array.from({ length: 10 }, () => new AbortController());
    const calls = controllers.map((c, i) =>
      limiter
        .run(c.signal, async () => {
          started.push(i);
          running++;
          peak = Math.max(peak, running);
          await new Promise<void>((r) => gates.push(r));
          running--;
          return i;
        })
        .catch((e: Error) => e.name),
    );
    await new Promise((r) => setTimeout(r, 10));
    expect(limiter.active).toBe(3);
    expect(limiter.waiting).toBe(7);
    for (const i of [4, 5, 9]) controllers[i]!.abort();
    expect(limiter.waiting).toBe(4);
    while (gates.length > 0 || limiter.active > 0) {
      gates.shift()?.();
      await new Promise((r) => setTimeout(r, 1));
    }
    const results = await Promise.all(calls);
    expect(peak).toBe(3);
    expect(started).toEqual([0, 1, 2, 3, 6, 7, 8]);
    expect(results.filter((r) => r === 'AbortError')).toHaveLength(3);
  });
});

/** Live (not yet exited: zombies are gone work) direct children of `pid` whose command is git. */
function gitChildren(pid: number): number {
  let n = 0;
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const close = stat.lastIndexOf(')');
      const [state, ppid] = stat.slice(close + 2).split(' ');
      if (Number(ppid) === pid && state !== 'Z' && stat.slice(stat.indexOf('(') + 1, close) === 'git') n++;
    } catch {
      // gone meanwhile
    }
  }
  return n;
}

describe('serve under a call-then-cancel flood', () => {
  it('git children stay within the running-handler bound while every call is cancelled at once', async () => {
    ensureBuilt();
    const t = tempTree('work-limiter');
    trees.push(t);
    git(t.dir, ['init', '-q', '-b', 'main']);
    for (let i = 0; i < 2000; i++) writeFileSync(join(t.dir, `u${i}.txt`), 'x');
    git(t.dir, ['add', '.']);
    git(t.dir, ['commit', '-q', '-m', 'files']);
    for (let i = 0; i < 2000; i++) writeFileSync(join(t.dir, `u${i}.txt`), 'y'); // every file modified
    const p = spawn(process.execPath, [cliPath, 'serve', '--root', t.dir], { stdio: ['pipe', 'pipe', 'ignore'] });
    p.stdin.on('error', () => undefined); // writes still queued when the server is killed at the end
    const send = (m: object): boolean => p.stdin.write(`${JSON.stringify(m)}\n`);
    let lines = 0;
    p.stdout.on('data', (d: Buffer) => (lines += d.toString().split('\n').length - 1));
    send({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    while (lines < 1) await new Promise((r) => setTimeout(r, 10));
    // Calls in waves of 24, each wave cancelled once its handlers have started: a cancelled call
    // frees its transport slot at once while its handler (and git) runs on.
    let peak = 0;
    let id = 0;
    const end = Date.now() + 4000;
    while (Date.now() < end) {
      const wave: number[] = [];
      for (let k = 0; k < 24; k++) {
        wave.push(++id);
        send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'git_status', arguments: {} } });
      }
      await new Promise((r) => setTimeout(r, 15));
      peak = Math.max(peak, gitChildren(p.pid!));
      for (const w of wave) send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: w } });
      peak = Math.max(peak, gitChildren(p.pid!));
    }
    expect(p.exitCode, 'serve survived the flood').toBeNull();
    p.kill('SIGKILL');
    expect(peak).toBeGreaterThan(0); // the flood really ran git
    expect(peak).toBeLessThanOrEqual(MAX_RUNNING_TOOL_CALLS);
  });
});
