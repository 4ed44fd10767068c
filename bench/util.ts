/** Small helpers shared by the bench files: machine line, medians, markdown tables. */
import os from 'node:os';
import type { Bench, Task } from 'tinybench';

/** One line naming the machine, the Node version and the date (printed at the top of each run). */
export function machineLine(): string {
  const cpus = os.cpus();
  const model = cpus[0]?.model.trim() ?? 'unknown CPU';
  const mem = (os.totalmem() / 1024 ** 3).toFixed(1);
  return `${model}, ${os.availableParallelism()} CPUs, ${mem} GiB RAM, Node ${process.version}, ${process.platform}-${process.arch}, ${new Date().toISOString().slice(0, 10)}, ${loadLine()}`;
}

/** 1/5/15-minute load averages: other work on the machine skews timings, so each run prints them. */
export function loadLine(): string {
  return `load avg ${os.loadavg().map((x) => x.toFixed(2)).join(' / ')}`;
}

export interface Row {
  name: string;
  /** Median latency, ms. */
  median: number;
  p75: number;
  p99: number;
  samples: number;
}

/** Median (and p75) of each task, in ms; throws if a task failed. */
export function rows(bench: Bench): Map<string, Row> {
  const out = new Map<string, Row>();
  for (const t of bench.tasks as Task[]) {
    const r = t.result;
    if (r.state !== 'completed') throw new Error(`Task ${t.name} did not complete: ${r.state} ${'error' in r ? String(r.error) : ''}`);
    out.set(t.name, { name: t.name, median: r.latency.p50, p75: r.latency.p75, p99: r.latency.p99, samples: r.latency.samplesCount });
  }
  return out;
}

/** Human-readable duration from ms. */
export function fmt(ms: number): string {
  if (ms < 1) return `${(ms * 1000).toFixed(1)} µs`;
  if (ms < 1000) return `${ms.toFixed(ms < 10 ? 3 : 1)} ms`;
  return `${(ms / 1000).toFixed(2)} s`;
}

/** A markdown table from a header and rows of cells. */
export function table(header: string[], body: (string | number)[][]): string {
  const line = (cells: (string | number)[]): string => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...body.map(line)].join('\n');
}

export function assert(cond: unknown, message: string): asserts cond {
  if (!cond) throw new Error(`Benchmark precondition failed: ${message}`);
}

export function gc(): void {
  globalThis.gc?.();
}
