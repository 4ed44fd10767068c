/**
 * `serve` sizes every git page to the active limits at the source, so the result budget never
 * cuts one: at every setting of the matrix (total size, items, strings, text block), cursor walks
 * over the log (with and without a path), branches, tags (with and without `match`), status and
 * stashes return every entry exactly once and in order, fields cut at the source say so
 * (`*_truncated`) and are prefixes of the real value, no result carries a budget report, and
 * every result is within the total bound. The repository is built at test time with hostile text
 * everywhere: quotes, backslashes, control characters, multi-byte text, long names.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LONG_RUN } from '../helpers/time-box.js';
import { SERVE_MINIMUMS } from '../../src/tools/page-budget.js';
import { ensureBuilt } from '../helpers/cli.js';
import { git, gitStatusCode, tempRepo, type TempRepo } from '../helpers/git-repo.js';
import { connectClient, reportOf, serveTransport, type Connected, type ToolResult } from '../helpers/mcp-stdio.js';

const COMMITS = 80;
const REFS = 150;
const STASHES = 12;
const CONFLICTS = 12;
const PATH = 'dir/odd "name".txt';

let repo: TempRepo;
let root: string;

/** Text that stresses escaping: quotes, backslashes, control characters, multi-byte, long. */
function hostile(i: number, long: number): string {
  const bits = [`"q${i}"`, '\\back\\', '\u0001\u001f\u0007', 'ünïcödé 😀', `tab\there`, 'x'.repeat(long)];
  return bits.join(' ').repeat(1 + (i % 3));
}

/** A file name per index: quotes, control characters, multi-byte, spaces, long. */
function fileName(i: number): string {
  const kinds = [`plain-${i}.txt`, `quote"and\\back-${i}.txt`, `ctl\u0001\u001f-${i}.txt`, `ünïcödé-😀-${i}.txt`, `${'long'.repeat(50)}-${i}.txt`, `sp ace ${i}.txt`];
  return kinds[i % kinds.length]!;
}

function refName(kind: string, i: number): string {
  const kinds = [`${kind}-${i}`, `topic/${'ü'.repeat(20)}-${'long'.repeat(25)}/q"${i}`, `deep/a/b/c/${'n'.repeat(120)}-${i}`, `x${'😀'.repeat(10)}-${i}`];
  return kinds[i % kinds.length]!;
}

function buildHistory(dir: string): void {
  const parts: string[] = [];
  const data = (s: string): string => `data ${Buffer.byteLength(s)}\n${s}\n`;
  const who = (i: number): string => `T\u00ebst "Q${i}" \\ \u{1F600} ${'n'.repeat(i % 5 === 0 ? 250 : 10)} <mail-${'e'.repeat(i % 7 === 0 ? 240 : 5)}-${i}@example.com>`;
  for (let i = 1; i <= COMMITS; i++) {
    parts.push(`commit refs/heads/main\nmark :${i}\nauthor ${who(i)} ${1_700_000_000 + i} +0000\ncommitter ${who(i)} ${1_700_000_000 + i} +0000\n`);
    parts.push(data(`${hostile(i, i % 4 === 0 ? 900 : 40)}\n\nbody ${i}\n`));
    if (i > 1) parts.push(`from :${i - 1}\n`);
    parts.push(`M 100644 inline f${i % 10}.txt\n${data(`v${i}\n`)}`);
    if (i % 3 === 0) parts.push(`M 100644 inline ${JSON.stringify(PATH)}\n${data(`p${i}\n`)}`);
    parts.push('\n');
  }
  // A side branch and a merge commit on main.
  parts.push(`commit refs/heads/side\nmark :9001\ncommitter Side <s@example.com> 1700009001 +0000\n${data('side "work"\n')}from :${COMMITS - 5}\nM 100644 inline side.txt\n${data('s\n')}\n`);
  parts.push(`commit refs/heads/main\nmark :9002\ncommitter Merger <m@example.com> 1700009002 +0000\n${data(`Merge "side" ${'é'.repeat(300)}\n`)}from :${COMMITS}\nmerge :9001\nM 100644 inline side.txt\n${data('s\n')}\n`);
  // Annotated tags (peeled in packed-refs).
  for (let i = 0; i < REFS; i += 3) parts.push(`tag ${refName('tag', i)}\nfrom :${(i % COMMITS) + 1}\ntagger T <t@example.com> 1700000000 +0000\n${data(`tag ${i}`)}`);
  git(dir, ['fast-import', '--quiet'], Buffer.from(parts.join('')));
  git(dir, ['checkout', '-q', '-f', 'main']);
  const head = git(dir, ['rev-parse', 'HEAD']).trim();
  const refs: string[] = [];
  for (let i = 0; i < REFS; i++) {
    refs.push(`create refs/heads/${refName('branch', i)} ${head}\n`);
    if (i % 3 !== 0) refs.push(`create refs/tags/${refName('tag', i)} ${head}\n`);
  }
  // Half packed, half loose: both sources merge in name order.
  git(dir, ['update-ref', '--stdin'], refs.slice(0, REFS).join(''));
  git(dir, ['pack-refs', '--all']);
  git(dir, ['update-ref', '--stdin'], refs.slice(REFS).join(''));
}

