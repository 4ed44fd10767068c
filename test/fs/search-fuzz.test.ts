/**
 * Regression (a fixed bug): `workspace_search_files` matched with picomatch, which compiles a glob
 * to a backtracking regular expression. A guard counted wildcard runs with a regex of its own that
 * read the pattern differently (`*\\*\\*\\*b`: an escaped backslash before a real star was not
 * counted), so a query it called safe could backtrack for minutes on a name a hostile workspace can
 * create, in one synchronous call the 2 s deadline cannot interrupt: the whole server stopped
 * answering, every session and every `ping` with it.
 *
 * End to end against the real `serve` process (dist/cli.js) on a directory of hostile names (255
 * bytes of `a`, near misses, backslash runs, `*?[]{}` in names, dotfiles, deep paths): generated
 * queries (adversarial, ordinary and refused ones) are sent to `workspace_search_files` while
 * another client pings. Every search answers (a page or a clear error) within its deadline and every
 * ping within 100 ms, over stdio (pings on the same connection) and over HTTP with a bearer token
 * (pings from a second session).
 */
import { chmodSync, closeSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SEARCH_LIMITS } from '../../src/fs/search.js';
import { ensureBuilt } from '../helpers/cli.js';
import { tempTree } from '../helpers/fs-tree.js';
import { connectClient, serveTransport } from '../helpers/mcp-stdio.js';
import { prng } from '../helpers/prng.js';
import { connect, killAll, removeStateDir, startListening } from '../transport/http-harness.js';

/** How long each transport is driven. */
const PHASE_MS = 3_500;
/** A search answers within the walk's time cap plus this (serialization, transport, a loaded machine). */
const ANSWER_SLACK_MS = 1_500;
const PING_MAX_MS = 100;
const TOKEN = 'search-fuzz-token-0123456789abcdef';
const CODES = /^(INVALID_PARAMS|INPUT_TOO_LARGE|PATH_ESCAPES_ROOT)\b/;

let tree: ReturnType<typeof tempTree>;
/** The workspace root (the token file sits next to it, outside). */
let root: string;

const touch = (p: string): void => closeSync(openSync(p, 'w'));

beforeAll(() => {
  ensureBuilt();
  tree = tempTree('search-fuzz');
  root = join(tree.dir, 'root');
  const h = join(root, 'h');
  mkdirSync(h, { recursive: true });
  const names = [
    'a'.repeat(255),
    `${'a'.repeat(254)}b`,
    `${'a'.repeat(254)}c`,
    `${'\\'.repeat(254)}c`,
    `${'a*'.repeat(127)}c`,
    `${'a?'.repeat(127)}c`,
    `.${'a'.repeat(254)}`,
    `${'a'.repeat(100)}.txt`,
    '[ab]', '{a,b}', 'a?b', 'x]y', 'a\\b', '!a', ',', '{', '}', '[', ']', '\\', '*', '?', '.env',
  ];
  for (const n of names) touch(join(h, n));
  for (let i = 0; i < 300; i++) touch(join(h, `${'a'.repeat(240)}${i}`));
  // Deep: 8 levels of 100-byte names, a near-miss file at each level.
  let d = join(root, 'd');
  for (let level = 0; level < 8; level++) {
    d = join(d, 'a'.repeat(100));
    mkdirSync(d, { recursive: true });
    touch(join(d, `${'a'.repeat(200)}b`));
  }
  mkdirSync(join(root, '.hidden'));
  touch(join(root, '.hidden', 'a'.repeat(255)));
}, 60_000);

afterAll(() => {
  killAll();
  tree?.remove();
  removeStateDir();
});

/** Patterns built to make a backtracking matcher explode on the names above. */
function adversarial(r: () => number): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  const k = 2 + Math.floor(r() * 24);
  const unit = pick(['*a', '?a', '*[a]', '*\\\\', '*\\\\*', '**/*a', '*a?', '*aa', '{a,aa}*', '[[:alpha:]]*', '*a*', '*{a,b}']);
  return `${pick(['', '**/', 'h/', 'd/**/', '*/'])}${unit.repeat(k)}${pick(['b', 'c', '', '*b', '/b', '.txt', '*c'])}`;
}

const ORDINARY = ['**/*.txt', 'h/*', '**/.*', '**/[ab]*', 'h/\\{a,b\\}', 'h/\\[ab\\]', '**/*c', 'd/**/*b', 'h/{a,b}*', '**', 'h/?', 'h/.env'];
const REFUSED = ['+(a|aa)*b', '!(a)', 'a'.repeat(2000), 'h/{1..1000}', '(a|b)', '../x', `*${'?'.repeat(600)}*`, '/etc/*', 'h/[!a]*'];

