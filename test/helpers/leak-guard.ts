/**
 * The suite's descriptor guard (a setup file of every test file): a `FileHandle` opened through
 * `fs/promises` and left to the garbage collector (which closes it with a warning, and in a server
 * means one descriptor held per call until then) fails the run, naming the test that opened it and
 * where. Only handles opened by `open()` are tracked; each is marked closed by its own `close()`.
 */
import fsp from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import { expect } from 'vitest';

const INSTALLED = Symbol.for('mcp-result-budget.leak-guard');
const g = globalThis as { [INSTALLED]?: boolean };

if (g[INSTALLED] !== true) {
  g[INSTALLED] = true;
  const leaks = new FinalizationRegistry<{ opened: string; closed: boolean; test: string }>((info) => {
    if (info.closed) return;
    // Thrown outside any test: the run reports it as an unhandled error and fails.
    setImmediate(() => {
      throw new Error(`a FileHandle was never closed (left to the garbage collector); opened in ${info.test}\n${info.opened}`);
    });
  });
  const open = fsp.open;
  (fsp as { open: typeof fsp.open }).open = (async (...args: Parameters<typeof fsp.open>) => {
    const handle = await open(...args);
    const state = expect.getState();
    const info = { opened: new Error('opened here').stack ?? '', closed: false, test: `${state.testPath ?? '?'} > ${state.currentTestName ?? '(outside a test)'}` };
    const close = handle.close.bind(handle);
    handle.close = () => {
      info.closed = true;
      return close();
    };
    leaks.register(handle, info);
    return handle;
  }) as typeof fsp.open;
  syncBuiltinESMExports();
}
