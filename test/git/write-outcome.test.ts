/**
 * A git mutation's answer is decided by its write alone. Faults are injected around the write of
 * each mutation (commit, branch, tag) in every combination that matters, on a real repository:
 * - git reports a failure although it wrote (the process dies after the ref moved): applied, with
 *   the commit read back, never an error;
 * - git fails before writing: the failure stands and says nothing was written;
 * - git fails and the repository cannot be read afterwards: OUTCOME_UNKNOWN with what is known,
 *   never advice to retry;
 * - every step after a successful write fails: the receipt stands, the missing parts null and
 *   named in `summary_omitted`;
 * and a commit whose summary is far past the old 1 MiB summary cap is counted exactly.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Workspace, WorkspaceError } from '../../src/fs/confine.js';
import { gitCommit, gitCreateBranch, gitCreateTag } from '../../src/git/git-writes.js';
import { GitRunner } from '../../src/git/run-git.js';
import type { GitCallOptions, GitResult } from '../../src/git/spawn-git.js';

let dir: string;
let ws: Workspace;

const sh = (...args: string[]): string =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: dir, encoding: 'utf8' }).trim();

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'git-outcome-'));
  sh('init', '-q');
  writeFileSync(join(dir, 'a.txt'), 'a\n');
  sh('add', 'a.txt');
  sh('commit', '-qm', 'first');
  ws = await Workspace.open(dir);
});

afterEach(async () => {
  await ws.close();
  rmSync(dir, { recursive: true, force: true });
});

/** When the fault strikes, relative to the mutation's write (the `commit`, `branch` or `tag` call). */
type Fault = 'none' | 'fail-after-write' | 'fail-instead-of-write' | 'fail-after-write-then-blind' | 'blind-after-write';

/** A real runner whose calls fail as `fault` says: the write runs (or not) for real, and the failure is the one git or a lost process gives. */
class FaultyRunner extends GitRunner {
  private wrote = false;
  constructor(
    workspace: Workspace,
    private readonly fault: Fault,
    private readonly verb: string,
  ) {
    super(workspace);
  }

  private isWrite(args: string[]): boolean {
    return args.includes(this.verb) && !args.includes('check-ref-format');
  }

  private blind(): boolean {
    return this.wrote && (this.fault === 'fail-after-write-then-blind' || this.fault === 'blind-after-write');
  }

  override async tryRun(args: string[], options: GitCallOptions = {}): Promise<GitResult> {
    if (this.blind()) throw new WorkspaceError('IO_ERROR', 'git rev-parse failed: simulated lost process');
    if (!this.isWrite(args) || this.fault === 'none' || this.fault === 'blind-after-write') {
      const r = await super.tryRun(args, options);
      if (this.isWrite(args)) this.wrote = true;
      return r;
    }
    if (this.fault === 'fail-instead-of-write') return { code: null, stdout: Buffer.alloc(0), stderr: 'killed\n', truncated: false, timedOut: true };
    const r = await super.tryRun(args, options); // the write happens...
    this.wrote = true;
    expect(r.code).toBe(0);
    return { ...r, code: null, timedOut: true }; // ...and the process is reported lost
  }

  override async *rawRecords(args: string[], timeoutMs?: number, input?: string | Buffer): AsyncGenerator<Buffer> {
    if (this.blind()) throw new WorkspaceError('IO_ERROR', 'git diff-tree failed: simulated lost process');
    yield* super.rawRecords(args, timeoutMs, input);
  }
}

async function outcome(p: Promise<unknown>): Promise<{ ok: unknown } | { code: string; message: string; data: Record<string, unknown> }> {
  try {
    return { ok: await p };
  } catch (e) {
    if (!(e instanceof WorkspaceError)) throw e;
    return { code: e.code, message: e.message, data: e.data };
  }
}

const FAULTS: Fault[] = ['none', 'fail-after-write', 'fail-instead-of-write', 'fail-after-write-then-blind', 'blind-after-write'];