function queries(seed: number): string[] {
  const r = prng(seed);
  return Array.from({ length: 400 }, (_, k) => (k % 10 === 0 ? REFUSED[(k / 10) % REFUSED.length]! : k % 10 < 3 ? ORDINARY[k % ORDINARY.length]! : adversarial(r)));
}

interface Tally {
  searches: number;
  errors: number;
  slowestSearchMs: number;
  slowestQuery: string;
  pings: number;
  slowestPingMs: number;
}

/**
 * Drive one server for PHASE_MS: `searcher` runs the queries one after another, `pinger` pings in a
 * loop; every answer is checked as it arrives.
 */
async function drive(searcher: Client, pinger: Client, seed: number): Promise<Tally> {
  const t: Tally = { searches: 0, errors: 0, slowestSearchMs: 0, slowestQuery: '', pings: 0, slowestPingMs: 0 };
  await pinger.ping(); // warm-up, not measured
  const until = performance.now() + PHASE_MS;
  const pings = (async () => {
    while (performance.now() < until) {
      const t0 = performance.now();
      // A server stuck in one match answers nothing: fail on the first late ping, do not hang.
      await pinger.ping({ timeout: 10 * PING_MAX_MS }).catch((e: unknown) => expect.fail(`no answer to a ping within ${10 * PING_MAX_MS} ms: ${String(e)}`));
      const ms = performance.now() - t0;
      t.pings++;
      t.slowestPingMs = Math.max(t.slowestPingMs, ms);
      expect(ms, `ping during search #${t.searches + 1}`).toBeLessThan(PING_MAX_MS);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  for (const query of queries(seed)) {
    if (performance.now() >= until) break;
    const t0 = performance.now();
    const deadline = DEFAULT_SEARCH_LIMITS.maxMs + ANSWER_SLACK_MS;
    const r = (await searcher
      .callTool({ name: 'workspace_search_files', arguments: { query, limit: 50 } }, undefined, { timeout: deadline })
      .catch((e: unknown) => expect.fail(`no answer to ${JSON.stringify(query.slice(0, 80))} within ${deadline} ms: ${String(e)}`))) as {
      isError?: boolean;
      structuredContent?: { matches?: unknown };
      content?: { text?: string }[];
    };
    const ms = performance.now() - t0;
    t.searches++;
    if (ms > t.slowestSearchMs) [t.slowestSearchMs, t.slowestQuery] = [ms, query.slice(0, 60)];
    expect(ms, query).toBeLessThan(deadline);
    if (r.isError === true) {
      t.errors++;
      expect(r.content?.[0]?.text ?? '', query).toMatch(CODES);
    } else expect(Array.isArray(r.structuredContent?.matches), query).toBe(true);
  }
  await pings;
  return t;
}

function report(transport: string, t: Tally): void {
  console.log(
    `search-fuzz ${transport}: ${t.searches} searches (${t.errors} refused), slowest ${t.slowestSearchMs.toFixed(1)} ms (${t.slowestQuery}); ${t.pings} pings, slowest ${t.slowestPingMs.toFixed(1)} ms`,
  );
}

describe('search-fuzz: hostile names and generated queries against the real server', () => {
  it('over stdio: every search answers within its deadline, every ping on the same connection within 100 ms', async () => {
    const conn = await connectClient(serveTransport(root));
    try {
      const t = await drive(conn.client, conn.client, 1);
      report('stdio', t);
      expect(t.searches).toBeGreaterThan(20);
      expect(t.errors).toBeGreaterThan(0);
      expect(t.pings).toBeGreaterThan(10);
    } finally {
      await conn.close();
    }
  }, 30_000);

  it('over HTTP with a bearer token: a second session pings within 100 ms while the first searches', async () => {
    const tokenFile = join(tree.dir, 'tokens');
    writeFileSync(tokenFile, `${TOKEN} fuzz\n`);
    chmodSync(tokenFile, 0o600);
    const s = await startListening(['serve', '--root', root, '--listen', '127.0.0.1:0', '--token-file', tokenFile]);
    const searcher = await connect(s.url, TOKEN);
    const pinger = await connect(s.url, TOKEN);
    try {
      const t = await drive(searcher, pinger, 2);
      report('http', t);
      expect(t.searches).toBeGreaterThan(20);
      expect(t.pings).toBeGreaterThan(10);
    } finally {
      // SIGKILL: a server stuck in one match would never act on SIGTERM.
      await s.stop('SIGKILL');
      await Promise.all([searcher.close(), pinger.close()]);
    }
  }, 30_000);
});
