/**
 * `mcp-budget apply` on gigabyte inputs from stdin: the JSON is generated on the fly in this
 * process and piped into the child (no temp file). The output must be valid bounded JSON with an
 * exact report, and the child's peak RSS must stay under 100 MB whatever the input size.
 *
 * Peak RSS is read inside the child: a preload module (`node --require`) writes
 * `process.resourceUsage().maxRSS` (the kernel's high-water mark, as /usr/bin/time %M reports it)
 * to stderr when the process exits.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPORT_KEY } from '../../src/engine/limits.js';
import { cleanEnv, cliPath, ensureBuilt, repoRoot } from '../helpers/cli.js';

const GiB = 1024 ** 3;
const MAX_PEAK_RSS_BYTES = 100 * 1000 * 1000;
const TIMEOUT = 180_000;
const RSS_MARK = '@@mcp-budget-test maxrss_kib=';

let dir: string;
let preload: string;

beforeAll(() => {
  ensureBuilt();
  dir = mkdtempSync(join(tmpdir(), 'mcp-budget-large-'));
  preload = join(dir, 'peak-rss.cjs');
  writeFileSync(
    preload,
    `process.on('exit', () => { require('fs').writeSync(2, '\\n${RSS_MARK}' + process.resourceUsage().maxRSS + '\\n'); });\n`,
  );
}, TIMEOUT);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface LargeRun {
  code: number | null;
  stdout: string;
  stderr: string;
  peakRssBytes: number;
  bytesWritten: number;
  seconds: number;
}

/**
 * Spawn `apply` with stdin fed by `parts`: the head, then `block` repeated until at least
 * `bodyBytes` were written, then the tail. Backpressure is honoured; the block buffer is reused.
 */
function applyStreaming(args: string[], head: string, block: Buffer, bodyBytes: number, tail: string): Promise<LargeRun & { blocks: number }> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, ['--require', preload, cliPath, 'apply', ...args], {
      cwd: repoRoot,
      env: cleanEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', reject);
    let written = 0;
    let blocks = 0;
    let stdinError: Error | undefined;
    child.stdin.on('error', (e) => {
      stdinError = e; // EPIPE when the child exits early (an error exit): reported through its code
    });
    const write = (b: Buffer | string): Promise<void> =>
      new Promise((res) => {
        if (stdinError) return res();
        written += typeof b === 'string' ? Buffer.byteLength(b) : b.length;
        if (child.stdin.write(b)) res();
        else {
          const done = (): void => {
            child.stdin.off('drain', done);
            child.stdin.off('close', done);
            res();
          };
          child.stdin.on('drain', done);
          child.stdin.on('close', done);
        }
      });
    const feed = async (): Promise<void> => {
      await write(head);
      while (written - Buffer.byteLength(head) < bodyBytes && !stdinError) {
        await write(block);
        blocks++;
      }
      await write(tail);
      child.stdin.end();
    };
    const fed = feed();
    child.on('close', (code) => {
      void fed.then(() => {
        const stderrAll = Buffer.concat(err).toString('utf8');
        const mark = stderrAll.lastIndexOf(RSS_MARK);
        const kib = mark >= 0 ? Number(/^\d+/.exec(stderrAll.slice(mark + RSS_MARK.length))?.[0]) : NaN;
        resolve({
          code,
          stdout: Buffer.concat(out).toString('utf8'),
          stderr: mark >= 0 ? stderrAll.slice(0, mark).trimEnd() : stderrAll,
          peakRssBytes: kib * 1024,
          bytesWritten: written,
          blocks,
          seconds: Number(process.hrtime.bigint() - started) / 1e9,
        });
      });
    });
  });
}

/** `unit` repeated to about 1 MiB; every unit is whole, so no escape or character is split by a block. */
function blockOf(unit: string): Buffer {
  return Buffer.from(unit.repeat(Math.max(1, Math.floor((1 << 20) / Buffer.byteLength(unit)))), 'utf8');
}

function expectBounded(run: LargeRun, maxBytes: number): Record<string, unknown> {
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
  expect(run.stdout.endsWith('\n')).toBe(true);
  expect(Buffer.byteLength(run.stdout) - 1).toBeLessThanOrEqual(maxBytes);
  const out = JSON.parse(run.stdout) as Record<string, unknown>;
  expect(Number.isFinite(run.peakRssBytes)).toBe(true);
  return out;
}

function reportOf(out: Record<string, unknown>): Record<string, unknown> {
  return (out._meta as Record<string, unknown>)[REPORT_KEY] as Record<string, unknown>;
}