describe('git mutations answer by their write alone', () => {
  it('commit under every fault: applied answers a receipt, not applied says nothing was written, unknown says so with HEAD before', async () => {
    for (const [i, fault] of FAULTS.entries()) {
      writeFileSync(join(dir, `f${i}.txt`), `${fault}\n`);
      const before = sh('rev-parse', 'HEAD');
      const got = await outcome(gitCommit(new FaultyRunner(ws, fault, 'commit'), ws, { message: `m ${fault}`, paths: [`f${i}.txt`] }));
      const head = sh('rev-parse', 'HEAD');
      const moved = head !== before;
      switch (fault) {
        case 'none':
        case 'fail-after-write':
          expect(moved, fault).toBe(true);
          expect(got, fault).toEqual({ ok: { commit: head, branch: expect.any(String), files_changed: 1 } });
          break;
        case 'fail-instead-of-write':
          expect(moved, fault).toBe(false);
          expect('code' in got && got.code, fault).toBe('IO_ERROR');
          expect('message' in got && got.message, fault).toMatch(/nothing was written/);
          sh('reset', '-q'); // unstage for the next round
          break;
        case 'fail-after-write-then-blind':
          expect(moved, fault).toBe(true);
          expect('code' in got && got.code, fault).toBe('OUTCOME_UNKNOWN');
          expect('message' in got && got.message, fault).toMatch(/may have been applied/);
          expect('message' in got && got.message, fault).not.toMatch(/try again|retry/i);
          expect('data' in got && got.data, fault).toEqual({ applied: 'unknown', before });
          break;
        case 'blind-after-write':
          // git said it committed: a receipt, with what could not be read back named
          expect(moved, fault).toBe(true);
          expect(got, fault).toEqual({ ok: { commit: null, branch: null, files_changed: null, summary_omitted: expect.stringMatching(/^The commit was made; not read back: commit id .*branch/) } });
          break;
      }
    }
  });

  it('branch and tag under every fault: the ref that landed decides; a ref that already existed is never claimed', async () => {
    const head = sh('rev-parse', 'HEAD');
    for (const kind of ['branch', 'tag'] as const) {
      for (const [i, fault] of FAULTS.entries()) {
        const name = `${kind}-${i}`;
        const runner = new FaultyRunner(ws, fault, kind);
        const got = await outcome(kind === 'branch' ? gitCreateBranch(runner, { name }) : gitCreateTag(runner, { name, message: 'annotated' }));
        const ref = kind === 'branch' ? `refs/heads/${name}` : `refs/tags/${name}`;
        const exists = (() => {
          try {
            return sh('rev-parse', '--verify', '--quiet', `${ref}^{commit}`) === head;
          } catch {
            return false;
          }
        })();
        const label = `${kind} ${fault}`;
        if (fault === 'fail-instead-of-write') {
          expect(exists, label).toBe(false);
          expect('code' in got && got.code, label).toBe('IO_ERROR');
        } else if (fault === 'fail-after-write-then-blind') {
          expect(exists, label).toBe(true);
          expect('code' in got && got.code, label).toBe('OUTCOME_UNKNOWN');
        } else {
          expect(exists, label).toBe(true);
          expect(got, label).toEqual({ ok: kind === 'branch' ? { branch: name, commit: head } : { tag: name, commit: head, annotated: true } });
        }
      }
      // an existing ref: git refuses, and the ref found afterwards is not this call's write
      const got = await outcome(kind === 'branch' ? gitCreateBranch(new GitRunner(ws), { name: `${kind}-0` }) : gitCreateTag(new GitRunner(ws), { name: `${kind}-0` }));
      expect('code' in got && got.code, `${kind} exists`).toBe('IO_ERROR');
      expect('message' in got && got.message).toMatch(/already exists.*nothing was written/);
    }
  });

  it('a commit whose file list is far past 1 MiB is counted as git streams it (the summary once failed a made commit)', async () => {
    const n = 9_000;
    const long = 'n'.repeat(120);
    mkdirSync(join(dir, 'many'));
    for (let i = 0; i < n; i++) writeFileSync(join(dir, 'many', `${long}-${i}`), '');
    sh('add', 'many');
    const got = await gitCommit(new GitRunner(ws), ws, { message: 'many files' });
    expect(got).toEqual({ commit: sh('rev-parse', 'HEAD'), branch: expect.any(String), files_changed: n });
  }, 60_000);
});
