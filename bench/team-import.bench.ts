/**
 * Question: how fast does `mcp-budget team import` load a large JSON Lines file into each engine,
 * and does its memory stay flat? The file: 20 members, then BENCH_IMPORT_LINES messages (default
 * 1,000,000) over 50 channels, one in ten addressed to two members (inbox rows), one in twenty a
 * reply, bodies of 40–400 bytes. Each import is the real CLI in its own process (`team --team-db
 * TARGET import FILE`), on a new SQLite file and on a new PostgreSQL database (local socket); the
 * CLI prints its own lines/s, and the process's peak RSS is read from /proc (VmHWM) while it runs.
 *
 * With BENCH_IMPORT_ACCENTS=1 a third of the words carry accents (`élan`, `café`, `naïve`, `Ørsted`),
 * so nearly every body takes PostgreSQL's folding path (pg-fold.ts) rather than its ASCII test.
 *
 *   npm run bench:team-import
 *   BENCH_IMPORT_LINES=200000 BENCH_IMPORT_ACCENTS=1 npm run bench:team-import
 */
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { machineLine } from './util.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const LINES = Number(process.env.BENCH_IMPORT_LINES ?? 1_000_000);
const ACCENTS = process.env.BENCH_IMPORT_ACCENTS === '1';
const dir = mkdtempSync(join(tmpdir(), 'team-import-bench-'));
const file = join(dir, 'in.jsonl');
/** The workspace root the CLI is given: beside the store, never holding it. */
const rootDir = mkdtempSync(join(tmpdir(), 'team-import-root-'));

async function writeFixture(): Promise<void> {
  const out = createWriteStream(file);
  const write = (o: unknown): Promise<void> | void => (out.write(JSON.stringify(o) + '\n') ? undefined : new Promise((r) => out.once('drain', () => r())));
  for (let i = 0; i < 20; i++) await write({ kind: 'member', name: `m${i}`, role: i === 0 ? 'owner' : 'member' });
  const words = (ACCENTS ? 'alpha élan gamma café epsilon naïve eta Ørsted iota kappa Ça mu' : 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu').split(' ');
  for (let i = 0; i < LINES; i++) {
    const body = Array.from({ length: 5 + (i % 50) }, (_, k) => words[(i * 7 + k) % words.length]).join(' ');
    const o: Record<string, unknown> = { kind: 'message', channel: `c${i % 50}`, author: `m${i % 20}`, body, created_at: 1_700_000_000_000 + i };
    if (i % 10 === 0) o.to = [`m${(i + 1) % 20}`, `m${(i + 2) % 20}`];
    if (i % 20 === 5) o.reply_to = i - 4; // an earlier message of the file (ids count from 1)
    await write(o);
  }
  await new Promise<void>((r) => out.end(r));
}

function run(target: string): Promise<{ ms: number; rate: string; hwm: number; code: number | null; tail: string }> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [join(root, 'dist/cli.js'), 'team', '--root', rootDir, '--team-db', target, 'import', file], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    let hwm = 0;
    const sample = setInterval(() => {
      try {
        hwm = Math.max(hwm, Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0) * 1024);
      } catch {
        // exited
      }
    }, 100);
    child.stderr.on('data', (b: Buffer) => (err = (err + b.toString()).slice(-2000)));
    child.on('exit', (code) => {
      clearInterval(sample);
      const rate = /done, .*\((\d+) lines\/s\)/.exec(err)?.[1] ?? '?';
      resolve({ ms: performance.now() - t0, rate, hwm, code, tail: err.trim().split('\n').slice(-1)[0] ?? '' });
    });
  });
}

console.log(machineLine());
await writeFixture();
console.log(`fixture: ${LINES + 20} lines${ACCENTS ? ', accented words' : ''}`);
const db = `mcp_budget_bench_${process.pid}`;
spawnSync('createdb', [db], { stdio: 'inherit' });
try {
  for (const [name, target] of [
    ['SQLite', join(dir, 'team.db')],
    ['PostgreSQL', `host=/var/run/postgresql dbname=${db}`],
  ] as const) {
    const r = await run(target);
    console.log(`${name}: exit ${String(r.code)}, ${(r.ms / 1000).toFixed(1)} s wall, ${r.rate} lines/s (the CLI's figure), peak RSS ${(r.hwm / 1024 / 1024).toFixed(0)} MiB`);
    if (r.code !== 0) console.log(`  ${r.tail}`);
  }
} finally {
  spawnSync('dropdb', ['--if-exists', db], { stdio: 'inherit' });
  rmSync(dir, { recursive: true, force: true });
  rmSync(rootDir, { recursive: true, force: true });
}
