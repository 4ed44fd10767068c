/**
 * Child of bench/git.bench.ts for memory: one git read in a fresh process, run under
 * `/usr/bin/time -f %M` by the parent. Modes: `noop` (load the modules, open the repository, no
 * read), `page` (gitLog first page, limit 30), `full` (read all of `git log --format=%H`, held).
 * Prints one JSON line: the operation's time, the number of records and this process's own maxRSS.
 */
import { CursorCodec } from '../dist/shared/cursor.js';
import { Workspace } from '../dist/fs/confine.js';
import { gitLog } from '../dist/git/git-reads.js';
import { GitRunner } from '../dist/git/run-git.js';

const [mode, repo] = process.argv.slice(2);
if (repo === undefined) throw new Error('usage: git.child.ts noop|page|full REPO');
const ws = await Workspace.open(repo);
const git = new GitRunner(ws);
await git.run(['rev-parse', 'HEAD']); // config read and a first spawn in every mode
const t0 = performance.now();
let n = 0;
let held: unknown;
if (mode === 'page') {
  const page = await gitLog(git, ws, new CursorCodec('fixed-key'), { limit: 30, cursor: undefined });
  n = page.commits.length;
  held = page;
} else if (mode === 'full') {
  const r = await git.run(['log', '--no-color', '--format=%H'], { maxBytes: 1 << 30, timeoutMs: 120_000 });
  const all = r.stdout.toString('utf8').split('\n').filter((h) => h !== '');
  n = all.length;
  held = all;
}
const ms = performance.now() - t0;
process.stdout.write(JSON.stringify({ mode, ms, n, ownMaxRssKiB: process.resourceUsage().maxRSS, held: held === undefined ? 0 : 1 }) + '\n');