function buildStashes(dir: string): void {
  for (let i = 0; i < STASHES; i++) {
    writeFileSync(join(dir, 'f1.txt'), `stash ${i}\n`);
    git(dir, ['stash', 'push', '-q', '-m', `${hostile(i, i % 2 ? 600 : 20)}`.replace(/\n/g, ' '), '--', 'f1.txt']);
  }
}

function buildConflict(dir: string): void {
  git(dir, ['checkout', '-q', '-b', 'conflict-side']);
  for (let c = 0; c < CONFLICTS; c++) writeFileSync(join(dir, 'conflict', fileName(c)), 'theirs\n');
  git(dir, ['commit', '-q', '-am', 'theirs']);
  git(dir, ['checkout', '-q', 'main']);
  for (let c = 0; c < CONFLICTS; c++) writeFileSync(join(dir, 'conflict', fileName(c)), 'ours\n');
  git(dir, ['commit', '-q', '-am', 'ours']);
  expect(gitStatusCode(dir, ['merge', '-q', 'conflict-side'])).not.toBe(0);
}

/** 100 tracked files (odd names, nested), committed now and changed after the merge. */
const tracked = Array.from({ length: 100 }, (_, i) => join(i % 2 ? 'tracked' : join('tracked', 'nested'), fileName(i)));

function commitTracked(dir: string): void {
  mkdirSync(join(dir, 'tracked', 'nested'), { recursive: true });
  mkdirSync(join(dir, 'conflict'));
  for (const t of tracked) writeFileSync(join(dir, t), 'base\n');
  for (let c = 0; c < CONFLICTS; c++) writeFileSync(join(dir, 'conflict', fileName(c)), 'base\n');
  git(dir, ['add', '--', 'tracked', 'conflict']);
  git(dir, ['commit', '-q', '--no-verify', '-m', 'tracked files']);
}

function buildChanges(dir: string): void {
  mkdirSync(join(dir, 'untracked', 'deeper', 'still'), { recursive: true });
  for (const t of tracked) writeFileSync(join(dir, t), 'changed\n');
  for (let i = 0; i < 100; i++) writeFileSync(join(dir, ['.', 'untracked', join('untracked', 'deeper', 'still')][i % 3]!, `u-${fileName(i)}`), '');
}

beforeAll(() => {
  ensureBuilt();
  repo = tempRepo('page-budget');
  root = repo.dir;
  buildHistory(root);
  buildStashes(root);
  commitTracked(root);
  buildConflict(root);
  buildChanges(root);
}, 120_000);

afterAll(() => repo?.remove());

/**
 * Every limit that sizes a page, at its smallest and at the default; the intermediate budgets
 * (16 and 32 KiB) run in the long run only (each row walks every git tool to its end).
 */
const MATRIX: { flags: string[]; maxBytes: number }[] = [
  { flags: ['--max-bytes', '8KiB'], maxBytes: 8192 },
  ...(LONG_RUN
    ? [
        { flags: ['--max-bytes', '16KiB'], maxBytes: 16384 },
        { flags: ['--max-bytes', '32KiB'], maxBytes: 32768 },
      ]
    : []),
  { flags: ['--max-bytes', '64KiB'], maxBytes: 65536 },
  { flags: ['--max-items', '5'], maxBytes: 65536 },
  { flags: ['--max-string-bytes', String(SERVE_MINIMUMS.maxStringBytes)], maxBytes: 65536 },
  { flags: ['--max-block-bytes', '4KiB'], maxBytes: 65536 },
  { flags: ['--max-text-bytes', '6KiB'], maxBytes: 65536 },
];

type Obj = Record<string, unknown>;

async function call(c: Connected, name: string, args: Obj, maxBytes: number): Promise<Obj> {
  const r = (await c.client.callTool({ name, arguments: args })) as ToolResult;
  expect(r.isError, `${name} failed: ${r.content?.[0]?.text}`).not.toBe(true);
  expect(reportOf(r), `${name} ${JSON.stringify(args).slice(0, 80)} was cut by the budget`).toBeUndefined();
  expect(c.wire.lastBytes).toBeLessThanOrEqual(maxBytes);
  return r.structuredContent!;
}

/** Walk a tool's cursor to the end; every page's `has_more` matches its cursor. */
async function walk(c: Connected, name: string, args: Obj, key: string, maxBytes: number): Promise<Obj[]> {
  const seen: Obj[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 2000; pages++) {
    const p = await call(c, name, { ...args, ...(cursor ? { cursor } : {}) }, maxBytes);
    seen.push(...(p[key] as Obj[]));
    cursor = p.next_cursor as string | undefined;
    expect(p.has_more).toBe(cursor !== undefined);
    if (cursor === undefined) return seen;
    expect(cursor.length).toBeLessThan(512);
  }
  throw new Error(`${name}: the cursor walk did not end`);
}

