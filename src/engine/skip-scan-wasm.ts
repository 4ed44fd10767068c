/**
 * The skip scanner on a WebAssembly SIMD kernel (src/engine/wasm/skip-scan.c, committed as
 * base64 in ./wasm/skip-scan-wasm.ts): the same contract and results as {@link scanSkipJs}.
 *
 * The kernel reads bytes from its own memory, so each call copies the scanned region in, in
 * windows that start small (a skipped value often ends a few bytes in) and double up to 256 KiB,
 * carrying the state from window to window. The module is small and compiled synchronously, once,
 * on first use.
 */
import { SKIP_MORE, scanSkipJs, type SkipScan, type SkipState } from './skip-scan.js';
import { SKIP_SCAN_WASM_BASE64 } from './wasm/skip-scan-wasm.js';

/** The first window copied per call, and the largest. */
const FIRST_WINDOW = 1024;
const MAX_WINDOW = 256 * 1024;
const PAGE = 65536;
/** Larger depths (never reached in practice), negative ones and odd starts go to the reference scanner. */
const MAX_DEPTH = 0x3fffffff;

/** The little of the WebAssembly API used here (the project's TS libs do not declare it). */
declare const WebAssembly: {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: object };
};

interface KernelExports {
  memory: { readonly buffer: ArrayBuffer; grow(pages: number): number };
  state_ptr(): number;
  heap_base(): number;
  scan(ptr: number, len: number): number;
}

interface Kernel {
  exports: KernelExports;
  /** Where windows are copied (64-byte aligned). */
  data: number;
  /** Views over the memory, renewed when it grows. */
  bytes: Uint8Array;
  state: Int32Array;
}

const wasmBytes = Buffer.from(SKIP_SCAN_WASM_BASE64, 'base64');

/** Whether this runtime runs WebAssembly with SIMD (validates the kernel itself). */
export const wasmSimdAvailable: boolean = (() => {
  try {
    return typeof WebAssembly === 'object' && WebAssembly.validate(wasmBytes);
  } catch {
    return false;
  }
})();

let kernel: Kernel | undefined;

function load(): Kernel {
  const instance = new WebAssembly.Instance(new WebAssembly.Module(wasmBytes), {});
  const exports = instance.exports as unknown as KernelExports;
  const data = (exports.heap_base() + 63) & ~63;
  const k: Kernel = { exports, data, bytes: new Uint8Array(0), state: new Int32Array(0) };
  views(k);
  return k;
}

function views(k: Kernel): void {
  const buffer = k.exports.memory.buffer;
  k.bytes = new Uint8Array(buffer);
  k.state = new Int32Array(buffer, k.exports.state_ptr(), 6);
}

/** The kernel reads up to this many bytes past a window (and ignores them). */
const READ_PAST = 64;

/** Make room for a window of `len` bytes (memory only grows, and is reused). */
function reserve(k: Kernel, len: number): void {
  const need = k.data + len + READ_PAST;
  const have = k.exports.memory.buffer.byteLength;
  if (need <= have) return;
  k.exports.memory.grow(Math.ceil((need - have) / PAGE));
  views(k);
}

/** WebAssembly SIMD implementation; throws if the runtime has no WebAssembly SIMD. */
export const scanSkipWasm: SkipScan = (buf, start, st) => {
  const depth = st.depth;
  const odd = !(Number.isInteger(depth) && depth >= 0 && depth <= MAX_DEPTH && Number.isInteger(start) && start >= 0);
  if (odd) return scanSkipJs(buf, start, st);
  const k = (kernel ??= load());
  const n = buf.length;
  if (start >= n) return SKIP_MORE;
  put(k.state, st);
  let r = SKIP_MORE;
  let win = FIRST_WINDOW;
  for (let pos = start; pos < n; ) {
    const end = Math.min(n, pos + win);
    const len = end - pos;
    reserve(k, len);
    k.bytes.set(buf.subarray(pos, end), k.data);
    const out = k.exports.scan(k.data, len);
    if (out !== SKIP_MORE) {
      // An index (>= 0) or an error -(index + 2), relative to the window.
      r = out >= 0 ? out + pos : out - pos;
      break;
    }
    pos = end;
    if (win < MAX_WINDOW) win *= 2;
  }
  get(k.state, st);
  return r;
};

function put(s: Int32Array, st: SkipState): void {
  s[0] = st.depth;
  s[1] = st.inString ? 1 : 0;
  s[2] = st.escape ? 1 : 0;
  s[3] = st.bulk ? 1 : 0;
  s[4] = 0; // commas counted by the kernel, added below
  s[5] = st.sawValue ? 1 : 0;
}

function get(s: Int32Array, st: SkipState): void {
  st.depth = s[0]!;
  st.inString = s[1] !== 0;
  st.escape = s[2] !== 0;
  if (s[4] !== 0) st.commas += s[4]!;
  st.sawValue = s[5] !== 0;
}

/** The fastest scanner this runtime supports: WebAssembly SIMD, else the JavaScript reference. */
export const scanSkipBest: SkipScan = wasmSimdAvailable ? scanSkipWasm : scanSkipJs;

/**
 * Perf: below this many bytes to the end of the buffer the JavaScript scanner is faster than the
 * SIMD one, which first copies its input into WebAssembly memory (1 KB: 0.15 vs 0.28 µs; 16 KB:
 * 10.5 vs 2.1 µs, measured on a result line).
 */
const SHORT_REST_BYTES = 2048;

/** The faster scanner for what is left of the buffer: JavaScript for a short rest, else {@link scanSkipBest}. */
export const scanSkipSized: SkipScan = (buf, start, st) =>
  buf.length - start < SHORT_REST_BYTES ? scanSkipJs(buf, start, st) : scanSkipBest(buf, start, st);
