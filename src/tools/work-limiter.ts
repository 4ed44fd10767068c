/**
 * A bound on tool handlers running at once, whatever the transport lets in. The transport frees a
 * request's slot when the client cancels it (the SDK then sends nothing), but the handler, and the
 * git processes it started, run on to the end; without this bound a flood of call-then-cancel
 * pairs would start work without limit. A call waits here for a free place; a call cancelled while
 * it waits leaves the queue at once and never starts.
 */

/** Tool handlers that may run at once in one process (every server of it shares the slots). */
export const MAX_RUNNING_TOOL_CALLS = 16;

interface Waiter {
  resolve: () => void;
  reject: (e: unknown) => void;
  cleanup: () => void;
}

export class WorkLimiter {
  private running = 0;
  private readonly queue: Waiter[] = [];

  constructor(readonly maxRunning = MAX_RUNNING_TOOL_CALLS) {}

  /** Handlers running now (for tests and diagnostics). */
  get active(): number {
    return this.running;
  }

  /** Calls waiting for a place. */
  get waiting(): number {
    return this.queue.length;
  }

  /** Run `work` once a place is free; rejects without running it if `signal` aborts first. */
  async run<T>(signal: AbortSignal | undefined, work: () => Promise<T>): Promise<T> {
    if (signal?.aborted === true) throw abortError();
    // The place is taken before any await: counted here, or handed over by the call that frees it
    // (it never goes back to the pool in between, where a newcomer could take it too).
    if (this.running < this.maxRunning) this.running++;
    else await this.wait(signal);
    try {
      return await work();
    } finally {
      const next = this.queue.shift();
      if (next !== undefined) next.resolve();
      else this.running--;
    }
  }

  private wait(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        const i = this.queue.indexOf(waiter);
        if (i !== -1) this.queue.splice(i, 1);
        reject(abortError());
      };
      const waiter: Waiter = {
        resolve: () => {
          waiter.cleanup();
          resolve();
        },
        reject,
        cleanup: () => signal?.removeEventListener('abort', onAbort),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.queue.push(waiter);
    });
  }
}

function abortError(): Error {
  return Object.assign(new Error('The call was cancelled before it started'), { name: 'AbortError' });
}