/** Each item's `field` is the expected value, or a prefix of it flagged `<field>_truncated`. */
function expectSame(items: Obj[], field: string, want: string[]): void {
  expect(items.length, `${field}: count`).toBe(want.length);
  items.forEach((item, i) => {
    const got = item[field] as string;
    if (item[`${field}_truncated`] === true) {
      expect(want[i]!.startsWith(got), `${field} ${i} is a prefix`).toBe(true);
      expect(got.length).toBeLessThan(want[i]!.length);
    } else {
      expect(got, `${field} ${i}`).toBe(want[i]);
    }
  });
}

/** NUL-separated git output (for-each-ref ends each record with `%00` and a newline). */
const z = (args: string[]): string[] => git(root, args).split('\0').map((s) => s.replace(/^\n/, '')).filter((s) => s !== '');

describe.each(MATRIX)('serve $flags: git pages', ({ flags, maxBytes }) => {
  let c: Connected;
  beforeAll(async () => {
    c = await connectClient(serveTransport(root, flags));
  });
  afterAll(async () => c?.close());

  it('git_log walks every commit once, in order, subjects cut only at the source', async () => {
    const want = z(['log', '-z', '--format=%H%x00%s', 'HEAD']);
    const got = await walk(c, 'git_log', { limit: 100 }, 'commits', maxBytes);
    expect(got.map((x) => x.hash)).toEqual(want.filter((_, i) => i % 2 === 0));
    expectSame(got, 'subject', want.filter((_, i) => i % 2 === 1));
    const merge = got.find((x) => (x.parents as string[]).length === 2);
    expect(merge).toBeDefined();
  });

  it('git_log with a path walks every touching commit once', async () => {
    const want = z(['log', '-z', '--format=%H', 'HEAD', '--', PATH]);
    const got = await walk(c, 'git_log', { limit: 100, path: PATH }, 'commits', maxBytes);
    expect(got.map((x) => x.hash)).toEqual(want);
  });

  it('git_branches and git_tags walk every ref once, in name order', async () => {
    for (const [tool, prefix] of [
      ['git_branches', 'refs/heads/'],
      ['git_tags', 'refs/tags/'],
    ] as const) {
      const want = z(['for-each-ref', '--format=%(refname)%00%(objectname)%00', prefix]);
      const got = await walk(c, tool, { limit: 200 }, 'refs', maxBytes);
      expectSame(got, 'name', want.filter((_, i) => i % 2 === 0).map((n) => n.slice(prefix.length)));
      expect(got.map((x) => x.target)).toEqual(want.filter((_, i) => i % 2 === 1));
    }
  });

  it('git_tags with match walks every matching tag once', async () => {
    const match = '"1';
    const want = z(['for-each-ref', '--format=%(refname:strip=2)%00', 'refs/tags/']).filter((n) => n.includes(match));
    expect(want.length).toBeGreaterThan(10);
    const got = await walk(c, 'git_tags', { limit: 200, match }, 'refs', maxBytes);
    expectSame(got, 'name', want);
  });

  it('git_status walks every changed and untracked file once', async () => {
    const tracked = z(['status', '--porcelain=v2', '-z', '--untracked-files=no', '--no-renames', '--ignore-submodules=all'])
      .filter((r) => r.startsWith('1 ') || r.startsWith('u '))
      .map((r) => r.split(' ').slice(r.startsWith('1 ') ? 8 : 10).join(' '));
    const untracked = z(['ls-files', '--others', '--exclude-standard', '-z']);
    expect(tracked.length).toBeGreaterThanOrEqual(100 + CONFLICTS);
    expect(untracked.length).toBe(100);
    const got = await walk(c, 'git_status', { limit: 500 }, 'entries', maxBytes);
    expectSame(got, 'path', [...tracked, ...untracked]);
  });

  it('git_stashes walks every stash once, messages cut only at the source', async () => {
    const want = z(['log', '--walk-reflogs', '-z', '--format=%gs', 'refs/stash', '--']);
    expect(want).toHaveLength(STASHES);
    const got = await walk(c, 'git_stashes', { limit: 100 }, 'stashes', maxBytes);
    expectSame(got, 'message', want);
  });

  it('git_merge_status lists conflicts within the item bound, paths cut at the source', async () => {
    const want = z(['diff', '--name-only', '--diff-filter=U', '-z']);
    expect(want).toHaveLength(CONFLICTS);
    const s = await call(c, 'git_merge_status', {}, maxBytes);
    expect(s.in_progress).toBe('merge');
    const conflicts = s.conflicts as string[];
    expect(conflicts.length).toBeGreaterThan(0);
    expect(s.conflicts_capped).toBe(conflicts.length < want.length);
    conflicts.forEach((p, i) => expect(want[i]!.startsWith(p)).toBe(true));
  });
});
