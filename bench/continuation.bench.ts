/**
 * Nothing lost, measured: a huge text result and a huge array result from a server with no paging
 * arguments, through the real proxy with the SDK client, cut by the budget, then read back to the
 * end through the continuation handle, page by page. Every byte and every item read back is checked
 * against the original (a function of its position, bench/continuation-data.mjs), every answer
 * against the budget. Reported: the first answer's round trip against the same proxy with
 * `--no-continuation` (alternated, same run), the read-back's time and pages against reading the
 * same number of bytes from a file, and the proxy's peak RSS (its own VmHWM).
 *
 * BENCH_CONT_MB (default 100; 1000 for the 1 GB rows), BENCH_CONT_BUDGET (bytes, default 1 MiB),
 * BENCH_CONT_ROUNDS (first-answer rounds, default 3), BENCH_CONT_MEMORY=1 (originals in memory).
 */
import { closeSync, openSync, readFileSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { applyPart } from '../src/transport/core/continuation-plan.js';
import { item, PIECE_BYTES, textOf } from './continuation-data.mjs';
import { fmt, machineLine } from './util.js';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const UPSTREAM = fileURLToPath(new URL('./continuation-upstream.mjs', import.meta.url));
const MB = Number(process.env.BENCH_CONT_MB ?? 100);
const BUDGET = Number(process.env.BENCH_CONT_BUDGET ?? 1024 * 1024);
const ROUNDS = Number(process.env.BENCH_CONT_ROUNDS ?? 3);
const MEMORY = process.env.BENCH_CONT_MEMORY === '1';
const BYTES = MB * 1_000_000;
/** Items of about 60 bytes each make an array result of about the same size. */
const ITEMS = Math.round(BYTES / 60);
const REPORT = 'io.github.mcp-result-budget/budget';

type Json = Record<string, unknown>;

async function proxy(continuation: boolean): Promise<{ client: Client; pid: number }> {
  const flags = continuation
    ? ['--continuation-max-result-bytes', '4GiB', '--continuation-max-session-bytes', '8GiB', '--continuation-max-bytes', '8GiB', ...(MEMORY ? ['--continuation-memory'] : [])]
    : ['--no-continuation'];
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'proxy', '--max-bytes', String(BUDGET), '--max-items', '5000', ...flags, '--', process.execPath, UPSTREAM], stderr: 'inherit' });
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(transport);
  return { client, pid: transport.pid! };
}

/** The proxy's peak resident set (VmHWM), MiB. */
function peakRss(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

const call = (tool: string): { name: string; arguments: Json } => (tool === 'huge_text' ? { name: tool, arguments: { bytes: BYTES } } : { name: tool, arguments: { items: ITEMS } });

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`read back wrong: ${what}`);
}

/** The expected text from decoded byte `at`, `n` bytes (pieces are ASCII). */
function expectedText(at: number, n: number): string {
  let out = '';
  while (n > 0) {
    const k = Math.floor(at / PIECE_BYTES);
    const off = at - k * PIECE_BYTES;
    const take = Math.min(n, PIECE_BYTES - off, BYTES - at);
    out += textOf(k, Math.min(PIECE_BYTES, BYTES - k * PIECE_BYTES)).slice(off, off + take);
    at += take;
    n -= take;
  }
  return out;
}

