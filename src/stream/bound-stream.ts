/**
 * Node stream wiring for the byte source: read a JSON document from any byte stream, bound it,
 * and write the bounded JSON once it is complete (so a failure never leaves half an output that
 * looks like success). Memory stays flat: the input is never held, and the output is bounded.
 */
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { BudgetError, ByteBudget, resolveLimits, type BoundedJson, type BudgetOptions, type ResolvedLimits, type RootKind } from '../engine/index.js';

export interface BoundStreamOptions {
  /** What the document is. @default 'auto' (a JSON-RPC response or a bare result) */
  root?: RootKind;
  /** Stops the work: the input is destroyed and the promise rejects with code `ABORTED`. */
  signal?: AbortSignal | undefined;
  /** Append a newline after the JSON (line-delimited output). @default false */
  newline?: boolean;
}

type ByteInput = AsyncIterable<Uint8Array | string> & { destroy?: (err?: Error) => void };

/**
 * Perf: a chunk is written in slices of at most this many bytes, and the event loop gets a turn
 * after a slice once {@link TURN_MS} have passed since the last one: a huge chunk, or the first
 * one (the fit window found too big and replayed while the code is still cold, 20-30 ms in one
 * call), does not hold back the process's other work. At most one extra turn per TURN_MS.
 */
const SLICE_BYTES = 64 * 1024;
const TURN_MS = 4;

/** Bound the JSON document read from `input`; resolves with the bounded JSON text. */
export async function boundBytes(
  input: ByteInput,
  limits: BudgetOptions | ResolvedLimits = {},
  options: BoundStreamOptions = {},
): Promise<BoundedJson> {
  const resolved = resolveLimits(limits);
  const { signal } = options;
  const budget = new ByteBudget(resolved, options.root ?? 'auto');
  const aborted = (): BudgetError =>
    new BudgetError('ABORTED', `Bounding was aborted after ${budget.offset} bytes`, { offset: budget.offset });
  if (signal?.aborted) {
    input.destroy?.();
    throw aborted();
  }
  // Destroy without an error: the rejection below reports it; an 'error' event would be unhandled.
  const onAbort = (): void => input.destroy?.();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    let turn = performance.now();
    for await (const chunk of input) {
      if (signal?.aborted) throw aborted();
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      // The chunk stays valid until the next one is asked for, so the turns can come in between.
      for (let at = 0; at < bytes.length; at += SLICE_BYTES) {
        budget.write(at === 0 && bytes.length <= SLICE_BYTES ? bytes : bytes.subarray(at, at + SLICE_BYTES));
        if (performance.now() - turn < TURN_MS) continue;
        await new Promise<void>((resolve) => setImmediate(resolve));
        turn = performance.now();
        if (signal?.aborted) throw aborted();
      }
    }
    if (signal?.aborted) throw aborted();
    return budget.end();
  } catch (e) {
    input.destroy?.();
    if (signal?.aborted && !(e instanceof BudgetError && e.code === 'ABORTED')) throw aborted();
    throw e;
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}

/** Bound the document read from `input` and write it to `output`, honouring backpressure. */
export async function boundStream(
  input: ByteInput,
  output: Writable,
  limits: BudgetOptions | ResolvedLimits = {},
  options: BoundStreamOptions = {},
): Promise<BoundedJson> {
  const result = await boundBytes(input, limits, options);
  const text = options.newline === true ? result.json + '\n' : result.json;
  if (!output.write(text)) await once(output, 'drain');
  return result;
}
