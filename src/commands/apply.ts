/**
 * `mcp-budget apply`: bound one CallToolResult or JSON-RPC response read from a file or stdin and
 * write the bounded JSON to stdout. `stream` (and `auto`, its alias) bounds the bytes as they
 * arrive with flat memory, copying numbers as written; small inputs still take the in-memory
 * engine inside the byte source. `memory` parses the input whole with `JSON.parse` (numbers are
 * then JavaScript numbers) and exists for benchmarks and debugging.
 */
import type { Readable, Writable } from 'node:stream';
import { isUtf8 } from 'node:buffer';
import { boundJson, BudgetError, resolveLimits, Tokenizer, type BudgetOptions, type JsonEvents } from '../engine/index.js';
import { boundStream } from '../stream/bound-stream.js';
import { readChunks } from '../stream/read-chunks.js';

export type ApplyMode = 'auto' | 'memory' | 'stream';

export interface ApplyOptions {
  /** A path, or `-` for stdin. */
  file: string;
  limits: BudgetOptions;
  mode: ApplyMode;
  stdin: Readable;
  stdout: Writable;
  signal?: AbortSignal;
}

/** Run `apply`; throws BudgetError for invalid input (exit 1) and for limits out of range. */
export async function runApply(opts: ApplyOptions): Promise<void> {
  const limits = resolveLimits(opts.limits);
  const mode = opts.mode === 'auto' ? 'stream' : opts.mode;
  // stdin is read through its descriptor when it is one (flat memory); a substitute stream otherwise.
  const fd = opts.stdin === process.stdin ? 0 : undefined;
  const input = opts.file !== '-' ? readChunks(opts.file) : fd !== undefined ? readChunks(fd) : opts.stdin;
  if (mode === 'stream') {
    await boundStream(input, opts.stdout, limits, { root: 'auto', signal: opts.signal, newline: true });
    return;
  }
  const chunks: Buffer[] = [];
  for await (const c of input) chunks.push(Buffer.from(c as Buffer));
  const bytes = Buffer.concat(chunks);
  const value = parseWithOffset(bytes);
  const { json } = boundJson(value, limits, 'auto');
  await write(opts.stdout, json + '\n');
}

/**
 * JSON.parse for valid input; for invalid input (including invalid UTF-8, which JSON.parse would
 * silently replace) the tokenizer finds the first error and names its byte offset.
 */
export function parseWithOffset(bytes: Buffer): unknown {
  if (isUtf8(bytes)) {
    try {
      return JSON.parse(bytes.toString('utf8'));
    } catch {
      // fall through to the tokenizer for a precise offset
    }
  }
  const tok = new Tokenizer(VALIDATE_ONLY);
  tok.write(bytes);
  tok.end();
  throw new BudgetError('INVALID_JSON', 'Invalid JSON', { offset: bytes.length });
}

const VALIDATE_ONLY: JsonEvents = {
  openObject: () => true,
  openArray: () => true,
  closeObject: () => undefined,
  closeArray: () => undefined,
  key: () => true,
  stringStart: () => true,
  stringChunk: () => true,
  stringEnd: () => undefined,
  scalar: () => undefined,
};

function write(out: Writable, s: string): Promise<void> {
  return new Promise((resolve, reject) => {
    out.write(s, (err) => (err ? reject(err) : resolve()));
  });
}