/** Read everything cut back through the handle; every part checked against the original and the budget. */
async function readBack(client: Client, tool: string, first: Json): Promise<{ ms: number; pages: number; bytes: number }> {
  const offer = ((first._meta as Json)[REPORT] as { continuation?: { handle: string } }).continuation;
  check(offer !== undefined, 'no continuation offered');
  // What the first answer holds is checked as the start of the original.
  let expectedAt: number;
  let firstItems: unknown[] = [];
  /** An item read part by part: its index and what is rebuilt of it. */
  let partial: { index: number; value: unknown } | undefined;
  if (tool === 'huge_text') {
    const text = ((first.content as Json[])[0]!.text as string) ?? '';
    check(text === expectedText(0, text.length), 'the first answer\'s text');
    expectedAt = text.length;
  } else {
    // The last item sent may be cut (its string shorter): it is read back part by part.
    firstItems = (first.structuredContent as { items: unknown[] }).items;
    firstItems.forEach((x, i) => check(i === firstItems.length - 1 || JSON.stringify(x) === JSON.stringify(item(i)), `first answer's item ${i}`));
    expectedAt = firstItems.length;
  }
  const path = tool === 'huge_text' ? '/content/0/text' : '/structuredContent/items';
  let next: Json | undefined = { handle: offer!.handle };
  let pages = 0;
  let bytes = 0;
  const t0 = performance.now();
  while (next !== undefined) {
    const r = (await client.callTool({ name: 'mcp_result_budget__read', arguments: next })) as Json;
    pages++;
    check(r.isError !== true, JSON.stringify(r.content).slice(0, 300));
    const size = Buffer.byteLength(JSON.stringify(r));
    check(size <= BUDGET, `an answer of ${size} bytes over the ${BUDGET}-byte budget`);
    bytes += size;
    const a = r.structuredContent as { path: string; position: number; text?: string; items?: unknown[]; members?: { key: string; value: unknown }[]; next?: Json };
    if (tool === 'huge_array' && a.path.startsWith(`${path}/`)) {
      // A part of one item: put in place by the reassembly rule, checked once the item is done.
      const [index, ...rest] = a.path.slice(path.length + 1).split('/');
      if (partial === undefined || partial.index !== Number(index)) partial = { index: Number(index), value: structuredClone(firstItems[Number(index)]) };
      const data = a.text !== undefined ? { text: a.text } : a.items !== undefined ? { items: a.items } : { members: a.members! };
      partial.value = applyPart(partial.value, rest.length === 0 ? '' : `/${rest.join('/')}`, a.position, data);
      next = a.next;
      continue;
    }
    if (partial !== undefined) {
      check(JSON.stringify(partial.value) === JSON.stringify(item(partial.index)) && expectedAt === partial.index + 1, `item ${partial.index} read part by part`);
      partial = undefined;
    }
    if (tool === 'huge_array' && expectedAt === firstItems.length && a.position === firstItems.length - 1) expectedAt--; // the cut last item read again whole
    check(a.path === path && a.position === expectedAt, `answer at ${a.path} ${a.position}, expected ${path} ${expectedAt}`);
    if (a.text !== undefined) {
      check(a.text === expectedText(expectedAt, a.text.length), `text at ${expectedAt}`);
      expectedAt += a.text.length;
    } else {
      for (const x of a.items!) check(JSON.stringify(x) === JSON.stringify(item(expectedAt++)), `item ${expectedAt - 1}`);
    }
    next = a.next;
  }
  check(expectedAt === (tool === 'huge_text' ? BYTES : ITEMS), `stopped at ${expectedAt}`);
  return { ms: performance.now() - t0, pages, bytes };
}

/** Reading `bytes` from a file in 1 MiB reads: the floor a read-back is compared with. */
function fileRead(bytes: number): number {
  const path = join(tmpdir(), `continuation-bench-${process.pid}`);
  const piece = Buffer.alloc(1 << 20, 0x61);
  const fd = openSync(path, 'w');
  for (let n = 0; n < bytes; n += piece.length) writeSync(fd, piece, 0, Math.min(piece.length, bytes - n));
  closeSync(fd);
  const rfd = openSync(path, 'r');
  const t0 = performance.now();
  for (let at = 0; readSync(rfd, piece, 0, piece.length, at) > 0; at += piece.length);
  const ms = performance.now() - t0;
  closeSync(rfd);
  rmSync(path);
  return ms;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

console.log(machineLine());
console.log(`result ${MB} MB (text ${BYTES} bytes; array ${ITEMS} items), budget ${BUDGET} bytes, originals ${MEMORY ? 'in memory' : 'in spill files'}`);
console.log('| result | first answer, no continuation | first answer, with continuation | ratio (goal ≤ 1.2×) | read back | pages | answer bytes | file read of as many bytes | proxy peak RSS (goal ≤ 100 MB) |');
console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
for (const tool of ['huge_text', 'huge_array']) {
  const plain: number[] = [];
  const kept: number[] = [];
  let last: { client: Client; pid: number; first: Json } | undefined;
  for (let round = 0; round < ROUNDS; round++) {
    for (const continuation of round % 2 === 0 ? [false, true] : [true, false]) {
      const p = await proxy(continuation);
      const t0 = performance.now();
      const first = (await p.client.callTool(call(tool), undefined, { timeout: 3_600_000 })) as Json;
      (continuation ? kept : plain).push(performance.now() - t0);
      check(Buffer.byteLength(JSON.stringify(first)) <= BUDGET, 'the first answer is over the budget');
      if (continuation && round === ROUNDS - 1) last = { ...p, first };
      else await p.client.close();
    }
  }
  const back = await readBack(last!.client, tool, last!.first);
  const rss = peakRss(last!.pid);
  await last!.client.close();
  const floor = fileRead(BYTES);
  const ratio = median(kept) / median(plain);
  console.log(
    `| ${tool === 'huge_text' ? 'text' : 'array'} ${MB} MB | ${fmt(median(plain))} | ${fmt(median(kept))} | ${ratio.toFixed(2)}× ${ratio <= 1.2 ? 'met' : 'missed'} | ${fmt(back.ms)} | ${back.pages} | ${(back.bytes / 1e6).toFixed(1)} MB | ${fmt(floor)} | ${rss.toFixed(1)} MiB ${rss <= 100 ? 'met' : 'missed'} |`,
  );
}
