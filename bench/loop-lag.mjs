// Preloaded (`node --import`) into a process under test by bench/pipes.bench.ts and
// bench/proxy.bench.ts: the event loop's worst delay, as a 1 ms timer would see it, written to
// stderr at exit as `loop-lag-max-ms N` (a concurrent ping waits at most about that long).
// Startup (loading and compiling modules) is left out: counting starts after LOOP_LAG_SKIP_MS
// (default 300).
import { monitorEventLoopDelay } from 'node:perf_hooks';

const h = monitorEventLoopDelay({ resolution: 1 });
h.enable();
setTimeout(() => h.reset(), Number(process.env.LOOP_LAG_SKIP_MS ?? 300)).unref();
process.on('exit', () => {
  h.disable();
  process.stderr.write(`\nloop-lag-max-ms ${(h.max / 1e6).toFixed(1)}\n`);
});