describe('mcp-budget apply: gigabyte results from stdin', () => {
  it(
    '1 GB: a huge array of small objects is counted, bounded and reported exactly, in under 100 MB',
    async () => {
      const item = '{"i":1234,"s":"ab\\"c]}","t":[1,{"u":null}]},';
      const block = blockOf(item);
      const itemsPerBlock = block.length / Buffer.byteLength(item);
      const head = '{"content":[{"type":"text","text":"a result with many rows"}],"structuredContent":{"rows":[';
      const tail = '{"last":true}],"total":12345678901234567890123}}';
      const run = await applyStreaming([], head, block, GiB, tail);
      const out = expectBounded(run, 64 * 1024);
      expect(run.bytesWritten).toBeGreaterThan(GiB);
      const rows = (out.structuredContent as { rows: unknown[]; total: unknown }).rows;
      expect(rows).toHaveLength(200);
      expect(rows[0]).toEqual({ i: 1234, s: 'ab"c]}', t: [1, { u: null }] });
      expect(run.stdout).toContain('"total":12345678901234567890123');
      const items = run.blocks * itemsPerBlock + 1;
      expect(reportOf(out)).toMatchObject({ truncated: true, budget_kind: 'array_items', omitted_count: items - 200 });
      expect((reportOf(out).omitted_paths as string[])[0]).toBe('/structuredContent/rows/200');
      console.log(`apply 1 GB array: ${run.seconds.toFixed(1)} s, peak RSS ${(run.peakRssBytes / 1e6).toFixed(1)} MB`);
      expect(run.peakRssBytes).toBeLessThanOrEqual(MAX_PEAK_RSS_BYTES);
    },
    TIMEOUT,
  );

  it(
    '4 GB: a huge text block of escaped text, then structured content, bounded in under 100 MB',
    async () => {
      // ASCII on the wire: escapes of every kind (quotes, backslashes, \n, \t, \u00e9, \u2028, \ud83d\ude00).
      const unit = 'plain words, \\"quoted\\" \\\\ back\\\\slash\\n tab\\t \\u00e9 \\u2028 \\ud83d\\ude00 {[,]} ';
      const block = blockOf(unit);
      const head = '{"jsonrpc":"2.0","id":41,"result":{"content":[{"type":"text","text":"';
      const tail = '"},{"type":"text","text":"after"}],"structuredContent":{"n":123456789012345678901234567890,"ok":true}}}';
      const run = await applyStreaming(['--max-bytes', '48KiB'], head, block, 4 * GiB + 4096, tail);
      const out = expectBounded(run, 48 * 1024);
      expect(run.bytesWritten).toBeGreaterThan(4 * GiB);
      expect(out.id).toBe(41);
      const result = out.result as { content: { text: string }[]; structuredContent: unknown; _meta: Record<string, unknown> };
      expect(result.content[0]!.text.startsWith('plain words, "quoted" \\ back\\slash\n tab\t é \u2028 😀 {[,]} ')).toBe(true);
      expect(run.stdout).toContain('"structuredContent":{"n":123456789012345678901234567890,"ok":true}');
      expect(result._meta[REPORT_KEY]).toMatchObject({ truncated: true, budget_kind: 'text_block_bytes', omitted_paths: ['/content/0/text'] });
      console.log(`apply 4 GB text: ${run.seconds.toFixed(1)} s, peak RSS ${(run.peakRssBytes / 1e6).toFixed(1)} MB`);
      expect(run.peakRssBytes).toBeLessThanOrEqual(MAX_PEAK_RSS_BYTES);
    },
    TIMEOUT,
  );

  /**
   * Regression (a fixed bug): when a read ends inside a multi-byte UTF-8 character of a skipped region, the
   * tokenizer's checkSkippedUtf8 joins the carried tail with the *whole* next region into a new
   * buffer (a copy of up to a read's size per read). With text whose characters straddle most read
   * boundaries, 1 GB of it puts `apply`'s peak RSS at ~106–115 MB here, ~25–35 MB above the same
   * amount of ASCII text (~80 MB). Only the tail and the next few bytes need joining.
   */
  it(
    '1 GB of multi-byte UTF-8 text straddling read boundaries: under 100 MB and no more than ASCII text',
    async () => {
      const head = '{"content":[{"type":"text","text":"';
      const tail = '"}]}';
      const ascii = await applyStreaming([], head, blockOf('a:):):)'), GiB, tail);
      const multi = await applyStreaming([], head, blockOf('a😀😀😀'), GiB, tail);
      for (const run of [ascii, multi]) expect(reportOf(expectBounded(run, 64 * 1024))).toMatchObject({ budget_kind: 'text_block_bytes' });
      const mb = (n: number): string => (n / 1e6).toFixed(1);
      console.log(`apply 1 GB text: ASCII peak RSS ${mb(ascii.peakRssBytes)} MB, multi-byte ${mb(multi.peakRssBytes)} MB`);
      expect(multi.peakRssBytes).toBeLessThanOrEqual(MAX_PEAK_RSS_BYTES);
      expect(multi.peakRssBytes - ascii.peakRssBytes).toBeLessThanOrEqual(10 * 1000 * 1000);
    },
    TIMEOUT,
  );
});
